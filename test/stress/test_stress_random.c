/*
 * test_stress_random.c — random workloads under every registered policy, 1 to 8 threads
 * (oversubscribed on purpose on a small machine), stealing off/node/all, tasks added and removed
 * between steps, the team size changed now and then, the balancer running after every step or
 * every few (so that steps are timed or not, fold their times in lazily, end windows), and the
 * steps in their three forms: lbomp_step, one region per step, and bursts of steps inside one
 * region (entered without gathering). After each step every live task has run exactly once and
 * no removed task ran; every LB step reports error 0 (the framework checks each plan and records
 * -EFAULT for a bad one); at the end each task's state equals the one computed serially, without
 * any balancing.
 *
 * Usage: test_stress_random [--time S] [--seed N [--policy P --threads T --steal off|node|all]]
 * Without --seed it sweeps every (policy, threads, steal) case at least once, then keeps drawing
 * random cases until S seconds (default 60) have passed. A failure prints the command that
 * reproduces it.
 */
#include <errno.h>
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

#define MAX_TASKS   640
#define MAX_THREADS 8

static const char *const steal_names[] = {"off", "node", "all"};

struct task {
        _Atomic long runs;
        long expect; /* steps it was alive for */
        int alive;
        uint32_t salt;
        double x;   /* state the task function updates */
        double ref; /* the same state computed serially */
};

static struct task task[MAX_TASKS];
static _Atomic uint64_t cur_step; /* written between steps only */

/* Case description, also what a failure prints. */
struct kase {
        uint64_t seed;
        const char *policy;
        int threads;
        int steal;
};
static struct kase K;

