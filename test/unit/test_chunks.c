/*
 * test_chunks.c — the pure parts of index loops, by hand:
 * - cutting pieces into chunks: even cuts; cuts at equal shares of a skewed cost; a hot index
 *   becomes a chunk of its own and stays whole; no cut crosses a change of worker, each chunk keeps
 *   its pieces' worker; zero-cost runs become one chunk; chunks always cover the range, contiguous
 *   and non-empty, also for random pieces;
 * - the target cost of a chunk: a tolerance-fine share of a worker's load, never below 200 times
 *   lbomp's cost per chunk, never above a worker's load;
 * - time steps: the first task set is the head; a setup loop gives the head to the first loop
 *   that runs again, and gets it back if it recurs; a loop run twice in a time step is reported;
 *   marks override; the period counts time steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chunks.h"
#include "tasks.h"
#include "tsteps.h"
#include "test.h"

static void check_cover(const struct lbomp__chunk *c, uint32_t n, int64_t lo, int64_t hi)
{
        ASSERT(n > 0);
        ASSERT_EQ(c[0].lo, lo);
        ASSERT_EQ(c[n - 1].hi, hi);
        for (uint32_t i = 0; i < n; i++) {
                ASSERT_LT(c[i].lo, c[i].hi);
                if (i)
                        ASSERT_EQ(c[i].lo, c[i - 1].hi);
        }
}

static void cut(const struct lbomp__seg *p, uint32_t np, double target, struct lbomp__chunk **c,
                uint32_t **owner, uint32_t *n)
{
        ASSERT_EQ(lbomp__chunks_cut(p, np, target, c, owner, n), 0);
        check_cover(*c, *n, p[0].lo, p[np - 1].hi);
}

static void test_even(void)
{
        struct lbomp__seg one = {0, 1000, 1000, LBOMP__PENDING};
        struct lbomp__chunk *c;
        uint32_t *o, n;
        cut(&one, 1, 100, &c, &o, &n);
        ASSERT_EQ(n, 10);
        for (uint32_t i = 0; i < n; i++) {
                ASSERT_EQ(c[i].hi - c[i].lo, 100);
                ASSERT_EQ(o[i], LBOMP__PENDING);
        }
        free(c);
        free(o);
        /* more chunks wanted than indices: one index each */
        struct lbomp__seg seven = {-3, 4, 7, 0};
        cut(&seven, 1, 0.01, &c, &o, &n);
        ASSERT_EQ(n, 7);
        free(c);
        free(o);
        /* a single index */
        struct lbomp__seg single = {41, 42, 5, 1};
        cut(&single, 1, 1, &c, &o, &n);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(o[0], 1);
        free(c);
        free(o);
}

static void test_skew(void)
{
        /* [0, 100) costs 1 per index, [100, 200) costs 3 per index: 400 in all, target 50 -> 8
         * chunks, 2 over the cheap half, 6 over the dear one */
        struct lbomp__seg p[] = {{0, 100, 100, 0}, {100, 200, 300, 0}};
        struct lbomp__chunk *c;
        uint32_t *o, n;
        cut(p, 2, 50, &c, &o, &n);
        ASSERT_EQ(n, 8);
        ASSERT_EQ(c[0].hi, 50);
        ASSERT_EQ(c[1].hi, 100);
        ASSERT_EQ(c[2].hi, 117); /* 100 + 50 / 3 = 116.67 rounds to 117 */
        for (uint32_t i = 2; i < n; i++)
                ASSERT(c[i].hi - c[i].lo >= 16 && c[i].hi - c[i].lo <= 17);
        free(c);
        free(o);
}

static void test_hot_index(void)
{
        /* 1000 indices of cost 1, index 500 costs 100: the hot index ends alone in its chunk */
        struct lbomp__seg p[] = {{0, 500, 500, 0}, {500, 501, 100, 0}, {501, 1000, 499, 0}};
        struct lbomp__chunk *c;
        uint32_t *o, n;
        cut(p, 3, 20, &c, &o, &n);
        int alone = 0;
        for (uint32_t i = 0; i < n; i++)
                alone += c[i].lo == 500 && c[i].hi == 501;
        ASSERT_EQ(alone, 1);
        /* around it, chunks of about 20 indices: the cost is even there */
        for (uint32_t i = 0; i < n; i++)
                if (c[i].lo != 500)
                        ASSERT(c[i].hi - c[i].lo <= 25);
        free(c);
        free(o);
        /* a chunk of 17 indices whose cost is one hot index: split down to single indices */
        struct lbomp__seg q[] = {{0, 17, 50, 0}};
        cut(q, 1, 1, &c, &o, &n);
        ASSERT_EQ(n, 17);
        free(c);
        free(o);
}

static void test_owners(void)
{
        /* owners 0 0 1 0: runs [0, 20), [20, 30), [30, 40); no chunk crosses 20 or 30 */
        struct lbomp__seg p[] = {{0, 10, 10, 0}, {10, 20, 10, 0}, {20, 30, 10, 1}, {30, 40, 10, 0}};
        struct lbomp__chunk *c;
        uint32_t *o, n;
        cut(p, 4, 1000, &c, &o, &n); /* a target above everything: one chunk per run */
        ASSERT_EQ(n, 3);
        ASSERT_EQ(c[0].hi, 20);
        ASSERT_EQ(o[0], 0);
        ASSERT_EQ(c[1].hi, 30);
        ASSERT_EQ(o[1], 1);
        ASSERT_EQ(o[2], 0);
        free(c);
        free(o);
        cut(p, 4, 4, &c, &o, &n);
        for (uint32_t i = 0; i < n; i++) {
                ASSERT(!(c[i].lo < 20 && c[i].hi > 20));
                ASSERT(!(c[i].lo < 30 && c[i].hi > 30));
                ASSERT_EQ(o[i], c[i].lo >= 20 && c[i].lo < 30 ? 1 : 0);
        }
        free(c);
        free(o);
        /* a run that costs nothing becomes one chunk */
        struct lbomp__seg z[] = {{0, 50, 0, 2}, {50, 60, 0, 2}};
        cut(z, 2, 1, &c, &o, &n);
        ASSERT_EQ(n, 1);
        free(c);
        free(o);
}

