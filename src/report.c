/*
 * report.c — what a run did, for people and for programs: the statistics getters (sized, so that
 * fields can be added without breaking compiled callers), the text report and the JSON report.
 * It reads the records the window and the LB step keep; it changes nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "runtime.h"

/* Copies min(size, sizeof *src) bytes and zeroes the rest of a larger caller's struct (the Linux
 * convention for extensible structs): an old caller gets the fields it knows, a newer one zeros
 * for what this library does not have. */
static int sized_copy(void *out, size_t size, const void *src, size_t have)
{
        if (!out || size == 0)
                return -EINVAL;
        memcpy(out, src, size < have ? size : have);
        if (size > have)
                memset((char *)out + have, 0, size - have);
        return 0;
}

int lbomp_energy_get(const lbomp_t *lb, lbomp_energy_t *out)
{
        if (!lb || !out)
                return -EINVAL;
        const struct lbomp__energy *e = lb->win.energy;
        out->reader = lbomp__energy_reader(e);
        out->note = lbomp__energy_note(e);
        out->package_j = lbomp__energy_package_j(e);
        out->seconds = lbomp__energy_available(e) ? lb->win.energy_t_last - lb->win.energy_t0 : NAN;
        out->power_w = out->seconds > 0 ? out->package_j / out->seconds : NAN;
        return 0;
}

int lbomp_totals_get(const lbomp_t *lb, lbomp_totals_t *out, size_t size)
{
        if (!lb || !out)
                return -EINVAL;
        struct lbomp__lbsum sum;
        lbomp__lbs_totals(&lb->lbs, &sum);
        const struct lbomp__window *win = &lb->win;
        uint64_t nwin = lbomp__window_count(win);
        const lbomp_window_stats_t *wl = nwin ? lbomp__window_rec(win, nwin - 1) : NULL;
        const struct lbomp__lbrec *last = lbomp__lbs_at(&lb->lbs, lb->lbs.recs.n - 1);
        lbomp_totals_t t = {
                .lb_steps = lb->lbs.recs.n,
                .windows = nwin,
                .migrations = sum.migrations,
                .migrated_bytes = sum.migrated_bytes,
                .node_migrations = sum.node_migrations,
                .messages = sum.messages,
                .data_moves = sum.data_moves,
                .data_bytes = sum.data_bytes,
                .decision_s = sum.decision_s,
                .apply_s = sum.apply_s,
                .move_cost = sum.move_cost,
                .data_s = sum.data_s,
                .imbalance_first = nwin ? win->first_rec.imbalance : NAN,
                .imbalance_last = wl ? wl->imbalance : NAN,
                .locality_first = sum.steps ? sum.locality_first : NAN,
                .locality_last = last ? last->pub.locality_after : NAN,
        };
        lbomp__window_run_sums(win, &t.stolen, &t.steal_steps, &t.steal_front_steps);
        return sized_copy(out, size, &t, sizeof t);
}

size_t lbomp_lb_count(const lbomp_t *lb)
{
        return lb ? (size_t)lb->lbs.recs.n : 0;
}

size_t lbomp_lb_first(const lbomp_t *lb)
{
        return lb ? (size_t)lbomp__history_first(&lb->lbs.recs) : 0;
}

int lbomp_lb_get(const lbomp_t *lb, size_t i, lbomp_lb_stats_t *out, size_t size)
{
        if (!lb || !out)
                return -EINVAL;
        const struct lbomp__lbrec *r = lbomp__lbs_at(&lb->lbs, i);
        if (!r)
                return -ENOENT;
        return sized_copy(out, size, &r->pub, sizeof r->pub);
}

size_t lbomp_window_count(const lbomp_t *lb)
{
        return lb ? (size_t)lbomp__window_count(&lb->win) : 0;
}

size_t lbomp_window_first(const lbomp_t *lb)
{
        return lb ? (size_t)lbomp__history_first(&lb->win.recs) : 0;
}

