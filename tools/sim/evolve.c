/*
 * evolve.c — lbomp-sim --evolve: a synthetic workload whose task costs change from time step to
 * time step (static, a drifting hotspot, hotspots that cycle between places, a random walk of
 * every task, a hotspot that appears at a given step), run over --time-steps steps with an LB
 * step every --period steps (auto: when its when-rule arms one, --period at most), each step
 * taking as long as its most loaded worker (with --steal K, as long as the modelled stealing's
 * schedule: steal_step). Per policy: the total time (steps, LB steps' measured
 * decisions and modelled costs, moves), the LB steps and their migrations.
 *
 * With --auto-data it writes auto's training rows instead (tools/auto/train.py): at every
 * --period boundary, the features of the current snapshot and, per candidate, the simulated time
 * of the next --period steps after its plan (LB step and moves included); the label is the
 * fastest; "armed" says whether auto's when-rule, run over the window's steps as the runtime runs
 * it, would have armed an LB step (the runtime consults the model only then). The run goes on
 * with the label's mapping when it did, else with the mapping as it is.
 *
 * The LB step's modelled cost: the policy's measured decision time, plus EV_LB_FIXED_S, plus
 * EV_MOVE_S per migration and the move cost (bytes x distance) x --byte-ns.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mailbox.h"
#include "plan.h"
#include "policy.h"
#include "policy/auto.h"
#include "sim.h"
#include "window.h"

#define EV_LB_FIXED_S 20e-6 /* the LB step beyond the decision: snapshot, apply, restart */
#define EV_MOVE_S     1e-6  /* per migration: the task's cache lines refilled elsewhere */

const char *const sim_evolve_names[] = {"static", "drift", "cycle", "walk", "hotspot", NULL};

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct ev {
        const struct opts *o;
        struct world *w;
        uint32_t T, P;
        double *base;                /* [T] cost at step 0, seconds */
        double *walk;                /* [T] log multiplier (walk) */
        double *cost;                /* [T] this step's costs */
        double *acc;                 /* [T] costs summed over the timed steps of the window */
        double *load;                /* [P] */
        double *early_w;             /* [P] owned loads summed over the window's untimed steps */
        double *late_w;              /* [P] over its timed steps */
        double *tcost[LBOMP__TIMED]; /* [T] each task's cost in each timed step of the window */
        double *tload;               /* [LBOMP__TIMED * P] scratch: per-worker loads and means */
        double took[LBOMP__TIMED];   /* what each of them took (--steal: its schedule) */
        uint32_t *map;               /* [T] current worker of each task */
        /* --steal: scratch of the step's schedule (steal_step) */
        uint32_t *order;             /* [T] the tasks by worker, each worker's in slot order */
        uint32_t *head, *tail;       /* [P + 1] each worker's next own task and its end in order */
        double *left;                /* [P] the cost of each worker's tasks not begun */
        struct lbomp__wheap free_at; /* the workers by when each is next free (INFINITY: done) */
        uint32_t *dest;              /* [T] */
        struct lbomp__rng rng;
        struct lbomp__dec *dec;
        uint64_t step; /* time steps done */
        /* the window */
        uint64_t wfirst, wsteps, wtimed;
        double lam_sum;
        double persist; /* persistent_excess() of the window, once computed (NAN: not yet) */
};

/* The multiplier of task t at step s. */
static double bump(double x, double c, double width)
{
        double d = fabs(x - c);
        d = d > 0.5 ? 1.0 - d : d;
        return exp(-(d / width) * (d / width));
}

static void costs_at(struct ev *e, uint64_t s)
{
        const struct opts *o = e->o;
        double amp = o->ev_amp - 1.0;
        for (uint32_t t = 0; t < e->T; t++) {
                double x = ((double)t + 0.5) / e->T, m = 1.0;
                switch (o->evolve) {
                case EV_STATIC:
                        break;
                case EV_DRIFT:
                        m += amp * bump(x, fmod(0.1 + o->ev_speed * (double)s, 1.0), o->ev_width);
                        break;
                case EV_CYCLE: {
                        static const double where[3] = {0.15, 0.5, 0.8};
                        m += amp * bump(x, where[(s / (uint64_t)o->ev_cycle) % 3], o->ev_width);
                        break;
                }
                case EV_WALK:
                        if (s > 0) {
                                /* Box-Muller from two uniforms */
                                double u1 = lbomp__rng_unit(&e->rng) + 1e-12,
                                       u2 = lbomp__rng_unit(&e->rng);
                                double g = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
                                double v = e->walk[t] + o->ev_speed * g;
                                e->walk[t] = v < -1.5 ? -1.5 : v > 1.5 ? 1.5 : v;
                        }
                        m = exp(e->walk[t]);
                        break;
                case EV_HOTSPOT:
                        if (s >= (uint64_t)o->ev_hot_at)
                                m += amp * bump(x, 0.3, o->ev_width);
                        break;
                }
                double noise = o->ev_noise > 0
                                       ? 1.0 + o->ev_noise * (2.0 * lbomp__rng_unit(&e->rng) - 1.0)
                                       : 1.0;
                e->cost[t] = e->base[t] * m * noise;
        }
}

