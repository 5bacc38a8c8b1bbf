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
#include "policy.h"
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
        lbomp__history_free(&win->dom);
        win->energy = e;
        win->mark = mark;
        /* the windows from now on have these counters' domains */
        lbomp__history_init(&win->dom, (n ? (size_t)n : 1) * sizeof(double), win->recs.keep);
        win->dom_first = win->recs.n;
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

void lbomp__window_init(struct lbomp__window *win, uint32_t keep)
{
        memset(win, 0, sizeof *win);
        lbomp__history_init(&win->recs, sizeof(lbomp_window_stats_t), keep);
        lbomp__history_init(&win->steprecs, sizeof(struct lbomp__steprec), 16 * (uint64_t)keep);
        lbomp__history_init(&win->dom, sizeof(double), keep);
}

void lbomp__window_run_sums(const struct lbomp__window *win, uint64_t *stolen,
                            uint64_t *steal_steps, uint64_t *steal_front)
{
        *stolen = win->stolen_gone;
        *steal_steps = win->steal_steps_gone;
        *steal_front = win->steal_front_gone;
        for (uint64_t i = win->recs.dropped; i < win->recs.n; i++) {
                const lbomp_window_stats_t *r = lbomp__history_held(&win->recs, i);
                *stolen += r->stolen;
                *steal_steps += r->steal_steps;
                *steal_front += r->steal_front_steps;
        }
}

int lbomp__window_reserve(struct lbomp__window *win, uint32_t nslots)
{
        if (lbomp__history_reserve(&win->steprecs) < 0)
                return -ENOMEM;
        if (nslots <= win->cap && win->ticks)
                return 0;
        uint32_t cap = win->cap ? win->cap : 64;
        while (cap < nslots)
                cap *= 2;
        if (LBOMP__GROW(win->ticks, cap) || LBOMP__GROW(win->hist, (size_t)cap * LBOMP__TIMED) ||
            LBOMP__GROW(win->hrun, (size_t)cap * LBOMP__TIMED) || LBOMP__GROW(win->ns, cap) ||
            LBOMP__GROW(win->last_v, cap) || LBOMP__GROW(win->last_w, cap))
                return -ENOMEM;
        memset(win->last_w + win->cap, 0xff, (cap - win->cap) * sizeof *win->last_w);
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
                        win->last_w[slots[i]] = UINT32_MAX;
                }
}

void lbomp__window_forget_all(struct lbomp__window *win, uint32_t nslots)
{
        if (nslots > win->cap)
                nslots = win->cap;
        if (nslots && win->ticks) {
                memset(win->ticks, 0, nslots * sizeof *win->ticks);
                memset(win->ns, 0, nslots * sizeof *win->ns);
                memset(win->last_w, 0xff, nslots * sizeof *win->last_w);
        }
}

/* one pair's ratio counts at most 8 (or 1/8): a thread descheduled in one of the two runs */
#define KAPPA_LOG_MAX 2.0794415416798357 /* log 8 */
#define KAPPA_PAIRS   4                  /* pairs one measure of kappa needs */
#define KAPPA_NEW     0.5                /* weight of the last measure */
#define KAPPA_FORGET  0.5                /* a window without one takes kappa this much back to 1 */

/*
 * kappa, each worker's: what one of its tasks cost a thief over what it cost the worker itself, in
 * reference units (speeds apart), from the window's pairs of consecutive timed runs of the same
 * task, one here and one stolen (lbomp__window_aggregate). Paired, a task's cost that changed
 * (a hotspot that moved onto it) cancels out, and only what running it away from its data costs
 * is left: ≈ 1 for tasks that own nothing, a few for tasks whose data is in this core's cache.
 * Pairs are few where steals are (1–7 a window on the 1 MiB memtask): they add up over windows
 * until there are KAPPA_PAIRS of them. A window without any (kappa may have stopped every steal)
 * takes it back towards 1, so that thieves try again and measure it anew.
 */
