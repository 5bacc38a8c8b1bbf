/*
 * lbstep.c — the LB step (lbstep.h): the window's costs become a snapshot, the policy makes a
 * plan, the plan is checked, evaluated, recorded and applied, the window restarts, and the data
 * of the tasks that changed node follows them.
 *
 * The centralized work runs inside the serial part of the barrier that ends the window's last
 * step (lbomp__lb_begin, on the last thread to arrive, while the others wait), so an LB step of a
 * centralized policy adds no barrier. Then every thread calls lbomp__lb_step(): a decentralized
 * policy runs on every thread, one barrier per round, and a serial part finishes the plan; one
 * more barrier ends the data moves when there are any. Under `none` no snapshot is built: the
 * record takes the workers' own loads. Nothing here reads the environment or the deques: the
 * snapshot is the policy's only input.
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

/* A worker's share of the load as its tasks' costs add it up, against its share over the window,
 * may differ by this much of the mean load before the costs are dropped (measured window loads
 * of equal workers differ by a few %) */
#define COSTS_ERR 0.10

int lbomp__lbs_init(struct lbomp__lbs *l, const char *trace_path, uint32_t keep)
{
        memset(l, 0, sizeof *l);
        lbomp__history_init(&l->recs, sizeof(struct lbomp__lbrec), keep);
        l->sb = lbomp__snapbuf_create();
        l->dec = lbomp__dec_create(1);
        lbomp__auto_when_init(&l->when);
        /* auto's table is compiled in; checked here, once per process */
        if (!lbomp__auto_model())
                lbomp__log("lbomp: auto's table (src/policy/auto_table.c) does not fit this "
                           "library (version %d expected): auto uses greedy as its only candidate",
                           LBOMP__AUTO_TABLE_VERSION);
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
        lbomp__history_free(&l->recs);
        lbomp__snapbuf_destroy(l->sb);
        lbomp__plan_free(&l->plan);
        lbomp__dec_destroy(l->dec);
        free(l->cost);
        free(l->slot_cost);
        free(l->snap_ids);
        free(l->auto_w);
        free(l->probe.map);
        lbomp__auto_when_free(&l->when);
        if (lbomp__trace_close(l->trace) < 0)
                lbomp__log("lbomp: LBOMP_TRACE: closing the trace failed; its last record may be "
                           "incomplete");
        free(l->trace_wcore);
        memset(l, 0, sizeof *l);
}

static void add_up(struct lbomp__lbsum *sum, const lbomp_lb_stats_t *p)
{
        if (sum->steps++ == 0)
                sum->locality_first = p->locality_before;
        sum->migrations += p->migrations;
        sum->migrated_bytes += p->migrated_bytes;
        sum->messages += p->messages;
        sum->node_migrations += p->node_migrations;
        sum->data_moves += p->data_moves;
        sum->data_bytes += p->data_bytes;
        sum->decision_s += p->decision_s;
        sum->apply_s += p->apply_s;
        sum->move_cost += p->move_cost;
        sum->data_s += p->data_s;
}

void lbomp__lbs_totals(const struct lbomp__lbs *l, struct lbomp__lbsum *out)
{
        *out = l->gone;
        for (uint64_t i = l->recs.dropped; i < l->recs.n; i++)
                add_up(out, &((const struct lbomp__lbrec *)lbomp__history_held(&l->recs, i))->pub);
}

/* The record of the next LB step, zeroed and counted (drop_rec takes it back); the one whose
 * room it takes, no longer kept, into the totals. */
static struct lbomp__lbrec *new_rec(struct lbomp__lbs *l)
{
        struct lbomp__lbrec gone;
        int had = 0;
        struct lbomp__lbrec *r = lbomp__history_slot(&l->recs, &gone, &had);
        if (had)
                add_up(&l->gone, &gone.pub);
        if (r)
                lbomp__history_push(&l->recs);
        return r;
}

/* The LB step just begun could not run: its record does not count. */
static void drop_rec(struct lbomp__lbs *l)
{
        l->recs.n--;
}

/* The last record, NULL when there is none. */
static struct lbomp__lbrec *last_rec(struct lbomp__lbs *l)
{
        return lbomp__history_last(&l->recs);
}

const char *lbomp__lbrec_note(const struct lbomp__lbrec *r, char *buf, size_t len)
{
        switch (r->note_kind) {
        case LBOMP__NOTE_BALANCED:
                snprintf(buf, len,
                         "balanced within LBOMP_TOLERANCE (%g): policy not run, nothing moved",
                         r->note_arg[0]);
                return buf;
        case LBOMP__NOTE_NO_PAY:
                snprintf(buf, len,
                         "does not pay: at most %.3g s won over %u period(s) < %.3g s, %s; "
                         "policy not run",
                         r->note_arg[0], r->note_u, r->note_arg[1],
                         r->note_flag ? "the last LB step's cost"
                                      : "an LB step's cost before any ran");
                return buf;
        case LBOMP__NOTE_AUTO_SKIP:
                snprintf(buf, len,
                         "auto: no LB step: predicted loss %.3g s <= cost %.3g s (floor λ %.3f)%s",
                         r->note_arg[0], r->note_arg[1], r->note_arg[2],
                         r->note_flag ? "; the load moves within the window (λ per step above "
                                        "λ): the next LB step armed to judge interleaving it"
                                      : "");
                return buf;
        case LBOMP__NOTE_TEXT:
        default:
                return r->note;
        }
}