int lbomp_window_get(const lbomp_t *lb, size_t i, lbomp_window_stats_t *out, size_t size)
{
        if (!lb || !out)
                return -EINVAL;
        const lbomp_window_stats_t *r = lbomp__window_rec(&lb->win, i);
        if (!r)
                return -ENOENT;
        return sized_copy(out, size, r, sizeof *r);
}

uint64_t lbomp_steps(const lbomp_t *lb)
{
        return lb ? lbomp__tsteps_count(lb->ts) : 0;
}

static const struct lbomp__loops *loops_of(const struct lbomp *lb)
{
        return atomic_load_explicit(&((struct lbomp *)lb)->loops, memory_order_acquire);
}

size_t lbomp_loop_count(const lbomp_t *lb)
{
        const struct lbomp__loops *r = lb ? loops_of(lb) : NULL;
        return r ? r->n : 0;
}

int lbomp_loop_get(const lbomp_t *lb, size_t i, lbomp_loop_stats_t *out, size_t size)
{
        if (!lb || !out)
                return -EINVAL;
        const struct lbomp__loops *r = loops_of(lb);
        if (!r || i >= r->n)
                return -ENOENT;
        const struct lbomp__loop *l = r->all[i];
        const struct lbomp__chunks *ch = &l->ch;
        lbomp_loop_stats_t st = {
                .name = ch->name,
                .handle = l->rt,
                .begin = ch->begin,
                .end = ch->end,
                .chunks = ch->n,
                .runs = l->rt->tset.runs,
                .recuts = ch->recuts,
                .rebuilds = ch->rebuilds,
                .resizes = ch->resizes,
                .target_s = ch->target_s,
        };
        return sized_copy(out, size, &st, sizeof st);
}

int lbomp_step_get(const lbomp_t *lb, uint64_t step, lbomp_step_stats_t *out, size_t size)
{
        if (!lb || !out)
                return -EINVAL;
        if (!lbomp__window_steprec(&lb->win, step))
                return -ENOENT;
        /* Loads of the last steps may still wait in the workers' rings (no step runs now). */
        struct lbomp *m = (struct lbomp *)lb;
        if (step >= m->win.folded)
                lbomp__window_fold(&m->win, &m->ws, &m->clock);
        const struct lbomp__steprec *r = lbomp__window_steprec(&lb->win, step);
        lbomp_step_stats_t st = {.step = step,
                                 .imbalance = r->lambda,
                                 .imbalance_run = r->lambda_run,
                                 .skipped = r->skipped};
        return sized_copy(out, size, &st, sizeof st);
}

/* The window that ended at LB step i (the one whose loads it read), or NULL. */
static const lbomp_window_stats_t *window_of(const struct lbomp *lb, const lbomp_lb_stats_t *r)
{
        uint64_t n = lbomp__window_count(&lb->win);
        for (uint64_t k = lbomp__history_first(&lb->win.recs); k < n; k++) {
                const lbomp_window_stats_t *w = lbomp__window_rec(&lb->win, k);
                if (w->first_step + w->steps == r->step + 1)
                        return w;
        }
        return NULL;
}

