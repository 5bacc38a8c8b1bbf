/*
 * test_spread.c — a load that moves within the window (README "Loads that move within a
 * window"), through the library with its default policy and stealing: 64 tasks on 2 workers, 8 of
 * them 20× heavier, the heavy ones 8 ids further at every step (once round in 8 steps, shorter than
 * the LB period of 10): every step is imbalanced (λ ≈ 1.7 on the blocks of ids), the window's
 * sums much less. Expected: an LB step interleaves the tasks (lbomp_lb_stats_t.interleaved, with
 * migrations), once — later LB steps keep the interleaving; the checksum is the same as without
 * balancing. A hotspot that stays and a balanced load are not interleaved. The same under
 * LBOMP_POLICY=auto, whose when-rule arms an LB step for such a window. Judged on the records, not
 * on speed.
 *
 * And an interleaving that makes the steps slower is undone (policy.h, struct lbomp__probe): the
 * same moving hotspot, but each task runs 4 x slower on a thread other than the one that first ran
 * it (as a task whose data lives in that thread's cache or node would), without stealing:
 * interleaving moves half of them, so the window after it runs slower than the one it was judged
 * on (by the costs measured where the tasks ran, it pays), and the next LB step puts them back
 * (lbomp_lb_stats_t.interleave_undone), whatever the estimate said; an interleaving that helps
 * (the moving case) is not undone but by noise, and not interleaved again while in place (until
 * undone, or replaced by a plan that moved tasks).
 */
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbomp.h"
#include "test.h"

#define NT         64
#define HOT        8
#define STEPS      60
#define STEPS_AUTO 150 /* auto judges the interleaving every 2, 4, ... windows: more of them */

/* Under the sanitizers the steals carry this busy-work load (no data to refill) about as well as
 * an interleaving would, and auto, which judges it every 2, 4, ... windows, found it paying in none
 * of three runs once in about 20 (ASan, 2026-11-28): its moving case is checked in the plain
 * build (SANITIZED, test.h). */

enum kind { MOVING, STAYING, BALANCED, OWNED };

struct task {
        int i;
        int first; /* OWNED: the thread that first ran it (-1: none yet) */
        double x;
        double off; /* OWNED: the busy-work off that thread, outside the checksum */
};

static struct task task[NT];
static long step_now;
static enum kind kind;

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        struct task *t = data;
        int at = kind == MOVING || kind == OWNED ? (int)((step_now * HOT) % NT) : 0;
        bool hot = kind != BALANCED && (t->i - at + NT) % NT < HOT;
        long n = (hot ? 20 : 1) * 1000L;
        test_spin(&t->x, n);
        if (kind == OWNED) {
                int me = omp_get_thread_num();
                if (t->first < 0)
                        t->first = me;
                else if (t->first != me)
                        test_spin(&t->off, 3 * n);
        }
}

/* Runs `steps` steps of `k` under the default configuration (period 10; `policy` when not NULL);
 * returns how many LB steps interleaved and, of those, how many moved tasks, and how many undid
 * an interleaving; *sum the tasks' checksum. */
