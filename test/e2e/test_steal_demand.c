/*
 * test_steal_demand.c — stealing on demand (step.c, steal_wanted and gathering_unknown): a step
 * steals only while the steps before it were imbalanced, or after a gathering that left the
 * workers' loads unknown, so a balanced loop pays nothing for it, and an imbalanced one keeps
 * stealing at every step (a step that stealing balanced still wants it). Two workers, 64 tasks
 * of ≈ 30 µs placed in two blocks, policy none with LBOMP_STEAL=all (nothing moves but by
 * stealing), 60 steps (120 in the modes judged on balanced windows, and front), LB period 10:
 *   balanced  every task costs the same: stealing is armed in the first steps, then only after a
 *             step whose threads ended more than 2 % of it apart, which other processes may
 *             cause now and then: in the windows after the first whose steps, and the previous
 *             window's, were all balanced (per-step λ ≤ 1.02: no process kept a thread from its
 *             tasks), armed in at most half of the steps (before, every step was armed); exit
 *             77 when no window was that quiet (2026-11-28, nothing else running: with 60
 *             steps all 36 runs of the three balanced modes skipped in one spell, windows of
 *             owned λ up to 1.02-1.04; with 120 steps 0, 6 and 29 of 30 in three spells, the
 *             host's time slicing putting steps at λ 1.5-1.7 in the last). Another process that
 *             delays a thread (a `yes` pinned to one core beside it) arms stealing, rightly,
 *             without showing in the owned λ: what the threads carried per step then is 1.03–1.15
 *             (the thread on the free core ran the other's tasks), where on a quiet machine it
 *             equals the owned λ (≤ 1.015): such windows, or those after them, are not judged
 *             either, nor a run whose threads had less than 0.9 of their two cores (the
 *             process's CPU time over twice the wall time: 0.99–1.00 here, 0.67–0.75 beside the
 *             `yes`, which also delays the threads' arrivals and so arms stealing in balanced
 *             windows)
 *   churn     the same, but before every step 2 tasks are removed and 2 added (a program that
 *             refines and coarsens a little at every step): 4 changes of 64 tasks do not make
 *             the loads unknown, so the same bound holds (before, every such gathering armed
 *             stealing: every step)
 *   loop      the same balanced work as an LBOMP_FOR loop (64 indices) in the program's parallel
 *             region: a loop whose chunks stay is judged like a task set, same bound (before,
 *             every run of a loop armed stealing)
 *   renew     8 of the 64 tasks replaced before every step (16 changes, an eighth of the live
 *             tasks and more): every step is armed
 *   hot       the first worker's tasks cost 4× the others' (λ 1.6 without stealing): every step
 *             armed and every window steals, and what the threads carried per step stays below
 *             1.2 in the last windows while their own loads say 1.5 or more — when the threads
 *             had their cores (0.99 of two in our runs; beside a `yes` pinned to one core, 0.75,
 *             and the thread on the free core rightly carried 1.24–1.34 × the mean in CPU time)
 *   front     hot over 120 steps: `none` gives no costs, so after 8 windows without them,
 *             their steps imbalanced (per-step λ 1.6), the thieves take from the front of their
 *             victim (deque.h): no front step in the first 8 windows, every armed step a
 *             front one from the ninth on, the run's totals add them up, and what the threads
 *             carried stays below 1.2 there too
 * Judged on the recorded windows, not on speed. Usage: test_steal_demand MODE
 */
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

#define NT     64
#define PERIOD 10
#define STEPS  60
#define FRONT  8 /* LBOMP__FRONT_AFTER (workers.h) */

static double x[NT];
static lbomp_id_t ids[NT];
static int heavy;

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        double *p = data; /* ids change in churn and renew; the first half of x stays heavy */
        test_spin(p, (heavy && p - x < NT / 2 ? 4 : 1) * 20000L);
}

/* Tasks k, k + stride, ... (n of them) removed and added again: new ids, the same work. */
static void replace(lbomp_t *lb, int first, int n, int stride)
{
        for (int j = 0; j < n; j++) {
                int k = (first + j * stride) % NT;
                ASSERT_EQ(lbomp_task_remove(lb, ids[k]), 0);
                ASSERT_EQ(lbomp_task_add(lb, &x[k], 64, LBOMP_NODE_ANY, &ids[k]), 0);
        }
}