/*
 * --steal K: the step as the runtime's stealing runs it, modelled. Each worker runs its own tasks
 * in slot order; one that has none left takes the last task not begun of the worker with the
 * most work not begun (tail stealing, one task at a time: the runtime takes runs of tiny tasks,
 * and whole batches stay with their owner, neither modelled), and runs it at 1 + K times its cost
 * (its data refilled on another core). The step lasts until the last task ends. Not modelled:
 * what a steal attempt costs, the victims' order by distance, and when stealing is armed (the
 * runtime steals on demand; here always). The loads that the window and the policies see stay
 * the owners' (the runtime charges a stolen task to its owner).
 */
static double steal_step(struct ev *e)
{
        uint32_t T = e->T, P = e->P;
        double K = e->o->steal, end = 0;
        memset(e->head, 0, (P + 1) * sizeof *e->head);
        for (uint32_t t = 0; t < T; t++)
                e->head[e->map[t] + 1]++;
        for (uint32_t w = 0; w < P; w++)
                e->head[w + 1] += e->head[w];
        memcpy(e->tail, e->head, (P + 1) * sizeof *e->tail);
        for (uint32_t t = 0; t < T; t++)
                e->order[e->tail[e->map[t]]++] = t;
        struct lbomp__wheap *h = &e->free_at;
        for (uint32_t w = 0; w < P; w++) {
                e->left[w] = e->load[w];
                h->load[w] = 0;
        }
        lbomp__wheap_build(h);
        for (;;) {
                uint32_t w = h->w[0];
                double now = h->load[w], c;
                if (isinf(now)) /* every worker done */
                        break;
                if (e->head[w] < e->tail[w]) {
                        c = e->cost[e->order[e->head[w]++]];
                        e->left[w] -= c;
                } else {
                        uint32_t v = P;
                        for (uint32_t u = 0; u < P; u++)
                                if (e->head[u] < e->tail[u] && (v == P || e->left[u] > e->left[v]))
                                        v = u;
                        if (v == P) { /* nothing left to take: w is done */
                                end = now > end ? now : end;
                                h->load[w] = INFINITY;
                                lbomp__wheap_down(h, 0);
                                continue;
                        }
                        double own = e->cost[e->order[--e->tail[v]]];
                        e->left[v] -= own;
                        c = own * (1.0 + K);
                }
                h->load[w] = now + c;
                lbomp__wheap_down(h, 0);
        }
        return end;
}

/* One step under the current mapping: its time (the largest load, or with --steal the modelled
 * schedule's end) and λ of the owned loads; the window's sums. */
static double run_step(struct ev *e, double *lam_out, double *max_out, bool timed)
{
        costs_at(e, e->step);
        memset(e->load, 0, e->P * sizeof *e->load);
        for (uint32_t t = 0; t < e->T; t++)
                e->load[e->map[t]] += e->cost[t];
        double mx, avg, lam = lbomp__imbalance(e->load, e->P, &mx, &avg);
        double took = e->o->steal >= 0 ? steal_step(e) : mx;
        double *into = timed ? e->late_w : e->early_w;
        for (uint32_t w = 0; w < e->P; w++)
                into[w] += e->load[w];
        if (timed) {
                for (uint32_t t = 0; t < e->T; t++)
                        e->acc[t] += e->cost[t];
                if (e->wtimed < LBOMP__TIMED) {
                        memcpy(e->tcost[e->wtimed], e->cost, e->T * sizeof *e->cost);
                        e->took[e->wtimed] = took;
                }
                e->wtimed++;
        }
        e->wsteps++;
        e->lam_sum += lam;
        e->step++;
        *lam_out = lam;
        *max_out = mx;
        return took;
}

static void window_restart(struct ev *e)
{
        e->wfirst = e->step;
        e->wsteps = e->wtimed = 0;
        e->lam_sum = 0;
        e->persist = NAN;
        memset(e->acc, 0, e->T * sizeof *e->acc);
        memset(e->early_w, 0, e->P * sizeof *e->early_w);
        memset(e->late_w, 0, e->P * sizeof *e->late_w);
}

/*
 * λ of the workers' loads summed over the window's timed steps, the runtime's check at an LB step
 * (lbomp__window_timed_lambda, equal speeds): at most 1 + the tolerance, no policy runs, no
 * snapshot is built and the mapping stays (lbstep.c). 0 when no step was timed.
 */
static double timed_lambda(const struct ev *e)
{
        double mx, avg;
        if (!e->wtimed)
                return 0;
        double lam = lbomp__imbalance(e->late_w, e->P, &mx, &avg);
        return avg > 0 ? lam : 0;
}

static bool timed_balanced(const struct ev *e, double *lam)
{
        *lam = timed_lambda(e);
        return *lam > 0 && *lam <= 1.0 + e->w->params.tolerance;
}