/* One line saying how threads were bound. */
static void binding_note(const struct lbomp *lb, char *buf, size_t len)
{
        if (!lb->topo.is_host) {
                snprintf(buf, len,
                         "not bound: the topology is the profile %s; threads run where the host "
                         "allows",
                         lb->topo.name);
                return;
        }
        if (lb->topo.flat) {
                snprintf(buf, len,
                         "not bound: hwloc could not read the host, flat topology of %d core(s)%s",
                         lb->topo.ncores, lb->ws.oversubscribed ? ", oversubscribed" : "");
                return;
        }
        if (lb->omp_binds) {
                snprintf(buf, len, "by OpenMP (OMP_PROC_BIND/OMP_PLACES set by the user)");
                return;
        }
        char cpuset[96] = "";
        if (lb->topo.restricted)
                snprintf(cpuset, sizeof cpuset,
                         " (the process may use %d of the machine's %d cores)", lb->topo.ncores,
                         lb->topo.ncores_machine);
        int ok = 0, failed = 0, first_err = 0;
        for (int i = 0; i < lb->ws.n; i++) {
                if (!lb->ws.w[i].bound_once)
                        continue;
                if (lb->ws.w[i].bind_rc == 0)
                        ok++;
                else if (lb->ws.w[i].bind_rc < 0) {
                        failed++;
                        if (!first_err)
                                first_err = lb->ws.w[i].bind_rc;
                }
        }
        if (failed)
                snprintf(buf, len,
                         "partial: %d of %d workers bound, the others refused (%s) and run where "
                         "the system puts them%s",
                         ok, ok + failed, strerror(-first_err), cpuset);
        else
                snprintf(buf, len,
                         "lbomp bound %d workers to %d core(s)%s, spread over %d node(s)%s", ok,
                         lb->topo.ncores, cpuset, lb->topo.nnodes,
                         lb->ws.oversubscribed ? ", oversubscribed" : "");
}

/* The decentralized part of an LB step: one indented line under the step's row. */
static void report_messages(const lbomp_lb_stats_t *r, FILE *out)
{
        fprintf(out, "  %11s messages %llu (", "", (unsigned long long)r->messages);
        for (int k = 0; k < LBOMP_MSG_KINDS && r->kind_name[k]; k++)
                fprintf(out, "%s%s %llu", k ? ", " : "", r->kind_name[k],
                        (unsigned long long)r->kind_messages[k]);
        fprintf(out,
                "), rounds %u (gossip %u, collectives %u), packs %u, rejected %u, forced %u, "
                "withdrawn %u, span %.3g s\n",
                r->rounds, r->gossip_rounds, r->collectives, r->packs, r->offers_rejected,
                r->packs_forced, r->packs_withdrawn, r->span_s);
}

/* One line: "energy: <reader note>; packages J over s, W; per domain J" or "energy: unavailable:
 * <reason>". */
static void energy_line(const struct lbomp *lb, FILE *out)
{
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        if (!en.reader) {
                fprintf(out, "  energy: %s\n", en.note);
                return;
        }
        fprintf(out, "  energy: %s; packages %.4g J over %.3g s, %.4g W", en.note, en.package_j,
                en.seconds, en.power_w);
        for (int i = 0; i < lbomp__energy_ndomains(lb->win.energy); i++)
                fprintf(out, "%s %s %.4g J", i ? "," : ";",
                        lbomp__energy_domain_name(lb->win.energy, i),
                        lbomp__energy_total_j(lb->win.energy, i));
        fputc('\n', out);
}

/* The configuration, machine, time measurement, energy and data lines of a runtime. */
/* Every worker's speed and its parts (README "Unequal cores"); 16 workers at most, then a
 * summary. */
static void speeds_line(const struct lbomp *lb, FILE *out)
{
        const char *mode = lb->cfg.speeds == LBOMP__SPEEDS_OFF     ? "off"
                           : lb->cfg.speeds == LBOMP__SPEEDS_PRIOR ? "prior"
                                                                   : "auto";
        fprintf(out, "  speeds (%s; speed = prior x rel x share):", mode);
        double lo = INFINITY, hi = 0;
        for (int i = 0; i < lb->ws.n; i++) {
                const struct lbomp__worker *w = &lb->ws.w[i];
                lo = w->speed < lo ? w->speed : lo;
                hi = w->speed > hi ? w->speed : hi;
                if (i < 16)
                        fprintf(out, "%s w%d %.3g (%.3g x %.3g x %.3g)", i ? "," : "", i, w->speed,
                                w->prior, w->rel, w->share);
        }
        if (lb->ws.n > 16)
                fprintf(out, ", ... (%d workers, %.3g to %.3g)", lb->ws.n, lo, hi);
        if (lb->topo.kinds[0])
                fprintf(out, "; CPU kinds: %s", lb->topo.kinds);
        fprintf(out, "\n");
}