/* The window's costs, the workers and the links of live tasks, through the one builder. */
static int build_snapshot(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__tasks *tk = &lb->tasks;
        uint32_t P = (uint32_t)lb->ws.n;
        int rc = lbomp__snap_begin(l->sb, P, (uint32_t)lb->topo.nnodes, lb->topo.dist, tk->nalive,
                                   tk->nslots, tk->nlink);
        if (rc < 0)
                return rc;
        for (uint32_t w = 0; w < P; w++) {
                const struct lbomp__worker *wk = &lb->ws.w[w];
                if (wk->n > l->cost_cap) {
                        if (LBOMP__GROW(l->cost, wk->n))
                                return -ENOMEM;
                        l->cost_cap = wk->n;
                }
                lbomp__window_costs(&lb->win, wk, lb->clock.ticks_per_s, l->cost);
                lbomp__snap_worker(l->sb, w, lbomp__window_bg(&lb->win, wk), wk->node);
                lbomp__snap_speed(l->sb, w, wk->speed);
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
                if (lbomp__link_alive(tk, k))
                        lbomp__snap_link(l->sb, k->a, k->b, k->bytes);
        }
        l->snap = lbomp__snap_end(l->sb, lbomp__snap_seed(lb->cfg.seed, l->recs.n), l->recs.n,
                                  &lb->cfg.params);
        if (l->snap->ntasks > l->snap_ids_cap) {
                if (LBOMP__GROW(l->snap_ids, l->snap->ntasks)) {
                        l->snap = NULL;
                        return -ENOMEM;
                }
                l->snap_ids_cap = l->snap->ntasks;
        }
        for (uint32_t k = 0; k < l->snap->ntasks; k++)
                l->snap_ids[k] = tk->task[l->snap->id[k]].id;
        return 0;
}

const struct lbomp__snap *lbomp__lb_snapshot(struct lbomp *lb, int *rc)
{
        lbomp__window_fold(&lb->win, &lb->ws, &lb->clock);
        lbomp__window_aggregate_pending(&lb->win, &lb->ws);
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

static void record_only(struct lbomp *lb, double lam, double max, double avg);
static bool moves_within(const struct lbomp *lb, double *wlam);
static void probe_start(struct lbomp *lb);

/* auto: what it chose and why into the record's note; the when-rule learns the LB step's cost
 * (its data moves are added when they end), the λ it left and the decay it saw. */
static void auto_done(struct lbomp *lb, struct lbomp__lbrec *r)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__auto_hist *h = &l->hist;
        const float *f = h->feat;
        bool kept = h->pays && !r->pub.plan_rejected && r->pub.error == 0;
        /* a note already there (a task that bounds λ, a rejected plan) comes first */
        size_t len = strlen(r->note);
        if (len && len + 2 < sizeof r->note) {
                memcpy(r->note + len, "; ", 3);
                len += 2;
        }
        snprintf(
                r->note + len, sizeof r->note - len,
                "auto: %s%s%s%s%s: gain %.3g %s cost %.3g s; λ %.2f above %.2f idle %.2f task %.1f "
                "comm %.1f remote %.2f var %.2f drift %.1f numa %.2f grain %.1f move %.1f "
                "load %.1f",
                lbomp__auto_cand_names[h->choice],
                h->choice != h->model_choice ? " (second opinion after the model's " : "",
                h->choice != h->model_choice ? lbomp__auto_cand_names[h->model_choice] : "",
                h->choice != h->model_choice ? ")" : "", kept ? "" : " (kept the mapping)",
                h->gain_s, h->gain_s > h->cost_s ? ">" : "<=", h->cost_s, f[LBOMP__AF_LAMBDA],
                f[LBOMP__AF_ABOVE], f[LBOMP__AF_IDLE], f[LBOMP__AF_TASK_LOAD], f[LBOMP__AF_COMM],
                f[LBOMP__AF_REMOTE], f[LBOMP__AF_STEPVAR], f[LBOMP__AF_DRIFT], f[LBOMP__AF_NUMA],
                f[LBOMP__AF_GRAIN], f[LBOMP__AF_MOVE], f[LBOMP__AF_AVG_LOAD]);
        lbomp__auto_when_after(&l->when, l->lb_cost_s,
                               kept ? r->pub.imbalance_after : r->pub.imbalance_before, h->decay,
                               kept, l->step_lam);
        lbomp__auto_when_retry(&l->when, h, lbomp__auto_horizon(UINT64_MAX, lb->cfg.period));
}

/* auto, at a window's end with no LB step armed: a record that says so, and an imbalance that was
 * judged not worth lowering is looked at again (its floor halves towards 1, after as many windows
 * as lbomp__auto_when_unarmed says). */
