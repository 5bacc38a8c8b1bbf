/*
 * test_loops.c — index loops (LBOMP_FOR) in real OpenMP programs. One subcommand per property:
 *   ranges     a program whose `#pragma omp parallel for` loops became `#pragma omp parallel` +
 *              LBOMP_FOR gives the same results (state and reduction) as the plain OpenMP program,
 *              every index run exactly once per step, for ranges of 0, 1, 7 and 10^6 indices and
 *              for a range that changes at every step; two loops per step, the balancer every
 *              other time step
 *   skews      two loops with opposite skews in one time step: each gets LB steps of its own at
 *              time steps 9, 19, 29 (the period counts time steps), each plan's λ ≤ 1.10 from the
 *              first LB step on; again with the second loop run twice per time step and the time
 *              steps marked with lbomp_time_step(): still 3 LB steps each, 30 time steps
 *   hot        one index costing 20000 times the others ends in a chunk of its own (through the
 *              iterator API: lbomp_for_begin/next/end)
 *   reduce     lbomp_step_sum() returns the sum of the task function's results; LBOMP_TASK_ID is
 *              the id of the task being run
 *   setup      a setup loop before the step loop does not count as a time step: 20 steps of two
 *              loops after it are 20 time steps, and each loop balances twice with period 10
 *   steal      lbomp_set_steal reaches a loop that exists already, at its next run: on a profile
 *              whose two nodes hold one worker each, with the hot half of the range flipping at
 *              every run, its thieves take chunks under "all", and none in 20 runs under "node"
 *              (a thief's victims follow the mode: without that, 207 chunks in 10 runs)
 * Usage: test_loops ITEM [PROFILE] (run with OMP_NUM_THREADS=2; steal takes a 2-node profile)
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

static lbomp_t *create(int period)
{
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        ASSERT_EQ(lbomp_set_period(lb, period), 0);
        return lb;
}

static void check_step(lbomp_t *lb, const char *where)
{
        int rc = lbomp_last_step(lb);
        if (rc != 0)
                FAIL("%s: %s", where, lbomp_last_error());
}

/* ---- ranges: same results as plain OpenMP, every index once ---- */

static double update(double x, int64_t i, int step)
{
        int work = 1 + (int)(i % 5);
        for (int k = 0; k < work; k++)
                x = x * 0.999 + 1e-3 * (double)((i + step + k) % 11);
        return x;
}

static void run_ranges(const char *what, int64_t lo_fixed, int64_t hi_fixed, int changing)
{
        enum { STEPS = 16 };
        int64_t cap = hi_fixed > 1200 ? hi_fixed : 1200;
        double *x = calloc((size_t)cap, sizeof *x), *ref = calloc((size_t)cap, sizeof *ref);
        double *y = calloc((size_t)cap, sizeof *y), *yref = calloc((size_t)cap, sizeof *yref);
        _Atomic unsigned char *seen = calloc((size_t)cap, 1);
        ASSERT(x && ref && y && yref && seen);
        lbomp_t *lb = create(2);
        for (int s = 0; s < STEPS; s++) {
                int64_t lo = lo_fixed, hi = hi_fixed;
                if (changing) { /* a range that changes at every step, within [0, 1200) */
                        lo = (s * 37) % 100;
                        hi = lo + 1 + (s * 389) % 1100;
                }
                /* the plain OpenMP program */
                double esum = 0;
#pragma omp parallel for schedule(static) reduction(+ : esum)
                for (int64_t i = lo; i < hi; i++) {
                        ref[i] = update(ref[i], i, s);
                        esum += ref[i];
                }
#pragma omp parallel for schedule(static)
                for (int64_t i = lo; i < hi; i++)
                        yref[i] = yref[i] * 0.5 + ref[i];
                /* the same with lbomp */
                double sum = 0;
#pragma omp parallel reduction(+ : sum)
                LBOMP_FOR (lb, "update", i, lo, hi) {
                        atomic_fetch_add_explicit(&seen[i], 1, memory_order_relaxed);
                        x[i] = update(x[i], i, s);
                        sum += x[i];
                }
                check_step(lb, what);
                for (int64_t i = 0; i < cap; i++) {
                        unsigned want = i >= lo && i < hi;
                        if (atomic_load(&seen[i]) != want)
                                FAIL("%s, step %d: index %lld ran %u times in [%lld, %lld)", what,
                                     s, (long long)i, (unsigned)atomic_load(&seen[i]),
                                     (long long)lo, (long long)hi);
                        atomic_store(&seen[i], 0);
                }
#pragma omp parallel
                LBOMP_FOR (lb, "mix", i, lo, hi) {
                        y[i] = y[i] * 0.5 + x[i];
                }
                check_step(lb, what);
                if (fabs(sum - esum) > 1e-9 * (fabs(esum) + 1))
                        FAIL("%s, step %d: reduction %.17g, plain OpenMP %.17g", what, s, sum,
                             esum);
        }
        for (int64_t i = 0; i < cap; i++)
                if (x[i] != ref[i] || y[i] != yref[i])
                        FAIL("%s: index %lld: %.17g %.17g, plain OpenMP %.17g %.17g", what,
                             (long long)i, x[i], y[i], ref[i], yref[i]);
        ASSERT_EQ(lbomp_steps(lb), STEPS);
        ASSERT_EQ(lbomp_loop_count(lb), 2);
        lbomp_loop_stats_t st;
        ASSERT_EQ(lbomp_loop_get(lb, 0, &st, sizeof st), 0);
        ASSERT_EQ(st.runs, STEPS);
        if (changing)
                ASSERT_GT(st.rebuilds + st.resizes, 0);
        printf("%s: ok, %u chunks, %llu runs, %zu LB steps, cut from costs %llu times, for a new "
               "range %llu, edges moved %llu\n",
               what, st.chunks, (unsigned long long)st.runs, lbomp_lb_count(st.handle),
               (unsigned long long)st.recuts, (unsigned long long)st.rebuilds,
               (unsigned long long)st.resizes);
        lbomp_destroy(lb);
        free(x);
        free(ref);
        free(y);
        free(yref);
        free((void *)seen);
}

