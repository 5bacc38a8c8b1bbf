/*
 * test_policies.c — properties of the centralized policies on synthetic snapshots: every task gets
 * exactly one valid worker; none moves nothing; greedy reaches λ ≤ 1.05 wherever the lower bound
 * allows it; refine leaves no worker above its factor and moves fewer tasks than greedy on mild
 * imbalance; every policy is deterministic for a snapshot.
 */
#include <math.h>
#include <string.h>

#include "mailbox.h"
#include "synth.h"
#include "test.h"

static uint32_t *run(const char *name, struct synth *y, struct lbomp__pstats *st)
{
        const struct lbomp__policy *p = lbomp__policy_find(name);
        if (!p)
                FAIL("policy %s not registered", name);
        uint32_t *dest = calloc(y->s.ntasks + 1, sizeof *dest);
        memset(st, 0, sizeof *st);
        int rc = lbomp__policy_run_offline(p, &y->s, dest, st);
        if (rc != 0)
                FAIL("policy %s failed: %d", name, rc);
        uint32_t bad = 0;
        if (lbomp__plan_check(&y->s, dest, &bad) != 0)
                FAIL("policy %s: task %u has no valid worker (%u)", name, bad, dest[bad]);
        return dest;
}

static double lower_bound_ratio(const struct synth *y)
{
        double sum = 0, mx = 0;
        for (uint32_t t = 0; t < y->s.ntasks; t++) {
                sum += y->cost[t];
                mx = y->cost[t] > mx ? y->cost[t] : mx;
        }
        double avg = sum / y->s.nworkers;
        return (mx > avg ? mx : avg) / avg; /* L* / avg */
}

static void test_all_loads(void)
{
        static const enum synth_load loads[] = {SYNTH_UNIFORM, SYNTH_LINEAR,    SYNTH_HOTSPOT,
                                                SYNTH_LBTEST,  SYNTH_ONE_HEAVY, SYNTH_ALL_BUT_ONE};
        static const uint32_t workers[] = {1, 2, 3, 16, 64};
        for (size_t l = 0; l < sizeof loads / sizeof loads[0]; l++)
                for (size_t p = 0; p < sizeof workers / sizeof workers[0]; p++) {
                        struct synth y;
                        ASSERT_EQ(synth_make(&y, 2000, workers[p], 2, loads[l], 2, 42 + l), 0);
                        struct lbomp__pstats st;
                        uint32_t *none = run("none", &y, &st);
                        ASSERT_EQ(synth_moves(&y, none), 0);
                        uint32_t *g = run("greedy", &y, &st);
                        double lg = synth_imbalance(&y, g), lstar = lower_bound_ratio(&y);
                        /* With 2000 tasks the granularity allows 1.05 unless one task is the bound.
                         */
                        if (lstar <= 1.0 + 1e-12)
                                ASSERT_DLE(lg, 1.05);
                        else
                                ASSERT_DLE(lg, lstar * 1.05);
                        uint32_t *r = run("refine", &y, &st);
                        double lr = synth_imbalance(&y, r), before = synth_imbalance(&y, y.worker);
                        ASSERT_DLE(lr, before + 1e-12); /* refine never makes it worse */
                        ASSERT_DLE(lr, st.factor + 1e-9);
                        if (before <= 1.05)
                                ASSERT_EQ(synth_moves(&y, r), 0);
                        free(none);
                        free(g);
                        free(r);
                        synth_free(&y);
                }
}

static void test_refine_moves_less_on_mild_imbalance(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 1024, 8, 1, SYNTH_UNIFORM, 0, 7), 0);
        for (uint32_t t = 0; t < 1024; t++) /* worker 0 carries 20 % more than the others */
                y.cost[t] = y.worker[t] == 0 ? 1.2 : 1.0;
        double before = synth_imbalance(&y, y.worker);
        ASSERT_DGE(before, 1.15);
        struct lbomp__pstats st;
        uint32_t *g = run("greedy", &y, &st);
        uint32_t *r = run("refine", &y, &st);
        uint32_t mg = synth_moves(&y, g), mr = synth_moves(&y, r);
        ASSERT_LT(mr, mg);
        ASSERT_GT(mr, 0);
        ASSERT_DLE(synth_imbalance(&y, r), 1.05 + 1e-9);
        free(g);
        free(r);
        synth_free(&y);
}

