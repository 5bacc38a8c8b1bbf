/*
 * test_deque.c — a thief leaves the owner what does not pay away from the item's data
 * (lbomp__deque_steal_paying): it steals while the owner's other items left cost at least ratio ×
 * the item's cost (the caller's lbomp__steal_ratio), then passes without touching the deque, and
 * the owner's pops then take exactly what is left. In tail mode the thief takes the owner's last
 * positions, in front mode its next ones, so that the last positions go last. Without costs it
 * steals like lbomp__deque_steal. The owner's batches (lbomp__deque_batch) hold a quarter of its
 * fair share of the predicted cost left. One thread, deterministic.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "deque.h"
#include "test.h"

/* Prefix sums of cost[0..n) into pc[0..n]. */
static void prefix(const double *cost, int n, double *pc)
{
        pc[0] = 0;
        for (int i = 0; i < n; i++)
                pc[i + 1] = pc[i] + cost[i];
}

/* Steals until the deque refuses; returns how many, checking positions come from, from + dir,
 * from + 2 dir, ... */
static int steal_all(struct lbomp__deque *d, int n, const double *pc, double ratio, int from,
                     int dir)
{
        int got = 0;
        for (;;) {
                int64_t pos, count;
                enum lbomp__take r = lbomp__deque_steal_paying(d, &pos, &count, pc, n, ratio);
                ASSERT(r != LBOMP__LOST_RACE); /* one thread: no race */
                if (r == LBOMP__EMPTY)
                        return got;
                ASSERT_EQ(pos, from + dir * got);
                ASSERT_EQ(count, 1);
                got++;
        }
}

/* The owner takes the rest in one pop: the positions [at, end). */
static void owner_takes_rest(struct lbomp__deque *d, int at, int end)
{
        int64_t first;
        ASSERT_EQ(lbomp__deque_pop(d, 1000, &first), end - at);
        if (end > at)
                ASSERT_EQ(first, at);
        ASSERT_EQ(lbomp__deque_pop(d, 1, &first), 0);
}

/* The owner's batches (lbomp__deque_batch): by predicted cost, a quarter of the fair share of what
 * is left, at least one; by count without costs (a sixteenth of it when blind). */
