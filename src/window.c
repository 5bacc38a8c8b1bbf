/*
 * window.c — measurement between two LB steps (window.h).
 *
 * A task's time is one counter read at its start (the hot path, step.c); here those times become
 * seconds, are scaled where the thread was descheduled, summed per task over the window and kept
 * for the last LBOMP__HIST steps, so that the LB step can take each task's median. The energy
 * counters are read where a window starts and ends, so that each window has its own joules over
 * exactly its wall time: one reading closes a window and opens the next.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "window.h"

#define ENERGY_STEP_GAP_S 0.01

static void energy_read(struct lbomp__window *win)
{
        if (lbomp__energy_sample(win->energy) == 0)
                win->energy_t_last = lbomp__mono_s();
}

/* The current totals become the start of the window. */
static void energy_mark(struct lbomp__window *win)
{
        for (int i = 0; i < lbomp__energy_ndomains(win->energy); i++)
                win->mark[i] = lbomp__energy_total_j(win->energy, i);
}

int lbomp__window_energy_open(struct lbomp__window *win, const char *powercap_root, bool verbose)
{
        struct lbomp__energy *e;
        int rc = lbomp__energy_open(&e, powercap_root);
        if (rc < 0)
                return rc;
        int n = lbomp__energy_ndomains(e);
        double *mark = calloc(n ? (size_t)n : 1, sizeof *mark);
        if (!mark) {
                lbomp__energy_close(e);
                return -ENOMEM;
        }
        lbomp__energy_close(win->energy);
        free(win->mark);
        free(win->dom_j);
        win->energy = e;
        win->mark = mark;
        win->dom_j = NULL;
        win->dom_cap = 0;
        win->energy_t0 = win->energy_t_last = lbomp__mono_s();
        if (verbose)
                lbomp__log("lbomp: energy: %s", lbomp__energy_note(e));
        return 0;
}

void lbomp__window_energy_tick(struct lbomp__window *win)
{
        if (lbomp__energy_available(win->energy) &&
            lbomp__mono_s() - win->energy_t_last >= ENERGY_STEP_GAP_S)
                energy_read(win);
}

int lbomp__window_reserve(struct lbomp__window *win, uint32_t ntask)
{
        if (ntask <= win->cap && win->ticks)
                return 0;
        uint32_t cap = win->cap ? win->cap : 64;
        while (cap < ntask)
                cap *= 2;
        if (LBOMP__GROW(win->ticks, cap) || LBOMP__GROW(win->hist, (size_t)cap * LBOMP__HIST))
                return -ENOMEM;
        memset(win->ticks + win->cap, 0, (cap - win->cap) * sizeof *win->ticks);
        win->cap = cap;
        return 0;
}

void lbomp__window_restart(struct lbomp__window *win, struct lbomp__workers *ws, uint32_t ntask,
                           uint64_t steps, bool read_energy)
{
        win->first = steps;
        win->steps = 0;
        win->wall0 = lbomp__mono_s();
        if (read_energy)
                energy_read(win);
        energy_mark(win);
        if (ntask && win->ticks)
                memset(win->ticks, 0, ntask * sizeof *win->ticks);
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->win_bg_s = w->win_busy_s = 0;
                w->win_stolen = 0;
                w->win_steps = 0;
        }
}

void lbomp__window_step_end(struct lbomp__worker *w, const struct lbomp__clock *clock,
                            bool time_wall, uint64_t busy, int64_t span)
{
        if (span < (int64_t)busy)
                span = (int64_t)busy;
        double tps = clock->ticks_per_s;
        double busy_s = (double)busy / tps, bg_s = (double)(span - (int64_t)busy) / tps;
        double scale = 1.0;
        if (!time_wall) {
                /* Time the thread was descheduled (other threads, other processes) is not the
                 * tasks'. The thread's CPU time bounds what its tasks used: when they took longer
                 * on the wall clock, they are scaled down to it. The pause is not spread over the
                 * whole step, because it often falls outside the tasks (a thread woken late from
                 * the barrier starts its first task late) and its tasks then ran uninterrupted.
                 * What CPU time is left over is the worker's background load. */
                double cpu = lbomp__thread_cpu_s() - w->cpu0;
                if (cpu > 0 && busy_s > cpu)
                        scale = cpu / busy_s;
                double rest = cpu - busy_s * scale;
                if (cpu > 0)
                        bg_s = rest > 0 ? rest : 0;
        }
        w->scale = scale;
        w->busy_s = busy_s * scale;
        w->bg_s = bg_s;
}

void lbomp__window_aggregate(struct lbomp__window *win, struct lbomp__workers *ws, int self,
                             bool steal)
{
        struct lbomp__worker *w = &ws->w[self];
        w->win_busy_s += w->busy_s;
        w->win_bg_s += w->bg_s;
        w->win_stolen += w->stolen;
        w->win_steps++;
        /* A stolen task was timed by its thief, so it is scaled by the thief's factor: the sum of
         * task costs then equals the sum of the workers' time in tasks, whoever ran what. */
        size_t slot = (size_t)((w->win_steps - 1) % LBOMP__HIST); /* same on every worker */
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t t = w->tasks[i];
                double v = (double)w->ticks[i] * (steal ? ws->w[w->runner[i]].scale : w->scale);
                win->ticks[t] += v;
                win->hist[(size_t)t * LBOMP__HIST + slot] = (float)v;
        }
}

