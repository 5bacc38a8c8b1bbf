/*
 * test_quiet.c — quiet windows (README "Quiet windows"): with LBOMP_PERIOD unset, every LB step
 * that moved nothing after one that moved nothing doubles the next window, up to 8 × the period;
 * one that moved brings it back to the period; a window whose per-step λ rises ends as soon as its
 * tasks are timed; an explicit period (variable or setter) keeps its exact rhythm. Two workers, 64
 * tasks, refine, three runs:
 *
 *   quiet     empty tasks for 400 steps: no LB step pays, so the windows are 10, 10, 20, 40,
 *             80, 80, ... steps, each with its 3 timed steps (judged on the recorded windows;
 *             should a timing make some LB step move empty tasks, as a sanitized build's did
 *             once, by the rule from the recorded moves);
 *   explicit  the same with lbomp_set_period(10), then with LBOMP_PERIOD=10: every window is 10
 *             steps;
 *   hotspot   light equal tasks (≈ 6 µs) for 330 steps (the windows grow as far as noise lets
 *             them), then half of the tasks 20× heavier: an LB step that moves tasks comes
 *             within 16 + 3 + 2 steps of the change (the ring's fold, the timed steps, the step it
 *             is decided at), where the 80-step window in progress would have run until step 399
 *             (skipped, 77, when noise moved tasks before the change so that no long window was in
 *             progress). Tasks this heavy make the rise cost more than an LB step even where
 *             lbomp's own code runs slower than the tasks (under ASan, 0.6 µs tasks did not, once).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

#define NT 64

struct task {
        int block;
        double x;
};

static struct task task[NT];
static long step_now, heavy_from;
static long light;

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        struct task *t = data;
        if (!light)
                return;
        long units = step_now >= heavy_from && t->block == 0 ? 20 : 1;
        test_spin(&t->x, units * light);
}

static lbomp_t *run(int period, long steps, long spin, long heavy)
{
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "refine"), 0);
        if (period)
                ASSERT_EQ(lbomp_set_period(lb, period), 0);
        for (int i = 0; i < NT; i++) {
                task[i].block = i < NT / 2 ? 0 : 1;
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        light = spin;
        heavy_from = heavy;
        for (step_now = 0; step_now < steps; step_now++)
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
        return lb;
}

static void windows(lbomp_t *lb, uint64_t *len, size_t *n)
{
        *n = lbomp_window_count(lb);
        ASSERT_EQ(*n, lbomp_lb_count(lb));
        for (size_t i = 0; i < *n; i++) {
                lbomp_window_stats_t w;
                ASSERT_EQ(lbomp_window_get(lb, i, &w, sizeof w), 0);
                len[i] = w.steps;
                ASSERT_EQ(w.timed_steps, 3);
        }
}

int main(void)
{
        uint64_t len[128];
        size_t n;
        ASSERT_EQ(unsetenv("LBOMP_PERIOD"), 0); /* the runs below say which period they have */

        /* quiet: empty tasks, whose LB steps find nothing worth a move and whose per-step λ
         * never rises by more than an LB step costs — in a plain build. Under ASan the per-task
         * path, counted as the tasks' time, is slow and uneven enough that once refine moved 3
         * empty tasks and now and then a window was cut (ended 3 steps after a fold). So the
         * windows are judged by the rule, from the LB steps' own records: each window is
         * LBOMP_PERIOD << (LB steps in a row before it that moved nothing, less one, at most 3);
         * a move brings the next one back to 10; a window may end sooner (a cut, after 10 steps
         * at least), and then the count starts again. */
        lbomp_t *lb = run(0, 400, 0, 1L << 40);
        ASSERT_EQ(lbomp_get_period(lb), 10);
        windows(lb, len, &n);
        uint64_t widest = 0, total = 0;
        unsigned still = 0, moves = 0, cuts = 0;
        for (size_t i = 0; i < n; i++) {
                lbomp_lb_stats_t s;
                ASSERT_EQ(lbomp_lb_get(lb, i, &s, sizeof s), 0);
                printf("quiet: window %zu, %llu steps, %u migrations\n", i,
                       (unsigned long long)len[i], s.migrations);
                unsigned q = still ? still - 1 : 0;
                uint64_t rule = (uint64_t)10 << (q < 3 ? q : 3);
                if (len[i] < rule) {
                        ASSERT_LE(10, len[i]);
                        cuts++;
                        still = 0;
                } else {
                        ASSERT_EQ(len[i], rule);
                }
                still = s.migrations ? 0 : still + 1;
                moves += s.migrations > 0;
                widest = len[i] > widest ? len[i] : widest;
                total += len[i];
        }
        ASSERT_LE(total, 400); /* the windows an LB step ended; the run may end inside one */
        if (!moves && !cuts) { /* the usual run: 10 + 10 + 20 + 40 + 80 + 80 + 80 + 80 */
                ASSERT_EQ(n, 8);
                ASSERT_EQ(len[n - 1], 80);
        } else if (widest < 40) {
                printf("quiet: skipped, LB steps moved empty tasks in %u windows and %u windows "
                       "were cut (a sanitized build's timing), so no window doubled twice\n",
                       moves, cuts);
                lbomp_destroy(lb);
                return 77;
        }
        lbomp_destroy(lb);

        /* explicit: the period the program asked for, whatever the LB steps found, through the
         * setter or the variable (even its default value) */
        for (int how = 0; how < 2; how++) {
                if (how)
                        ASSERT_EQ(setenv("LBOMP_PERIOD", "10", 1), 0);
                lb = run(how ? 0 : 10, 200, 0, 1L << 40);
                ASSERT_EQ(unsetenv("LBOMP_PERIOD"), 0);
                windows(lb, len, &n);
                ASSERT_EQ(n, 20);
                for (size_t i = 0; i < n; i++)
                        ASSERT_EQ(len[i], 10);
                lbomp_destroy(lb);
        }

        /* hotspot: the window in progress ends once the steps grow imbalanced */
        const long change = 330;
        lb = run(0, 420, 3000, change);
        size_t nl = lbomp_lb_count(lb);
        long moved_at = -1, longest = 0, prev_step = -1, prev_len = 0, prev_mig = 0;
        for (size_t i = 0; i < nl; i++) {
                lbomp_lb_stats_t s;
                lbomp_window_stats_t w;
                ASSERT_EQ(lbomp_lb_get(lb, i, &s, sizeof s), 0);
                ASSERT_EQ(lbomp_window_get(lb, i, &w, sizeof w), 0);
                printf("hotspot: LB step after step %llu, window of %llu steps, λ %.3f -> %.3f, "
                       "%u migrations\n",
                       (unsigned long long)s.step, (unsigned long long)w.steps, s.imbalance_before,
                       s.imbalance_after, s.migrations);
                if ((long)s.step < change && (long)w.steps > longest)
                        longest = (long)w.steps;
                if ((long)s.step < change) {
                        prev_step = (long)s.step;
                        prev_len = (long)w.steps;
                        prev_mig = s.migrations;
                }
                if (moved_at < 0 && (long)s.step >= change && s.migrations > 0)
                        moved_at = (long)s.step;
        }
        printf("hotspot: longest window before the change %ld steps; first moves after step %ld\n",
               longest, moved_at);
        /* Only a window in progress that would have run past the bound tests the cut: one after
         * a quiet window of 40 steps or more that moved nothing is 80 steps long. */
        if (prev_len < 40 || prev_mig > 0 || prev_step + 80 <= change + 16 + 3 + 2) {
                printf("quiet hotspot: skipped, the window in progress at step %ld was not a long "
                       "quiet one (the last before: %ld steps, %ld migrations, after step %ld)\n",
                       change, prev_len, prev_mig, prev_step);
                lbomp_destroy(lb);
                return 77;
        }
        ASSERT_DGE((double)moved_at, (double)change);
        ASSERT_LE(moved_at, change + 16 + 3 + 2);
        lbomp_destroy(lb);
        return 0;
}
