/*
 * lbstep.c — the LB step (lbstep.h): the window's costs become a snapshot, the policy makes a
 * plan, the plan is checked, evaluated, recorded and applied, the window restarts, and the data
 * of the tasks that changed node follows them.
 *
 * Every thread of the team calls lbomp__lb_step(). The centralized work runs inside the serial
 * part of one barrier (on the last thread to arrive, while the others wait); a decentralized
 * policy then runs on every thread, one barrier per round, and a second serial part finishes the
 * plan; a third barrier ends the data moves when there are any. Nothing here reads the
 * environment or the deques: the snapshot is the policy's only input.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mailbox.h"
#include "runtime.h"
#include "snapshot.h"
#include "trace.h"

_Static_assert(LBOMP_MSG_KINDS == LBOMP__MSG_KINDS, "public and internal message kinds differ");

int lbomp__lbs_init(struct lbomp__lbs *l, const char *trace_path)
{
        memset(l, 0, sizeof *l);
        l->sb = lbomp__snapbuf_create();
        l->dec = lbomp__dec_create(1);
        if (!l->sb || !l->dec)
                return -ENOMEM;
        if (trace_path) {
                char msg[400];
                int rc = lbomp__trace_create(&l->trace, trace_path, msg, sizeof msg);
                if (rc < 0) {
                        lbomp__fail("lbomp: LBOMP_TRACE='%s' cannot be created: %s; expected the "
                                    "path of a file to write the LB trace to",
                                    trace_path, strerror(-rc));
                        return rc;
                }
        }
        return 0;
}

void lbomp__lbs_free(struct lbomp__lbs *l)
{
        free(l->rec);
        lbomp__snapbuf_destroy(l->sb);
        lbomp__plan_free(&l->plan);
        lbomp__dec_destroy(l->dec);
        free(l->cost);
        if (lbomp__trace_close(l->trace) < 0)
                lbomp__log("lbomp: LBOMP_TRACE: closing the trace failed; its last record may be "
                           "incomplete");
        free(l->trace_wcore);
        memset(l, 0, sizeof *l);
}

static struct lbomp__lbrec *new_rec(struct lbomp__lbs *l)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 16;
                if (LBOMP__GROW(l->rec, cap))
                        return NULL;
                l->cap = cap;
        }
        struct lbomp__lbrec *r = &l->rec[l->n++];
        memset(r, 0, sizeof *r);
        return r;
}

/* The window's costs, the workers and the links of live tasks, through the one builder. */
static int build_snapshot(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__tasks *tk = &lb->tasks;
        uint32_t P = (uint32_t)lb->ws.n;
        int rc = lbomp__snap_begin(l->sb, P, (uint32_t)lb->topo.nnodes, lb->topo.dist, tk->nalive,
                                   tk->n, tk->nlink);
        if (rc < 0)
                return rc;
        uint64_t steps = lb->win.steps;
        for (uint32_t w = 0; w < P; w++) {
                const struct lbomp__worker *wk = &lb->ws.w[w];
                if (wk->n > l->cost_cap) {
                        if (LBOMP__GROW(l->cost, wk->n))
                                return -ENOMEM;
                        l->cost_cap = wk->n;
                }
                lbomp__window_costs(&lb->win, wk, steps, lb->clock.ticks_per_s, l->cost);
                lbomp__snap_worker(l->sb, w, wk->win_bg_s / (steps ? (double)steps : 1.0),
                                   wk->node);
                for (uint32_t i = 0; i < wk->n; i++) {
                        const struct lbomp__task *t = &tk->task[wk->tasks[i]];
                        lbomp__snap_task(l->sb, w, wk->tasks[i], l->cost[i], t->bytes, t->home);
                }
        }
        uint32_t T = 0;
        for (uint32_t w = 0; w < P; w++)
                T += lb->ws.w[w].n;
        if (T != tk->nalive)
                return -EFAULT; /* deques and task table disagree: a framework bug */
        for (size_t i = 0; i < tk->nlink; i++) {
                const struct lbomp__link *k = &tk->link[i];
                if (lbomp__tasks_alive(tk, k->a) && lbomp__tasks_alive(tk, k->b))
                        lbomp__snap_link(l->sb, k->a, k->b, k->bytes);
        }
        l->snap =
                lbomp__snap_end(l->sb, lbomp__snap_seed(lb->cfg.seed, l->n), l->n, &lb->cfg.params);
        return 0;
}