static void auto_skip(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        uint64_t n = l->recs.n;
        /* a load that moves within the window: the next window's LB step is armed, its timed
         * steps judge the interleaving (spread_pays) — the when-rule, which arms on an excess
         * that persisted on one worker once LB steps found nothing to plan, would not see it */
        double wlam;
        bool within = moves_within(lb, &wlam);
        if (lbomp__spread_arm(
                    &l->spread_backoff, within && !l->probe.backoff.wait,
                    lbomp__interleave_suits(l->interleaved, wlam, lb->cfg.params.tolerance)))
                l->armed = true;
        record_only(lb, 0, 0, 0);
        if (l->recs.n > n) {
                struct lbomp__lbrec *r = last_rec(l);
                r->note_kind = LBOMP__NOTE_AUTO_SKIP;
                r->note_arg[0] = l->when.loss_s;
                r->note_arg[1] = l->when.lb_cost_s > 0
                                         ? l->when.lb_cost_s
                                         : lbomp__auto_lb_cost_guess(lb->tasks.nalive);
                r->note_arg[2] = l->when.floor;
                r->note_flag = l->armed;
        }
        lbomp__auto_when_unarmed(&l->when);
}

/* auto: what the window measured beyond the costs, for the policy (policy/auto.h). */
static void auto_hist(struct lbomp *lb, const lbomp_window_stats_t *ws)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__window *win = &lb->win;
        struct lbomp__auto_hist *h = &l->hist;
        memset(h, 0, sizeof *h);
        h->step_var = ws && ws->imbalance > 0 ? ws->imbalance_step_mean / ws->imbalance : 1.0;
        /* drift and decay: the workers' owned loads of the window's untimed steps against its
         * timed ones, whose centres lie steps / 2 apart; unknown (0) in the run's first window,
         * whose first steps pay the warm-up, and with fewer than 2 untimed steps; at most 1 */
        uint64_t early = win->steps > win->timed ? win->steps - win->timed : 0;
        uint32_t P = (uint32_t)lb->ws.n;
        if (win->first > 0 && early >= 2 && win->timed && 2 * P > l->auto_w_cap) {
                if (LBOMP__GROW(l->auto_w, 2 * (size_t)P))
                        early = 0; /* no room: unknown, as in the first window */
                else
                        l->auto_w_cap = 2 * P;
        }
        if (win->first > 0 && early >= 2 && win->timed && 2 * P <= l->auto_w_cap) {
                double *e = l->auto_w, *late = l->auto_w + P;
                for (uint32_t i = 0; i < P; i++) {
                        const struct lbomp__worker *w = &lb->ws.w[i];
                        late[i] = w->win_owned_timed_s / win->timed;
                        e[i] = (w->win_owned_s - w->win_owned_timed_s) / (double)early;
                }
                double apart = 0.5 * (double)win->steps;
                h->drift = lbomp__auto_drift(e, late, P, apart);
                h->drift = h->drift < 1 ? h->drift : 1;
                h->decay = lbomp__auto_decay(e, late, P, apart);
        }
        h->horizon = lbomp__auto_horizon(lb->steps, lb->cfg.period);
        double persist = lbomp__window_persistent_excess(win, &lb->ws);
        h->persist_known = isfinite(persist);
        h->persist_s = persist;
        h->lb_cost_s = l->when.lb_cost_s;
        h->byte_s = l->byte_s;
        h->load = l->plan.load;
        lbomp__snap_set_hist(l->sb, h);
}

/* The snapshot's costs, now on the workers that hold the tasks after the plan: the owner of a
 * hotspot takes it in smaller batches than its count of tasks would say, so that a thief can take
 * the rest (step.c). Without room, batches stay cut by count. */
static void give_costs(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__snap *s = l->snap;
        uint32_t nslots = lb->tasks.nslots;
        if (nslots > l->slot_cost_cap) {
                if (LBOMP__GROW(l->slot_cost, nslots))
                        return;
                l->slot_cost_cap = nslots;
        }
        for (uint32_t k = 0; k < s->ntasks; k++)
                l->slot_cost[s->id[k]] = s->cost[k];
        lbomp__workers_costs(&lb->ws, l->slot_cost);
}

/* What an LB step that runs a policy costs: the last one's, begin to applied, or before any ran
 * auto's guess. */
static double lb_cost(const struct lbomp *lb)
{
        const struct lbomp__lbs *l = &lb->lbs;
        return l->pays_cost_s > 0 ? l->pays_cost_s : lbomp__auto_lb_cost_guess(lb->tasks.nalive);
}

/*
 * Quiet windows. A window's last LBOMP__TIMED steps time every task (the per-task path leaves the
 * inline loop) and each worker folds them in at its next step; on a loop that stays balanced that
 * is most of what lbomp adds to a short step (the balanced 1 MiB memtask, 11-15 µs steps: 2-3 %
 * with LBOMP_PERIOD=10 against 80; bench/README, "Quiet windows"). So while LBOMP_PERIOD is unset,
 * an LB step that moved nothing (balanced within the tolerance, a move that does not pay, a plan
 * that kept the mapping) after one that moved nothing either doubles the next window, up to
 * LBOMP__QUIET_MAX times; one that moved tasks brings it back to LBOMP_PERIOD. Two in a row: a
 * drifting load alternates LB steps that move with some that find nothing persistent, and a
 * window doubled after each of those let the drift grow (the drifting 8 MiB memtask: 1.015-1.026
 * × its step with one). A rise of the per-step λ within a long window that costs more than an LB
 * step ends it early (lbomp__lb_quiet_check); stealing carries a new imbalance until then. Not
 * under auto (its when-rule times only the windows it arms), none (nothing timed), nor where every
 * LB step is read by something else (a trace, another library's costs). An index loop's chunks
 * (LBOMP_FOR, the drop-in) have them too: the preloaded memory loop ran 0.97 × its time with them
 * (bench/README, "Quiet windows").
 */