static void header(const struct lbomp *lb, FILE *out)
{
        char note[256];
        /* The threads were bound by whichever task set ran: a program of loops only binds them
         * through its loops (all on the same cores). */
        const struct lbomp__loops *r = loops_of(lb);
        binding_note(!lb->started && r && r->n ? r->all[0]->rt : lb, note, sizeof note);
        char quiet[64] = "";
        if (lbomp__lb_quiet_ok(lb))
                snprintf(quiet, sizeof quiet, " (up to %dx while LB steps move nothing)",
                         1 << LBOMP__QUIET_MAX);
        fprintf(out, "  policy %s, period %d%s, seed %llu, steal %s\n", lb->cfg.policy->name,
                lb->cfg.period, quiet, (unsigned long long)lb->cfg.seed,
                lb->cfg.steal == LBOMP__STEAL_OFF    ? "off"
                : lb->cfg.steal == LBOMP__STEAL_NODE ? "node"
                                                     : "all");
        fprintf(out, "  topology %s: %d node(s), %d core(s), distances %s\n", lb->topo.name,
                lb->topo.nnodes, lb->topo.ncores,
                lb->topo.dist_measured ? "from the topology" : "assumed (10/20)");
        fprintf(out, "  workers %d; binding: %s\n", lb->ws.n, note);
        fprintf(out, "  time: %s, %s%s\n", lbomp__clock_name(&lb->clock),
                lb->cfg.time_wall ? "wall time (a co-runner slows a worker through rel)"
                                  : "CPU time (a co-runner slows a worker through share)",
                lb->ws.oversubscribed ? "; oversubscribed: more workers than cores" : "");
        speeds_line(lb, out);
        fprintf(out, "  steps %llu, tasks %u, links %zu\n", (unsigned long long)lbomp_steps(lb),
                lb->tasks.nalive, lb->tasks.nlink);
        uint64_t back = 0;
        for (int i = 0; i < lb->ws.n; i++)
                back += lb->ws.w[i].clock_back;
        if (back)
                fprintf(out, "  clock: %llu backwards reading(s), counted as 0 s\n",
                        (unsigned long long)back);
        energy_line(lb, out);
        fprintf(out, "  data: %s%s\n",
                !lb->cfg.move_pages ? "pages stay (LBOMP_MOVE_PAGES=off)"
                : lb->topo.is_host  ? "registered pages follow their task (move_pages)"
                                    : "pages counted, not moved (the nodes are the profile's)",
                lb->data.fn ? "; migrate callback set" : "");
}

/* A loop's task set: its range, chunks and runs; the runtime's header says the rest. */
static void loop_header(const struct lbomp *lb, FILE *out)
{
        const struct lbomp__chunks *ch = lb->chunks;
        fprintf(out, "lbomp report: loop \"%s\"\n", ch->name);
        fprintf(out,
                "  range [%lld, %lld), %u chunks, %llu runs; new chunks from measured costs %llu "
                "time(s) (target %.3g s per chunk and step), for a new range %llu, edges moved "
                "%llu\n",
                (long long)ch->begin, (long long)ch->end, ch->n, (unsigned long long)lb->tset.runs,
                (unsigned long long)ch->recuts, ch->target_s, (unsigned long long)ch->rebuilds,
                (unsigned long long)ch->resizes);
}