const struct lbomp__snap *lbomp__lb_snapshot(struct lbomp *lb, int *rc)
{
        *rc = build_snapshot(lb);
        return *rc ? NULL : lb->lbs.snap;
}

/* One trace record. A failure stops tracing with a message but not the run, whose balance does
 * not depend on it. */
static void trace_step(struct lbomp *lb, const struct lbomp__lbrec *r)
{
        struct lbomp__lbs *l = &lb->lbs;
        int32_t *wcore = realloc(l->trace_wcore, (size_t)lb->ws.n * sizeof *wcore);
        if (wcore) {
                l->trace_wcore = wcore;
                for (int i = 0; i < lb->ws.n; i++)
                        wcore[i] = lb->ws.w[i].core;
        }
        struct lbomp__trace_meta m = {
                .policy = r->pub.policy,
                .topo_name = lb->topo.name,
                .ncores = (uint32_t)lb->topo.ncores,
                .wcore = wcore,
                .step = r->pub.step,
                .error = r->pub.error,
                .decision_s = r->pub.decision_s,
                .messages = r->ps.messages,
                .rounds = r->ps.rounds,
        };
        char msg[400];
        if (lbomp__trace_write(l->trace, &m, l->snap, l->plan.dest, msg, sizeof msg) < 0) {
                lbomp__log("lbomp: LBOMP_TRACE: %s; tracing stops after %llu records", msg,
                           (unsigned long long)lbomp__trace_records(l->trace));
                lbomp__trace_close(l->trace);
                l->trace = NULL;
        }
}