bool lbomp__lb_quiet_ok(const struct lbomp *lb)
{
        const struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__policy *pol = lb->cfg.policy;
        return !lb->cfg.period_set && pol != &lbomp__policy_auto &&
               strcmp(pol->name, "none") != 0 && !l->trace && !l->keep_costs;
}

static void quiet_after(struct lbomp *lb, bool moved)
{
        struct lbomp__lbs *l = &lb->lbs;
        if (moved || !lbomp__lb_quiet_ok(lb)) {
                l->quiet = l->still = 0;
                return;
        }
        l->still++;
        l->quiet = l->still - 1 < LBOMP__QUIET_MAX ? l->still - 1 : LBOMP__QUIET_MAX;
        l->quiet_lam = l->step_lam;
}

void lbomp__lb_quiet_check(struct lbomp *lb, uint64_t end)
{
        struct lbomp__lbs *l = &lb->lbs;
        if (!l->quiet || l->auto_period || lb->cfg.period_set ||
            lb->win.steps < (uint64_t)lb->cfg.period)
                return;
        double lam = lbomp__window_step_lambda(&lb->win);
        if (lam <= l->quiet_lam + lb->cfg.params.tolerance)
                return;
        /* And the rise costs more, over the steps the window has left, than an LB step: λ of
         * empty tasks measured 100 ns apart rises and falls by more than any tolerance. */
        double sum = 0;
        for (int i = 0; i < lb->ws.n; i++)
                sum += lb->ws.w[i].win_owned_s;
        double avg = sum / ((double)lb->ws.n * (double)lb->win.steps);
        uint64_t now = lb->tset.t;
        double left = end > now + 1 ? (double)(end - now - 1) : 0;
        if ((lam - l->quiet_lam) * avg * left <= lb_cost(lb))
                return;
        l->quiet = l->still = 0;
        uint64_t want = now + 1 - lbomp__tsteps_base(&lb->tset) + LBOMP__TIMED;
        if (want > (uint64_t)lb->cfg.period)
                l->auto_period = (int)want;
        if (lb->cfg.verbose)
                lbomp__log("lbomp: after step %llu: λ per step %.3f over the window's %llu steps, "
                           "above the last window's %.3f + the tolerance: the window ends in %d "
                           "step(s), its tasks timed",
                           (unsigned long long)(lb->steps - 1), lam,
                           (unsigned long long)lb->win.steps, l->quiet_lam, LBOMP__TIMED);
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
        /* never worse: the mapping stays; an interleaving was judged on the steps instead */
        if (!l->spread && lbomp__plan_guard(p)) {
                r->pub.plan_rejected = 1;
                r->pub.imbalance_planned = p->lambda_planned;
                snprintf(r->note, sizeof r->note, "plan rejected: predicted λ %.3f ≥ current %.3f",
                         p->lambda_planned, p->lambda);
                if (lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: %s's plan does not lower the maximum load "
                                   "(predicted λ %.3f, current %.3f); mapping kept",
                                   (size_t)l->recs.n - 1, pol->name, p->lambda_planned, p->lambda);
        }
        r->pub.imbalance_after = p->lambda_new;
        r->pub.migrations = p->moves.tasks;
        l->interleaved = !l->undo && (l->spread || (l->interleaved && p->moves.tasks == 0));
        if (l->spread && !l->undo && p->moves.tasks > 0 && r->pub.error == 0)
                probe_start(lb);
        quiet_after(lb, p->moves.tasks > 0);
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
                         s->cost[heavy] / r->pub.avg_load, lb->tasks.task[s->id[heavy]].id);
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
        if (lb->tasks.dirty && lbomp__workers_fill(&lb->ws, &lb->tasks, false) < 0)
                l->rc = -ENOMEM;
        else
                give_costs(lb);
        /* The snapshot still holds the old homes and workers: list the data to move. */
        if (lbomp__data_plan(&lb->data, &lb->ws, &lb->tasks, s, p->dest, lb->cfg.move_pages) < 0)
                l->rc = -ENOMEM;
        r->pub.apply_s = lbomp__mono_s() - t_apply;
        if (pol == &lbomp__policy_auto && (l->spread || s->hist)) {
                l->lb_cost_s = r->pub.decision_s + r->pub.apply_s;
                /* the when-rule learns the interleaving's cost and the λ it left, as a plan's */
                if (l->spread)
                        lbomp__auto_when_after(&l->when, l->lb_cost_s, r->pub.imbalance_after,
                                               l->hist.decay, r->pub.migrations > 0, l->step_lam);
                else
                        auto_done(lb, r);
        }
        if (lb->cfg.verbose)
                lbomp__log("lbomp: LB step %zu after step %llu: %s λ %.3f -> %.3f, %u migrations, "
                           "decision %.3g s",
                           (size_t)l->recs.n - 1, (unsigned long long)r->pub.step, pol->name,
                           r->pub.imbalance_before, r->pub.imbalance_after, r->pub.migrations,
                           r->pub.decision_s);
        lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, false);
        l->t_data = lbomp__mono_s();
        l->pays_cost_s = l->t_data - l->t_begin;
}