#define CFAIL(...)                                                                                 \
        do {                                                                                       \
                fprintf(stderr, "stress: ");                                                       \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr,                                                                    \
                        "\nreproduce: test_stress_random --seed %" PRIu64                          \
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

/* Cost of a task in a step: most cheap, some 30x heavier, drifting with the step so that the
 * balancer keeps finding something to move. */
static int cost_of(const struct task *t, uint64_t step)
{
        uint32_t h = t->salt ^ (uint32_t)(step / 3) * 2654435761u;
        h ^= h >> 15;
        return (h % 10 == 0 ? 30 : 1) * (int)(1 + h % 40);
}

/* The application's update: depends only on the task's own state and the step number, so its
 * result is the same whatever thread runs it and in whatever order. */
static double update(double x, int cost, uint64_t step)
{
        for (int i = 0; i < cost * 8; i++)
                x = x * 0.999999 + 1e-6 * (double)((step + (uint64_t)i) % 7);
        return x;
}

static void run_task(struct task *t)
{
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        uint64_t step = atomic_load_explicit(&cur_step, memory_order_relaxed);
        t->x = update(t->x, cost_of(t, step), step);
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        run_task(data);
}

static int ntask_ids; /* ids handed out in this case; id i is task[i] */

static void add_task(lbomp_t *lb, uint64_t *rng)
{
        if (ntask_ids >= MAX_TASKS)
                return;
        struct task *t = &task[ntask_ids];
        atomic_store(&t->runs, 0);
        t->expect = 0;
        t->alive = 1;
        t->salt = (uint32_t)splitmix(rng);
        t->x = t->ref = 1.0 + (double)(t->salt % 1000) / 1000.0;
        lbomp_id_t id;
        int rc = lbomp_task_add(lb, t, 64 + t->salt % 4096, LBOMP_NODE_ANY, &id);
        if (rc != 0 || id != (lbomp_id_t)ntask_ids)
                CFAIL("lbomp_task_add returned %d, id %u (expected %d)", rc, id, ntask_ids);
        ntask_ids++;
}

static void run_case(const struct kase *k)
{
        K = *k;
        uint64_t rng = k->seed;
        setenv("LBOMP_STEAL", steal_names[k->steal], 1);
        lbomp_t *lb;
        int rc = lbomp_create(&lb);
        if (rc != 0)
                CFAIL("lbomp_create: %s", lbomp_last_error());
        unsetenv("LBOMP_STEAL");
        static const int periods[] = {1, 1, 2, 5};
        int period = periods[below(&rng, 4)];
        if ((rc = lbomp_set_policy(lb, k->policy)) != 0 ||
            (rc = lbomp_set_period(lb, period)) != 0 ||
            (rc = lbomp_set_workers(lb, k->threads)) != 0 ||
            (rc = lbomp_set_seed(lb, k->seed)) != 0)
                CFAIL("setup: %s", lbomp_strerror(rc));
        ntask_ids = 0;
        /* Sizes include the edges: no task, one task, fewer tasks than threads. */
        uint32_t pick = below(&rng, 8);
        uint32_t n0 = pick == 0 ? 0 : pick == 1 ? 1 : pick == 2 ? below(&rng, 8) : below(&rng, 300);
        for (uint32_t i = 0; i < n0; i++)
                add_task(lb, &rng);
        int nsteps = 6 + (int)below(&rng, 25);
        int team = k->threads;
        size_t lbs_seen = 0;
        for (int s = 0; s < nsteps;) {
                atomic_store(&cur_step, (uint64_t)s);
                /* The step, in one of its forms; sometimes with a team of another size. */
                uint32_t form = below(&rng, 4);
                int burst = 1;
                if (below(&rng, 10) == 0)
                        team = 1 + (int)below(&rng, MAX_THREADS);
                if (form == 0 && team == lbomp_get_workers(lb)) {
                        if ((rc = lbomp_step(lb, cb, NULL)) != 0)
                                CFAIL("step %d: lbomp_step: %s", s, lbomp_strerror(rc));
                } else if (form == 3) {
                        /* Several steps in one region: after the first, the team enters each
                         * without gathering. */
                        burst = 1 + (int)below(&rng, 6);
#pragma omp parallel num_threads(team)
                        for (int b = 0; b < burst; b++) {
#pragma omp single
                                atomic_store(&cur_step, (uint64_t)(s + b));
                                LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                                        run_task(t);
                                }
                        }
                        if ((rc = lbomp_last_step(lb)) != 0)
                                CFAIL("steps %d..%d in one region: %s", s, s + burst - 1,
                                      lbomp_last_error());
                } else {
#pragma omp parallel num_threads(team)
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                                run_task(t);
                        }
                }
                /* Exactly once: every live task ran once more per step, no removed task ran. */
                for (int i = 0; i < ntask_ids; i++) {
                        struct task *t = &task[i];
                        if (t->alive) {
                                for (int b = 0; b < burst; b++) {
                                        t->expect++;
                                        t->ref = update(t->ref, cost_of(t, (uint64_t)(s + b)),
                                                        (uint64_t)(s + b));
                                }
                        }
                        long r = atomic_load(&t->runs);
                        if (r != t->expect)
                                CFAIL("step %d: task %d (%s) ran %ld times, expected %ld", s, i,
                                      t->alive ? "alive" : "removed", r, t->expect);
                        int w = lbomp_task_worker(lb, (lbomp_id_t)i);
                        if (t->alive && (w < 0 || w >= lbomp_get_workers(lb)))
                                CFAIL("step %d: task %d is on worker %d of %d", s, i, w,
                                      lbomp_get_workers(lb));
                        if (!t->alive && w != -ESTALE) /* ids are never reused */
                                CFAIL("step %d: removed task %d answers %d", s, i, w);
                }
                s += burst;
                /* The balancer ran after every step (period 1), and every plan passed its
                 * check. */
                size_t nlb = lbomp_lb_count(lb);
                if (period == 1 && nlb != lbs_seen + (size_t)burst)
                        CFAIL("step %d: %zu LB steps recorded, expected %zu", s, nlb,
                              lbs_seen + (size_t)burst);
                for (; lbs_seen < nlb; lbs_seen++) {
                        lbomp_lb_stats_t st;
                        lbomp_lb_get(lb, lbs_seen, &st, sizeof st);
                        if (st.error != 0)
                                CFAIL("step %d: LB step %zu (%s) reported error %d (%s)", s,
                                      lbs_seen, st.policy, st.error, lbomp_strerror(st.error));
                        if (!(st.imbalance_after >= 1.0 - 1e-9) && st.avg_load > 0)
                                CFAIL("step %d: λ-after %g < 1", s, st.imbalance_after);
                }
                /* Tasks removed and added between steps. */
                if (below(&rng, 3) == 0) {
                        int nrem = (int)below(&rng, 12);
                        for (int j = 0; j < nrem && ntask_ids; j++) {
                                int i = (int)below(&rng, (uint32_t)ntask_ids);
                                rc = lbomp_task_remove(lb, (lbomp_id_t)i);
                                if (rc != (task[i].alive ? 0 : -ESTALE))
                                        CFAIL("remove %d (alive %d) returned %d", i, task[i].alive,
                                              rc);
                                task[i].alive = 0;
                        }
                        int nadd = (int)below(&rng, 16);
                        for (int j = 0; j < nadd; j++)
                                add_task(lb, &rng);
                }
        }
        /* Same results as without balancing: every task's state, bit for bit. */
        double sum = 0, ref = 0;
        for (int i = 0; i < ntask_ids; i++) {
                if (memcmp(&task[i].x, &task[i].ref, sizeof(double)) != 0)
                        CFAIL("task %d: state %.17g, serial run %.17g", i, task[i].x, task[i].ref);
                sum += task[i].x;
                ref += task[i].ref;
        }
        if (sum != ref)
                CFAIL("checksum %.17g, serial run %.17g", sum, ref);
        lbomp_destroy(lb);
}

