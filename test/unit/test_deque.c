/*
 * test_deque.c — a thief leaves the owner what the owner would finish before the thief, away from
 * the item's data, could run it (lbomp__deque_steal_paying): it steals from the tail while the
 * items left below cost at least kappa × the item's cost, then passes without touching the deque,
 * and the owner's pops then take exactly what is left. Without costs it steals like
 * lbomp__deque_steal. One thread, deterministic.
 */
#include <stdint.h>

#include "deque.h"
#include "test.h"

/* Prefix sums of cost[0..n) into pc[0..n]. */
static void prefix(const double *cost, int n, double *pc)
{
        pc[0] = 0;
        for (int i = 0; i < n; i++)
                pc[i + 1] = pc[i] + cost[i];
}

/* Steals until the deque refuses; returns how many, checking positions come from the tail. */
static int steal_all(struct lbomp__deque *d, int n, const double *pc, double kappa)
{
        int got = 0;
        for (;;) {
                int64_t pos;
                enum lbomp__take r = lbomp__deque_steal_paying(d, &pos, pc, n, kappa);
                ASSERT(r != LBOMP__LOST_RACE); /* one thread: no race */
                if (r == LBOMP__EMPTY)
                        return got;
                ASSERT_EQ(pos, n - 1 - got);
                got++;
        }
}

/* The owner takes the rest in one pop: positions [0, n - stolen). */
static void owner_takes_rest(struct lbomp__deque *d, int first, int n, int stolen)
{
        int64_t at;
        ASSERT_EQ(lbomp__deque_pop(d, n, &at), n - first - stolen);
        ASSERT_EQ(at, first);
        ASSERT_EQ(lbomp__deque_pop(d, 1, &at), 0);
}

int main(void)
{
        static struct lbomp__deque d;
        double pc[9];

        /* Equal costs, kappa 2: the thief stops when fewer than two items would be left below. */
        const double eq[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 0, 8);
        ASSERT_EQ(steal_all(&d, 8, pc, 2), 6);
        owner_takes_rest(&d, 0, 8, 6);

        /* kappa 0 or no costs: everything goes, as with lbomp__deque_steal. */
        lbomp__deque_arm(&d, 0, 8);
        ASSERT_EQ(steal_all(&d, 8, pc, 0), 8);
        lbomp__deque_arm(&d, 0, 8);
        ASSERT_EQ(steal_all(&d, 8, NULL, 2), 8);

        /* A heavy last item is not worth taking from an owner with little else left. */
        const double heavy[4] = {1, 1, 1, 10};
        prefix(heavy, 4, pc);
        lbomp__deque_arm(&d, 0, 4);
        ASSERT_EQ(steal_all(&d, 4, pc, 1), 0);
        owner_takes_rest(&d, 0, 4, 0);
        /* ... but cheap ones behind a heavy owner's head are. */
        const double head[4] = {10, 1, 1, 1};
        prefix(head, 4, pc);
        lbomp__deque_arm(&d, 0, 4);
        ASSERT_EQ(steal_all(&d, 4, pc, 2), 3);
        owner_takes_rest(&d, 0, 4, 3);

        /* What the owner took in a batch is not left below: after it took [0, 4) of 8, the thief
         * leaves it two of the last four. The deque armed with positions [1, 8). */
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 1, 7);
        int64_t at;
        ASSERT_EQ(lbomp__deque_pop(&d, 3, &at), 3);
        ASSERT_EQ(at, 1);
        ASSERT_EQ(steal_all(&d, 8, pc, 2), 2);
        owner_takes_rest(&d, 4, 8, 2);

        /* Costs that do not cover the content (read against another step's): nothing is taken. */
        lbomp__deque_arm(&d, 0, 8);
        ASSERT_EQ(steal_all(&d, 4, pc, 0), 0);
        owner_takes_rest(&d, 0, 8, 0);
        return 0;
}