/* The excess over the mean that one worker kept at every timed step of the window (the least,
 * lbomp__persisted), as the runtime's lbomp__window_persistent_excess reads it (no step is
 * disturbed here); INFINITY when none was timed. Computed once per window: a fixed policy's pays
 * check and the snapshot's history both read it. */
static double persistent_excess(struct ev *e)
{
        if (!isnan(e->persist))
                return e->persist;
        uint32_t n = e->wtimed < LBOMP__TIMED ? (uint32_t)e->wtimed : LBOMP__TIMED, P = e->P;
        if (!n || !P)
                return e->persist = INFINITY;
        double avg[LBOMP__TIMED], x[LBOMP__TIMED], best = -INFINITY;
        memset(e->tload, 0, (size_t)n * P * sizeof *e->tload);
        for (uint32_t k = 0; k < n; k++) {
                double *l = e->tload + (size_t)k * P, sum = 0;
                for (uint32_t t = 0; t < e->T; t++)
                        l[e->map[t]] += e->tcost[k][t];
                for (uint32_t w = 0; w < P; w++)
                        sum += l[w];
                avg[k] = sum / P;
        }
        for (uint32_t w = 0; w < P; w++) {
                for (uint32_t k = 0; k < n; k++)
                        x[k] = e->tload[(size_t)k * P + w] - avg[k];
                double p = lbomp__persisted(x, n);
                best = p > best ? p : best;
        }
        return e->persist = best;
}

/* What the window's timed steps took on average (the runtime's lbomp__window_timed_run_max: the
 * longest thread, steals included), over the first n of them. */
static double timed_took(const struct ev *e, uint32_t n)
{
        double sum = 0;
        for (uint32_t k = 0; k < n; k++)
                sum += e->took[k];
        return n ? sum / n : 0;
}

/*
 * The runtime's moves that pay, in time (lbstep.c), for a fixed policy whose timed steps are not
 * balanced: the most a plan can win per step is the timed steps' excess of the largest load over
 * the mean, at most what persisted on one worker; over `periods` periods (the LB steps so far, at
 * most 8) it must beat the last LB step that ran a policy (before any, auto's guess).
 */
static bool fixed_pays(struct ev *e, uint32_t periods, double last_cost)
{
        double mx, avg;
        if (!e->wtimed)
                return true;
        lbomp__imbalance(e->late_w, e->P, &mx, &avg);
        double excess = (mx - avg) / (double)e->wtimed, persist = persistent_excess(e);
        if (persist < excess)
                excess = persist > 0 ? persist : 0;
        double cost = last_cost > 0 ? last_cost : lbomp__auto_lb_cost_guess(e->T);
        return excess * (double)e->o->period * (double)periods >= cost;
}

/* The window's mean per-step λ against its λ (lbomp__interleave_wanted), as lbstep.c's
 * moves_within reads them. */
static bool moves_within(struct ev *e, double *wlam)
{
        for (uint32_t w = 0; w < e->P; w++)
                e->load[w] = e->early_w[w] + e->late_w[w];
        *wlam = lbomp__imbalance(e->load, e->P, NULL, NULL);
        return e->P >= 2 && e->wsteps &&
               lbomp__interleave_wanted(e->lam_sum / (double)e->wsteps, *wlam,
                                        e->w->params.tolerance);
}

_Static_assert(LBOMP__TIMED >= 2, "snapshot() keeps two per-worker arrays in ev.tload");

/* The snapshot the runtime would build at the window's end, with auto's history. */
static const struct lbomp__snap *snapshot(struct ev *e, struct lbomp__auto_hist *h,
                                          double lb_cost_s, uint64_t lb_step)
{
        struct lbomp__snap_arrays a = lbomp__snap_arrays(e->w->sb);
        for (uint32_t t = 0; t < e->T; t++) {
                a.cost[t] = e->wtimed ? e->acc[t] / (double)e->wtimed : e->cost[t];
                a.worker[t] = e->map[t];
        }
        lbomp__snap_rebuild(e->w->sb);
        memset(h, 0, sizeof *h);
        double lam_win = 1.0, sum = 0, mx = 0;
        uint64_t early = e->wsteps - e->wtimed;
        for (uint32_t w = 0; w < e->P; w++) {
                double l = e->early_w[w] + e->late_w[w];
                sum += l;
                mx = l > mx ? l : mx;
        }
        if (sum > 0)
                lam_win = mx / (sum / e->P);
        h->step_var = e->wsteps ? (e->lam_sum / (double)e->wsteps) / lam_win : 1.0;
        /* as the runtime: unknown in the first window and with fewer than 2 untimed steps */
        if (early >= 2 && e->wtimed && e->wfirst > 0) {
                /* per step, in scratch: the window's sums stay for the checks after this */
                double *ew = e->tload, *lw = e->tload + e->P;
                for (uint32_t w = 0; w < e->P; w++) {
                        ew[w] = e->early_w[w] / (double)early;
                        lw[w] = e->late_w[w] / (double)e->wtimed;
                }
                h->drift = lbomp__auto_drift(ew, lw, e->P, 0.5 * (double)e->wsteps);
                h->drift = h->drift < 1 ? h->drift : 1;
                h->decay = lbomp__auto_decay(ew, lw, e->P, 0.5 * (double)e->wsteps);
        }
        h->horizon = lbomp__auto_horizon(e->step, (int)e->o->period);
        double persist = persistent_excess(e);
        h->persist_known = isfinite(persist);
        h->persist_s = persist;
        h->lb_cost_s = lb_cost_s;
        h->byte_s = e->o->byte_ns * 1e-9;
        lbomp__snap_set_hist(e->w->sb, h);
        struct lbomp__snap *s = (struct lbomp__snap *)e->w->s;
        s->seed = lbomp__snap_seed(e->o->seed, lb_step);
        s->lb_step = lb_step;
        return s;
}

