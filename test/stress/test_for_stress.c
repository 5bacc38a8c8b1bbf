/*
 * test_for_stress.c — index loops (LBOMP_FOR) under random use: every registered policy, 1 to 6
 * threads (oversubscribed on purpose), stealing off/node/all, the balancer every 1 to 3 time steps
 * (so chunks are cut again often), one to three named loops per time step over ranges of 0, 1, 7,
 * 10^6 indices, random ranges and ranges that change at every step, the team size changed now and
 * then, time steps marked or not, the macro and the iterator API. After every run each index of
 * its range ran exactly once and no other index ran, the run reported no error, and at the end each
 * index's state equals the one computed serially.
 *
 * Usage: test_for_stress [--time S] [--seed N [--policy P --threads T --steal off|node|all]]
 * Without --seed it sweeps every (policy, steal) case with random thread counts, then keeps drawing
 * random cases until S seconds (default 20) have passed. A failure prints the command that
 * reproduces it.
 */
#include <inttypes.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"
#include "report.h"
#include "test.h"

#define BIG         1000000
#define MAX_THREADS 6
#define NLOOPS      3

static const char *const steal_names[] = {"off", "node", "all"};
static const char *const loop_names[NLOOPS] = {"force", "integrate", "reduce"};

struct kase {
        uint64_t seed;
        const char *policy;
        int threads;
        int steal;
};
static struct kase K;

#define CFAIL(...)                                                                                 \
        do {                                                                                       \
                fprintf(stderr, "for_stress: ");                                                   \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr,                                                                    \
                        "\nreproduce: test_for_stress --seed %" PRIu64                             \
                        " --policy %s --threads %d --steal %s\n",                                  \
                        K.seed, K.policy, K.threads, steal_names[K.steal]);                        \
                exit(1);                                                                           \
        } while (0)

static uint64_t splitmix(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
        return (uint32_t)(splitmix(s) % n);
}

static _Atomic unsigned char *seen; /* [BIG] runs of each index in the current run */
static double *state[NLOOPS], *ref[NLOOPS];

/* An index's work: cheap, skewed differently per loop, so that the balancer has work to do. */
static double update(double x, int loop, int64_t i, int step)
{
        int n = 1 + (int)((i * (loop + 3) + step / 4) % 13 == 0 ? 40 : (i + loop) % 3);
        for (int k = 0; k < n; k++)
                x = x * 0.999 + 1e-3 * (double)((i + k + step) % 7);
        return x;
}

static void body(int loop, int64_t i, int step)
{
        atomic_fetch_add_explicit(&seen[i], 1, memory_order_relaxed);
        state[loop][i] = update(state[loop][i], loop, i, step);
}

static void check_run(lbomp_t *lb, int loop, int step, int64_t lo, int64_t hi, int64_t *dirty)
{
        int rc = lbomp_last_step(lb);
        if (rc != 0)
                CFAIL("step %d, loop %s over [%" PRId64 ", %" PRId64 "): %s", step,
                      loop_names[loop], lo, hi, lbomp_last_error());
        /* every index of the range once; outside it (up to the highest index ever touched) none */
        int64_t top = hi > *dirty ? hi : *dirty;
        for (int64_t i = 0; i < top; i++) {
                unsigned want = i >= lo && i < hi;
                unsigned got = atomic_load_explicit(&seen[i], memory_order_relaxed);
                if (got != want)
                        CFAIL("step %d, loop %s over [%" PRId64 ", %" PRId64 "): index %" PRId64
                              " ran %u times",
                              step, loop_names[loop], lo, hi, i, got);
                if (got)
                        atomic_store_explicit(&seen[i], 0, memory_order_relaxed);
        }
        *dirty = hi;
        for (int64_t i = lo; i < hi; i++)
                ref[loop][i] = update(ref[loop][i], loop, i, step);
}

/* A range for a loop: the edges (0, 1, 7 indices), now and then 10^6, random, or one that changes
 * at every step (mode 4). */
static void pick_range(uint64_t *rng, int mode, int step, int64_t *lo, int64_t *hi)
{
        switch (mode) {
        case 0:
                *lo = 0, *hi = 0;
                break;
        case 1:
                *lo = 5, *hi = 6;
                break;
        case 2:
                *lo = 0, *hi = 7;
                break;
        case 3:
                *lo = 0, *hi = BIG;
                break;
        case 4:
                *lo = (int64_t)below(rng, 50);
                *hi = *lo + (int64_t)below(rng, 4000);
                break;
        default: /* fixed random, drawn once per case by the caller through the seed */
                *lo = mode - 5;
                *hi = *lo + 100 + (mode * 131) % 3000;
                break;
        }
        (void)step;
}