static void test_random(void)
{
        srand(7);
        for (int round = 0; round < 2000; round++) {
                uint32_t np = 1 + (uint32_t)(rand() % 12);
                struct lbomp__seg p[12];
                int64_t at = rand() % 1000 - 500;
                double total = 0;
                for (uint32_t i = 0; i < np; i++) {
                        int64_t len = 1 + rand() % (rand() % 4 ? 50 : 3);
                        double cost = rand() % 5 ? (double)(rand() % 1000) / 7 : 0;
                        p[i] = (struct lbomp__seg){at, at + len, cost, (uint32_t)(rand() % 3)};
                        at += len;
                        total += cost;
                }
                struct lbomp__chunk *c;
                uint32_t *o, n;
                double target = total > 0 ? total / (1 + rand() % 40) : 1;
                cut(p, np, target, &c, &o, &n);
                /* every chunk lies within one run of one owner, and has that owner */
                for (uint32_t i = 0; i < n; i++)
                        for (uint32_t k = 0; k < np; k++)
                                if (p[k].lo < c[i].hi && c[i].lo < p[k].hi)
                                        ASSERT_EQ(o[i], p[k].owner);
                free(c);
                free(o);
        }
}

static void test_target(void)
{
        /* 4 ms over 2 workers, tolerance 0.05: 2 ms share, 50 µs chunks */
        ASSERT(fabs(lbomp__chunks_target(4e-3, 2, 0.05, 20e-9) - 50e-6) < 1e-12);
        /* 10 ms: 125 µs would be the share's fraction, but chunks stay below a time slice */
        ASSERT(fabs(lbomp__chunks_target(10e-3, 2, 0.05, 20e-9) - LBOMP__CHUNK_MAX_S) < 1e-12);
        /* unless lbomp's own cost per chunk asks for longer ones */
        ASSERT(fabs(lbomp__chunks_target(10e-3, 2, 0.05, 1e-6) - 200e-6) < 1e-12);
        /* a cheap loop: 200 times the per-chunk cost */
        ASSERT(fabs(lbomp__chunks_target(200e-6, 2, 0.05, 20e-9) - 4e-6) < 1e-12);
        /* tinier still: never above one worker's share */
        ASSERT(fabs(lbomp__chunks_target(2e-6, 2, 0.05, 20e-9) - 1e-6) < 1e-12);
}

/* Runs task sets by letter ('A'..'Z') in the order given; returns the time step of each run and
 * whether it was a second run in its time step ('!'). */
static void seq(struct lbomp__tsteps *ts, struct lbomp__tset *set, const char *runs, char *out)
{
        for (const char *r = runs; *r; r++) {
                if (*r == '|') {
                        lbomp__tsteps_mark(ts);
                        continue;
                }
                bool again = lbomp__tsteps_begin(ts, &set[*r - 'A']);
                *out++ = (char)('0' + set[*r - 'A'].t);
                if (again)
                        *out++ = '!';
        }
        *out = 0;
}

static void check_seq(const char *runs, const char *want)
{
        struct lbomp__tsteps ts;
        struct lbomp__tset set[26];
        memset(set, 0, sizeof set);
        lbomp__tsteps_init(&ts);
        char got[256];
        seq(&ts, set, runs, got);
        if (strcmp(got, want) != 0)
                FAIL("runs %s: time steps %s, expected %s", runs, got, want);
        lbomp__tsteps_destroy(&ts);
}

static void test_tsteps(void)
{
        check_seq("ABABAB", "001122");         /* two loops per step: A is the head */
        check_seq("AAAA", "0123");             /* one loop (its range may change) */
        check_seq("IABABAB", "0001122");       /* a setup loop I: A takes over */
        check_seq("ABBABBABB", "001222!333!"); /* B twice per step: A the head again */
        check_seq("|A|B|AB|A", "01223");       /* marks: B alone in step 1, A and B in step 2 */
        check_seq("|AA|A", "00!1");            /* after a mark, only marks begin time steps */
        /* the period counts time steps, whatever the runs per step */
        struct lbomp__tsteps ts;
        struct lbomp__tset set[2];
        memset(set, 0, sizeof set);
        lbomp__tsteps_init(&ts);
        int lbs[2] = {0, 0};
        for (int step = 0; step < 30; step++) {
                lbomp__tsteps_mark(&ts);
                for (int k = 0; k < 3; k++) { /* A once, B twice per time step */
                        struct lbomp__tset *s = &set[k ? 1 : 0];
                        lbomp__tsteps_begin(&ts, s);
                        if (lbomp__tsteps_due(&ts, s, 1, 10)) {
                                ASSERT_EQ(s->t % 10, 9);
                                lbs[k ? 1 : 0]++;
                        }
                }
        }
        ASSERT_EQ(lbs[0], 3);
        ASSERT_EQ(lbs[1], 3);
        ASSERT_EQ(lbomp__tsteps_count(&ts), 30);
        /* nothing measured in the window: no LB step */
        ASSERT(!lbomp__tsteps_due(&ts, &set[0], 0, 1));
        lbomp__tsteps_destroy(&ts);
}

int main(void)
{
        test_even();
        test_skew();
        test_hot_index();
        test_owners();
        test_random();
        test_target();
        test_tsteps();
        printf("ok\n");
        return 0;
}
