/*
 * test_for_misuse.c — a misuse of LBOMP_FOR ends in an error with a message that names the loop and
 * says what happened, never in a hang, an index run twice, or a run that silently ran nothing. One
 * subcommand per misuse, each a meson test with a timeout of seconds:
 *   outside    LBOMP_FOR outside any parallel region: -EPERM, no index ran; later runs work
 *   single     LBOMP_FOR inside `single` (LBOMP_STEP_TIMEOUT=1): -ETIMEDOUT, no index ran; that
 *              loop refuses its later runs at once, another loop still runs
 *   ranges     the threads of the team pass different ranges: -EINVAL naming two of them, no index
 *              ran; the next run with one range runs (the loop is not poisoned)
 *   same-name  one name used for two ranges in one time step: -EINVAL, the second run ran nothing;
 *              with marked time steps at once, without marks from the second time step on
 *   break      a break out of the body: -EINTR and a message; every index ran at most once
 *   name       a NULL or empty name: -EINVAL
 *   nested     two nested teams run one loop at once: each team's run is whole or refused (never
 *              an index twice, never part of a run), the second team is refused (-EBUSY)
 *   handle     a loop's handle given to a setter or to LBOMP_FOR: -EPERM
 * Usage: test_for_misuse ITEM
 */
#include <errno.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"
#include "test.h"

#define N 300

static _Atomic int runs[N];

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void reset(void)
{
        for (int i = 0; i < N; i++)
                atomic_store(&runs[i], 0);
}

static int total(void)
{
        int t = 0;
        for (int i = 0; i < N; i++)
                t += atomic_load(&runs[i]);
        return t;
}

static int max_runs(void)
{
        int m = 0;
        for (int i = 0; i < N; i++)
                if (atomic_load(&runs[i]) > m)
                        m = atomic_load(&runs[i]);
        return m;
}

static void body(int64_t i)
{
        atomic_fetch_add_explicit(&runs[i], 1, memory_order_relaxed);
}

static lbomp_t *create(void)
{
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        reset();
        return lb;
}

/* A correct run of loop `name`: every index once, result 0. */
static void run_ok(lbomp_t *lb, const char *name)
{
        reset();
#pragma omp parallel num_threads(2)
        LBOMP_FOR (lb, name, i, 0, N) {
                body(i);
        }
        if (lbomp_last_step(lb) != 0)
                FAIL("a correct run of %s: %s", name, lbomp_last_error());
        ASSERT_EQ(total(), N);
        ASSERT_EQ(max_runs(), 1);
}

static void t_outside(void)
{
        lbomp_t *lb = create();
        LBOMP_FOR (lb, "x", i, 0, N) {
                body(i);
        }
        ASSERT_EQ(lbomp_last_step(lb), -EPERM);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "LBOMP_FOR(\"x\")");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "outside a parallel region");
        printf("outside: %s\n", lbomp_last_error());
        ASSERT_EQ(total(), 0);
        run_ok(lb, "x");
        lbomp_destroy(lb);
}

static void t_construct(const char *which)
{
        lbomp_t *lb = create();
        run_ok(lb, "x");
        reset();
        double t0 = now_s();
        if (strcmp(which, "single") == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
                LBOMP_FOR (lb, "x", i, 0, N) {
                        body(i);
                }
        } else {
#pragma omp parallel num_threads(2)
#pragma omp master
                LBOMP_FOR (lb, "x", i, 0, N) {
                        body(i);
                }
        }
        double took = now_s() - t0;
        ASSERT_EQ(lbomp_last_step(lb), -ETIMEDOUT);
        printf("%s: refused after %.2f s: %s\n", which, took, lbomp_last_error());
        ASSERT_STR_CONTAINS(lbomp_last_error(), "LBOMP_FOR(\"x\")");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "only 1 of the 2 threads");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "single");
        ASSERT_EQ(total(), 0);
        ASSERT_DLE(took, 5.0);
        /* That loop refuses its later runs at once; another loop runs. */
        t0 = now_s();
#pragma omp parallel num_threads(2)
        LBOMP_FOR (lb, "x", i, 0, N) {
                body(i);
        }
        ASSERT_EQ(lbomp_last_step(lb), -ETIMEDOUT);
        ASSERT_EQ(total(), 0);
        ASSERT_DLE(now_s() - t0, 1.0);
        run_ok(lb, "y");
        lbomp_destroy(lb);
}

static void t_ranges(void)
{
        lbomp_t *lb = create();
        run_ok(lb, "x");
        reset();
#pragma omp parallel num_threads(2)
        LBOMP_FOR (lb, "x", i, 0, N - omp_get_thread_num()) {
                body(i);
        }
        ASSERT_EQ(lbomp_last_step(lb), -EINVAL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "passed different ranges");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "thread 1: [0, 299)");
        printf("ranges: %s\n", lbomp_last_error());
        ASSERT_EQ(total(), 0);
        run_ok(lb, "x");
        lbomp_destroy(lb);
}

/* Loop "a", then "x" over [0, N), then "x" over [0, N / 2): with marks, the third run is refused
 * in every time step; without, from the second on (the first time step cannot tell a setup loop
 * from the step's first loop). */