/* Median of n <= LBOMP__HIST values (the mean of the two middle ones when n is even). */
static double median(const float *v, uint32_t n)
{
        float a[LBOMP__HIST];
        for (uint32_t i = 0; i < n; i++) { /* insertion sort: n is at most 8 */
                uint32_t j = i;
                while (j > 0 && a[j - 1] > v[i]) {
                        a[j] = a[j - 1];
                        j--;
                }
                a[j] = v[i];
        }
        return n % 2 ? a[n / 2] : 0.5 * ((double)a[n / 2 - 1] + a[n / 2]);
}

void lbomp__window_costs(const struct lbomp__window *win, const struct lbomp__worker *w,
                         uint64_t steps, double ticks_per_s, double *cost)
{
        double per = 1.0 / ((steps ? (double)steps : 1.0) * ticks_per_s);
        double tick_s = 1.0 / ticks_per_s;
        /* Robust: a task's cost is the median of its last steps (up to LBOMP__HIST), since a
         * thread that is descheduled (oversubscription, other processes) charges the whole pause
         * to the one task it was running; a mean would make that task look heavy. */
        uint32_t nh = steps >= 3 ? (uint32_t)(steps < LBOMP__HIST ? steps : LBOMP__HIST) : 0;
        double raw = 0, robust = 0;
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t id = w->tasks[i];
                cost[i] = win->ticks[id] * per;
                if (!nh)
                        continue;
                double m = median(win->hist + (size_t)id * LBOMP__HIST, nh) * tick_s;
                raw += cost[i];
                robust += m;
                cost[i] = m;
        }
        if (!nh)
                return;
        /* The medians are rescaled so that the worker's tasks still add up to the time it
         * measured: the pauses are spread over its tasks instead of being lost. */
        for (uint32_t i = 0; i < w->n; i++)
                cost[i] = robust > 0 ? cost[i] * (raw / robust) : win->ticks[w->tasks[i]] * per;
}

lbomp_window_stats_t *lbomp__window_close(struct lbomp__window *win,
                                          const struct lbomp__workers *ws, const double *load,
                                          uint64_t steps)
{
        if (win->n == win->rec_cap) {
                size_t cap = win->rec_cap ? 2 * win->rec_cap : 16;
                if (LBOMP__GROW(win->rec, cap))
                        return NULL;
                win->rec_cap = cap;
        }
        size_t nd = (size_t)lbomp__energy_ndomains(win->energy);
        if (nd && win->n == win->dom_cap) {
                size_t cap = win->dom_cap ? 2 * win->dom_cap : 16;
                if (LBOMP__GROW(win->dom_j, cap * nd))
                        return NULL;
                win->dom_cap = cap;
        }
        lbomp_window_stats_t *ws_rec = &win->rec[win->n++];
        memset(ws_rec, 0, sizeof *ws_rec);
        ws_rec->first_step = win->first;
        ws_rec->steps = steps - win->first;
        double mx = 0, sum = 0, run_mx = 0, run_sum = 0;
        for (int i = 0; i < ws->n; i++) {
                sum += load[i];
                mx = load[i] > mx ? load[i] : mx;
                /* What the workers carried: `load` charges tasks to their owners (what the policy
                 * plans with); this charges them to the threads that ran them. */
                double run = ws->w[i].win_busy_s + ws->w[i].win_bg_s;
                run_sum += run;
                run_mx = run > run_mx ? run : run_mx;
                ws_rec->stolen += ws->w[i].win_stolen;
        }
        ws_rec->max_load = mx;
        ws_rec->avg_load = ws->n ? sum / ws->n : 0;
        ws_rec->imbalance = ws_rec->avg_load > 0 ? mx / ws_rec->avg_load : 1.0;
        ws_rec->imbalance_run = run_sum > 0 ? run_mx / (run_sum / ws->n) : 1.0;
        ws_rec->wall_s = lbomp__mono_s() - win->wall0;
        /* One reading closes this window; lbomp__window_restart(read_energy = false) makes it the
         * start of the next. */
        double *dj = win->dom_j ? win->dom_j + (win->n - 1) * nd : NULL;
        double pkg = 0;
        int npkg = 0;
        energy_read(win);
        for (size_t i = 0; i < nd; i++) {
                double j = lbomp__energy_total_j(win->energy, (int)i) - win->mark[i];
                if (dj)
                        dj[i] = j;
                if (lbomp__energy_domain_is_package(win->energy, (int)i)) {
                        pkg += j;
                        npkg++;
                }
        }
        ws_rec->energy_j = lbomp__energy_available(win->energy) && npkg ? pkg : NAN;
        ws_rec->power_w = ws_rec->wall_s > 0 ? ws_rec->energy_j / ws_rec->wall_s : NAN;
        return ws_rec;
}

void lbomp__window_free(struct lbomp__window *win)
{
        free(win->ticks);
        free(win->hist);
        free(win->rec);
        lbomp__energy_close(win->energy);
        free(win->mark);
        free(win->dom_j);
        memset(win, 0, sizeof *win);
}