/* The LB step's modelled cost of the plan e->dest (decision + fixed + moves + bytes), after the
 * never-worse check when `guard`; a failed plan keeps the mapping. */
static double plan_cost(struct ev *e, const struct lbomp__snap *s, bool failed, bool guard,
                        double dec_s, uint32_t *migrations)
{
        struct lbomp__plan pl = {0};
        if (failed || lbomp__plan_begin(&pl, s, e->dest) < 0) {
                memcpy(e->dest, s->worker, e->T * sizeof *e->dest);
                *migrations = 0;
                lbomp__plan_free(&pl);
                return dec_s + EV_LB_FIXED_S;
        }
        lbomp__plan_evaluate(&pl);
        if (guard)
                lbomp__plan_guard(&pl);
        *migrations = pl.moves.tasks;
        double cost = dec_s + EV_LB_FIXED_S + EV_MOVE_S * pl.moves.tasks +
                      pl.moves.cost * e->o->byte_ns * 1e-9;
        lbomp__plan_free(&pl);
        return cost;
}

/*
 * A load that moves within the window, as the runtime judges it (lbstep.c, spread_pays): the
 * tasks interleaved (lbomp__interleave) when that lowers the largest worker's time of the timed
 * steps by more than the LB step and the links' added bytes cost over lbomp__auto_horizon steps,
 * or when the tasks are interleaved already — and its λ by the window's costs is within the
 * tolerance or no worse than the mapping's. Returns whether it did: then e->dest holds the
 * interleaving and *cost its LB step's modelled cost.
 */
static bool spread(struct ev *e, const struct lbomp__snap *s, double *cost, uint32_t *migrations)
{
        uint32_t n = e->wtimed < LBOMP__TIMED ? (uint32_t)e->wtimed : LBOMP__TIMED;
        if (n < 2)
                return false;
        double t0 = now_s();
        if (lbomp__interleave(s, e->dest) < 0)
                return false;
        const double *const *sc = (const double *const *)e->tcost;
        double horizon = lbomp__auto_horizon(e->step, (int)e->o->period);
        /* what the steps took (with --steal, their schedule), as the runtime reads it */
        double gain = (timed_took(e, n) - lbomp__steps_max(s, e->dest, sc, n, e->load)) * horizon;
        struct lbomp__plan pl = {0};
        if (lbomp__plan_begin(&pl, s, e->dest) < 0) {
                lbomp__plan_free(&pl);
                return false;
        }
        lbomp__plan_evaluate(&pl);
        bool fits = pl.lambda_new <= 1.0 + e->w->params.tolerance || pl.lambda_new <= pl.lambda;
        lbomp__plan_free(&pl);
        double links = lbomp__locality_cost(s, e->dest) - lbomp__locality_cost(s, s->worker);
        *cost = plan_cost(e, s, false, false, now_s() - t0, migrations) +
                (links > 0 ? links * e->o->byte_ns * 1e-9 * horizon : 0);
        /* interleaved already: the mapping stays, whatever a plan from the window's costs, which
         * the load has left behind, would say */
        return fits && (gain > *cost || *migrations == 0);
}

/* Runs policy p on s into e->dest; the never-worse check; returns the LB step's modelled cost. */
static double plan(struct ev *e, const struct lbomp__policy *p, const struct lbomp__snap *s,
                   uint32_t *migrations)
{
        struct lbomp__pstats st;
        memset(&st, 0, sizeof st);
        if (p->kind == LBOMP__DECENTRAL && !e->dec)
                e->dec = lbomp__dec_create(1);
        double t0 = now_s();
        int rc = lbomp__policy_run_offline_in(p, s, e->dest, &st, e->dec);
        double dec_s = now_s() - t0;
        return plan_cost(e, s, rc < 0, true, dec_s, migrations);
}