static void item_ranges(void)
{
        run_ranges("0 indices", 0, 0, 0);
        run_ranges("1 index", 0, 1, 0);
        run_ranges("7 indices", 0, 7, 0);
        run_ranges("10^6 indices", 0, 1000000, 0);
        run_ranges("changing range", 0, 0, 1);
}

/* ---- skews: two loops, opposite skews, own LB steps every 10 time steps ---- */

static volatile double sink;

/* Work the compiler cannot fold: it starts from a value it cannot know. */
static void burn(int units)
{
        double v = sink;
        for (int k = 0; k < units * 200; k++)
                v = v * 0.9999999 + 1e-7;
        sink += v;
}

enum { N = 512 };

static int skew(int64_t i, int up)
{
        int64_t j = up ? i : N - 1 - i;
        return 1 + (int)(8 * j * j / ((int64_t)N * N)); /* 1 .. 9 */
}

static void check_loop(lbomp_t *lb, const char *name, size_t want_lbs)
{
        const lbomp_t *l = lbomp_loop(lb, name);
        if (!l)
                FAIL("no loop named %s", name);
        size_t n = lbomp_lb_count(l);
        if (n != want_lbs)
                FAIL("loop %s: %zu LB steps, expected %zu", name, n, want_lbs);
        for (size_t k = 0; k < n; k++) {
                lbomp_lb_stats_t st;
                ASSERT_EQ(lbomp_lb_get(l, k, &st, sizeof st), 0);
                ASSERT_EQ(st.error, 0);
                printf("  loop %s, LB step %zu after its run %llu: λ %.3f -> %.3f, %u moves\n",
                       name, k, (unsigned long long)st.step, st.imbalance_before,
                       st.imbalance_after, st.migrations);
                if (k == 0 && st.imbalance_before < 1.2)
                        FAIL("loop %s: λ before the first LB step %.3f: the skew did not show",
                             name, st.imbalance_before);
                if (st.imbalance_after > 1.10)
                        FAIL("loop %s: LB step %zu plans λ %.3f > 1.10", name, k,
                             st.imbalance_after);
        }
}