/* Σ over live links of bytes × distance between their workers' nodes, from the task table. */
static double table_locality(struct lbomp *lb)
{
        const struct lbomp__tasks *tk = &lb->tasks;
        struct lbomp__lbs *l = &lb->lbs;
        if (l->loc_ok && l->loc_gen == tk->gen)
                return l->loc;
        int nn = lb->topo.nnodes;
        double c = 0;
        for (size_t i = 0; i < tk->nlink; i++) {
                const struct lbomp__link *k = &tk->link[i];
                uint32_t wa = tk->task[k->a].worker, wb = tk->task[k->b].worker;
                if (!lbomp__link_alive(tk, k) || wa >= (uint32_t)lb->ws.n ||
                    wb >= (uint32_t)lb->ws.n)
                        continue;
                c += k->bytes * lb->topo.dist[lb->ws.w[wa].node * nn + lb->ws.w[wb].node];
        }
        l->loc = c;
        l->loc_gen = tk->gen;
        l->loc_ok = true;
        return c;
}

/* An LB step that does not run the policy: no snapshot, no plan. Under `none` the record takes the
 * workers' own loads over the window; when the timed steps are balanced within the tolerance
 * (lam > 0), their λ and a note saying so. */
static void record_only(struct lbomp *lb, double lam, double max, double avg)
{
        struct lbomp__lbs *l = &lb->lbs;
        double t0 = lbomp__mono_s();
        l->snap = NULL; /* this LB step measured no task: nobody reads an older one as its */
        struct lbomp__lbrec *r = new_rec(l);
        const lbomp_window_stats_t *ws = lbomp__window_close(&lb->win, &lb->ws, lb->steps);
        if (!r || !ws) {
                if (r)
                        drop_rec(l);
                l->rc = -ENOMEM;
                lbomp__log("lbomp: LB step after step %llu could not run: %s; mapping kept",
                           (unsigned long long)(lb->steps - 1), lbomp_strerror(-ENOMEM));
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, true);
                return;
        }
        r->pub.step = lb->steps - 1;
        r->pub.policy = lb->cfg.policy->name;
        r->pub.imbalance_before = r->pub.imbalance_after = lam > 0 ? lam : ws->imbalance;
        r->pub.max_load = lam > 0 ? max : ws->max_load;
        r->pub.avg_load = lam > 0 ? avg : ws->avg_load;
        if (lam > 0) {
                r->note_kind = LBOMP__NOTE_BALANCED;
                r->note_arg[0] = lb->cfg.params.tolerance;
        }
        r->pub.locality_before = r->pub.locality_after = table_locality(lb);
        r->energy_j = ws->energy_j;
        r->power_w = ws->power_w;
        r->pub.decision_s = lbomp__mono_s() - t0;
        lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, false);
}

/* The window's mean per-step λ against its λ (lbomp__interleave_wanted): a load that moves
 * within it. */
static bool moves_within(const struct lbomp *lb, double *wlam)
{
        const struct lbomp__lbs *l = &lb->lbs;
        double mx = 0, sum = 0;
        for (int i = 0; i < lb->ws.n; i++) {
                double x = lb->ws.w[i].win_owned_s;
                sum += x;
                mx = x > mx ? x : mx;
        }
        *wlam = sum > 0 ? mx / (sum / lb->ws.n) : 1.0;
        /* more threads than cores: the steps' λ is the scheduler's, not the load's */
        return lb->ws.n >= 2 && !lb->ws.oversubscribed && l->step_lam > 0 &&
               lbomp__interleave_wanted(l->step_lam, *wlam, lb->cfg.params.tolerance);
}

/* The steps of a window an interleaving is judged by (policy.h, struct lbomp__probe): the first
 * LBOMP__PROBE_SKIP left out, which refill the caches of the tasks the last LB step moved, where
 * the window has enough. */
static uint32_t probe_skip(const struct lbomp *lb)
{
        return lb->win.steps > 2 * LBOMP__PROBE_SKIP + 1 ? LBOMP__PROBE_SKIP : 0;
}

/* An interleaving moved tasks (finish, before the plan is applied): each task slot's worker
 * before it, to put them back if the window after it runs slower. No room: no probation. */
static void probe_start(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        struct lbomp__probe *pr = &l->probe;
        const struct lbomp__snap *s = l->snap;
        uint32_t n = lb->tasks.nslots;
        if (n > pr->cap) {
                if (LBOMP__GROW(pr->map, n)) {
                        if (lb->cfg.verbose)
                                lbomp__log("lbomp: no memory to keep the mapping before an "
                                           "interleaving: it is not on probation");
                        return;
                }
                pr->cap = n;
        }
        for (uint32_t i = 0; i < n; i++)
                pr->map[i] = UINT32_MAX;
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (s->id[t] < n)
                        pr->map[s->id[t]] = s->worker[t];
        pr->pending = pr->before > 0;
        /* auto: the next window is timed and its LB step runs, to judge it */
        if (lb->cfg.policy == &lbomp__policy_auto && pr->pending)
                l->armed = true;
}