static void update_kappa(struct lbomp__worker *w)
{
        if (w->pairs >= KAPPA_PAIRS) {
                double k = exp(w->pair_log / w->pairs);
                w->kappa = w->kappa > 0 ? (1 - KAPPA_NEW) * w->kappa + KAPPA_NEW * k : k;
                w->pair_log = 0;
                w->pairs = 0;
        } else if (w->pairs == w->pairs_seen && w->kappa > 1) {
                w->kappa = 1 + KAPPA_FORGET * (w->kappa - 1);
        }
        w->pairs_seen = w->pairs;
}

void lbomp__window_restart(struct lbomp__window *win, struct lbomp__workers *ws, uint32_t nslots,
                           uint64_t steps, bool read_energy)
{
        win->first = steps;
        win->steps = 0;
        win->timed = 0;
        win->steal_steps = 0;
        win->steal_front = 0;
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
        win->nexcess = 0;
        win->descheduled = 0;
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->win_owned_s = w->win_run_s = 0;
                w->win_busy_timed_s = w->win_bg_timed_s = w->win_owned_timed_s = 0;
                w->win_stolen = 0;
                update_kappa(w);
                w->win_cpu_s = w->win_wall_s = 0;
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
        /* The share of the step's wall time the thread got, for its speed. */
        r->cpu_s = w->cpu_s > 0 ? w->cpu_s : 0;
        r->wall_s = w->cpu_s > 0 ? (span_s > w->cpu_s ? span_s : w->cpu_s) : 0;
        w->prev_span_s = span_s;
}

void lbomp__window_step(struct lbomp__window *win, uint64_t skipped, bool clean, bool timed,
                        bool steal, bool front)
{
        win->stole_last = steal;
        /* lbomp__window_reserve made room for this record (the slot is there and zeroed). */
        struct lbomp__steprec *rec = lbomp__history_slot(&win->steprecs, NULL, NULL);
        lbomp__history_push(&win->steprecs);
        *rec = (struct lbomp__steprec){.lambda = NAN,
                                       .lambda_run = NAN,
                                       .max_s = 0,
                                       .skipped = skipped > UINT32_MAX ? UINT32_MAX
                                                                       : (uint32_t)skipped,
                                       .clean = clean,
                                       .timed = timed};
        if (!clean)
                return;
        win->steps++;
        win->timed += timed;
        win->steal_steps += steal;
        win->steal_front += steal && front;
}

void lbomp__window_fold(struct lbomp__window *win, struct lbomp__workers *ws,
                        const struct lbomp__clock *clock)
{
        double tps = clock->ticks_per_s, n = ws->n ? (double)ws->n : 1.0;
        for (; win->folded < win->steprecs.n; win->folded++) {
                struct lbomp__steprec *rec = lbomp__window_steprec(win, win->folded);
                size_t slot = win->folded % LBOMP__RING;
                double omax = 0, osum = 0, rmax = 0, rsum = 0;
                bool off = false;
                for (int i = 0; i < ws->n; i++) {
                        struct lbomp__worker *w = &ws->w[i];
                        struct lbomp__stepload *r = &w->ring[slot];
                        uint64_t given = atomic_load_explicit(&r->given, memory_order_relaxed);
                        if (given)
                                atomic_store_explicit(&r->given, 0, memory_order_relaxed);
                        double owned = r->own_s + (double)given / tps;
                        w->step_owned_s = owned;
                        osum += owned;
                        rsum += r->run_s;
                        omax = owned > omax ? owned : omax;
                        rmax = r->run_s > rmax ? r->run_s : rmax;
                        if (!rec->clean)
                                continue;
                        w->win_owned_s += owned;
                        w->win_run_s += r->run_s;
                        w->win_stolen += r->stolen;
                        w->win_cpu_s += r->cpu_s;
                        w->win_wall_s += r->wall_s;
                        if (rec->timed) {
                                if (win->nexcess < LBOMP__EXCESS_STEPS)
                                        w->win_timed_owned[win->nexcess] = owned;
                                off = off || (r->cpu_s > 0 &&
                                              r->wall_s - r->cpu_s > LBOMP__DISTURBED * r->wall_s);
                                w->win_owned_timed_s += owned;
                                w->win_busy_timed_s += r->busy_s;
                                w->win_bg_timed_s += r->bg_s;
                        }
                }
                if (rec->clean && rec->timed && win->nexcess < LBOMP__EXCESS_STEPS) {
                        if (off)
                                win->descheduled |= 1u << win->nexcess;
                        win->nexcess++;
                }
                double lam = osum > 0 ? omax / (osum / n) : 1.0;
                double lamr = rsum > 0 ? rmax / (rsum / n) : 1.0;
                rec->lambda = (float)lam;
                rec->max_s = (float)omax;
                rec->lambda_run = (float)lamr;
                rec->run_max_s = (float)rmax;
                if (!rec->clean)
                        continue;
                win->lam_sum += lam;
                win->lamr_sum += lamr;
                win->lam_max = lam > win->lam_max ? lam : win->lam_max;
        }
}