static int ev_init(struct ev *e, const struct opts *o, struct world *w)
{
        memset(e, 0, sizeof *e);
        e->o = o;
        e->w = w;
        e->T = w->s->ntasks;
        e->P = w->s->nworkers;
        size_t T = (size_t)e->T + 1, P = (size_t)e->P + 1;
        e->base = malloc(T * sizeof *e->base);
        e->walk = calloc(T, sizeof *e->walk);
        e->cost = malloc(T * sizeof *e->cost);
        e->acc = calloc(T, sizeof *e->acc);
        e->load = malloc(P * sizeof *e->load);
        e->early_w = calloc(P, sizeof *e->early_w);
        e->late_w = calloc(P, sizeof *e->late_w);
        e->map = malloc(T * sizeof *e->map);
        e->dest = malloc(T * sizeof *e->dest);
        e->tload = malloc((size_t)LBOMP__TIMED * P * sizeof *e->tload);
        if (!e->base || !e->walk || !e->cost || !e->acc || !e->load || !e->early_w || !e->late_w ||
            !e->map || !e->dest || !e->tload)
                return -ENOMEM;
        if (o->steal >= 0) {
                e->order = malloc(T * sizeof *e->order);
                e->head = malloc((P + 1) * sizeof *e->head);
                e->tail = malloc((P + 1) * sizeof *e->tail);
                e->left = malloc(P * sizeof *e->left);
                if (!e->order || !e->head || !e->tail || !e->left ||
                    lbomp__wheap_init(&e->free_at, e->P, NULL) < 0)
                        return -ENOMEM;
        }
        for (int k = 0; k < LBOMP__TIMED; k++)
                if (!(e->tcost[k] = malloc(T * sizeof *e->tcost[k])))
                        return -ENOMEM;
        memcpy(e->base, w->s->cost, e->T * sizeof *e->base);
        memcpy(e->map, w->s->worker, e->T * sizeof *e->map);
        return 0;
}

static void ev_reset(struct ev *e)
{
        memset(e->walk, 0, e->T * sizeof *e->walk);
        lbomp__rng_seed(&e->rng, e->o->seed * 7919 + 17);
        e->step = 0;
        window_restart(e);
}

static void ev_free(struct ev *e)
{
        free(e->base);
        free(e->walk);
        free(e->cost);
        free(e->acc);
        free(e->load);
        free(e->early_w);
        free(e->late_w);
        free(e->map);
        free(e->dest);
        free(e->tload);
        free(e->order);
        free(e->head);
        free(e->tail);
        free(e->left);
        lbomp__wheap_free(&e->free_at);
        for (int k = 0; k < LBOMP__TIMED; k++)
                free(e->tcost[k]);
        lbomp__dec_destroy(e->dec);
}

/* auto's when-rule on the step just run, as the runtime runs it (false when out of memory: the
 * runtime then arms nothing before the period either). */
static bool when_step(struct ev *e, struct lbomp__auto_when *when, const struct opts *o)
{
        double *load = lbomp__auto_when_loads(when, e->P);
        if (!load)
                return false;
        memcpy(load, e->load, e->P * sizeof *load);
        return lbomp__auto_when_step(when, 0.05, lbomp__auto_horizon(e->step, (int)o->period));
}