static void test_refine_loosens_when_stuck(void)
{
        /* One task is bigger than any light worker's room: factor 1.05 cannot succeed. */
        struct synth y;
        ASSERT_EQ(synth_make(&y, 64, 4, 1, SYNTH_UNIFORM, 0, 3), 0);
        y.cost[0] = 40; /* on worker 0 with 15 unit tasks: load 55, others 16 */
        struct lbomp__pstats st;
        uint32_t *r = run("refine", &y, &st);
        ASSERT_GT(st.attempts, 1);
        ASSERT_DGE(st.factor, 1.05);
        double load[4];
        lbomp__loads(&y.s, r, load);
        double avg = (load[0] + load[1] + load[2] + load[3]) / 4;
        for (int w = 0; w < 4; w++)
                ASSERT_DLE(load[w], st.factor * avg + 1e-9);
        /* and the factor found is the smallest on the 0.01 grid: one step lower fails */
        ASSERT_DLE(st.factor, 40.0 / avg + 0.011);
        free(r);
        synth_free(&y);
}

static void test_deterministic(void)
{
        const char *names[] = {"greedy", "refine"};
        for (int i = 0; i < 2; i++) {
                struct synth y;
                ASSERT_EQ(synth_make(&y, 5000, 32, 4, SYNTH_LBTEST, 3, 11), 0);
                struct lbomp__pstats st;
                uint32_t *a = run(names[i], &y, &st), *b = run(names[i], &y, &st);
                ASSERT(memcmp(a, b, y.s.ntasks * sizeof *a) == 0);
                free(a);
                free(b);
                synth_free(&y);
        }
}

static void test_greedy_keeps_tied_task(void)
{
        /* Two workers, equal loads from background only, one task: it stays where it is. */
        struct synth y;
        ASSERT_EQ(synth_make(&y, 1, 2, 2, SYNTH_UNIFORM, 0, 1), 0);
        y.worker[0] = 1;
        synth_reindex(&y);
        y.bg[0] = y.bg[1] = 5.0;
        struct lbomp__pstats st;
        uint32_t *g = run("greedy", &y, &st);
        ASSERT_EQ(g[0], 1);
        free(g);
        synth_free(&y);
}

static void test_refine_ratio_on_the_grid(void)
{
        /* Three workers, two equal tasks on two of them, the third idle: max/avg is exactly 1.5,
         * and f0 + 45 * 0.01 rounds an ulp below it. Found by stress_random under TSan (refine
         * returned -EAGAIN); the costs below reproduce it with the original search. */
        struct synth y;
        ASSERT_EQ(synth_make(&y, 2, 3, 1, SYNTH_UNIFORM, 0, 1), 0);
        y.worker[0] = 0;
        y.worker[1] = 1;
        synth_reindex(&y);
        y.cost[0] = y.cost[1] = 0.00018741714031780937;
        y.bg[0] = y.bg[1] = y.bg[2] = 0;
        struct lbomp__pstats st;
        uint32_t *r = run("refine", &y, &st); /* run() fails the test on any error */
        ASSERT_EQ(synth_moves(&y, r), 0);
        free(r);
        synth_free(&y);
}

/* Degenerate snapshots (no task, one task, one worker, a worker with no task): every policy gives a
 * valid plan, and under UBSan no library call gets a NULL pointer (memcpy/memset of 0 bytes). */
static void test_degenerate(void)
{
        static const uint32_t tasks[] = {0, 1, 3};
        static const uint32_t workers[] = {1, 2, 5};
        for (size_t i = 0; i < lbomp__policy_count(); i++) {
                const struct lbomp__policy *p = lbomp__policy_at(i);
                for (size_t a = 0; a < 3; a++)
                        for (size_t b = 0; b < 3; b++) {
                                struct synth y;
                                ASSERT_EQ(
                                        synth_make(&y, tasks[a], workers[b], 1, SYNTH_LINEAR, 0, 7),
                                        0);
                                uint32_t *dest = calloc(tasks[a] + 1, sizeof *dest);
                                struct lbomp__pstats st;
                                memset(&st, 0, sizeof st);
                                int rc = lbomp__policy_run_offline(p, &y.s, dest, &st);
                                if (rc != 0)
                                        FAIL("%s on %u tasks, %u workers: %d", p->name, tasks[a],
                                             workers[b], rc);
                                ASSERT_EQ(lbomp__plan_check(&y.s, dest, NULL), 0);
                                free(dest);
                                synth_free(&y);
                        }
        }
}

int main(void)
{
        test_degenerate();
        test_all_loads();
        test_refine_moves_less_on_mild_imbalance();
        test_refine_loosens_when_stuck();
        test_deterministic();
        test_greedy_keeps_tied_task();
        test_refine_ratio_on_the_grid();
        printf("policies: ok\n");
        return 0;
}