/* The undo of an interleaving that made the steps slower (policy.h, struct lbomp__probe): every
 * task back on its worker from before it; tasks added since stay where they are. */
static void probe_undo(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__snap *s = l->snap;
        const struct lbomp__probe *pr = &l->probe;
        for (uint32_t t = 0; t < s->ntasks; t++) {
                uint32_t id = s->id[t], w = id < pr->cap ? pr->map[id] : UINT32_MAX;
                l->plan.dest[t] = w < s->nworkers ? w : s->worker[t];
        }
        lbomp__plan_evaluate(&l->plan);
        l->spread = l->undo = true;
}

/*
 * A load that moves within the window: the tasks interleaved over the workers (lbomp__interleave,
 * into the plan's destinations) when that lowers the window's timed steps — what they took, the
 * longest thread's time with its steals, against the largest worker's sum of its tasks' times in
 * each under the interleaving — by more than the LB step, the moves and the links' added bytes ×
 * distance at every step cost over the steps it would last (lbomp__auto_horizon, as auto's gain),
 * and its λ by the window's costs is within the tolerance or no worse than the mapping's. The
 * moves' bytes at the per-byte cost data moves measured, LBOMP__BYTE_S_GUESS before any; or, on
 * trial, when by that estimate its steps are at most LBOMP__PROBE_BAND longer (policy.h, struct
 * lbomp__probe: the window after it decides). Tasks interleaved already stay so. Otherwise the LB
 * step goes on as for any load.
 */
static bool spread_pays(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__snap *s = l->snap;
        uint32_t T = s->ntasks, P = s->nworkers;
        double *buf = malloc(((size_t)LBOMP__TIMED * T + P + 1) * sizeof *buf);
        if (!buf)
                return false;
        double *sc[LBOMP__TIMED], *load = buf + (size_t)LBOMP__TIMED * T;
        for (int k = 0; k < LBOMP__TIMED; k++)
                sc[k] = buf + (size_t)k * T;
        uint32_t n = lbomp__window_step_costs(&lb->win, s, lb->clock.ticks_per_s, sc);
        bool pays = false;
        if (n && lbomp__interleave(s, l->plan.dest) == 0) {
                /* what those steps took, stealing included (where steals are cheap they carry
                 * most of a moving load already); the tasks' sums when not kept */
                double now = lbomp__window_timed_run_max(&lb->win, n);
                if (!(now > 0))
                        now = lbomp__steps_max(s, s->worker, (const double *const *)sc, n, load);
                double then = lbomp__steps_max(s, l->plan.dest, (const double *const *)sc, n, load);
                l->spread_now = now;
                lbomp__plan_evaluate(&l->plan);
                double byte_s = l->byte_s > 0 ? l->byte_s : LBOMP__BYTE_S_GUESS;
                l->spread_horizon = lbomp__auto_horizon(lb->steps, lb->cfg.period);
                l->spread_gain = (now - then) * l->spread_horizon;
                /* and what the links then carry further, at every step it lasts */
                double links =
                        lbomp__locality_cost(s, l->plan.dest) - lbomp__locality_cost(s, s->worker);
                l->spread_cost = lb_cost(lb) + l->plan.moves.cost * byte_s +
                                 (links > 0 ? links * byte_s * l->spread_horizon : 0);
                /* and no worse than the mapping by the window's costs (beyond the tolerance):
                 * noise also makes steps imbalanced that the window is not, and an interleaving
                 * of unequal tasks may lose what balanced them. Interleaved already: kept,
                 * whatever a plan from the window's costs, which the load has left behind, would
                 * say. */
                double tol = 1.0 + lb->cfg.params.tolerance;
                bool fits = l->plan.lambda_new <= tol || l->plan.lambda_new <= l->plan.lambda;
                pays = fits && (l->spread_gain > l->spread_cost || l->plan.moves.tasks == 0);
                /* on probation (policy.h, struct lbomp__probe), an interleaving the estimate
                 * cannot tell from the mapping (its steps at most LBOMP__PROBE_BAND longer) is
                 * tried: the estimate misses what steals and caches do, both ways */
                l->trial = !pays && fits && now > 0 && then <= (1.0 + LBOMP__PROBE_BAND) * now;
                pays = pays || l->trial;
        }
        if (pays) { /* the window the probation compares the next one with */
                uint32_t nb;
                l->probe.before = lbomp__window_run_median(&lb->win, probe_skip(lb), &nb);
                if (nb < 2)
                        l->probe.before = 0; /* too few steps to compare with: kept unjudged */
        }
        if (!pays)
                lbomp__plan_keep(&l->plan);
        l->spread = pays;
        free(buf);
        return pays;
}

