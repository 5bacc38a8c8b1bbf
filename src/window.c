/*
 * window.c — measurement between two LB steps (window.h).
 *
 * A worker's step is two counter reads (its span), and in a timed step one more per task (the hot
 * path, step.c); here those times become seconds, are scaled where the thread was descheduled,
 * give every step's λ, and, in the timed steps, are summed per task and kept one by one, so that
 * the LB step can take each task's median. The energy
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

int lbomp__window_reserve(struct lbomp__window *win, uint32_t nslots, uint64_t steps)
{
        if (steps >= win->step_cap) {
                uint64_t cap = win->step_cap ? 2 * win->step_cap : 1024;
                while (cap <= steps)
                        cap *= 2;
                if (LBOMP__GROW(win->step, cap))
                        return -ENOMEM;
                win->step_cap = cap;
        }
        if (nslots <= win->cap && win->ticks)
                return 0;
        uint32_t cap = win->cap ? win->cap : 64;
        while (cap < nslots)
                cap *= 2;
        if (LBOMP__GROW(win->ticks, cap) || LBOMP__GROW(win->hist, (size_t)cap * LBOMP__TIMED) ||
            LBOMP__GROW(win->ns, cap))
                return -ENOMEM;
        memset(win->ticks + win->cap, 0, (cap - win->cap) * sizeof *win->ticks);
        memset(win->ns + win->cap, 0, (cap - win->cap) * sizeof *win->ns);
        win->cap = cap;
        return 0;
}

void lbomp__window_forget(struct lbomp__window *win, const uint32_t *slots, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++)
                if (slots[i] < win->cap) {
                        win->ticks[slots[i]] = 0;
                        win->ns[slots[i]] = 0;
                }
}

void lbomp__window_forget_all(struct lbomp__window *win, uint32_t nslots)
{
        if (nslots > win->cap)
                nslots = win->cap;
        if (nslots && win->ticks) {
                memset(win->ticks, 0, nslots * sizeof *win->ticks);
                memset(win->ns, 0, nslots * sizeof *win->ns);
        }
}

void lbomp__window_restart(struct lbomp__window *win, struct lbomp__workers *ws, uint32_t nslots,
                           uint64_t steps, bool read_energy)
{
        win->first = steps;
        win->steps = 0;
        win->timed = 0;
        win->lam_sum = win->lam_max = win->lamr_sum = 0;
        win->wall0 = lbomp__mono_s();
        if (read_energy)
                energy_read(win);
        energy_mark(win);
        if (nslots > win->cap)
                nslots = win->cap;
        if (nslots && win->ticks) {
                memset(win->ticks, 0, nslots * sizeof *win->ticks);
                memset(win->ns, 0, nslots * sizeof *win->ns);
        }
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->win_owned_s = w->win_run_s = 0;
                w->win_busy_timed_s = w->win_bg_timed_s = w->win_owned_timed_s = 0;
                w->win_stolen = 0;
        }
}

void lbomp__window_step_end(struct lbomp__worker *w, const struct lbomp__clock *clock,
                            uint64_t step)
{
        double tick_s = 1.0 / clock->ticks_per_s;
        double span_s = w->span > 0 ? (double)w->span * tick_s : 0;
        double busy_s = (double)w->busy * tick_s;
        if (busy_s > span_s)
                span_s = busy_s;
        double scale = 1.0, run_s = span_s;
        if (w->cpu_s > 0) {
                /* Time the thread was descheduled (other threads, other processes) is not the
                 * tasks'. The thread's CPU time bounds what its tasks used: when they took longer
                 * on the wall clock, they are scaled down to it. The pause is not spread over the
                 * whole step, because it often falls outside the tasks (a thread woken late from
                 * the barrier starts its first task late) and its tasks then ran uninterrupted.
                 * What CPU time is left over is the worker's background load. */
                if (busy_s > w->cpu_s)
                        scale = w->cpu_s / busy_s;
                run_s = w->cpu_s;
        }
        struct lbomp__stepload *r = &w->ring[step % LBOMP__RING];
        w->scale[step & 1] = scale;
        r->run_s = run_s;
        r->busy_s = busy_s * scale;
        r->bg_s = run_s > r->busy_s ? run_s - r->busy_s : 0;
        /* Its own share; what thieves spent in its tasks is in `given`. */
        double own = run_s - (double)w->stolen_ticks * tick_s * scale;
        r->own_s = own > 0 ? own : 0;
        r->stolen = w->stolen;
        w->prev_span_s = span_s;
}