/* One policy over the whole run. */
static int run_policy(struct ev *e, const struct lbomp__policy *p, const uint32_t *first)
{
        const struct opts *o = e->o;
        memcpy(e->map, first, e->T * sizeof *e->map);
        ev_reset(e);
        bool is_auto = p == &lbomp__policy_auto;
        struct lbomp__auto_when when;
        lbomp__auto_when_init(&when);
        when.ntasks = e->T;
        double steps_s = 0, lb_s = 0, lb_cost = 0, pays_cost = 0;
        uint64_t nlb = 0, nskip = 0, migrations = 0, window_len = (uint64_t)o->period;
        uint32_t pays_runs = 0;
        bool armed = false, interleaved = false;    /* the mapping is spread()'s */
        struct lbomp__spread_backoff backoff = {0}; /* auto's, between its judgments */
        char lbsteps[4096] = "";
        size_t used = 0;
        while (e->step < (uint64_t)o->time_steps) {
                uint64_t end = e->wfirst + window_len;
                bool timed = e->step + LBOMP__TIMED >= end;
                double lam, mx;
                steps_s += run_step(e, &lam, &mx, timed);
                if (is_auto && !armed && when_step(e, &when, o)) {
                        armed = true;
                        uint64_t want = e->step - e->wfirst + LBOMP__TIMED;
                        if (want < window_len)
                                window_len = want;
                }
                if (e->step < e->wfirst + window_len)
                        continue;
                /* the window's end: an LB step (auto: when armed) */
                double lam_t = 0, wlam, c = 0;
                bool fixed = !is_auto && strcmp(p->name, "none") != 0;
                /* auto once its when-rule armed the LB step, as the runtime */
                bool within = moves_within(e, &wlam);
                bool moving = within && (fixed || (is_auto && armed));
                bool suits = lbomp__interleave_suits(interleaved, wlam, e->w->params.tolerance);
                bool arm_next = false;
                bool balanced =
                        strcmp(p->name, "none") != 0 && (suits || timed_balanced(e, &lam_t));
                /* a load that moves within the window: the interleaving first, as the runtime */
                struct lbomp__auto_hist h;
                const struct lbomp__snap *s = moving ? snapshot(e, &h, lb_cost, nlb) : NULL;
                uint32_t mig = 0;
                bool spr = moving && spread(e, s, &c, &mig);
                if (is_auto && moving)
                        lbomp__spread_judged(&backoff, spr && mig > 0);
                /* a fixed policy's LB step that is not balanced: no policy runs unless its plan
                 * can pay, as in the runtime (the periods count such LB steps, at most 8) */
                bool no_pay = false;
                if (fixed && (spr || !balanced)) {
                        pays_runs += pays_runs < 8;
                        no_pay = !spr && !fixed_pays(e, pays_runs, pays_cost);
                }
                if (is_auto && !armed) {
                        nskip++;
                        lbomp__auto_when_unarmed(&when);
                        /* as the runtime (lbstep.c, auto_skip): a load that moves within the
                         * window arms the next one, whose timed steps judge the interleaving */
                        arm_next = lbomp__spread_arm(&backoff, within, suits);
                } else if (!spr && balanced) {
                        /* balanced within the tolerance: no plan; auto armed it for nothing */
                        nskip++;
                        if (is_auto)
                                lbomp__auto_when_after(&when, 0, lam_t, when.decay, false,
                                                       e->lam_sum / (double)e->wsteps);
                } else if (no_pay) {
                        nskip++;
                } else if (strcmp(p->name, "none") != 0) {
                        if (!s)
                                s = snapshot(e, &h, lb_cost, nlb);
                        if (spr) {
                                interleaved = true;
                        } else {
                                c = plan(e, p, s, &mig);
                                interleaved = interleaved && mig == 0;
                        }
                        lb_s += c;
                        pays_cost = c;
                        migrations += mig;
                        memcpy(e->map, e->dest, e->T * sizeof *e->map);
                        if (used + 16 < sizeof lbsteps)
                                used += (size_t)snprintf(lbsteps + used, sizeof lbsteps - used,
                                                         "%s%llu", nlb ? "," : "",
                                                         (unsigned long long)(e->step - 1));
                        nlb++;
                        if (is_auto && spr) {
                                lb_cost = c;
                                lbomp__loads(s, e->dest, e->load);
                                lbomp__auto_when_after(
                                        &when, c, lbomp__imbalance(e->load, e->P, NULL, NULL),
                                        h.decay, mig > 0, e->lam_sum / (double)e->wsteps);
                        } else if (is_auto) {
                                lb_cost = c;
                                double m2, a2;
                                lbomp__loads(s, e->dest, e->load);
                                double after = lbomp__imbalance(e->load, e->P, &m2, &a2);
                                lbomp__loads(s, s->worker, e->load);
                                double lam0 = lbomp__imbalance(e->load, e->P, &m2, &a2);
                                lbomp__auto_when_after(&when, c, h.pays ? after : lam0, h.decay,
                                                       h.pays, e->lam_sum / (double)e->wsteps);
                                lbomp__auto_when_retry(
                                        &when, &h, lbomp__auto_horizon(UINT64_MAX, (int)o->period));
                        }
                }
                armed = arm_next;
                window_len = (uint64_t)o->period;
                window_restart(e);
        }
        lbomp__auto_when_free(&when);
        double total = steps_s + lb_s;
        if (o->json)
                printf("{\"policy\":\"%s\",\"evolve\":\"%s\",\"tasks\":%u,\"cores\":%u,"
                       "\"time_steps\":%ld,\"period\":%ld,\"total_s\":%.9g,\"steps_s\":%.9g,"
                       "\"lb_s\":%.9g,\"lb_steps\":%llu,\"skipped\":%llu,\"migrations\":%llu,"
                       "\"lb_at\":[%s]}\n",
                       p->name, sim_evolve_names[o->evolve], e->T, e->P, o->time_steps, o->period,
                       total, steps_s, lb_s, (unsigned long long)nlb, (unsigned long long)nskip,
                       (unsigned long long)migrations, lbsteps);
        else
                printf("%-14s total %.6g s  steps %.6g s  LB %.6g s  %llu LB steps (%llu skipped) "
                       " %llu migrations  at steps %s\n",
                       p->name, total, steps_s, lb_s, (unsigned long long)nlb,
                       (unsigned long long)nskip, (unsigned long long)migrations,
                       lbsteps[0] ? lbsteps : "-");
        return 0;
}