void lbomp__window_aggregate(struct lbomp__window *win, struct lbomp__workers *ws, int self,
                             int par)
{
        bool steal = win->stole_last;
        struct lbomp__worker *w = &ws->w[self];
        const uint64_t *tk = w->ticks + (size_t)par * w->cap;
        const uint32_t *rn = w->runner + (size_t)par * w->cap;
        /* A stolen task was timed by its thief, so it is scaled by the thief's factor: the sum of
         * task costs then equals the sum of the workers' time in tasks, whoever ran what. Times
         * become reference units (× hw of the worker that ran it: 1.0 on equal cores). */
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t t = w->tasks[i];
                const struct lbomp__worker *ran = steal ? &ws->w[rn[i]] : w;
                double v = (double)tk[i] * ran->scale[par];
                if (ran->hw != 1.0)
                        v *= ran->hw;
                win->ticks[t] += v;
                uint32_t by = steal ? rn[i] : (uint32_t)self;
                /* The last LBOMP__TIMED values (a task set may run several times per time step
                 * and so more often than that in the window's last time steps). */
                if (win->ns[t] < UINT8_MAX)
                        win->ns[t]++;
                size_t base = (size_t)t * LBOMP__TIMED, k = base + (win->ns[t] - 1u) % LBOMP__TIMED;
                if (steal && win->ns[t] > 1 && by != (uint32_t)self) {
                        /* Stolen now, run here the last timed time: what a steal costs (kappa).
                         * Not the other way round: back from a thief, a task finds its data in
                         * the thief's caches, and the slow run here would hide what the steal
                         * cost. */
                        size_t j = base + (win->ns[t] - 2u) % LBOMP__TIMED;
                        if (win->hrun[j] == (uint32_t)self && v > 0 && win->hist[j] > 0) {
                                double r = log(v / win->hist[j]);
                                r = r > KAPPA_LOG_MAX    ? KAPPA_LOG_MAX
                                    : r < -KAPPA_LOG_MAX ? -KAPPA_LOG_MAX
                                                         : r;
                                w->pair_log += r;
                                w->pairs++;
                        }
                }
                win->hist[k] = (float)v;
                win->hrun[k] = by;
        }
}

void lbomp__window_aggregate_pending(struct lbomp__window *win, struct lbomp__workers *ws)
{
        if (!win->pending)
                return;
        for (int i = 0; i < ws->n; i++)
                lbomp__window_aggregate(win, ws, i, (int)(win->pending_step & 1));
        win->pending = false;
}

/* Insertion sort, ascending, of the few values a window keeps per task or per timed step. */
static void sort_few(double *a, uint32_t n)
{
        for (uint32_t i = 1; i < n; i++) {
                double x = a[i];
                uint32_t j = i;
                for (; j > 0 && a[j - 1] > x; j--)
                        a[j] = a[j - 1];
                a[j] = x;
        }
}

