/*
 * test_steal_runs.c — tiny tasks are stolen in runs (deque.h, lbomp__deque_grain): a thief's claim
 * takes a run of its victim's positions and runs them in ascending order, where one task per claim
 * would take the victim's tail downwards. Two workers, policy none with stealing, 4,096 tasks in
 * two blocks: the first worker's do nothing, the second's ≈ 20 ns of work each (≈ 40 µs a step),
 * so the first steals from the second at every step, whose tasks cost far less than a steal
 * (LBOMP__STEAL_MIN_S). 70 steps (the thieves take from the tail: the front comes only after 8
 * windows without costs), the tasks timed in the last 3 steps of each window (a trace asks for
 * them), in both forms (lbomp_step, then LBOMP_FOR_EACH_TASK). Proves:
 * - exactly once: every task runs once per step, in timed and untimed steps;
 * - runs: some thief ran two stolen tasks of consecutive positions one after the other, upwards —
 *   one task per claim from the tail only ever goes downwards;
 * - the window's `stolen` is the number of tasks run by a thread other than their owner.
 * Steps whose tasks took a quarter of a µs or more each (a loaded machine) steal one at a time:
 * the runs need one step of 70 that did not. Usage: test_steal_runs
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbomp.h"
#include "report.h"
#include "test.h"

#define NT     4096
#define PERIOD 10
#define STEPS  70
#define LOGMAX (NT * 2)

struct task {
        _Atomic long runs;
        int ran_by;
        int light;
        double x;
};

static struct task task[NT];
/* per thread, the ids it ran in this step, in order */
static int seq[2][LOGMAX];
static int nseq[2];
static long stolen_in_step[STEPS];
static long upward, downward;

static void work(struct task *t, lbomp_id_t id)
{
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        int me = omp_get_thread_num();
        t->ran_by = me;
        if (nseq[me] < LOGMAX)
                seq[me][nseq[me]++] = (int)id;
        if (!t->light)
                test_spin(&t->x, 8);
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)arg;
        work(data, id);
}

/* After step s: exactly once, who ran what, and the order of each thief's stolen tasks. */
static void check(lbomp_t *lb, long s)
{
        long stolen = 0;
        for (int i = 0; i < NT; i++) {
                long r = atomic_load(&task[i].runs);
                if (r != s + 1)
                        FAIL("step %ld: task %d ran %ld times, expected %ld", s, i, r, s + 1);
                int owner = lbomp_task_worker(lb, (lbomp_id_t)i);
                if (task[i].ran_by != owner)
                        stolen++;
        }
        stolen_in_step[s] = stolen;
        for (int me = 0; me < 2; me++) {
                int prev = -1;
                for (int k = 0; k < nseq[me]; k++) {
                        int id = seq[me][k];
                        bool mine = lbomp_task_worker(lb, (lbomp_id_t)id) == me;
                        if (!mine && prev >= 0) {
                                if (id == prev + 1)
                                        upward++;
                                else if (id == prev - 1)
                                        downward++;
                        }
                        prev = mine ? -1 : id;
                }
                nseq[me] = 0;
        }
}

int main(void)
{
        char trace[128];
        snprintf(trace, sizeof trace, "/tmp/lbomp-test-steal-runs-%d.trc", (int)getpid());
        setenv("LBOMP_TRACE", trace, 1); /* none times tasks only for a trace */
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        ASSERT_EQ(lbomp_set_steal(lb, "all"), 0);
        ASSERT_EQ(lbomp_set_period(lb, PERIOD), 0);
        for (int i = 0; i < NT; i++)
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        long s = 0;
        for (; s < STEPS / 2; s++) {
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                check(lb, s);
                if (s == 0) { /* placed by the first step: the first worker's block goes light */
                        ASSERT_EQ(lbomp_task_worker(lb, 0), 0);
                        ASSERT_EQ(lbomp_task_worker(lb, NT - 1), 1);
                        for (int i = 0; i < NT; i++)
                                task[i].light = lbomp_task_worker(lb, (lbomp_id_t)i) == 0;
                }
        }
#pragma omp parallel num_threads(2)
        for (long k = STEPS / 2; k < STEPS; k++) {
                LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                        work(t, LBOMP_TASK_ID);
                }
#pragma omp single
                check(lb, k);
        }
        ASSERT_EQ(lbomp_steps(lb), STEPS);
        long total = 0;
        size_t nw = lbomp_window_count(lb);
        for (size_t i = 0; i < nw; i++) {
                lbomp_window_stats_t ws;
                total += window_stolen_checked(lb, i, stolen_in_step, &ws);
        }
        for (long k = (long)(nw * PERIOD); k < STEPS; k++)
                total += stolen_in_step[k];
        printf("steal runs: %d steps, every task exactly once, %ld tasks stolen, stolen "
               "neighbours one after the other: %ld upwards (runs), %ld downwards\n",
               STEPS, total, upward, downward);
        ASSERT_GT(total, 0);
        if (upward == 0)
                FAIL("no thief ran two stolen tasks of consecutive positions upwards: tiny tasks "
                     "were stolen one at a time (%ld downwards)",
                     downward);
        lbomp_destroy(lb);
        unlink(trace);
        return 0;
}