/* --auto-data: the training rows of one run. */
static int auto_data(struct ev *e, const uint32_t *first)
{
        const struct opts *o = e->o;
        memcpy(e->map, first, e->T * sizeof *e->map);
        ev_reset(e);
        uint32_t *cand_map = malloc((size_t)LBOMP__AUTO_NCAND * e->T * sizeof *cand_map);
        uint32_t *save_map = malloc((size_t)e->T * sizeof *save_map);
        double *save_walk = malloc((size_t)e->T * sizeof *save_walk);
        if (!cand_map || !save_map || !save_walk) {
                free(cand_map);
                free(save_map);
                free(save_walk);
                return -ENOMEM;
        }
        double lb_cost = 0;
        uint64_t nlb = 0;
        /* the when-rule as the runtime runs it: whether this decision would be taken at all (the
         * runtime consults the model only then) */
        struct lbomp__auto_when when;
        lbomp__auto_when_init(&when);
        when.ntasks = e->T;
        while (e->step + (uint64_t)o->period <= (uint64_t)o->time_steps) {
                /* a window under the current mapping */
                bool armed = false;
                while (e->step < e->wfirst + (uint64_t)o->period) {
                        double lam, mx;
                        run_step(e, &lam, &mx, e->step + LBOMP__TIMED >= e->wfirst + o->period);
                        armed |= when_step(e, &when, o);
                }
                if (e->step + (uint64_t)o->period > (uint64_t)o->time_steps)
                        break;
                /* the window's mean per-step λ, before the candidates' windows run on */
                double step_lam = e->lam_sum / (double)e->wsteps;
                /* armed, but the timed steps balanced within the tolerance: the runtime consults no
                 * model there (lbstep.c), so the row is not one it trains on */
                double lam_t;
                bool balanced = armed && timed_balanced(e, &lam_t);
                armed = armed && !balanced;
                struct lbomp__auto_hist h;
                const struct lbomp__snap *s = snapshot(e, &h, lb_cost, nlb);
                float f[LBOMP__AUTO_NFEAT];
                lbomp__auto_features(s, &h, e->load, f);
                double cost[LBOMP__AUTO_NCAND], tnext[LBOMP__AUTO_NCAND];
                uint32_t migs[LBOMP__AUTO_NCAND];
                for (int c = 0; c < LBOMP__AUTO_NCAND; c++) {
                        const struct lbomp__policy *p = lbomp__auto_candidate(c);
                        if (c == 0) {
                                memcpy(e->dest, s->worker, e->T * sizeof *e->dest);
                                cost[c] = 0;
                                migs[c] = 0;
                        } else {
                                cost[c] = plan(e, p, s, &migs[c]);
                        }
                        memcpy(cand_map + (size_t)c * e->T, e->dest, e->T * sizeof *e->dest);
                }
                /* the next window under each candidate's mapping, from the same state */
                uint64_t step0 = e->step;
                struct lbomp__rng rng0 = e->rng;
                memcpy(save_walk, e->walk, e->T * sizeof *save_walk);
                memcpy(save_map, e->map, e->T * sizeof *save_map);
                for (int c = 0; c < LBOMP__AUTO_NCAND; c++) {
                        e->step = step0;
                        e->rng = rng0;
                        memcpy(e->walk, save_walk, e->T * sizeof *e->walk);
                        memcpy(e->map, cand_map + (size_t)c * e->T, e->T * sizeof *e->map);
                        double t = cost[c];
                        for (long k = 0; k < o->period; k++) {
                                double lam, mx;
                                t += run_step(e, &lam, &mx, false);
                        }
                        tnext[c] = t;
                }
                int best = 0;
                for (int c = 1; c < LBOMP__AUTO_NCAND; c++)
                        if (tnext[c] < tnext[best] * (1.0 - 1e-9))
                                best = c;
                printf("{\"evolve\":\"%s\",\"seed\":%llu,\"lb_step\":%llu,\"f\":[",
                       sim_evolve_names[o->evolve], (unsigned long long)o->seed,
                       (unsigned long long)nlb);
                for (int i = 0; i < LBOMP__AUTO_NFEAT; i++)
                        printf("%s%.6g", i ? "," : "", (double)f[i]);
                printf("],\"t\":[");
                for (int c = 0; c < LBOMP__AUTO_NCAND; c++)
                        printf("%s%.9g", c ? "," : "", tnext[c]);
                printf("],\"label\":%d,\"armed\":%s}\n", best, armed ? "true" : "false");
                /* go on from the window's start with the label's mapping when the when-rule armed
                 * an LB step (the runtime's path), else with the mapping as it is: the window just
                 * simulated is the next one */
                int go = armed ? best : 0;
                e->step = step0;
                e->rng = rng0;
                memcpy(e->walk, save_walk, e->T * sizeof *e->walk);
                memcpy(e->map, cand_map + (size_t)go * e->T, e->T * sizeof *e->map);
                lb_cost = go ? cost[go] : lb_cost;
                nlb++;
                if (balanced) {
                        lbomp__auto_when_after(&when, 0, lam_t, when.decay, false, step_lam);
                } else if (armed) {
                        double m2, a2;
                        lbomp__loads(s, cand_map + (size_t)best * e->T, e->load);
                        double after = lbomp__imbalance(e->load, e->P, &m2, &a2);
                        /* none fastest: the mapping kept */
                        lbomp__auto_when_after(&when, best ? cost[best] : 0, after, h.decay,
                                               best != 0, step_lam);
                } else {
                        lbomp__auto_when_unarmed(&when);
                }
                window_restart(e);
        }
        lbomp__auto_when_free(&when);
        free(cand_map);
        free(save_map);
        free(save_walk);
        return 0;
}

