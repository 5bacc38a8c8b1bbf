/*
 * test_interleave.c — loads that move within a window (src/interleave.c):
 *  - the interleaving deals the tasks in the order of their ids to the workers in turn: with
 *    equal speeds, the k-th id goes to worker k mod P, whatever the snapshot's order and the
 *    current mapping; each worker's count is lbomp__place_counts'; with speeds {2, 1} the fast
 *    worker gets two thirds, two of every three consecutive ids;
 *  - when it is wanted: the window's per-step λ at least 1 + 4 × the tolerance and its excess at
 *    least twice the window's;
 *  - the per-step maxima it is judged on: a hotspot of two tasks going round eight in four steps
 *    costs blocks 22 a step and the interleaving 13;
 *  - the probation of an interleaving (struct lbomp__probe): kept when the window after it runs
 *    its steps at most 2 % slower, or with too few steps to tell (fewer than 2, or none before);
 *    undone beyond that, the next interleaving then waiting 2, 4 … 32 LB steps, counted down one
 *    per LB step; one kept ends the back-off's growth.
 */
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "test.h"

static void equal_speeds_round_robin(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 64, 4, 2, SYNTH_LINEAR, 0, 1), 0);
        /* ids in reverse: the order is the ids', not the snapshot's */
        for (uint32_t t = 0; t < 64; t++)
                y.id[t] = 1000 + 63 - t;
        ASSERT_EQ(lbomp__interleave(&y.s, y.dest), 0);
        uint32_t count[4] = {0};
        for (uint32_t t = 0; t < 64; t++) {
                uint32_t k = 63 - t; /* rank of the id */
                if (y.dest[t] != k % 4)
                        FAIL("task %u (id rank %u) to worker %u, expected %u", t, k, y.dest[t],
                             k % 4);
                count[y.dest[t]]++;
        }
        for (uint32_t w = 0; w < 4; w++)
                ASSERT_EQ(count[w], 16);
        /* uneven counts: 10 tasks on 4 workers, the first ones one more, still in turns */
        synth_free(&y);
        ASSERT_EQ(synth_make(&y, 10, 4, 1, SYNTH_UNIFORM, 0, 2), 0);
        ASSERT_EQ(lbomp__interleave(&y.s, y.dest), 0);
        uint32_t want[4], got[4] = {0};
        ASSERT_EQ(lbomp__place_counts(NULL, NULL, 4, 10, want), 0);
        for (uint32_t t = 0; t < 10; t++)
                got[y.dest[t]]++;
        for (uint32_t w = 0; w < 4; w++)
                ASSERT_EQ(got[w], want[w]);
        for (uint32_t t = 1; t < 10; t++)
                ASSERT_NE(y.dest[t], y.dest[t - 1]);
        synth_free(&y);
}

static void speeds_share(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 30, 2, 1, SYNTH_UNIFORM, 0, 3), 0);
        double sp[2] = {2.0, 1.0};
        synth_speeds(&y, sp, 2);
        ASSERT_EQ(lbomp__interleave(&y.s, y.dest), 0);
        uint32_t fast = 0;
        for (uint32_t t = 0; t < 30; t++)
                fast += y.dest[t] == 0;
        ASSERT_EQ(fast, 20);
        for (uint32_t t = 0; t + 3 <= 30; t++) {
                uint32_t f = (y.dest[t] == 0) + (y.dest[t + 1] == 0) + (y.dest[t + 2] == 0);
                if (f != 2)
                        FAIL("ids %u..%u: %u of 3 on the fast worker, expected 2", t, t + 2, f);
        }
        synth_free(&y);
}

static void wanted(void)
{
        ASSERT(lbomp__interleave_wanted(1.33, 1.02, 0.05));
        ASSERT(lbomp__interleave_wanted(1.40, 1.19, 0.05));
        ASSERT(!lbomp__interleave_wanted(1.33, 1.30, 0.05)); /* a hotspot that stays */
        ASSERT(!lbomp__interleave_wanted(1.15, 1.00, 0.05)); /* steps within 4 × tolerance */
        ASSERT(!lbomp__interleave_wanted(1.30, 1.00, 0.10)); /* a wider tolerance */
        ASSERT(!lbomp__interleave_wanted(1.00, 1.00, 0.05));
}

static void steps_max(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 8, 2, 1, SYNTH_UNIFORM, 0, 4), 0); /* blocks {0..3}, {4..7} */
        double c[4][8], *sc[4], load[3];
        for (uint32_t k = 0; k < 4; k++) {
                for (uint32_t t = 0; t < 8; t++)
                        c[k][t] = t / 2 == k ? 10.0 : 1.0;
                sc[k] = c[k];
        }
        const double *const *step = (const double *const *)sc;
        ASSERT_DEQ(lbomp__steps_max(&y.s, y.s.worker, step, 4, load), 22.0);
        ASSERT_EQ(lbomp__interleave(&y.s, y.dest), 0);
        ASSERT_DEQ(lbomp__steps_max(&y.s, y.dest, step, 4, load), 13.0);
        ASSERT_DEQ(lbomp__steps_max(&y.s, y.dest, step, 0, load), 0.0);
        /* at speeds {2, 1} the fast worker's time halves */
        double sp[2] = {2.0, 1.0};
        synth_speeds(&y, sp, 2);
        ASSERT_DEQ(lbomp__steps_max(&y.s, y.s.worker, step, 1, load), 11.0); /* 22 / 2 vs 4 */
        synth_free(&y);
}

static void probation(void)
{
        struct lbomp__probe p = {.pending = true, .before = 1.0};
        ASSERT(!lbomp__probe_verdict(&p, 1.02, 8)); /* within 2 %: kept */
        ASSERT(!p.pending);
        ASSERT_EQ(p.backoff.wait, 0);
        ASSERT(lbomp__spread_open(&p.backoff));
        p.pending = true;
        ASSERT(!lbomp__probe_verdict(&p, 5.0, 1)); /* one step: too few to tell */
        p.before = 0;
        ASSERT(!lbomp__probe_verdict(&p, 5.0, 8)); /* nothing before to compare with */
        p.before = 1.0;
        uint32_t want[] = {2, 4, 8, 16, 32, 32};
        for (int k = 0; k < 6; k++) {
                p.pending = true;
                ASSERT(lbomp__probe_verdict(&p, 1.03, 8)); /* 3 % slower: undone */
                ASSERT_EQ(p.backoff.wait, want[k]);
                ASSERT_DEQ(p.after, 1.03);
                for (uint32_t i = 0; i < want[k]; i++)
                        ASSERT(!lbomp__spread_open(&p.backoff)); /* held for want[k] LB steps */
                ASSERT(lbomp__spread_open(&p.backoff));
        }
        p.pending = true;
        ASSERT(!lbomp__probe_verdict(&p, 0.9, 8)); /* kept: the back-off starts again at 2 */
        p.pending = true;
        ASSERT(lbomp__probe_verdict(&p, 1.1, 8));
        ASSERT_EQ(p.backoff.wait, 2);
}

int main(void)
{
        probation();
        equal_speeds_round_robin();
        speeds_share();
        wanted();
        steps_max();
        return 0;
}