/* Median of n <= LBOMP__TIMED values (the mean of the two middle ones when n is even). */
static double median(const float *v, uint32_t n)
{
        double a[LBOMP__TIMED];
        for (uint32_t i = 0; i < n; i++)
                a[i] = v[i];
        sort_few(a, n);
        return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

double lbomp__window_timed_run_max(const struct lbomp__window *win, uint32_t n)
{
        double sum = 0;
        uint32_t got = 0;
        for (uint64_t i = win->steprecs.n; i-- > win->first && got < n;) {
                const struct lbomp__steprec *rec = lbomp__window_steprec(win, i);
                if (!rec)
                        break;
                if (rec->clean && rec->timed) {
                        sum += rec->run_max_s;
                        got++;
                }
        }
        return got == n ? sum / n : 0;
}

double lbomp__window_run_median(const struct lbomp__window *win, uint32_t skip, uint32_t *n)
{
        double v[LBOMP__RUN_MEDIAN_MAX];
        uint32_t got = 0;
        for (uint64_t i = win->steprecs.n;
             i-- > win->first + skip && got < LBOMP__RUN_MEDIAN_MAX;) {
                const struct lbomp__steprec *rec = lbomp__window_steprec(win, i);
                if (!rec)
                        break;
                if (rec->clean)
                        v[got++] = rec->run_max_s;
        }
        *n = got;
        if (!got)
                return 0;
        sort_few(v, got);
        return got % 2 ? v[got / 2] : 0.5 * (v[got / 2 - 1] + v[got / 2]);
}

uint32_t lbomp__window_step_costs(const struct lbomp__window *win, const struct lbomp__snap *s,
                                  double ticks_per_s, double *const *step_cost)
{
        if (!s->ntasks || !win->ns)
                return 0;
        uint32_t n = win->ns[s->id[0]];
        for (uint32_t t = 1; t < s->ntasks; t++)
                if (win->ns[s->id[t]] != n)
                        return 0;
        if (n < 2 || n > LBOMP__TIMED)
                return 0;
        double tick_s = 1.0 / ticks_per_s;
        for (uint32_t t = 0; t < s->ntasks; t++) {
                const float *h = win->hist + (size_t)s->id[t] * LBOMP__TIMED;
                for (uint32_t k = 0; k < n; k++)
                        step_cost[k][t] = (double)h[k] * tick_s;
        }
        return n;
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

/* Rounded: 1/64 steps, and exactly 1.0 within 5 % of it (noise of an unshared core). */
static double round_speed(double x)
{
        if (!(x > 0) || (x > 0.95 && x < 1.05))
                return 1.0;
        double q = floor(x * 64 + 0.5) / 64;
        return q < 1.0 / 64 ? 1.0 / 64 : q;
}

#define SHARE_NEW     0.75 /* weight of the last window in a worker's share */
#define REL_MIN_OBS   8    /* pairs of times a worker needs before its rel moves */
#define REL_MOVING    50   /* one task in this many that stayed and changed 2×: loads moving */
#define HYSTERESIS    0.10 /* relative change of a speed that is applied */
#define SHARE_ZONE    0.30 /* a share within this of the best one counts as the best */
#define SHARE_MIN_S   0.05 /* wall time a window must have measured for a share */
#define SHARE_WINDOWS 3    /* windows in a row a thread must be worse served to count as such */

/* Whether worker w's thread had its core to itself in the window (a co-runner leaves it below
 * 0.95 of its wall time), or its share is not measured (LBOMP_TIME=wall, short steps). */
static bool unshared(const struct lbomp__worker *w, bool time_wall)
{
        return time_wall || !(w->win_wall_s > 0) || w->win_cpu_s >= 0.95 * w->win_wall_s;
}

/* rel: a task that migrated between two windows, each time run by its owner alone in the timed
 * steps, has a mean time on its old owner a and one on its new owner b (the mean, pauses
 * included: under LBOMP_TIME=wall that is how a co-runner shows), both in reference units by the
 * current hw of each: their log ratio says by how much b's factor is off if a's is right. Under
 * LBOMP_TIME=cpu only workers that had their core to themselves in both windows are compared:
 * there the share is the co-runner's part, and a shared thread's task times, scaled to its CPU
 * time step by step, also carry its stealing and waiting, which would read as a slower core.
 * Only two windows in a row pair: a task that its owner did not run alone in a window's timed
 * steps (a thief ran it) is forgotten, since what it cost when last timed at home may be long gone
 * (kneighbor's drifting hotspot, whose hot tasks are the stolen ones, paired with their cost from
 * before a drift, read equal cores as 1.1–1.4 and 0.7–0.9 in 4 runs of 10; 2 of 26 since).
 * Every worker moves half of its mean log error (when it has REL_MIN_OBS of them), and the
 * geometric mean of rel over the workers stays 1. Not while the loads move: then a task's time
 * changed between the windows whether it migrated or not (a hotspot that moved on, off the tasks a
 * plan had just moved, read as a core 3.6 times faster than the other), and when more than one
 * in REL_MOVING of the tasks that stayed on their worker changed by 2× or more, rel stays.
 * Serial; O(tasks). */
static void update_rel(struct lbomp__window *win, struct lbomp__workers *ws, bool time_wall)
{
        int P = ws->n;
        double *sum = calloc((size_t)P + 1, sizeof *sum);
        uint32_t *cnt = calloc((size_t)P + 1, sizeof *cnt);
        uint64_t stayed = 0, changed = 0;
        if (!sum || !cnt)
                goto out; /* rel stays as it was */
        for (int b = 0; b < P; b++) {
                const struct lbomp__worker *w = &ws->w[b];
                for (uint32_t i = 0; i < w->n; i++) {
                        uint32_t t = w->tasks[i];
                        if (t >= win->cap)
                                continue;
                        uint32_t n = win->ns[t] < LBOMP__TIMED ? win->ns[t] : LBOMP__TIMED;
                        const uint32_t *r = win->hrun + (size_t)t * LBOMP__TIMED;
                        bool own = n > 0;
                        for (uint32_t k = 0; k < n; k++)
                                own &= r[k] == (uint32_t)b;
                        if (!own) { /* stolen in a timed step, or not timed */
                                win->last_w[t] = UINT32_MAX;
                                continue;
                        }
                        double v = win->ticks[t] / win->ns[t];
                        uint32_t a = win->last_w[t];
                        if (!unshared(w, time_wall)) {
                                win->last_w[t] = UINT32_MAX;
                                continue;
                        }
                        if (a < (uint32_t)P && a != (uint32_t)b && win->last_v[t] > 0 && v > 0) {
                                double e = log((double)win->last_v[t]) - log(v);
                                sum[b] += e;
                                sum[a] -= e;
                                cnt[a]++;
                                cnt[b]++;
                        } else if (a == (uint32_t)b && win->last_v[t] > 0 && v > 0) {
                                stayed++;
                                changed += win->last_v[t] > 2 * v || v > 2 * win->last_v[t];
                        }
                        win->last_v[t] = (float)v;
                        win->last_w[t] = (uint32_t)b;
                }
        }
        double lsum = 0;
        bool moving = changed > 1 && changed * REL_MOVING > stayed;
        for (int i = 0; i < P; i++) {
                struct lbomp__worker *w = &ws->w[i];
                if (cnt[i] >= REL_MIN_OBS && !moving) {
                        /* from the factor the times were converted with (hw, which the
                         * hysteresis may have kept while rel moved) */
                        double used = w->prior > 0 ? w->hw / w->prior : w->rel;
                        double r = used * exp(0.5 * sum[i] / cnt[i]);
                        w->rel = r < 0.25 ? 0.25 : r > 4 ? 4 : r;
                }
                lsum += log(w->rel);
        }
        double norm = exp(lsum / (P ? P : 1));
        for (int i = 0; i < P; i++)
                ws->w[i].rel /= norm;
out:
        free(sum);
        free(cnt);
}

void lbomp__window_speeds(struct lbomp__window *win, struct lbomp__workers *ws, bool time_wall)
{
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                if (ws->speeds != LBOMP__SPEEDS_AUTO) {
                        w->rel = w->share = 1.0;
                } else if (!time_wall && !ws->oversubscribed && w->win_wall_s >= SHARE_MIN_S) {
                        /* (oversubscribed, the threads share the cores with each other: their
                         * shares say how the kernel interleaved them, not which is slower, and
                         * stealing evens that out within the step; a window of less than
                         * SHARE_MIN_S measured is a few of the kernel's time slices, noise) */
                        double m = w->win_cpu_s / w->win_wall_s;
                        m = m > 1 ? 1 : m < 0.02 ? 0.02 : m;
                        w->share = SHARE_NEW * m + (1 - SHARE_NEW) * w->share;
                        w->win_share = m;
                } else {
                        w->win_share = -1; /* not measured in this window */
                }
        }
        /* A thread counts as worse served after SHARE_WINDOWS windows in a row measured below
         * 1 - SHARE_ZONE of the best-served thread's share in the same window: a co-runner that
         * stays, not a burst of other processes. */
        double top = 0;
        for (int i = 0; i < ws->n; i++)
                top = ws->w[i].win_share > top ? ws->w[i].win_share : top;
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                if (w->win_share < 0)
                        continue; /* no news: as it was */
                bool low = top > 0 && w->win_share < (1 - SHARE_ZONE) * top;
                w->share_low = low ? w->share_low + (w->share_low < 255) : 0;
        }
        if (ws->speeds == LBOMP__SPEEDS_AUTO && !ws->oversubscribed && win->timed && win->hrun)
                update_rel(win, ws, time_wall);
        /* Shares count relative to the best-served thread's: only ratios matter to a plan, and a
         * machine that other processes load evenly is no reason to move anything. Within
         * SHARE_ZONE of it, a thread counts as served as well. */
        double best = 0;
        for (int i = 0; i < ws->n; i++)
                best = ws->w[i].share > best ? ws->w[i].share : best;
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                double prior = ws->speeds == LBOMP__SPEEDS_OFF ? 1.0 : w->prior;
                double hw = round_speed(prior * w->rel);
                double share = best > 0 ? w->share / best : 1.0;
                share = share > 1 - SHARE_ZONE || w->share_low < SHARE_WINDOWS ? 1.0
                                                                               : round_speed(share);
                double speed = round_speed(hw * share);
                /* Hysteresis: a speed changes when the estimate moved by more than HYSTERESIS,
                 * so that noise (other processes coming and going) does not move tasks back and
                 * forth; a change of mode or prior always applies. */
                if (ws->speeds != LBOMP__SPEEDS_AUTO || fabs(speed / w->speed - 1) > HYSTERESIS ||
                    fabs(hw / w->hw - 1) > HYSTERESIS) {
                        if (ws->verbose && (hw != w->hw || speed != w->speed))
                                lbomp__log("lbomp: worker %d: speed %.3g -> %.3g (prior %.3g, rel "
                                           "%.3g, share %.3g of the best-served thread's)",
                                           i, w->speed, speed, prior, w->rel, share);
                        w->hw = hw;
                        w->speed = speed;
                }
        }
}