static void run_case(const struct kase *k)
{
        K = *k;
        uint64_t rng = k->seed;
        setenv("LBOMP_STEAL", steal_names[k->steal], 1);
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                CFAIL("lbomp_create: %s", lbomp_last_error());
        unsetenv("LBOMP_STEAL");
        int rc;
        if ((rc = lbomp_set_policy(lb, k->policy)) != 0 ||
            (rc = lbomp_set_period(lb, 1 + (int)below(&rng, 3))) != 0 ||
            (rc = lbomp_set_workers(lb, k->threads)) != 0 ||
            (rc = lbomp_set_seed(lb, k->seed)) != 0)
                CFAIL("setup: %s", lbomp_strerror(rc));
        int nloops = 1 + (int)below(&rng, NLOOPS), mode[NLOOPS];
        for (int l = 0; l < nloops; l++) {
                uint32_t m = below(&rng, 16);
                /* 10^6 indices rarely: under TSan every index costs. */
                mode[l] = m < 3    ? (int)m
                          : m == 3 ? (below(&rng, 4) == 0 ? 3 : 4)
                          : m < 8  ? 4
                                   : 5 + (int)m;
                memset(state[l], 0, BIG * sizeof(double));
                memset(ref[l], 0, BIG * sizeof(double));
        }
        int marked = below(&rng, 3) == 0, iterator = below(&rng, 3) == 0;
        int nsteps = 4 + (int)below(&rng, 12), team = k->threads;
        int64_t dirty = 0;
        for (int s = 0; s < nsteps; s++) {
                if (marked)
                        lbomp_time_step(lb);
                if (below(&rng, 8) == 0)
                        team = 1 + (int)below(&rng, MAX_THREADS);
                for (int l = 0; l < nloops; l++) {
                        int64_t lo, hi;
                        pick_range(&rng, mode[l], s, &lo, &hi);
                        if (!iterator) {
#pragma omp parallel num_threads(team)
                                LBOMP_FOR (lb, loop_names[l], i, lo, hi) {
                                        body(l, i, s);
                                }
                        } else {
#pragma omp parallel num_threads(team)
                                {
                                        lbomp_for_t it = lbomp_for_begin(lb, loop_names[l], lo, hi);
                                        int64_t a, b;
                                        while (lbomp_for_next(&it, &a, &b))
                                                for (int64_t i = a; i < b; i++)
                                                        body(l, i, s);
                                        lbomp_for_end(&it);
                                }
                        }
                        check_run(lb, l, s, lo, hi, &dirty);
                }
        }
        if (lbomp_steps(lb) != (uint64_t)nsteps)
                CFAIL("%d steps counted as %" PRIu64 " time steps", nsteps, lbomp_steps(lb));
        for (int l = 0; l < nloops; l++) {
                lbomp_loop_stats_t st;
                if (lbomp_loop_get(lb, (size_t)l, &st, sizeof st) != 0 ||
                    st.runs != (uint64_t)nsteps)
                        CFAIL("loop %d: %" PRIu64 " runs, expected %d", l, st.runs, nsteps);
                const lbomp_t *h = lbomp_loop(lb, loop_names[l]);
                for (size_t j = 0; j < lbomp_lb_count(h); j++) {
                        lbomp_lb_stats_t lbs;
                        lbomp_lb_get(h, j, &lbs, sizeof lbs);
                        if (lbs.error != 0)
                                CFAIL("loop %s: LB step %zu: %s", loop_names[l], j,
                                      lbomp_strerror(lbs.error));
                }
                for (int64_t i = 0; i < BIG; i++)
                        if (state[l][i] != ref[l][i])
                                CFAIL("loop %s: index %" PRId64 " is %.17g, serially %.17g",
                                      loop_names[l], i, state[l][i], ref[l][i]);
        }
        lbomp_destroy(lb);
}

/* Team sizes change on purpose: the runtime says so every time; not news here. */
static void quiet(const char *line, void *arg)
{
        (void)line;
        (void)arg;
}

int main(int argc, char **argv)
{
        double budget = 20;
        struct kase one = {.policy = "refine", .threads = 2};
        int have_seed = 0;
        for (int i = 1; i < argc; i += 2) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!v)
                        FAIL("%s needs a value", a);
                if (strcmp(a, "--time") == 0)
                        budget = atof(v);
                else if (strcmp(a, "--seed") == 0)
                        one.seed = strtoull(v, NULL, 0), have_seed = 1;
                else if (strcmp(a, "--policy") == 0)
                        one.policy = v;
                else if (strcmp(a, "--threads") == 0)
                        one.threads = atoi(v);
                else if (strcmp(a, "--steal") == 0)
                        one.steal = strcmp(v, "node") == 0 ? 1 : strcmp(v, "all") == 0 ? 2 : 0;
                else
                        FAIL("unknown argument %s (see the comment at the top of the file)", a);
        }
        lbomp_set_log_fn(quiet, NULL);
        seen = calloc(BIG, 1);
        ASSERT(seen);
        for (int l = 0; l < NLOOPS; l++) {
                state[l] = calloc(BIG, sizeof(double));
                ref[l] = calloc(BIG, sizeof(double));
                ASSERT(state[l] && ref[l]);
        }
        if (have_seed) {
                run_case(&one);
                printf("case passed\n");
                return 0;
        }
        char names[32][32];
        int np = test_policy_names(names, 32);
        ASSERT_GT(np, 0);
        uint64_t master = (uint64_t)time(NULL);
        printf("for_stress: %d policies, master seed %" PRIu64 ", budget %.0f s\n", np, master,
               budget);
        fflush(stdout);
        double t0 = omp_get_wtime();
        long cases = 0, per_sweep = (long)np * 3;
        for (long c = 0; c < per_sweep || omp_get_wtime() - t0 < budget; c++, cases++) {
                struct kase k = {splitmix(&master), names[c % per_sweep / 3],
                                 1 + (int)(c / per_sweep % MAX_THREADS), (int)(c % 3)};
                k.threads = 1 + (int)((k.seed >> 7) % MAX_THREADS);
                run_case(&k);
        }
        printf("for_stress: %ld cases over %d policies x 1..%d threads x steal off/node/all, "
               "%.1f s: every index exactly once in every run, results equal\n",
               cases, np, MAX_THREADS, omp_get_wtime() - t0);
        return 0;
}