static void batches(void)
{
        static double c[65], pc[65];
        for (int i = 0; i < 64; i++)
                c[i] = 1;
        prefix(c, 64, pc);
        /* 64 equal tasks on 2 workers: a share is 32, the batch 8; then 7 of the 56 left */
        ASSERT_EQ(lbomp__deque_batch(pc, 64, 0, 64, 2, false), 8);
        ASSERT_EQ(lbomp__deque_batch(pc, 64, 8, 56, 2, false), 7);
        /* every batch, taken in turn, holds at most an eighth of what was left, at least one */
        int64_t pos = 0, batches = 0;
        while (pos < 64) {
                int64_t k = lbomp__deque_batch(pc, 64, pos, 64 - pos, 2, false);
                ASSERT(k >= 1);
                ASSERT(k == 1 || pc[pos + k] - pc[pos] <= (pc[64] - pc[pos]) / 8);
                pos += k;
                batches++;
        }
        ASSERT_EQ(pos, 64);
        fprintf(stderr, "batches: 64 equal tasks, 2 workers: %lld batches\n", (long long)batches);
        /* a hot head (ten tasks of 10, then 54 of 1: 154 left, an eighth 19.25) */
        for (int i = 0; i < 10; i++)
                c[i] = 10;
        prefix(c, 64, pc);
        static const struct {
                bool costs; /* pc, or NULL */
                int64_t n, pos, left, team;
                bool blind;
                int64_t want;
                const char *what;
        } cases[] = {
                {true, 64, 0, 64, 2, false, 1, "a hot head: one hot task"},
                {true, 64, 10, 54, 2, false, 6,
                 "a cold head before it: the prefix within the share"},
                {true, 64, 60, 40, 2, false, 1, "a stale top: cut to what is there"},
                {true, 64, 64, 3, 2, false, 0, "a stale top past the end: nothing"},
                {false, 64, 0, 64, 2, false, 8, "no costs: a quarter of a fair share by count"},
                {false, 64, 0, 7, 2, false, 1, "no costs, few left: one"},
                {false, 64, 63, 1, 2, false, 0, "no costs, one left: the caller takes it"},
                {false, 64, 0, 64, 2, true, 2, "blind: a sixteenth of the share by count"},
                {false, 512, 0, 512, 2, true, 16, "blind, 512 tasks"},
                {false, 64, 0, 7, 2, true, 1, "blind, few left: one"},
                {true, 64, 10, 54, 2, true, 6, "blind with costs: the costs rule"},
                {true, 64, 0, 64, 1, false, 64, "one worker: no thief, one batch"},
                {false, 64, 10, 54, 1, false, 54, "one worker, no costs: one batch"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int64_t k = lbomp__deque_batch(cases[i].costs ? pc : NULL, cases[i].n, cases[i].pos,
                                               cases[i].left, cases[i].team, cases[i].blind);
                if (k != cases[i].want)
                        FAIL("batch: %s: %lld, expected %lld", cases[i].what, (long long)k,
                             (long long)cases[i].want);
        }
        /* costs all zero (nothing measured): by count */
        for (int i = 0; i < 65; i++)
                pc[i] = 0;
        ASSERT_EQ(lbomp__deque_batch(pc, 64, 0, 64, 4, false), 4);
}

/* When a step's end arms stealing (1 tick = 1 ns here: 2 µs = 2,000 ticks). */
static void test_wanted(void)
{
        const double tps = 1e9;
        /* two threads ending 1,000 µs into a step begun at 0: equal ends, no steal: not wanted */
        ASSERT(!lbomp__deque_wanted(2000000, 1000000, 0, 2, 0, tps));
        /* one ended 60 µs early: the mean waited 30 µs, 3 % of the step: wanted */
        ASSERT(lbomp__deque_wanted(940000 + 1000000, 1000000, 0, 2, 0, tps));
        /* 30 µs early: 1.5 % on average: not */
        ASSERT(!lbomp__deque_wanted(970000 + 1000000, 1000000, 0, 2, 0, tps));
        /* balanced because one stole 60 µs of work: still wanted (without it, 3 %) */
        ASSERT(lbomp__deque_wanted(2000000, 1000000, 60000, 2, 0, tps));
        /* a 10 µs step, one ended 3 µs early: 15 % but 1.5 µs on average, under 2 µs: not */
        ASSERT(!lbomp__deque_wanted(7000 + 10000, 10000, 0, 2, 0, tps));
        /* the same with 5 µs: 2.5 µs: wanted */
        ASSERT(lbomp__deque_wanted(5000 + 10000, 10000, 0, 2, 0, tps));
        /* a 0.5 ms step begun at 5.5 ms, one thread 30 µs early: 15 µs, 3 % of the step (0.25 %
         * of the time since tick 0): wanted */
        ASSERT(lbomp__deque_wanted(6000000 + 5970000, 6000000, 0, 2, 5500000, tps));
        ASSERT(!lbomp__deque_wanted(6000000 + 5970000, 6000000, 0, 2, 0, tps));
        /* a 13 ms step, one thread 60 µs early: 30 µs on average, 0.23 % of the step but above
         * the 20 µs cap: wanted; 30 µs early (15 µs): not */
        ASSERT(lbomp__deque_wanted(13000000 + 12940000, 13000000, 0, 2, 0, tps));
        ASSERT(!lbomp__deque_wanted(13000000 + 12970000, 13000000, 0, 2, 0, tps));
        /* one thread: nobody to steal from */
        ASSERT(!lbomp__deque_wanted(0, 1000000, 0, 1, 0, tps));
        fprintf(stderr, "wanted: ok\n");
}

/* Tail mode: the thief takes the owner's last positions, the owner runs from its first. */
static void tail_mode(void)
{
        static struct lbomp__deque d;
        double pc[9];
        int64_t at, count;

        /* Equal costs, ratio 2: the thief stops when fewer than two items would be left below. */
        const double eq[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 0, 8, false);
        ASSERT_EQ(steal_all(&d, 8, pc, 2, 7, -1), 6);
        owner_takes_rest(&d, 0, 2);

        /* ratio 0 or no costs: everything goes, as with lbomp__deque_steal. */
        lbomp__deque_arm(&d, 0, 8, false);
        ASSERT_EQ(steal_all(&d, 8, pc, 0, 7, -1), 8);
        lbomp__deque_arm(&d, 0, 8, false);
        ASSERT_EQ(steal_all(&d, 8, NULL, 2, 7, -1), 8);

        /* A heavy last item is not worth taking from an owner with little else left... */
        const double heavy[4] = {1, 1, 1, 10};
        prefix(heavy, 4, pc);
        lbomp__deque_arm(&d, 0, 4, false);
        ASSERT_EQ(steal_all(&d, 4, pc, 1, 3, -1), 0);
        owner_takes_rest(&d, 0, 4);
        /* ... but cheap ones behind a heavy owner's head are. */
        const double head[4] = {10, 1, 1, 1};
        prefix(head, 4, pc);
        lbomp__deque_arm(&d, 0, 4, false);
        ASSERT_EQ(steal_all(&d, 4, pc, 2, 3, -1), 3);
        owner_takes_rest(&d, 0, 1);

        /* What the owner took in a batch is not left below: after it took [1, 4) of the deque
         * armed with positions [1, 8), the thief leaves it two of the last four. */
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 1, 7, false);
        ASSERT_EQ(lbomp__deque_pop(&d, 3, &at), 3);
        ASSERT_EQ(at, 1);
        ASSERT_EQ(steal_all(&d, 8, pc, 2, 7, -1), 2);
        owner_takes_rest(&d, 4, 6);

        /* Costs that do not cover the content (read against another step's): nothing is taken. */
        lbomp__deque_arm(&d, 0, 8, false);
        ASSERT_EQ(steal_all(&d, 4, pc, 0, 7, -1), 0);
        owner_takes_rest(&d, 0, 8);

        /* The owner's view (lbomp__deque_next): what is left, and where its next batch begins. */
        lbomp__deque_arm(&d, 2, 6, false);
        int64_t pos;
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 6);
        ASSERT_EQ(pos, 2);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
        ASSERT_EQ(pos, 7);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 5);
        ASSERT_EQ(pos, 2);
        owner_takes_rest(&d, 2, 7);
        fprintf(stderr, "tail mode: ok\n");
}