/* The plan is known (or failed): check, evaluate, record, apply; the window restarts. */
static void finish(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        struct lbomp__lbrec *r = l->cur;
        struct lbomp__plan *p = &l->plan;
        const struct lbomp__snap *s = l->snap;
        const struct lbomp__policy *pol = lb->cfg.policy;
        r->pub.decision_s = lbomp__mono_s() - l->t_decide;
        double t_apply = lbomp__mono_s();
        uint32_t bad = 0;
        if (r->pub.error == 0 && lbomp__plan_valid(p, &bad) != 0) {
                r->pub.error = -EFAULT;
                lbomp__log("lbomp: policy %s produced an invalid plan (task %u -> worker %u); "
                           "mapping kept",
                           pol->name, s->id[bad], p->dest[bad]);
        }
        if (r->pub.error != 0) {
                if (lb->cfg.verbose || r->pub.error != -EFAULT)
                        lbomp__log("lbomp: policy %s failed at step %llu: %s; mapping kept",
                                   pol->name, (unsigned long long)r->pub.step,
                                   lbomp_strerror(r->pub.error));
                lbomp__plan_keep(p);
        }
        lbomp__plan_evaluate(p);
        if (lbomp__plan_guard(p)) { /* never worse: the mapping stays */
                r->pub.plan_rejected = 1;
                r->pub.imbalance_planned = p->lambda_planned;
                snprintf(r->note, sizeof r->note, "plan rejected: predicted λ %.3f ≥ current %.3f",
                         p->lambda_planned, p->lambda);
                if (lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: %s's plan does not lower the maximum load "
                                   "(predicted λ %.3f, current %.3f); mapping kept",
                                   l->n - 1, pol->name, p->lambda_planned, p->lambda);
        }
        r->pub.imbalance_after = p->lambda_new;
        r->pub.migrations = p->moves.tasks;
        r->pub.migrated_bytes = p->moves.bytes;
        r->pub.node_migrations = p->moves.node_tasks;
        r->pub.node_migrated_bytes = p->moves.node_bytes;
        r->pub.move_cost = p->moves.cost;
        /* A task heavier than the average load bounds λ from below whatever the policy does: say
         * so rather than let it look like the policy's failure. */
        uint32_t heavy = 0;
        for (uint32_t t = 1; t < s->ntasks; t++)
                if (s->cost[t] > s->cost[heavy])
                        heavy = t;
        if (!r->note[0] && s->ntasks && r->pub.avg_load > 0 &&
            s->cost[heavy] > 1.05 * r->pub.avg_load)
                snprintf(r->note, sizeof r->note, "λ >= %.2f: task %u alone costs that much",
                         s->cost[heavy] / r->pub.avg_load, s->id[heavy]);
        r->pub.locality_after = lbomp__locality_cost(s, p->dest);
        r->pub.messages = r->ps.messages;
        r->pub.rounds = r->ps.rounds;
        r->pub.gossip_rounds = r->ps.gossip_rounds;
        r->pub.collectives = r->ps.collectives;
        r->pub.packs = r->ps.packs;
        r->pub.offers_rejected = r->ps.rejected;
        r->pub.packs_forced = r->ps.forced;
        r->pub.packs_withdrawn = r->ps.withdrawn;
        r->pub.span_s = r->ps.span_s;
        for (int k = 0; k < LBOMP_MSG_KINDS && r->ps.msg_kind_names && r->ps.msg_kind_names[k];
             k++) {
                r->pub.kind_name[k] = r->ps.msg_kind_names[k];
                r->pub.kind_messages[k] = r->ps.msg_by_kind[k];
        }
        if (l->trace)
                trace_step(lb, r);
        lbomp__plan_apply(p, &lb->tasks);
        if (lb->tasks.dirty && lbomp__workers_fill(&lb->ws, &lb->tasks) < 0)
                l->rc = -ENOMEM;
        /* The snapshot still holds the old homes and workers: list the data to move. */
        if (lbomp__data_plan(&lb->data, &lb->ws, &lb->tasks, s, p->dest, lb->cfg.move_pages) < 0)
                l->rc = -ENOMEM;
        r->pub.apply_s = lbomp__mono_s() - t_apply;
        if (lb->cfg.verbose)
                lbomp__log("lbomp: LB step %zu after step %llu: %s λ %.3f -> %.3f, %u migrations, "
                           "decision %.3g s",
                           l->n - 1, (unsigned long long)r->pub.step, pol->name,
                           r->pub.imbalance_before, r->pub.imbalance_after, r->pub.migrations,
                           r->pub.decision_s);
        lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.n, lb->steps, false);
        l->t_data = lbomp__mono_s();
}