double lbomp__window_bg(const struct lbomp__window *win, const struct lbomp__worker *w)
{
        return win->timed ? w->win_bg_timed_s / win->timed : 0;
}

/* Worker w's owned load in kept timed step k as a predicted time (as lbomp__window_timed_lambda
 * counts it: owned × hw in reference units / speed). */
static double timed_pred(const struct lbomp__worker *w, uint32_t k)
{
        double l = w->win_timed_owned[k];
        return w->hw != w->speed ? l * w->hw / w->speed : l;
}

/* The window's kept timed steps that were not disturbed (LBOMP__DISTURBED), their indices in
 * kept[] in order; avg[k] is the capacity-weighted mean load of step k. Returns how many. First
 * the steps whose threads were off their cores, unless fewer than two would be left; then, among
 * three or more left, by their totals against the lower median: those short of it while two are
 * left, those beyond it while three are left. */
static uint32_t undisturbed(const struct lbomp__window *win, const struct lbomp__workers *ws,
                            double avg[LBOMP__EXCESS_STEPS], uint32_t kept[LBOMP__EXCESS_STEPS])
{
        uint32_t n = win->nexcess; /* at most LBOMP__EXCESS_STEPS (lbomp__window_fold) */
        uint32_t off = win->descheduled;
        if (n - (uint32_t)__builtin_popcount(off) < 2)
                off = 0;
        double total[LBOMP__EXCESS_STEPS], sorted[LBOMP__EXCESS_STEPS];
        uint32_t m = 0;
        for (uint32_t k = 0; k < n; k++) {
                double sum = 0, ssum = 0;
                for (int i = 0; i < ws->n; i++) {
                        sum += ws->w[i].speed * timed_pred(&ws->w[i], k);
                        ssum += ws->w[i].speed;
                }
                avg[k] = ssum > 0 ? sum / ssum : 0;
                total[k] = sum;
                if (!(off >> k & 1))
                        sorted[m++] = sum;
        }
        /* The lower median of the steps' totals: a disturbance mostly adds time, so the lower
         * middle is the cleaner reference. */
        double lo = 0, hi = INFINITY;
        if (m >= 3) {
                sort_few(sorted, m);
                lo = sorted[(m - 1) / 2] / (1 + LBOMP__DISTURBED);
                hi = sorted[(m - 1) / 2] * (1 + LBOMP__DISTURBED);
        }
        uint32_t low = 0, high = 0;
        for (uint32_t k = 0; k < n; k++)
                if (!(off >> k & 1)) {
                        low += total[k] < lo;
                        high += total[k] > hi;
                }
        /* Short of the others: a thread that started late found its tasks stolen, and the
         * thief's time in them came back to it short (0.12 of 0.26 ms in the case measured,
         * bench/README "Disturbed steps"); the work did not shrink, so such a step says less of
         * the loads than the others. Beyond them: in steps too short to read CPU time,
         * another process's pause; but such steps are also what the noise of short steps looks
         * like, which the noise bound must see (in face far the balanced 1 MiB memtask moved 22
         * tasks a run instead of 15 when they were left out down to two steps). */
        bool drop_low = m - low >= 2;
        bool drop_high = m - (drop_low ? low : 0) - high >= 3;
        uint32_t kept_n = 0;
        for (uint32_t k = 0; k < n; k++)
                if (!(off >> k & 1) && !(drop_low && total[k] < lo) &&
                    !(drop_high && total[k] > hi))
                        kept[kept_n++] = k;
        return kept_n;
}