static void run_undo(enum kind k, const char *policy, long steps, int *interleaved, int *moved,
                     int *undone, double *sum)
{
        kind = k;
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        /* OWNED: no stealing, whose thieves would run tasks off their first thread too and blur
         * the costs the estimate reads (it then often finds the interleaving not paying) */
        if (k == OWNED)
                ASSERT_EQ(lbomp_set_steal(lb, "off"), 0);
        if (policy)
                ASSERT_EQ(lbomp_set_policy(lb, policy), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_period(lb, 10), 0);
        for (int i = 0; i < NT; i++) {
                task[i] = (struct task){.i = i, .first = -1};
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        for (step_now = 0; step_now < steps; step_now++)
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
        *interleaved = *moved = *undone = 0;
        /* an interleaving in place: from one that moved tasks until it is undone or a plan moves
         * tasks (the mapping is then the plan's: lbstep.c keeps `interleaved` only while no plan
         * moves a task) */
        bool in_place = false;
        for (size_t i = lbomp_lb_first(lb); i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                ASSERT_EQ(lbomp_lb_get(lb, i, &st, sizeof st), 0);
                printf("  LB step %zu after step %llu: interleaved %d, undone %d, %u migrations, "
                       "λ %.2f\n",
                       i, (unsigned long long)st.step, st.interleaved, st.interleave_undone,
                       st.migrations, st.imbalance_before);
                *interleaved += st.interleaved;
                if (st.interleave_undone) {
                        ASSERT(in_place); /* undoes an interleaving in place */
                        ASSERT_EQ(st.interleaved, 0);
                        in_place = false;
                        (*undone)++;
                } else if (st.interleaved && st.migrations > 0) {
                        ASSERT(!in_place); /* not twice in a row: only once undone or replaced */
                        in_place = true;
                        (*moved)++;
                } else if (st.migrations > 0) {
                        in_place = false; /* a plan that moved tasks replaced it */
                }
        }
        *sum = 0;
        for (int i = 0; i < NT; i++)
                *sum += task[i].x;
        lbomp_destroy(lb);
}

static void run(enum kind k, const char *policy, long steps, int *interleaved, int *moved,
                double *sum)
{
        int undone;
        run_undo(k, policy, steps, interleaved, moved, &undone, sum);
}

/* The checksum without balancing: every task run `steps` times, in order. */
static double reference(long steps)
{
        double ref = 0;
        for (int i = 0; i < NT; i++) {
                double x = 0;
                for (step_now = 0; step_now < steps; step_now++) {
                        int at = (int)((step_now * HOT) % NT);
                        test_spin(&x, ((i - at + NT) % NT < HOT ? 20 : 1) * 1000L);
                }
                ref += x;
        }
        return ref;
}

int main(void)
{
        int il, mv;
        double sum;
        const char *policies[] = {NULL, "auto"};
        for (int p = 0; p < 2; p++) {
                const char *pol = policies[p];
                const char *name = pol ? pol : "default";
                long steps = pol ? STEPS_AUTO : STEPS;
                double ref = reference(steps);
                bool check_moving = true;
#ifdef SANITIZED
                check_moving = !pol;
                if (!check_moving)
                        printf("%s, moving hotspot: (sanitized build: checked in the plain "
                               "build)\n",
                               name);
#endif
                /* Live timings: under ASan a run's first windows were once slow and uneven enough
                 * that no LB step found the interleaving paying (refine then chased the load); up
                 * to three runs, as the other live checks. A runtime that never interleaves fails
                 * all three. */
                for (int attempt = 0; check_moving && attempt < 3; attempt++) {
                        printf("%s, moving hotspot, run %d:\n", name, attempt + 1);
                        run(MOVING, pol, steps, &il, &mv, &sum);
                        ASSERT_DEQ(sum, ref);
                        if (mv > 0)
                                break;
                }
                if (check_moving)
                        ASSERT_GT(mv, 0); /* interleaved, moving tasks; again only after an undo */
                /* data that stays with its thread: interleaved (the estimate cannot see it) and
                 * undone; up to three runs of 150 steps */
                int undone = 0;
                double ref_owned = pol ? ref : reference(STEPS_AUTO);
                for (int attempt = 0; check_moving && attempt < 3; attempt++) {
                        printf("%s, moving hotspot, tasks slower off their first thread, run %d:\n",
                               name, attempt + 1);
                        run_undo(OWNED, pol, STEPS_AUTO, &il, &mv, &undone, &sum);
                        ASSERT_DEQ(sum, ref_owned);
                        if (mv > 0 && undone > 0)
                                break;
                }
                if (check_moving) {
                        ASSERT_GT(mv, 0);
                        ASSERT_GT(undone, 0);
                }
                printf("%s, hotspot that stays:\n", name);
                run(STAYING, pol, steps, &il, &mv, &sum);
                ASSERT_EQ(il, 0);
                printf("%s, balanced:\n", name);
                run(BALANCED, pol, steps, &il, &mv, &sum);
                ASSERT_EQ(il, 0);
        }
        return 0;
}