int sim_auto_trace_row(const struct opts *o, const struct lbomp__snap *s, const char *source)
{
        uint32_t T = s->ntasks, P = s->nworkers;
        double *load = malloc(((size_t)P + 1) * sizeof *load);
        uint32_t *dest = malloc(((size_t)T + 1) * sizeof *dest);
        struct lbomp__dec *dec = NULL;
        if (!load || !dest) {
                free(load);
                free(dest);
                return -ENOMEM;
        }
        /* the costs as recorded, persisting over the next --period steps: no history */
        struct lbomp__auto_hist h = {
                .step_var = 1, .horizon = (double)o->period, .byte_s = o->byte_ns * 1e-9};
        float f[LBOMP__AUTO_NFEAT];
        lbomp__auto_features(s, &h, load, f);
        double mx, avg;
        lbomp__imbalance(load, P, &mx, &avg);
        /* the when-rule on LBOMP__AUTO_STREAK steps of these loads, as the runtime would see
         * them */
        struct lbomp__auto_when when;
        lbomp__auto_when_init(&when);
        when.ntasks = T;
        /* the runtime's horizon after the steps this LB step ended */
        double H = lbomp__auto_horizon((s->lb_step + 1) * (uint64_t)o->period, (int)o->period);
        bool armed = false;
        for (int k = 0; k < LBOMP__AUTO_STREAK; k++) {
                double *wl = lbomp__auto_when_loads(&when, P);
                if (!wl)
                        break;
                memcpy(wl, load, P * sizeof *wl);
                armed = lbomp__auto_when_step(&when, 0.05, H);
        }
        lbomp__auto_when_free(&when);
        double t[LBOMP__AUTO_NCAND];
        int rc = 0;
        for (int c = 0; c < LBOMP__AUTO_NCAND && rc == 0; c++) {
                const struct lbomp__policy *p = lbomp__auto_candidate(c);
                if (c == 0) {
                        t[c] = (double)o->period * mx;
                        continue;
                }
                struct lbomp__pstats st;
                memset(&st, 0, sizeof st);
                double t0 = now_s();
                rc = lbomp__policy_run_offline_in(p, s, dest, &st, dec);
                double dec_s = now_s() - t0;
                struct lbomp__plan pl = {0};
                if (rc == 0 && lbomp__plan_begin(&pl, s, dest) == 0) {
                        lbomp__plan_evaluate(&pl);
                        lbomp__plan_guard(&pl);
                        t[c] = dec_s + EV_LB_FIXED_S + EV_MOVE_S * pl.moves.tasks +
                               pl.moves.cost * o->byte_ns * 1e-9 + (double)o->period * pl.max_new;
                } else {
                        rc = rc ? rc : -ENOMEM;
                }
                lbomp__plan_free(&pl);
        }
        if (rc == 0) {
                int best = 0;
                for (int c = 1; c < LBOMP__AUTO_NCAND; c++)
                        if (t[c] < t[best] * (1.0 - 1e-9))
                                best = c;
                printf("{\"trace\":\"%s\",\"lb_step\":%llu,\"f\":[", source,
                       (unsigned long long)s->lb_step);
                for (int i = 0; i < LBOMP__AUTO_NFEAT; i++)
                        printf("%s%.6g", i ? "," : "", (double)f[i]);
                printf("],\"t\":[");
                for (int c = 0; c < LBOMP__AUTO_NCAND; c++)
                        printf("%s%.9g", c ? "," : "", t[c]);
                printf("],\"label\":%d,\"armed\":%s}\n", best, armed ? "true" : "false");
        }
        free(load);
        free(dest);
        return rc;
}

int sim_evolve(const struct opts *o)
{
        struct world w;
        int rc = sim_build_world(&w, o);
        if (rc < 0) {
                sim_world_free(&w);
                return 2;
        }
        struct ev e;
        uint32_t *first = NULL;
        rc = ev_init(&e, o, &w);
        if (rc == 0 && !(first = malloc(((size_t)e.T + 1) * sizeof *first)))
                rc = -ENOMEM;
        if (rc == 0) {
                memcpy(first, w.s->worker, e.T * sizeof *first);
                if (o->auto_data)
                        rc = auto_data(&e, first);
                else
                        for (int i = 0; i < o->npol && rc == 0; i++)
                                rc = run_policy(&e, o->pol[i], first);
        }
        if (rc == -ENOMEM)
                fprintf(stderr, "lbomp-sim: out of memory\n");
        free(first);
        ev_free(&e);
        sim_world_free(&w);
        return rc < 0 ? 1 : 0;
}