/* One line per LB step of a task set, and its totals. */
static void table(const struct lbomp *lb, FILE *out)
{
        /* The first eleven columns are fixed (scripts read window-W as the 11th); new ones go
         * after them. */
        fprintf(out,
                "  %4s %6s %-10s %7s %7s %6s %10s %10s %12s %9s %8s %6s %10s %12s %10s %7s %7s "
                "%7s %10s %s\n",
                "lb", "step", "policy", "λ-before", "λ-after", "moves", "decide-s", "apply-s",
                "locality", "window-J", "window-W", "x-node", "move-cost", "loc-before", "data-B",
                "λ-steps", "λ-run", "stolen", "moved-B", "note");
        const struct lbomp__lbs *l = &lb->lbs;
        for (uint64_t i = lbomp__history_first(&l->recs); i < l->recs.n; i++) {
                const struct lbomp__lbrec *r = lbomp__lbs_at(l, i);
                char ej[32] = "-", pw[32] = "-", note[400];
                if (isfinite(r->energy_j))
                        snprintf(ej, sizeof ej, "%.4g", r->energy_j);
                if (isfinite(r->power_w))
                        snprintf(pw, sizeof pw, "%.4g", r->power_w);
                /* What the window's steps looked like one by one, and what stealing left. */
                const lbomp_window_stats_t *wr = window_of(lb, &r->pub);
                fprintf(out,
                        "  %4llu %6llu %-10s %7.3f %7.3f %6u %10.3g %10.3g %12.4g %9s %8s %6u "
                        "%10.4g "
                        "%12.4g %10llu %7.3f %7.3f %7llu %10llu %s\n",
                        (unsigned long long)i, (unsigned long long)r->pub.step, r->pub.policy,
                        r->pub.imbalance_before, r->pub.imbalance_after, r->pub.migrations,
                        r->pub.decision_s, r->pub.apply_s, r->pub.locality_after, ej, pw,
                        r->pub.node_migrations, r->pub.move_cost, r->pub.locality_before,
                        (unsigned long long)r->pub.data_bytes, wr ? wr->imbalance_step_mean : NAN,
                        wr ? wr->imbalance_run_step_mean : NAN,
                        wr ? (unsigned long long)wr->stolen : 0ull,
                        (unsigned long long)r->pub.migrated_bytes,
                        r->pub.error        ? lbomp_strerror(r->pub.error)
                        : r->pub.data_error ? strerror(-r->pub.data_error)
                                            : lbomp__lbrec_note(r, note, sizeof note));
                if (r->pub.kind_name[0])
                        report_messages(&r->pub, out);
        }
        lbomp_totals_t t;
        lbomp_totals_get(lb, &t, sizeof t);
        const lbomp_window_stats_t *wf = t.windows ? &lb->win.first_rec : NULL;
        const lbomp_window_stats_t *wl = lbomp__window_rec(&lb->win, t.windows - 1);
        if (lbomp__history_first(&l->recs))
                fprintf(out, "  (the last %llu LB steps of %llu: LBOMP_HISTORY)\n",
                        (unsigned long long)l->recs.keep, (unsigned long long)l->recs.n);
        fprintf(out,
                "  total: %llu LB steps, %llu migrations, decision %.3g s, messages %llu; λ first "
                "window %.3f, last window %.3f\n",
                (unsigned long long)t.lb_steps, (unsigned long long)t.migrations, t.decision_s,
                (unsigned long long)t.messages, t.imbalance_first, t.imbalance_last);
        /* λ above charges every task to its owner (what a plan can change); what the threads
         * carried, with what stealing took over, is what the steps cost. */
        fprintf(out,
                "  per step: λ owned first window %.3f, last %.3f; carried (what the threads "
                "ran, %llu tasks stolen) first %.3f, last %.3f\n",
                wf ? wf->imbalance_step_mean : NAN, wl ? wl->imbalance_step_mean : NAN,
                (unsigned long long)t.stolen, wf ? wf->imbalance_run_step_mean : NAN,
                wl ? wl->imbalance_run_step_mean : NAN);
        fprintf(out,
                "  locality: link cost first %.6g, last %.6g; %llu migrations across nodes, move "
                "cost %.6g; data followed %llu tasks, %llu bytes in %.3g s\n",
                t.locality_first, t.locality_last, (unsigned long long)t.node_migrations,
                t.move_cost, (unsigned long long)t.data_moves, (unsigned long long)t.data_bytes,
                t.data_s);
}