static void item_skews(void)
{
        for (int twice = 0; twice < 2; twice++) {
                lbomp_t *lb = create(10);
                for (int s = 0; s < 30; s++) {
                        if (twice)
                                ASSERT_EQ(lbomp_time_step(lb), 0);
#pragma omp parallel
                        {
                                LBOMP_FOR (lb, "up", i, 0, N) {
                                        burn(skew(i, 1));
                                }
                                for (int r = 0; r <= twice; r++)
                                        LBOMP_FOR (lb, "down", i, 0, N) {
                                                burn(skew(i, 0));
                                        }
                        }
                        check_step(lb, "skews");
                }
                ASSERT_EQ(lbomp_steps(lb), 30);
                printf("%s:\n", twice ? "\"down\" twice per time step, marked" : "one run each");
                check_loop(lb, "up", 3);
                check_loop(lb, "down", 3);
                lbomp_lb_stats_t st;
                lbomp_lb_get(lbomp_loop(lb, "down"), 2, &st, sizeof st);
                ASSERT_EQ(st.step, twice ? 58 : 29); /* its runs, twice per time step or once */
                lbomp_destroy(lb);
        }
}

/* ---- hot: a hot index becomes its own chunk ---- */

static void item_hot(void)
{
        /* The hot index costs more than twice what any chunk may (even where lbomp's own cost per
         * chunk, slow under the sanitizers, asks for chunks of 1 ms). */
        enum { HN = 2000, HOT = 1234 };
        lbomp_t *lb = create(3);
        int64_t hot_lo = 0, hot_hi = 0;
        for (int s = 0; s < 24; s++) {
#pragma omp parallel
                {
                        lbomp_for_t it = lbomp_for_begin(lb, "hot", 0, HN);
                        int64_t lo, hi;
                        while (lbomp_for_next(&it, &lo, &hi)) {
                                for (int64_t i = lo; i < hi; i++)
                                        burn(i == HOT ? 20000 : 1);
                                if (lo <= HOT && HOT < hi)
                                        hot_lo = lo, hot_hi = hi;
                        }
                        lbomp_for_end(&it);
                }
                check_step(lb, "hot");
                printf("step %d: hot index in [%lld, %lld)\n", s, (long long)hot_lo,
                       (long long)hot_hi);
        }
        lbomp_loop_stats_t st;
        ASSERT_EQ(lbomp_loop_get(lb, 0, &st, sizeof st), 0);
        printf("hot index %d in chunk [%lld, %lld); %u chunks of about %.3g s, cut from costs "
               "%llu times\n",
               HOT, (long long)hot_lo, (long long)hot_hi, st.chunks, st.target_s,
               (unsigned long long)st.recuts);
        ASSERT_EQ(hot_lo, HOT);
        ASSERT_EQ(hot_hi, HOT + 1);
        lbomp_destroy(lb);
}

/* ---- reduce: the callback form's sum, LBOMP_TASK_ID ---- */

struct cell {
        double v;
};

static struct cell cells[300];

static double value(void *data, lbomp_id_t id, void *arg)
{
        (void)arg;
        if ((struct cell *)data != &cells[id])
                FAIL("task %u got the data of another task", id);
        return ((struct cell *)data)->v;
}

static void item_reduce(void)
{
        lbomp_t *lb = create(3);
        double want = 0;
        for (int i = 0; i < 300; i++) {
                cells[i].v = (double)(i % 17);
                want += cells[i].v;
                ASSERT_EQ(lbomp_task_add(lb, &cells[i], sizeof cells[i], LBOMP_NODE_ANY, NULL), 0);
        }
        for (int s = 0; s < 10; s++) {
                double sum = -1;
                ASSERT_EQ(lbomp_step_sum(lb, value, NULL, &sum), 0);
                ASSERT_DEQ(sum, want);
                _Atomic int bad = 0;
                double total = 0;
#pragma omp parallel reduction(+ : total)
                LBOMP_FOR_EACH_TASK (lb, struct cell *, c) {
                        if (c != &cells[LBOMP_TASK_ID])
                                atomic_fetch_add(&bad, 1);
                        total += c->v;
                }
                ASSERT_EQ(atomic_load(&bad), 0);
                ASSERT_DEQ(total, want);
        }
        double sum;
        ASSERT_EQ(lbomp_step_sum(lb, value, NULL, NULL), -EINVAL);
        ASSERT_EQ(lbomp_step_sum(lb, NULL, NULL, &sum), -EINVAL);
        ASSERT_EQ(lbomp_steps(lb), 20);
        lbomp_destroy(lb);
        printf("reduce: ok\n");
}

/* ---- setup: a setup loop does not count ---- */