static void t_same_name(void)
{
        for (int marked = 1; marked >= 0; marked--) {
                lbomp_t *lb = create();
                for (int s = 0; s < 4; s++) {
                        if (marked)
                                ASSERT_EQ(lbomp_time_step(lb), 0);
                        run_ok(lb, "a");
                        run_ok(lb, "x");
                        reset();
#pragma omp parallel num_threads(2)
                        LBOMP_FOR (lb, "x", i, 0, N / 2) {
                                body(i);
                        }
                        int rc = lbomp_last_step(lb);
                        if (marked || s > 0) {
                                ASSERT_EQ(rc, -EINVAL);
                                ASSERT_STR_CONTAINS(lbomp_last_error(),
                                                    "LBOMP_FOR(\"x\") ran twice in time step");
                                ASSERT_STR_CONTAINS(lbomp_last_error(), "[0, 300) then [0, 150)");
                                ASSERT_EQ(total(), 0);
                        }
                }
                printf("same-name (%s): %s\n", marked ? "marked" : "not marked",
                       lbomp_last_error());
                lbomp_destroy(lb);
        }
}

static void t_break(void)
{
        lbomp_t *lb = create();
        for (int s = 0; s < 20; s++) {
                reset();
#pragma omp parallel num_threads(2)
                LBOMP_FOR (lb, "x", i, 0, N) {
                        if (i == 100)
                                break;
                        body(i);
                }
                ASSERT_EQ(lbomp_last_step(lb), -EINTR);
                ASSERT_STR_CONTAINS(lbomp_last_error(), "LBOMP_FOR(\"x\"): a break left the body");
                ASSERT_LE(max_runs(), 1);
                ASSERT_EQ(atomic_load(&runs[100]), 0);
                ASSERT_LT(total(), N);
        }
        printf("break: %s\n", lbomp_last_error());
        run_ok(lb, "x");
        lbomp_destroy(lb);
}

static void t_name(void)
{
        lbomp_t *lb = create();
        for (int k = 0; k < 2; k++) {
#pragma omp parallel num_threads(2)
                LBOMP_FOR (lb, k ? "" : NULL, i, 0, N) {
                        body(i);
                }
                ASSERT_EQ(lbomp_last_step(lb), -EINVAL);
                ASSERT_STR_CONTAINS(lbomp_last_error(), k ? "name is empty" : "name is NULL");
        }
        ASSERT_EQ(total(), 0);
        lbomp_destroy(lb);
}

/* Two nested teams run one loop: each team's run is whole or refused (never an index twice in a
 * run, never part of a run), and once they overlap the second team is refused. */
static _Atomic int team_runs[2][N];

static void t_nested(void)
{
        omp_set_max_active_levels(2);
        lbomp_t *lb = create();
        run_ok(lb, "x");
        for (int rep = 0; rep < 5; rep++) {
                memset((void *)team_runs, 0, sizeof team_runs);
#pragma omp parallel num_threads(2)
                {
                        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
                        LBOMP_FOR (lb, "x", i, 0, N) {
                                atomic_fetch_add(&team_runs[outer][i], 1);
                                double t0 = now_s(); /* long enough for the teams to overlap */
                                while (now_s() - t0 < 20e-6)
                                        ;
                        }
                }
                for (int t = 0; t < 2; t++)
                        for (int i = 0; i < N; i++)
                                if (atomic_load(&team_runs[t][i]) !=
                                            atomic_load(&team_runs[t][0]) ||
                                    atomic_load(&team_runs[t][i]) > 1)
                                        FAIL("rep %d: team %d ran index %d %d times, index 0 %d "
                                             "times",
                                             rep, t, i, atomic_load(&team_runs[t][i]),
                                             atomic_load(&team_runs[t][0]));
        }
        ASSERT_EQ(lbomp_last_step(lb), -EBUSY);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "second OpenMP team");
        printf("nested: %s\n", lbomp_last_error());
        lbomp_destroy(lb);
}

static void t_handle(void)
{
        lbomp_t *lb = create();
        run_ok(lb, "x");
        lbomp_t *h = (lbomp_t *)lbomp_loop(lb, "x"); /* what the const is there to prevent */
        ASSERT(h != NULL);
        ASSERT_EQ(lbomp_set_period(h, 3), -EPERM);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "handle of an LBOMP_FOR loop");
        int x = 0;
        ASSERT_EQ(lbomp_task_add(h, &x, 4, LBOMP_NODE_ANY, NULL), -EPERM);
        reset();
#pragma omp parallel num_threads(2)
        LBOMP_FOR (h, "x", i, 0, N) {
                body(i);
        }
        ASSERT_EQ(lbomp_last_step(lb), -EPERM);
        ASSERT_EQ(total(), 0);
        /* a setter on the runtime while no loop runs is fine; the loop follows it */
        ASSERT_EQ(lbomp_set_period(lb, 3), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 3), -EBUSY); /* the loops share the team's layout */
        run_ok(lb, "x");
        lbomp_destroy(lb);
}

int main(int argc, char **argv)
{
        ASSERT(argc > 1);
        const char *item = argv[1];
        if (strcmp(item, "outside") == 0)
                t_outside();
        else if (strcmp(item, "single") == 0 || strcmp(item, "master") == 0)
                t_construct(item);
        else if (strcmp(item, "ranges") == 0)
                t_ranges();
        else if (strcmp(item, "same-name") == 0)
                t_same_name();
        else if (strcmp(item, "break") == 0)
                t_break();
        else if (strcmp(item, "name") == 0)
                t_name();
        else if (strcmp(item, "nested") == 0)
                t_nested();
        else if (strcmp(item, "handle") == 0)
                t_handle();
        else
                FAIL("unknown item %s", item);
        printf("%s: ok\n", item);
        return 0;
}