int main(int argc, char **argv)
{
        ASSERT(argc > 1);
        const char *mode = argv[1];
        bool front = strcmp(mode, "front") == 0;
        heavy = front || strcmp(mode, "hot") == 0;
        bool churn = strcmp(mode, "churn") == 0, renew = strcmp(mode, "renew") == 0,
             loop = strcmp(mode, "loop") == 0;
        ASSERT(heavy || churn || renew || loop || strcmp(mode, "balanced") == 0);
        bool every = heavy || renew; /* every step armed */
        /* front: 8 windows before it may take the front; the balanced modes: enough windows that
         * the share of armed steps says what the rule does, not what one noisy spell did */
        int steps = front || !every ? 2 * STEPS : STEPS;
        setenv("LBOMP_STEAL", "all", 1);
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        ASSERT_EQ(lbomp_set_period(lb, PERIOD), 0);
        const lbomp_t *h = lb;
        struct test_times t0 = test_times_now();
        if (loop) {
                omp_set_num_threads(2);
                for (int s = 0; s < steps; s++) {
#pragma omp parallel
                        LBOMP_FOR (lb, "spin", i, 0, NT) {
                                test_spin(&x[i], 20000L);
                        }
                        ASSERT_EQ(lbomp_last_step(lb), 0);
                }
                h = lbomp_loop(lb, "spin");
                ASSERT(h != NULL);
        } else {
                for (int i = 0; i < NT; i++) /* 0..31 on the first worker, in a block */
                        ASSERT_EQ(lbomp_task_add(lb, &x[i], 64, LBOMP_NODE_ANY, &ids[i]), 0);
                for (int s = 0; s < steps; s++) {
                        if (s > 0 && churn)
                                replace(lb, 2 * s, 2, NT / 2);
                        if (s > 0 && renew)
                                replace(lb, s, 8, NT / 8);
                        ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                }
        }
        /* Whether the two threads had their cores: else the one that had carries more, rightly
         * (stealing evens out wall time, not CPU time), and the carried λ says nothing. */
        double served = test_served(t0, test_times_now(), 2);
        printf("%s: the threads had %.2f of two cores\n", mode, served);
        size_t nw = lbomp_window_count(h), armed = 0, judged = 0;
        uint64_t fronts = 0;
        double prev_max = 0, prev_run = 0;
        ASSERT_EQ(nw, (size_t)steps / PERIOD);
        for (size_t i = 0; i < nw; i++) {
                lbomp_window_stats_t w;
                ASSERT_EQ(lbomp_window_get(h, i, &w, sizeof w), 0);
                printf("%s, window %zu: stealing armed in %llu of %llu steps (%llu from the "
                       "front), %llu stolen, per step: owned λ %.3f (max %.3f), carried %.3f\n",
                       mode, i, (unsigned long long)w.steal_steps, (unsigned long long)w.steps,
                       (unsigned long long)w.steal_front_steps, (unsigned long long)w.stolen,
                       w.imbalance_step_mean, w.imbalance_step_max, w.imbalance_run_step_mean);
                fronts += w.steal_front_steps;
                if (front)
                        ASSERT_EQ(w.steal_front_steps, i < FRONT ? 0 : w.steal_steps);
                else
                        ASSERT_EQ(w.steal_front_steps, 0);
                if (every)
                        ASSERT_EQ(w.steal_steps, w.steps);
                if (heavy) {
                        ASSERT_GT(w.stolen, 0);
                        if (i >= 2) {
                                ASSERT_DGE(w.imbalance_step_mean, 1.5);
                                if (served >= TEST_SERVED_MIN)
                                        ASSERT_DLE(w.imbalance_run_step_mean, 1.2);
                        }
                } else if (!every && i >= 1 && w.imbalance_step_max <= 1.02 && prev_max <= 1.02 &&
                           w.imbalance_run_step_mean <= 1.02 && prev_run <= 1.02) {
                        armed += w.steal_steps;
                        judged += w.steps;
                }
                prev_max = w.imbalance_step_max;
                prev_run = w.imbalance_run_step_mean;
        }
        if (!every && (!judged || served < TEST_SERVED_MIN)) {
                printf("steal_demand %s: skipped, %s (a loaded machine)\n", mode,
                       judged ? "the threads did not have their cores"
                              : "no window after the first was balanced step by step");
                lbomp_destroy(lb);
                return 77;
        }
        if (!every)
                ASSERT_LE(armed, judged / 2); /* a thread woken late arms it too (up to 1 in 4) */
        lbomp_totals_t t;
        ASSERT_EQ(lbomp_totals_get(h, &t, sizeof t), 0);
        ASSERT_EQ(t.steal_front_steps, fronts);
        lbomp_destroy(lb);
        printf("steal_demand %s: ok\n", mode);
        return 0;
}