void lbomp__window_step(struct lbomp__window *win, uint64_t skipped, bool clean, bool timed)
{
        /* lbomp__window_reserve made room for this record. */
        win->step[win->nstep++] = (struct lbomp__steprec){
                .lambda = NAN,
                .lambda_run = NAN,
                .max_s = 0,
                .skipped = skipped > UINT32_MAX ? UINT32_MAX : (uint32_t)skipped,
                .clean = clean,
                .timed = timed};
        if (!clean)
                return;
        win->steps++;
        win->timed += timed;
}

void lbomp__window_fold(struct lbomp__window *win, struct lbomp__workers *ws,
                        const struct lbomp__clock *clock)
{
        double tps = clock->ticks_per_s, n = ws->n ? (double)ws->n : 1.0;
        for (; win->folded < win->nstep; win->folded++) {
                struct lbomp__steprec *rec = &win->step[win->folded];
                size_t slot = win->folded % LBOMP__RING;
                double omax = 0, osum = 0, rmax = 0, rsum = 0;
                for (int i = 0; i < ws->n; i++) {
                        struct lbomp__worker *w = &ws->w[i];
                        struct lbomp__stepload *r = &w->ring[slot];
                        uint64_t given = atomic_load_explicit(&r->given, memory_order_relaxed);
                        if (given)
                                atomic_store_explicit(&r->given, 0, memory_order_relaxed);
                        double owned = r->own_s + (double)given / tps;
                        osum += owned;
                        rsum += r->run_s;
                        omax = owned > omax ? owned : omax;
                        rmax = r->run_s > rmax ? r->run_s : rmax;
                        if (!rec->clean)
                                continue;
                        w->win_owned_s += owned;
                        w->win_run_s += r->run_s;
                        w->win_stolen += r->stolen;
                        if (rec->timed) {
                                w->win_owned_timed_s += owned;
                                w->win_busy_timed_s += r->busy_s;
                                w->win_bg_timed_s += r->bg_s;
                        }
                }
                double lam = osum > 0 ? omax / (osum / n) : 1.0;
                double lamr = rsum > 0 ? rmax / (rsum / n) : 1.0;
                rec->lambda = (float)lam;
                rec->max_s = (float)omax;
                rec->lambda_run = (float)lamr;
                if (!rec->clean)
                        continue;
                win->lam_sum += lam;
                win->lamr_sum += lamr;
                win->lam_max = lam > win->lam_max ? lam : win->lam_max;
        }
}

void lbomp__window_aggregate(struct lbomp__window *win, struct lbomp__workers *ws, int self,
                             int par, bool steal)
{
        struct lbomp__worker *w = &ws->w[self];
        const uint64_t *tk = w->ticks + (size_t)par * w->cap;
        const uint32_t *rn = w->runner + (size_t)par * w->cap;
        /* A stolen task was timed by its thief, so it is scaled by the thief's factor: the sum of
         * task costs then equals the sum of the workers' time in tasks, whoever ran what. */
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t t = w->tasks[i];
                double v = (double)tk[i] * (steal ? ws->w[rn[i]].scale[par] : w->scale[par]);
                win->ticks[t] += v;
                /* The last LBOMP__TIMED values (a task set may run several times per time step
                 * and so more often than that in the window's last time steps). */
                if (win->ns[t] < UINT8_MAX)
                        win->ns[t]++;
                win->hist[(size_t)t * LBOMP__TIMED + (win->ns[t] - 1u) % LBOMP__TIMED] = (float)v;
        }
}