/* Front mode: owner and thief take from one end, so the last position goes last. */
static void front_mode(void)
{
        static struct lbomp__deque d;
        double pc[9];
        int64_t at, pos, count;

        /* Equal costs, ratio 2: the thief stops when fewer than two items would be left after. */
        const double eq[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 0, 8, true);
        ASSERT_EQ(steal_all(&d, 8, pc, 2, 0, 1), 6);
        owner_takes_rest(&d, 6, 8);

        /* ratio 0 or no costs: everything goes. */
        lbomp__deque_arm(&d, 0, 8, true);
        ASSERT_EQ(steal_all(&d, 8, pc, 0, 0, 1), 8);
        owner_takes_rest(&d, 8, 8);
        lbomp__deque_arm(&d, 0, 8, true);
        ASSERT_EQ(steal_all(&d, 8, NULL, 2, 0, 1), 8);

        /* A heavy next item is not worth taking from an owner with little else left... */
        const double head[4] = {10, 1, 1, 1};
        prefix(head, 4, pc);
        lbomp__deque_arm(&d, 0, 4, true);
        ASSERT_EQ(steal_all(&d, 4, pc, 1, 0, 1), 0);
        owner_takes_rest(&d, 0, 4);
        /* ... but cheap ones ahead of a heavy last one are. */
        const double heavy[4] = {1, 1, 1, 10};
        prefix(heavy, 4, pc);
        lbomp__deque_arm(&d, 0, 4, true);
        ASSERT_EQ(steal_all(&d, 4, pc, 2, 0, 1), 3);
        owner_takes_rest(&d, 3, 4);

        /* Owner and thief take turns at one end: the owner's batches and the stolen items
         * interleave in ascending positions. The deque armed with positions [1, 8). */
        prefix(eq, 8, pc);
        lbomp__deque_arm(&d, 1, 7, true);
        ASSERT_EQ(lbomp__deque_pop(&d, 3, &at), 3);
        ASSERT_EQ(at, 1);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
        ASSERT_EQ(pos, 4);
        ASSERT_EQ(lbomp__deque_pop(&d, 2, &at), 2);
        ASSERT_EQ(at, 5);
        /* What the owner took in a batch is not left after: one item left, ratio 2 keeps it. */
        ASSERT_EQ(steal_all(&d, 8, pc, 2, 7, 1), 0);
        owner_takes_rest(&d, 7, 8);

        /* Costs that do not cover the content: nothing is taken. */
        lbomp__deque_arm(&d, 0, 8, true);
        ASSERT_EQ(steal_all(&d, 4, pc, 0, 0, 1), 0);
        owner_takes_rest(&d, 0, 8);

        /* The owner's view: its next batch begins after what the thief took. */
        lbomp__deque_arm(&d, 2, 6, true);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 6);
        ASSERT_EQ(pos, 2);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 5);
        ASSERT_EQ(pos, 3);
        owner_takes_rest(&d, 3, 8);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 0);

        /* One deque, the modes alternating from step to step (indices keep growing). */
        for (int step = 0; step < 4; step++) {
                bool front = step % 2;
                lbomp__deque_arm(&d, 0, 8, front);
                ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
                ASSERT_EQ(pos, front ? 0 : 7);
                owner_takes_rest(&d, front ? 1 : 0, front ? 8 : 7);
        }
        fprintf(stderr, "front mode: ok\n");
}