/* Serial part of the first barrier: snapshot, window record, and the whole centralized plan. */
static void begin(void *arg)
{
        struct lbomp *lb = arg;
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__policy *pol = lb->cfg.policy;
        l->rc = 0;
        l->skip = false;
        l->cur = NULL;
        lbomp__clock_calibrate(&lb->clock);
        int rc = build_snapshot(lb);
        struct lbomp__lbrec *r = rc == 0 ? new_rec(l) : NULL;
        if (rc == 0 && !r)
                rc = -ENOMEM;
        if (rc == 0)
                rc = lbomp__plan_begin(&l->plan, l->snap, lbomp__snap_dest(l->sb));
        if (rc < 0) {
                if (r)
                        l->n--;
                l->rc = rc;
                lbomp__log("lbomp: LB step after step %llu could not run: %s; mapping kept",
                           (unsigned long long)(lb->steps - 1), lbomp_strerror(rc));
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.n, lb->steps, true);
                return;
        }
        l->cur = r;
        r->energy_j = r->power_w = NAN;
        const lbomp_window_stats_t *ws =
                lbomp__window_close(&lb->win, &lb->ws, l->plan.load, lb->steps);
        if (ws) {
                r->energy_j = ws->energy_j;
                r->power_w = ws->power_w;
        }
        r->pub.imbalance_before = l->plan.lambda;
        r->pub.max_load = l->plan.max;
        r->pub.avg_load = l->plan.avg;
        r->pub.step = lb->steps - 1;
        r->pub.policy = pol->name;
        r->pub.locality_before = lbomp__locality_cost(l->snap, l->snap->worker);
        l->t_decide = lbomp__mono_s();
        /* A clock that did not advance over the window (zero or backwards readings) leaves every
         * cost 0: a plan from that would move tasks at random, so the mapping stays. */
        double measured = 0;
        for (uint32_t t = 0; t < l->snap->ntasks; t++)
                measured += l->snap->cost[t];
        l->skip = l->snap->ntasks > 0 && !(measured > 0);
        if (l->skip) {
                snprintf(r->note, sizeof r->note, "no time measured: mapping kept");
                if (!l->said_no_time || lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: the clock did not advance during the "
                                   "window (every task time is 0); mapping kept",
                                   l->n - 1);
                l->said_no_time = true;
        } else if (pol->kind == LBOMP__CENTRAL) {
                r->pub.error = pol->plan(l->snap, l->plan.dest, &r->ps);
        } else {
                r->pub.error = lbomp__dec_prepare(l->dec, pol, l->snap, l->plan.dest);
                if (r->pub.error == 0)
                        return; /* the team runs the rounds; finish() after them */
        }
        finish(lb);
}

/* Serial part of the barrier after the rounds of a decentralized policy. */
static void finish_dec(void *arg)
{
        struct lbomp *lb = arg;
        struct lbomp__lbs *l = &lb->lbs;
        l->cur->pub.error = l->dec_rc;
        lbomp__dec_stats(l->dec, &l->cur->ps);
        finish(lb);
}

/* Serial part of the barrier after the data moves: their totals. */
static void data_done(void *arg)
{
        struct lbomp *lb = arg;
        struct lbomp__lbrec *r = lb->lbs.cur;
        r->pub.data_s = lbomp__mono_s() - lb->lbs.t_data;
        for (int i = 0; i < lb->ws.n; i++) {
                const struct lbomp__worker *w = &lb->ws.w[i];
                r->pub.data_moves += w->data_moves;
                r->pub.data_bytes += w->data_bytes;
                if (!r->pub.data_error)
                        r->pub.data_error = w->data_error;
        }
        lb->data.pending = false;
}

static void team_barrier(void *arg, void (*serial)(void *), void *sarg)
{
        struct lbomp *lb = arg;
        lbomp__barrier_wait(&lb->team.bar, (uint32_t)lb->team_n, 0, lb->ws.oversubscribed, serial,
                            sarg, NULL);
}

int lbomp__lb_step(struct lbomp *lb, int self)
{
        struct lbomp__lbs *l = &lb->lbs;
        team_barrier(lb, begin, lb);
        bool rounds = l->rc == 0 && !l->skip && l->cur && l->cur->pub.error == 0 &&
                      lb->cfg.policy->kind == LBOMP__DECENTRAL;
        if (rounds) {
                int rc = lbomp__dec_run_serial(l->dec, (uint32_t)self, team_barrier, lb);
                if (self == 0)
                        l->dec_rc = rc; /* the same on every thread */
                team_barrier(lb, finish_dec, lb);
        }
        if (l->rc == 0 && lb->data.pending) {
                /* Every worker moves the data of the tasks it received, all at once. */
                lbomp__data_run(&lb->data, &lb->ws, &lb->tasks, &lb->topo, lb->cfg.move_pages,
                                self);
                team_barrier(lb, data_done, lb);
        }
        return l->rc;
}