double lbomp__window_persistent_excess(const struct lbomp__window *win,
                                       const struct lbomp__workers *ws)
{
        if (!win->nexcess || !ws->n)
                return INFINITY;
        double avg[LBOMP__EXCESS_STEPS];
        uint32_t kept[LBOMP__EXCESS_STEPS];
        uint32_t n = undisturbed(win, ws, avg, kept);
        double best = -INFINITY, e[LBOMP__EXCESS_STEPS];
        for (int i = 0; i < ws->n; i++) {
                for (uint32_t j = 0; j < n; j++)
                        e[j] = timed_pred(&ws->w[i], kept[j]) - avg[kept[j]];
                double least = lbomp__persisted(e, n);
                best = least > best ? least : best;
        }
        return best;
}

double lbomp__window_timed_lambda(const struct lbomp__window *win, const struct lbomp__workers *ws,
                                  double *max, double *avg)
{
        double mx = 0, sum = 0, ssum = 0, per = win->timed ? 1.0 / win->timed : 0;
        for (int i = 0; i < ws->n; i++) {
                const struct lbomp__worker *w = &ws->w[i];
                double l = w->win_owned_timed_s * per, sp = w->speed;
                if (w->hw != sp) /* its predicted time: owned × hw in reference units / speed */
                        l = l * w->hw / sp;
                sum += sp * l;
                ssum += sp;
                mx = l > mx ? l : mx;
        }
        *max = mx;
        *avg = ws->n ? sum / ssum : 0;
        return *avg > 0 ? mx / *avg : 1.0;
}