static void item_setup(void)
{
        lbomp_t *lb = create(10);
        static double a[1000];
#pragma omp parallel
        LBOMP_FOR (lb, "init", i, 0, 1000) {
                a[i] = (double)i;
        }
        for (int s = 0; s < 20; s++) {
#pragma omp parallel
                {
                        LBOMP_FOR (lb, "a", i, 0, 1000) {
                                a[i] += 1;
                                burn(1);
                        }
                        LBOMP_FOR (lb, "b", i, 0, 1000) {
                                a[i] *= 1.0000001;
                                burn(1);
                        }
                }
                check_step(lb, "setup");
        }
        ASSERT_EQ(lbomp_steps(lb), 20);
        ASSERT_EQ(lbomp_lb_count(lbomp_loop(lb, "a")), 2);
        ASSERT_EQ(lbomp_lb_count(lbomp_loop(lb, "b")), 2);
        ASSERT_EQ(lbomp_lb_count(lbomp_loop(lb, "init")), 0);
        ASSERT(lbomp_loop(lb, "nope") == NULL);
        lbomp_report(lb, stdout);
        lbomp_destroy(lb);
}

/* ---- steal: the setter reaches a loop that exists ---- */

/* Chunks stolen in the loop's windows that lie within its runs [lo, hi), and how many those are. A
 * window's count is exact; a run that was disturbed does not count towards a window, so the
 * windows need not line up with the modes' runs. */
static uint64_t stolen_within(lbomp_t *lb, uint64_t lo, uint64_t hi, int *nwin)
{
        const lbomp_t *l = lbomp_loop(lb, "half");
        ASSERT(l != NULL);
        uint64_t sum = 0;
        *nwin = 0;
        for (size_t k = lbomp_window_first(l); k < lbomp_window_count(l); k++) {
                lbomp_window_stats_t w;
                ASSERT_EQ(lbomp_window_get(l, k, &w, sizeof w), 0);
                if (w.first_step >= lo && w.first_step + w.steps <= hi) {
                        sum += w.stolen;
                        ++*nwin;
                }
        }
        return sum;
}

/* Ten runs of the loop whose hot half flips at every run. */
static void steal_runs(lbomp_t *lb)
{
        for (int s = 0; s < 10; s++) {
#pragma omp parallel
                {
                        LBOMP_FOR (lb, "half", i, 0, 2048) {
                                if ((i < 1024) == (s % 2 == 0))
                                        burn(5);
                        }
                }
                check_step(lb, "steal");
        }
}

static void item_steal(const char *profile)
{
        static const char *const mode[] = {"all", "node"};
        lbomp_t *lb = create(5);
        ASSERT_EQ(lbomp_set_topology(lb, profile), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        uint64_t runs = 0, stolen[2];
        for (int m = 0; m < 2; m++) {
                ASSERT_EQ(lbomp_set_steal(lb, mode[m]), 0);
                uint64_t lo = runs;
                int nwin = 0;
                /* node: 20 runs, at least two whole windows of 5; all: until some chunk was
                 * stolen in a whole window of its runs (a victim kept off its core before it set
                 * out its chunks cannot be stolen from: on a machine busy with other work that
                 * can be every run of a window), at most 200 runs */
                do {
                        steal_runs(lb);
                        runs += 10;
                        stolen[m] = stolen_within(lb, lo, runs, &nwin);
                } while (m != 1 ? stolen[m] == 0 && runs - lo < 200 : runs - lo < 20);
                printf("LBOMP_STEAL %s by the setter: %llu chunks stolen in %d whole windows of "
                       "its "
                       "%llu runs\n",
                       mode[m], (unsigned long long)stolen[m], nwin,
                       (unsigned long long)(runs - lo));
                ASSERT_GT(nwin, 0);
        }
        ASSERT_GT(stolen[0], 0);
        ASSERT_EQ(stolen[1], 0);
        lbomp_destroy(lb);
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "steal") == 0) {
                item_steal(argv[2]);
                return 0;
        }
        if (argc != 2)
                FAIL("usage: test_loops ranges|skews|hot|reduce|setup|steal PROFILE");
        if (strcmp(argv[1], "ranges") == 0)
                item_ranges();
        else if (strcmp(argv[1], "skews") == 0)
                item_skews();
        else if (strcmp(argv[1], "hot") == 0)
                item_hot();
        else if (strcmp(argv[1], "reduce") == 0)
                item_reduce();
        else if (strcmp(argv[1], "setup") == 0)
                item_setup();
        else
                FAIL("unknown item %s", argv[1]);
        return 0;
}