void lbomp__lb_begin(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        const struct lbomp__policy *pol = lb->cfg.policy;
        l->rc = 0;
        l->skip = false;
        l->spread = l->undo = l->trial = false;
        l->spread_gain = l->spread_cost = NAN; /* no interleaving judged (spread_pays) */
        l->cur = NULL;
        l->t_begin = lbomp__mono_s();
        l->step_lam = lbomp__window_step_lambda(&lb->win);
        lb->data.pending = false;
        lbomp__clock_calibrate(&lb->clock);
        lbomp__window_speeds(&lb->win, &lb->ws, lb->cfg.time_wall);
        /* Costs that no longer say where the load is cut the batches worse than counts do: a
         * hotspot that moved on since the last snapshot (the moving l3 memtask under auto, which
         * builds one now and then: 1.04-1.05 x refine's time, which builds none; 1.00 without
         * costs; bench/README, "Costs that went stale") */
        lbomp__workers_costs_check(&lb->ws, COSTS_ERR, lbomp__window_step_lambda(&lb->win));
        bool armed = l->armed;
        l->armed = false;
        l->auto_period = 0;
        /* an interleaving on probation is judged now; a back-off after one undone counts down */
        bool probe = l->probe.pending, open = lbomp__spread_open(&l->probe.backoff);
        if (pol == &lbomp__policy_auto && !armed && !probe && !l->trace && !l->keep_costs &&
            !lb->chunks) {
                auto_skip(lb);
                return;
        }
        if (strcmp(pol->name, "none") == 0 && !l->trace && !l->keep_costs) {
                record_only(lb, 0, 0, 0);
                return;
        }
        /* Balanced within the tolerance over the steps the decision reads: no policy would move
         * a task (none may move one that does not pay), so none runs and no snapshot is built.
         * The trace records every LB step, and a loop cuts its chunks from the snapshot's costs:
         * both keep the full path. */
        bool full = l->trace || l->keep_costs || lb->chunks;
        double mx, avg, lam = lbomp__window_timed_lambda(&lb->win, &lb->ws, &mx, &avg);
        /* A load that moves within the window reads balanced over it: judged on its steps
         * (spread_pays), on the snapshot the LB step then goes on with; when the interleaving
         * does not pay, as any load. auto too, once its when-rule armed the LB step: no candidate
         * of its model follows a load that the window's costs do not show. */
        double wlam;
        bool within = moves_within(lb, &wlam);
        uint32_t nafter = 0;
        double after = probe ? lbomp__window_run_median(&lb->win, probe_skip(lb), &nafter) : 0;
        bool undo = probe && !full && lbomp__probe_verdict(&l->probe, after, nafter);
        bool moving = within && !full && !undo && open;
        if (probe && !undo && lb->cfg.verbose)
                lbomp__log("lbomp: the interleaving stays: the steps after it took %.3g s against "
                           "%.3g s before it",
                           after, l->probe.before);
        /* a failed snapshot or plan here is met again below, and said there */
        bool spread = (moving || undo) && build_snapshot(lb) == 0 &&
                      lbomp__plan_begin(&l->plan, l->snap, lbomp__snap_dest(l->sb)) == 0 &&
                      (undo ? (probe_undo(lb), true) : spread_pays(lb));
        if (moving && pol == &lbomp__policy_auto)
                lbomp__spread_judged(&l->spread_backoff, spread && l->plan.moves.tasks > 0);
        bool suits = lbomp__interleave_suits(l->interleaved, wlam, lb->cfg.params.tolerance);
        if (!spread && !full && avg > 0 && (lam <= 1.0 + lb->cfg.params.tolerance || suits)) {
                record_only(lb, lam, mx, avg);
                quiet_after(lb, false);
                /* auto armed it for nothing: as an LB step that kept the mapping */
                if (pol == &lbomp__policy_auto)
                        lbomp__auto_when_after(&l->when, 0, lam, l->when.decay, false, l->step_lam);
                return;
        }
        /* Moves that pay, in time: the most a plan can win per step is the excess of the largest
         * load over the average — the part of it that persisted: a worker above the mean at
         * every timed step of the window, by the least it was above it (noise puts another
         * worker on top at each step); over the steps it would last (the period, times as many
         * periods as the run has gone, at most 8, as auto's horizon) it must beat what the last LB
         * step that ran a policy cost (before any did, auto's guess: 5 µs + 0.1 µs per task). Two
         * empty tasks measured 30 ns apart are not worth a plan and a steal at every later step.
         * auto decides this itself. */
        uint32_t periods = ++l->pays_runs < 8 ? l->pays_runs : 8;
        if (!spread && !full && pol != &lbomp__policy_auto && avg > 0) {
                double excess = mx - avg;
                double persist = lbomp__window_persistent_excess(&lb->win, &lb->ws);
                if (persist < excess) /* only what stayed on the same workers at every timed step */
                        excess = persist > 0 ? persist : 0;
                double gain = excess * (double)lb->cfg.period * (double)periods;
                double cost = lb_cost(lb);
                if (gain < cost) {
                        uint64_t n = l->recs.n;
                        record_only(lb, lam, mx, avg);
                        if (l->recs.n > n) {
                                struct lbomp__lbrec *r = last_rec(l);
                                r->note_kind = LBOMP__NOTE_NO_PAY;
                                r->note_arg[0] = gain;
                                r->note_arg[1] = cost;
                                r->note_u = periods;
                                r->note_flag = l->pays_cost_s > 0;
                        }
                        quiet_after(lb, false);
                        return;
                }
        }
        /* the interleaving's snapshot and plan are built already */
        int rc = spread ? 0 : build_snapshot(lb);
        struct lbomp__lbrec *r = rc == 0 ? new_rec(l) : NULL;
        if (rc == 0 && !r)
                rc = -ENOMEM;
        if (rc == 0 && !spread)
                rc = lbomp__plan_begin(&l->plan, l->snap, lbomp__snap_dest(l->sb));
        if (rc < 0) {
                if (r)
                        drop_rec(l);
                l->rc = rc;
                l->quiet = l->still = 0;
                lbomp__log("lbomp: LB step after step %llu could not run: %s; mapping kept",
                           (unsigned long long)(lb->steps - 1), lbomp_strerror(rc));
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, true);
                return;
        }
        l->cur = r;
        r->energy_j = r->power_w = NAN;
        /* judged and not applied: said before what the policy then did */
        if (moving && !spread && isfinite(l->spread_gain))
                snprintf(r->note, sizeof r->note,
                         "the load moves within the window (λ per step %.2f), interleaving it "
                         "does not pay: gain %.3g <= cost %.3g s or λ worse",
                         l->step_lam, l->spread_gain, l->spread_cost);
        const lbomp_window_stats_t *ws = lbomp__window_close(&lb->win, &lb->ws, lb->steps);
        if (ws) {
                r->energy_j = ws->energy_j;
                r->power_w = ws->power_w;
        }
        if (pol == &lbomp__policy_auto)
                auto_hist(lb, ws);
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
        if (l->undo) {
                r->pub.interleave_undone = 1;
                snprintf(r->note, sizeof r->note,
                         "spread: interleaving undone: the steps after it took %.3g s against "
                         "%.3g s before it (x %.3f): tasks back where they were, the next "
                         "interleaving after %u LB steps",
                         l->probe.after, l->probe.before, l->probe.after / l->probe.before,
                         l->probe.backoff.wait);
                if (lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: %s", (size_t)l->recs.n - 1, r->note);
        } else if (spread) {
                r->pub.interleaved = 1;
                if (l->plan.moves.tasks == 0)
                        snprintf(r->note, sizeof r->note,
                                 "spread: the load moves within the window (λ per step %.2f): "
                                 "interleaved already, mapping kept",
                                 l->step_lam);
                else if (l->trial)
                        snprintf(r->note, sizeof r->note,
                                 "spread: the load moves within the window (λ per step %.2f): "
                                 "interleaved on trial, gain %.3g <= cost %.3g s over %.0f steps "
                                 "(steps %+.0f %% by the estimate)",
                                 l->step_lam, l->spread_gain, l->spread_cost, l->spread_horizon,
                                 -100.0 * l->spread_gain / l->spread_horizon / l->spread_now);
                else
                        snprintf(r->note, sizeof r->note,
                                 "spread: the load moves within the window (λ per step %.2f): "
                                 "interleaved, gain %.3g > cost %.3g s over %.0f steps",
                                 l->step_lam, l->spread_gain, l->spread_cost, l->spread_horizon);
                if (lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: %s", (size_t)l->recs.n - 1, r->note);
        } else if (l->skip) {
                snprintf(r->note, sizeof r->note, "no time measured: mapping kept");
                if (!l->said_no_time || lb->cfg.verbose)
                        lbomp__log("lbomp: LB step %zu: the clock did not advance during the "
                                   "window (every task time is 0); mapping kept",
                                   (size_t)l->recs.n - 1);
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
        /* auto: the data moves are part of the LB step's cost, and measure the per-byte cost */
        struct lbomp__lbs *l = &lb->lbs;
        if (lb->cfg.policy == &lbomp__policy_auto && l->snap && l->snap->hist) {
                if (r->pub.data_bytes > 0 && r->pub.data_s > 0) {
                        double b = r->pub.data_s / (double)r->pub.data_bytes;
                        l->byte_s = l->byte_s > 0 ? 0.5 * (l->byte_s + b) : b;
                }
                l->when.lb_cost_s += 0.5 * r->pub.data_s;
        }
        lb->data.pending = false;
}

static void team_barrier(void *arg, void (*serial)(void *), void *sarg)
{
        struct lbomp *lb = arg;
        lbomp__barrier_wait(&lb->team.bar, (uint32_t)lb->team_n, 0, lb->ws.oversubscribed, serial,
                            sarg, NULL);
}

/* Whether the LB step begun needs its team: rounds of a decentralized policy. */
static bool needs_rounds(const struct lbomp *lb)
{
        const struct lbomp__lbs *l = &lb->lbs;
        return l->rc == 0 && !l->skip && !l->spread && l->cur && l->cur->pub.error == 0 &&
               lb->cfg.policy->kind == LBOMP__DECENTRAL;
}

bool lbomp__lb_team_work(const struct lbomp *lb)
{
        return needs_rounds(lb) || (lb->lbs.rc == 0 && lb->data.pending);
}

int lbomp__lb_step(struct lbomp *lb, int self)
{
        struct lbomp__lbs *l = &lb->lbs;
        bool rounds = needs_rounds(lb);
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