int lbomp_report(const lbomp_t *lb, FILE *out)
{
        if (!lb || !out)
                return -EINVAL;
        if (lb->root) {
                loop_header(lb, out);
        } else {
                fprintf(out, "lbomp report\n");
                header(lb, out);
        }
        /* A runtime that only runs loops has no table of its own: each loop has one. */
        const struct lbomp__loops *r = lb->root ? NULL : loops_of(lb);
        if (!r || lb->tasks.next_id || lb->lbs.recs.n)
                table(lb, out);
        /* Each LBOMP_FOR loop balances on its own: its LB steps under its name. */
        for (size_t i = 0; r && i < r->n; i++)
                lbomp_report(r->all[i]->rt, out);
        return 0;
}

static void json_num(FILE *out, double v)
{
        if (isfinite(v))
                fprintf(out, "%.6g", v);
        else
                fputs("null", out);
}

/* A JSON string: notes carry paths, and a path may hold any byte but NUL. */
static void json_str(FILE *out, const char *s)
{
        if (!s) {
                fputs("null", out);
                return;
        }
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(out, "\\%c", *p);
                else if (*p < 0x20)
                        fprintf(out, "\\u%04x", *p);
                else
                        fputc(*p, out);
        }
        fputc('"', out);
}

/* {"name":joules,...} over the domains: a window's `j`, or (NULL) the run's totals; null when
 * there is nothing to say. */
static void json_domains(FILE *out, const struct lbomp *lb, const double *j)
{
        const struct lbomp__energy *e = lb->win.energy;
        int n = lbomp__energy_ndomains(e);
        if (n == 0 || (!j && !lbomp__energy_available(e))) {
                fputs("null", out);
                return;
        }
        fputc('{', out);
        for (int i = 0; i < n; i++) {
                if (i)
                        fputc(',', out);
                json_str(out, lbomp__energy_domain_name(e, i));
                fputc(':', out);
                json_num(out, j ? j[i] : lbomp__energy_total_j(e, i));
        }
        fputc('}', out);
}

