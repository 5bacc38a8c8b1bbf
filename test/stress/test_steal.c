/*
 * test_steal.c — stealing within a step under heavy imbalance and oversubscription: 16 workers on
 * the 8-node EPYC profile share this host's cores, two of them hold every heavy task, and
 * LBOMP_STEAL lets the others take tasks while the step runs. Proves, step after step, in the
 * callback and the in-region forms:
 * - exactly-once: every task runs once per step, none is lost or repeated;
 * - LBOMP_STEAL=node: a thief is always on its victim's node; off: nothing is stolen;
 * - each window's `stolen` is the number of tasks run by a thread other than their owner's;
 * - stolen time is charged correctly: the task costs of the snapshot add up to the time the workers
 *   spent in tasks in the timed steps (each scaled by the CPU share of the thread that ran it),
 *   and loads stay owner-based, so the next rebalance still sees the two heavy owners. Policy none
 *   times tasks only for the trace, so the test writes one (LBOMP_TRACE).
 * Usage: test_steal off|node|all EPYC_PROFILE
 */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "runtime.h"
#include "test.h"

#define NT      1600
#define WORKERS 16
#define PERIOD  10
#define STEPS   129 /* the last window is left open, with two timed steps, for the accounting */

struct task {
        _Atomic long runs;
        _Atomic int ran_by;
        int cost;
        double x;
};

static struct task task[NT];
static long stolen_in_step[STEPS];
static const char *mode;

static void work(struct task *t)
{
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        atomic_store_explicit(&t->ran_by, omp_get_thread_num(), memory_order_relaxed);
        test_spin(&t->x, t->cost * 200);
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        work(data);
}

/* After step s: exactly once, who ran what, thieves on their victim's node under "node". */
static void check(struct lbomp *lb, long s)
{
        long stolen = 0;
        for (int i = 0; i < NT; i++) {
                long r = atomic_load(&task[i].runs);
                if (r != s + 1)
                        FAIL("%s: step %ld: task %d ran %ld times, expected %ld", mode, s, i, r,
                             s + 1);
                int by = atomic_load(&task[i].ran_by);
                uint32_t owner = lb->tasks.task[i].worker;
                if ((uint32_t)by == owner)
                        continue;
                stolen++;
                if (lb->cfg.steal == LBOMP__STEAL_OFF)
                        FAIL("%s: step %ld: task %d of worker %u ran on worker %d", mode, s, i,
                             owner, by);
                if (lb->cfg.steal == LBOMP__STEAL_NODE && lb->ws.w[by].node != lb->ws.w[owner].node)
                        FAIL("%s: step %ld: task %d of worker %u (node %d) stolen by worker %d "
                             "(node %d)",
                             mode, s, i, owner, lb->ws.w[owner].node, by, lb->ws.w[by].node);
        }
        stolen_in_step[s] = stolen;
}

int main(int argc, char **argv)
{
        if (argc < 3)
                FAIL("usage: test_steal off|node|all EPYC_PROFILE");
        mode = argv[1];
        setenv("LBOMP_STEAL", mode, 1);
        char trace[128];
        snprintf(trace, sizeof trace, "/tmp/lbomp-test-steal-%d.trc", (int)getpid());
        setenv("LBOMP_TRACE", trace, 1);
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_topology(lb, argv[2]), 0);
        ASSERT_EQ(lbomp_set_workers(lb, WORKERS), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0); /* owners never change: stealing is alone */
        ASSERT_EQ(lbomp_set_period(lb, PERIOD), 0);
        ASSERT(lb->ws.oversubscribed);
        /* Block mapping: tasks 0..99 on worker 0 (node 0), 900..999 on worker 9 (node 4) are 60×
         * heavier than the rest. */
        for (int i = 0; i < NT; i++) {
                int w = i / (NT / WORKERS);
                task[i].cost = w == 0 || w == 9 ? 60 : 1;
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        long s = 0;
        for (; s < 60; s++) {
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                check(lb, s);
        }
#pragma omp parallel num_threads(WORKERS)
        for (long k = 60; k < STEPS; k++) {
                LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                        work(t);
                }
#pragma omp single
                check(lb, k);
        }
        ASSERT_EQ(lbomp_steps(lb), STEPS);
        for (int i = 0; i < NT; i++)
                ASSERT_EQ(lbomp_task_worker(lb, (lbomp_id_t)i), i / (NT / WORKERS));

        /* Each window's stolen count is what the threads really did. */
        size_t nw = lbomp_window_count(lb);
        ASSERT_EQ(nw, STEPS / PERIOD);
        long total = 0;
        for (size_t i = 0; i < nw; i++) {
                lbomp_window_stats_t ws;
                total += window_stolen_checked(lb, i, stolen_in_step, &ws);
                /* Loads stay owner-based: stealing does not hide the imbalance from the balancer
                 * (two workers own 12000 of 13400 units of work: λ ≈ 7). */
                if (ws.imbalance < 3.0)
                        FAIL("%s: window %zu: owner-based λ %.3f, expected about 7", mode, i,
                             ws.imbalance);
                printf("%s: window %zu: %llu stolen, λ owner-based %.3f, run %.3f\n", mode, i,
                       (unsigned long long)ws.stolen, ws.imbalance, ws.imbalance_run);
        }
        if (strcmp(mode, "off") == 0)
                ASSERT_EQ(total, 0);
        else
                ASSERT_GT(total, 0); /* two workers hold all the heavy work for 60 steps */

        /* Stolen time is the task's, scaled by its thief's CPU share: Σ task cost over the open
         * window equals Σ time the workers spent in tasks; loads are owner-based. */
        int rc = 0;
        const struct lbomp__snap *snap = lbomp__lb_snapshot(lb, &rc);
        ASSERT(snap != NULL);
        ASSERT_EQ(rc, 0);
        double timed = (double)lb->win.timed, costs = 0, busy = 0;
        ASSERT_EQ((long)lb->win.steps, STEPS % PERIOD);
        ASSERT_EQ((long)timed, 2);
        for (uint32_t t = 0; t < snap->ntasks; t++) {
                if (!(snap->cost[t] > 0))
                        FAIL("%s: task %u has cost %g: a run was not measured", mode, snap->id[t],
                             snap->cost[t]);
                costs += snap->cost[t] * timed;
        }
        for (int w = 0; w < lb->ws.n; w++)
                busy += lb->ws.w[w].win_busy_timed_s;
        if (fabs(costs - busy) > 1e-9 * busy)
                FAIL("%s: task costs add up to %.17g s, the workers were busy %.17g s", mode, costs,
                     busy);
        printf("%s: %d steps, every task exactly once, %ld tasks stolen, costs add up to the busy "
               "time (%.6g s)\n",
               mode, STEPS, total, busy);
        lbomp_destroy(lb);
        unlink(trace);
        return 0;
}