static int steal_index(const char *s)
{
        for (int i = 0; i < 3; i++)
                if (strcmp(s, steal_names[i]) == 0)
                        return i;
        FAIL("--steal '%s': valid: off, node, all", s);
}

int main(int argc, char **argv)
{
        double budget = 60;
        uint64_t seed = 0;
        int have_seed = 0, threads = 2, steal = 0;
        const char *policy = "refine";
        for (int i = 1; i < argc; i += 2) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!v)
                        FAIL("%s needs a value", a);
                if (strcmp(a, "--time") == 0)
                        budget = atof(v);
                else if (strcmp(a, "--seed") == 0)
                        seed = strtoull(v, NULL, 0), have_seed = 1;
                else if (strcmp(a, "--policy") == 0)
                        policy = v;
                else if (strcmp(a, "--threads") == 0)
                        threads = atoi(v);
                else if (strcmp(a, "--steal") == 0)
                        steal = steal_index(v);
                else
                        FAIL("unknown argument %s (see the comment at the top of the file)", a);
        }
        if (have_seed) {
                run_case(&(struct kase){seed, policy, threads, steal});
                printf("case passed\n");
                return 0;
        }
        char names[32][32];
        int np = test_policy_names(names, 32);
        ASSERT_GT(np, 0);
        uint64_t master = (uint64_t)time(NULL);
        printf("stress: %d policies, master seed %" PRIu64 ", budget %.0f s\n", np, master, budget);
        fflush(stdout);
        double t0 = omp_get_wtime();
        long cases = 0, per_sweep = (long)np * MAX_THREADS * 3;
        /* Every case once, then more random ones until the budget is spent. */
        for (long c = 0; c < per_sweep || omp_get_wtime() - t0 < budget; c++, cases++) {
                long i = c % per_sweep;
                struct kase k = {splitmix(&master), names[i / (MAX_THREADS * 3)],
                                 1 + (int)(i / 3 % MAX_THREADS), (int)(i % 3)};
                run_case(&k);
        }
        long sweeps = cases / per_sweep;
        printf("stress: %ld cases (%ld full sweeps) over %d policies x 1..%d threads x steal "
               "off/node/all, %.1f s: every task exactly once, every plan checked, results equal\n",
               cases, sweeps, np, MAX_THREADS, omp_get_wtime() - t0);
        return 0;
}