lbomp_window_stats_t *lbomp__window_close(struct lbomp__window *win,
                                          const struct lbomp__workers *ws, uint64_t steps)
{
        size_t nd = (size_t)lbomp__energy_ndomains(win->energy);
        double *dj = NULL;
        if (nd) {
                dj = lbomp__history_slot(&win->dom, NULL, NULL);
                if (!dj)
                        return NULL;
        }
        lbomp_window_stats_t gone;
        int had = 0;
        lbomp_window_stats_t *ws_rec = lbomp__history_slot(&win->recs, &gone, &had);
        if (!ws_rec)
                return NULL;
        if (had) {
                win->stolen_gone += gone.stolen;
                win->steal_steps_gone += gone.steal_steps;
                win->steal_front_gone += gone.steal_front_steps;
        }
        lbomp__history_push(&win->recs);
        if (nd)
                lbomp__history_push(&win->dom);
        /* (the caller folded the window's steps in) */
        ws_rec->first_step = win->first;
        ws_rec->steps = steps - win->first;
        double mx = 0, sum = 0, ssum = 0, run_mx = 0, run_sum = 0;
        double per = win->steps ? 1.0 / win->steps : 1.0;
        for (int i = 0; i < ws->n; i++) {
                /* `owned` charges tasks to their owners (what a plan can change); `run` to the
                 * threads that ran them (what the steps took). The owned load as a predicted
                 * time, against the capacity-weighted mean, as the plans see it (the same
                 * numbers, bit for bit, with every speed 1.0). */
                const struct lbomp__worker *w = &ws->w[i];
                double load = w->win_owned_s * per, run = w->win_run_s * per, sp = w->speed;
                if (w->hw != sp)
                        load = load * w->hw / sp;
                sum += sp * load;
                ssum += sp;
                mx = load > mx ? load : mx;
                run_sum += run;
                run_mx = run > run_mx ? run : run_mx;
                ws_rec->stolen += ws->w[i].win_stolen;
        }
        ws_rec->max_load = mx;
        ws_rec->avg_load = ws->n ? sum / ssum : 0;
        ws_rec->imbalance = ws_rec->avg_load > 0 ? mx / ws_rec->avg_load : 1.0;
        ws_rec->imbalance_run = run_sum > 0 ? run_mx / (run_sum / ws->n) : 1.0;
        ws_rec->imbalance_step_mean = lbomp__window_step_lambda(win);
        ws_rec->imbalance_step_max = win->steps ? win->lam_max : 1.0;
        ws_rec->imbalance_run_step_mean = win->steps ? win->lamr_sum / win->steps : 1.0;
        ws_rec->timed_steps = win->timed;
        ws_rec->steal_steps = win->steal_steps;
        ws_rec->steal_front_steps = win->steal_front;
        ws_rec->wall_s = lbomp__mono_s() - win->wall0;
        /* One reading closes this window; lbomp__window_restart(read_energy = false) makes it the
         * start of the next. */
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
        if (win->recs.n == 1)
                win->first_rec = *ws_rec;
        return ws_rec;
}

void lbomp__window_free(struct lbomp__window *win)
{
        free(win->ticks);
        free(win->hist);
        free(win->hrun);
        free(win->last_v);
        free(win->last_w);
        free(win->ns);
        lbomp__history_free(&win->steprecs);
        lbomp__history_free(&win->recs);
        lbomp__energy_close(win->energy);
        free(win->mark);
        lbomp__history_free(&win->dom);
        memset(win, 0, sizeof *win);
}