/* The report of one task set, without the final newline. */
static void json(const struct lbomp *lb, FILE *out)
{
        lbomp_totals_t sum;
        lbomp_totals_get(lb, &sum, sizeof sum);
        fputc('{', out);
        if (lb->chunks) {
                const struct lbomp__chunks *ch = lb->chunks;
                fprintf(out, "\"loop\":");
                json_str(out, ch->name);
                fprintf(out,
                        ",\"begin\":%lld,\"end\":%lld,\"chunks\":%u,\"runs\":%llu,"
                        "\"recuts\":%llu,\"rebuilds\":%llu,\"resizes\":%llu,\"target_s\":",
                        (long long)ch->begin, (long long)ch->end, ch->n,
                        (unsigned long long)lb->tset.runs, (unsigned long long)ch->recuts,
                        (unsigned long long)ch->rebuilds, (unsigned long long)ch->resizes);
                json_num(out, ch->target_s);
                fputc(',', out);
        }
        fprintf(out, "\"policy\":\"%s\",\"period\":%d,\"workers\":%d,\"topology\":",
                lb->cfg.policy->name, lb->cfg.period, lb->ws.n);
        json_str(out, lb->topo.name); /* a file name may hold quotes */
        fprintf(out, ",\"nodes\":%d,\"cores\":%d,", lb->topo.nnodes, lb->topo.ncores);
        fprintf(out, "\"steps\":%llu,\"tasks\":%u,\"migrations\":%llu,\"decision_s\":",
                (unsigned long long)lbomp_steps(lb), lb->tasks.nalive,
                (unsigned long long)sum.migrations);
        json_num(out, sum.decision_s);
        fprintf(out, ",\"messages\":%llu,\"node_migrations\":%llu,\"move_cost\":",
                (unsigned long long)sum.messages, (unsigned long long)sum.node_migrations);
        json_num(out, sum.move_cost);
        fprintf(out, ",\"move_pages\":\"%s\",\"data_moves\":%llu,\"data_bytes\":%llu,\"data_s\":",
                !lb->cfg.move_pages ? "off"
                : lb->topo.is_host  ? "on"
                                    : "counted",
                (unsigned long long)sum.data_moves, (unsigned long long)sum.data_bytes);
        json_num(out, sum.data_s);
        fprintf(out, ",\"speeds\":[");
        for (int i = 0; i < lb->ws.n; i++) {
                const struct lbomp__worker *w = &lb->ws.w[i];
                fprintf(out, "%s{\"speed\":", i ? "," : "");
                json_num(out, w->speed);
                fprintf(out, ",\"prior\":");
                json_num(out, w->prior);
                fprintf(out, ",\"rel\":");
                json_num(out, w->rel);
                fprintf(out, ",\"share\":");
                json_num(out, w->share);
                fprintf(out, "}");
        }
        fprintf(out, "]");
        /* The lists hold what is kept (LBOMP_HISTORY): each entry says its index in the run. */
        const struct lbomp__window *win = &lb->win;
        uint64_t nwin = lbomp__window_count(win), w0 = lbomp__history_first(&win->recs);
        fprintf(out, ",\"history\":%u,\"window_count\":%llu,\"lb_count\":%llu", lb->cfg.history,
                (unsigned long long)nwin, (unsigned long long)lb->lbs.recs.n);
        fprintf(out, ",\"windows\":[");
        for (uint64_t i = w0; i < nwin; i++) {
                const lbomp_window_stats_t *w = lbomp__window_rec(win, i);
                fprintf(out, "%s{\"window\":%llu,\"first_step\":%llu,\"steps\":%llu,\"imbalance\":",
                        i > w0 ? "," : "", (unsigned long long)i, (unsigned long long)w->first_step,
                        (unsigned long long)w->steps);
                json_num(out, w->imbalance);
                fprintf(out, ",\"wall_s\":");
                json_num(out, w->wall_s);
                fprintf(out, ",\"stolen\":%llu,\"imbalance_run\":", (unsigned long long)w->stolen);
                json_num(out, w->imbalance_run);
                fprintf(out, ",\"imbalance_step_mean\":");
                json_num(out, w->imbalance_step_mean);
                fprintf(out, ",\"imbalance_step_max\":");
                json_num(out, w->imbalance_step_max);
                fprintf(out, ",\"imbalance_run_step_mean\":");
                json_num(out, w->imbalance_run_step_mean);
                /* λ of each of its steps still kept (null for one no longer kept) */
                fprintf(out,
                        ",\"timed_steps\":%llu,\"steal_steps\":%llu,\"steal_front_steps\":%llu,"
                        "\"step_imbalance\":[",
                        (unsigned long long)w->timed_steps, (unsigned long long)w->steal_steps,
                        (unsigned long long)w->steal_front_steps);
                for (uint64_t k = w->first_step;
                     k < w->first_step + w->steps && k < lbomp__window_nsteps(win); k++) {
                        const struct lbomp__steprec *sr = lbomp__window_steprec(win, k);
                        if (k > w->first_step)
                                fputc(',', out);
                        if (sr)
                                fprintf(out, "%.4g", sr->lambda);
                        else
                                fputs("null", out);
                }
                fputc(']', out);
                fprintf(out, ",\"energy_j\":");
                json_num(out, w->energy_j);
                fprintf(out, ",\"power_w\":");
                json_num(out, w->power_w);
                fprintf(out, ",\"domains_j\":");
                const double *dj = lbomp__window_domains(win, i);
                if (isfinite(w->energy_j) && dj)
                        json_domains(out, lb, dj);
                else
                        fputs("null", out);
                fputc('}', out);
        }
        fprintf(out, "],\"lb_steps\":[");
        const struct lbomp__lbs *l = &lb->lbs;
        uint64_t l0 = lbomp__history_first(&l->recs);
        for (uint64_t i = l0; i < l->recs.n; i++) {
                const struct lbomp__lbrec *r = lbomp__lbs_at(l, i);
                char note[400];
                fprintf(out,
                        "%s{\"lb\":%llu,\"step\":%llu,\"imbalance_before\":", i > l0 ? "," : "",
                        (unsigned long long)i, (unsigned long long)r->pub.step);
                json_num(out, r->pub.imbalance_before);
                fprintf(out, ",\"imbalance_after\":");
                json_num(out, r->pub.imbalance_after);
                fprintf(out, ",\"migrations\":%u,\"migrated_bytes\":%llu,\"decision_s\":",
                        r->pub.migrations, (unsigned long long)r->pub.migrated_bytes);
                json_num(out, r->pub.decision_s);
                fprintf(out, ",\"apply_s\":");
                json_num(out, r->pub.apply_s);
                fprintf(out, ",\"locality_before\":");
                json_num(out, r->pub.locality_before);
                fprintf(out, ",\"locality_after\":");
                json_num(out, r->pub.locality_after);
                fprintf(out, ",\"node_migrations\":%u,\"move_cost\":", r->pub.node_migrations);
                json_num(out, r->pub.move_cost);
                fprintf(out,
                        ",\"data_moves\":%u,\"data_bytes\":%llu,\"data_s\":", r->pub.data_moves,
                        (unsigned long long)r->pub.data_bytes);
                json_num(out, r->pub.data_s);
                fprintf(out, ",\"data_error\":%d,\"plan_rejected\":%s,\"imbalance_planned\":",
                        r->pub.data_error, r->pub.plan_rejected ? "true" : "false");
                json_num(out, r->pub.imbalance_planned);
                fprintf(out, ",\"interleaved\":%s,\"interleave_undone\":%s,\"note\":",
                        r->pub.interleaved ? "true" : "false",
                        r->pub.interleave_undone ? "true" : "false");
                json_str(out, lbomp__lbrec_note(r, note, sizeof note));
                fprintf(out, ",\"messages\":%llu,\"rounds\":%u,\"error\":%d",
                        (unsigned long long)r->pub.messages, r->pub.rounds, r->pub.error);
                if (r->pub.kind_name[0]) { /* decentralized policies */
                        fprintf(out, ",\"messages_by_kind\":{");
                        for (int k = 0; k < LBOMP_MSG_KINDS && r->pub.kind_name[k]; k++)
                                fprintf(out, "%s\"%s\":%llu", k ? "," : "", r->pub.kind_name[k],
                                        (unsigned long long)r->pub.kind_messages[k]);
                        fprintf(out,
                                "},\"gossip_rounds\":%u,\"collectives\":%u,\"packs\":%u,"
                                "\"offers_rejected\":%u,\"packs_forced\":%u,"
                                "\"packs_withdrawn\":%u,\"span_s\":",
                                r->pub.gossip_rounds, r->pub.collectives, r->pub.packs,
                                r->pub.offers_rejected, r->pub.packs_forced,
                                r->pub.packs_withdrawn);
                        json_num(out, r->pub.span_s);
                }
                fputc('}', out);
        }
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        fprintf(out, "],\"energy\":{\"reader\":");
        json_str(out, en.reader);
        fprintf(out, ",\"note\":");
        json_str(out, en.note);
        fprintf(out, ",\"package_j\":");
        json_num(out, en.package_j);
        fprintf(out, ",\"seconds\":");
        json_num(out, en.seconds);
        fprintf(out, ",\"power_w\":");
        json_num(out, en.power_w);
        fprintf(out, ",\"domains_j\":");
        json_domains(out, lb, NULL);
        fputc('}', out);
        const struct lbomp__loops *r = lb->root ? NULL : loops_of(lb);
        if (r) {
                fprintf(out, ",\"loops\":[");
                for (size_t i = 0; i < r->n; i++) {
                        if (i)
                                fputc(',', out);
                        json(r->all[i]->rt, out);
                }
                fputc(']', out);
        }
        fputc('}', out);
}

int lbomp_report_json(const lbomp_t *lb, FILE *out)
{
        if (!lb || !out)
                return -EINVAL;
        json(lb, out);
        fputc('\n', out);
        return 0;
}