void lbomp__window_aggregate_pending(struct lbomp__window *win, struct lbomp__workers *ws,
                                     bool steal)
{
        if (!win->pending)
                return;
        for (int i = 0; i < ws->n; i++)
                lbomp__window_aggregate(win, ws, i, (int)(win->pending_step & 1), steal);
        win->pending = false;
}

/* Median of n <= LBOMP__TIMED values (the mean of the two middle ones when n is even). */
static double median(const float *v, uint32_t n)
{
        float a[LBOMP__TIMED];
        for (uint32_t i = 0; i < n; i++) { /* insertion sort: n is at most LBOMP__TIMED */
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
                         double ticks_per_s, double *cost)
{
        double tick_s = 1.0 / ticks_per_s;
        /* Robust: a task's cost is the median of its timed steps, since a thread that is
         * descheduled (oversubscription, other processes) charges the whole pause to the one task
         * it was running; a mean would make that task look heavy. */
        double raw = 0, robust = 0;
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t id = w->tasks[i], n = win->ns[id];
                if (!n) { /* not measured yet (added after the timed steps) */
                        cost[i] = 0;
                        continue;
                }
                raw += win->ticks[id] / n * tick_s;
                cost[i] = median(win->hist + (size_t)id * LBOMP__TIMED,
                                 n < LBOMP__TIMED ? n : LBOMP__TIMED) *
                          tick_s;
                robust += cost[i];
        }
        /* The medians are rescaled so that the worker's tasks still add up to the time it
         * measured: the pauses are spread over its tasks instead of being lost. */
        if (robust > 0)
                for (uint32_t i = 0; i < w->n; i++)
                        cost[i] *= raw / robust;
}

double lbomp__window_bg(const struct lbomp__window *win, const struct lbomp__worker *w)
{
        return win->timed ? w->win_bg_timed_s / win->timed : 0;
}

double lbomp__window_timed_lambda(const struct lbomp__window *win, const struct lbomp__workers *ws,
                                  double *max, double *avg)
{
        double mx = 0, sum = 0, per = win->timed ? 1.0 / win->timed : 0;
        for (int i = 0; i < ws->n; i++) {
                double l = ws->w[i].win_owned_timed_s * per;
                sum += l;
                mx = l > mx ? l : mx;
        }
        *max = mx;
        *avg = ws->n ? sum / ws->n : 0;
        return *avg > 0 ? mx / *avg : 1.0;
}

lbomp_window_stats_t *lbomp__window_close(struct lbomp__window *win,
                                          const struct lbomp__workers *ws, uint64_t steps)
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
        /* (the caller folded the window's steps in) */
        ws_rec->first_step = win->first;
        ws_rec->steps = steps - win->first;
        double mx = 0, sum = 0, run_mx = 0, run_sum = 0, per = win->steps ? 1.0 / win->steps : 1.0;
        for (int i = 0; i < ws->n; i++) {
                /* `owned` charges tasks to their owners (what a plan can change); `run` to the
                 * threads that ran them (what the steps took). */
                double load = ws->w[i].win_owned_s * per, run = ws->w[i].win_run_s * per;
                sum += load;
                mx = load > mx ? load : mx;
                run_sum += run;
                run_mx = run > run_mx ? run : run_mx;
                ws_rec->stolen += ws->w[i].win_stolen;
        }
        ws_rec->max_load = mx;
        ws_rec->avg_load = ws->n ? sum / ws->n : 0;
        ws_rec->imbalance = ws_rec->avg_load > 0 ? mx / ws_rec->avg_load : 1.0;
        ws_rec->imbalance_run = run_sum > 0 ? run_mx / (run_sum / ws->n) : 1.0;
        ws_rec->imbalance_step_mean = win->steps ? win->lam_sum / win->steps : 1.0;
        ws_rec->imbalance_step_max = win->steps ? win->lam_max : 1.0;
        ws_rec->imbalance_run_step_mean = win->steps ? win->lamr_sum / win->steps : 1.0;
        ws_rec->timed_steps = win->timed;
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
        free(win->ns);
        free(win->step);
        free(win->rec);
        lbomp__energy_close(win->energy);
        free(win->mark);
        free(win->dom_j);
        memset(win, 0, sizeof *win);
}