/* The floor of a batch (lbomp__deque_batch_floor): half a µs of tasks at their mean time, never
 * more than a fair share of what is left; unknown times and long tasks leave the batch as it was.
 */
static void batch_floor(void)
{
        /* 50 ns tasks, 500 left on 2 workers: 10 tasks, not the 1 asked */
        ASSERT_EQ(lbomp__deque_batch_floor(1, 50e-9, 500, 2), 10);
        /* a batch already larger stays */
        ASSERT_EQ(lbomp__deque_batch_floor(62, 50e-9, 500, 2), 62);
        /* few left: a fair share at most (5 of 11 on 2 workers); 0 of 1: the caller takes it */
        ASSERT_EQ(lbomp__deque_batch_floor(1, 50e-9, 11, 2), 5);
        ASSERT_EQ(lbomp__deque_batch_floor(0, 50e-9, 1, 2), 0);
        /* tasks of half a µs or more, or of unknown time: unchanged */
        ASSERT_EQ(lbomp__deque_batch_floor(1, 0.5e-6, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_batch_floor(3, 20e-6, 500, 2), 3);
        ASSERT_EQ(lbomp__deque_batch_floor(1, 0, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_batch_floor(1, NAN, 500, 2), 1);
        /* 0.1 µs tasks: 5 */
        ASSERT_EQ(lbomp__deque_batch_floor(1, 0.1e-6, 32, 2), 5);
        /* one worker: its share is all that is left */
        ASSERT_EQ(lbomp__deque_batch_floor(500, 50e-9, 500, 1), 500);
}

/* Steals runs until the deque refuses; the runs must be [s[i], e[i]) in turn. Returns how many. */
static int steal_runs(struct lbomp__deque *d, int n, const double *pc, double ratio,
                      const int64_t *s, const int64_t *e)
{
        int got = 0;
        for (;;) {
                int64_t pos, count;
                enum lbomp__take r = lbomp__deque_steal_paying(d, &pos, &count, pc, n, ratio);
                ASSERT(r != LBOMP__LOST_RACE);
                if (r == LBOMP__EMPTY)
                        return got;
                ASSERT_EQ(pos, s[got]);
                ASSERT_EQ(pos + count, e[got]);
                got++;
        }
}

/* A grain above 1 (lbomp__deque_arm_grain): every claim takes whole runs of grain positions, the
 * thieves' one run, the owner's as many as cover its batch; the run the thieves take last is the
 * short one; the paying rule weighs the whole run. */
static void grain_runs(void)
{
        static struct lbomp__deque d;
        double pc[9];
        int64_t at, pos, count;
        const double eq[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        prefix(eq, 8, pc);

        /* Tail, 8 positions in runs of 3: the thieves take [5, 8), [2, 5), [0, 2). */
        lbomp__deque_arm_grain(&d, 0, 8, false, 3);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 8);
        ASSERT_EQ(pos, 0);
        ASSERT_EQ(
                steal_runs(&d, 8, NULL, 0, (const int64_t[]){5, 2, 0}, (const int64_t[]){8, 5, 2}),
                3);
        owner_takes_rest(&d, 0, 0);
        /* The owner's batch of one is its next whole run, from its first position up. */
        lbomp__deque_arm_grain(&d, 0, 8, false, 3);
        ASSERT_EQ(lbomp__deque_pop(&d, 1, &at), 2);
        ASSERT_EQ(at, 0);
        ASSERT_EQ(lbomp__deque_pop(&d, 4, &at), 6); /* two runs cover 4 */
        ASSERT_EQ(at, 2);
        ASSERT_EQ(lbomp__deque_pop(&d, 1, &at), 0);
        /* The paying rule weighs the whole run (cost 3). Kappa 2: taking [5, 8) would leave the
         * owner 5 < 6, so nothing goes. Kappa 1, positions [1, 8) armed after a first batch of
         * one: [5, 8) leaves 4 >= 3 and goes, [2, 5) would leave 1 < 3 and stays. */
        lbomp__deque_arm_grain(&d, 0, 8, false, 3);
        ASSERT_EQ(steal_runs(&d, 8, pc, 2, NULL, NULL), 0);
        owner_takes_rest(&d, 0, 8);
        lbomp__deque_arm_grain(&d, 1, 7, false, 3);
        ASSERT_EQ(steal_runs(&d, 8, pc, 1, (const int64_t[]){5}, (const int64_t[]){8}), 1);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 4);
        ASSERT_EQ(pos, 1);
        owner_takes_rest(&d, 1, 5);

        /* Front, runs of 3: the thieves take [0, 3), then the owner [3, 6), then a thief the short
         * [6, 8). */
        lbomp__deque_arm_grain(&d, 0, 8, true, 3);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
        ASSERT_EQ(pos, 0);
        ASSERT_EQ(count, 3);
        ASSERT_EQ(lbomp__deque_next(&d, &pos), 5);
        ASSERT_EQ(pos, 3);
        ASSERT_EQ(lbomp__deque_pop(&d, 2, &at), 3);
        ASSERT_EQ(at, 3);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__TAKEN);
        ASSERT_EQ(pos, 6);
        ASSERT_EQ(count, 2);
        ASSERT_EQ(lbomp__deque_steal(&d, &pos, &count), LBOMP__EMPTY);
        /* ratio 1 in front mode: [0, 3) leaves 5, [3, 6) leaves 2 < 3: kept. */
        lbomp__deque_arm_grain(&d, 0, 8, true, 3);
        ASSERT_EQ(steal_runs(&d, 8, pc, 1, (const int64_t[]){0}, (const int64_t[]){3}), 1);
        owner_takes_rest(&d, 3, 8);

        /* A grain larger than the content: one run; a grain of 0 is 1. */
        lbomp__deque_arm_grain(&d, 2, 3, false, 10);
        ASSERT_EQ(steal_runs(&d, 8, NULL, 0, (const int64_t[]){2}, (const int64_t[]){5}), 1);
        lbomp__deque_arm_grain(&d, 0, 2, true, 0);
        ASSERT_EQ(steal_runs(&d, 8, NULL, 0, (const int64_t[]){0, 1}, (const int64_t[]){1, 2}), 2);

        /* The grain (lbomp__deque_grain): a quarter of a µs of tasks per run, at most a quarter of
         * a fair share, 1 for tasks of a quarter of a µs or more, unknown times, or one worker. */
        ASSERT_EQ(lbomp__deque_grain(50e-9, 500, 2), 5);
        ASSERT_EQ(lbomp__deque_grain(15e-9, 500, 2), 17);
        ASSERT_EQ(lbomp__deque_grain(1e-9, 500, 2), 62);
        ASSERT_EQ(lbomp__deque_grain(1e-9, 8, 2), 1);
        ASSERT_EQ(lbomp__deque_grain(0.25e-6, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_grain(20e-6, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_grain(0, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_grain(NAN, 500, 2), 1);
        ASSERT_EQ(lbomp__deque_grain(50e-9, 500, 1), 1);
        fprintf(stderr, "grain runs: ok\n");
}

int main(void)
{
        tail_mode();
        front_mode();
        grain_runs();
        batches();
        batch_floor();
        test_wanted();
        return 0;
}
