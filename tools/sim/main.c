/*
 * main.c — lbomp-sim, the offline balancer (Charm++'s +LBSim): runs policies on LB steps recorded
 * by LBOMP_TRACE, or on a synthetic workload on any topology, through the same code the live
 * library runs (lbomp__policy_run_offline: centralized on this thread, decentralized on virtual
 * workers whose messages and rounds are counted), and reports balance, migrations, locality and
 * decision time per policy. This is how a 2-core machine evaluates policies at 1,000 cores.
 *
 * Nothing here decides: the snapshot comes from the library's one builder (snapshot.h), as the
 * runtime's does, and the metrics from the plan object and metrics.c, as the report's do.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "lbomp.h"
#include "mailbox.h"
#include "plan.h"
#include "sim.h"
#include "trace.h"

/* ---------------------------------------------------------------------------------------------
 * Running and reporting
 */

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mb(void)
{
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) != 0)
                return NAN;
        return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Whether the snapshot's workers have unequal speeds. */
static bool unequal(const struct lbomp__snap *s)
{
        for (uint32_t w = 1; s->speed && w < s->nworkers; w++)
                if (s->speed[w] != s->speed[0])
                        return true;
        return false;
}

/* What one snapshot is, before any policy. */
struct before {
        double imbalance, max, avg, lstar, locality;
        double *load;
};

static int measure_before(const struct lbomp__snap *s, struct before *b)
{
        b->load = malloc(s->nworkers * sizeof *b->load);
        if (!b->load)
                return -ENOMEM;
        lbomp__loads(s, s->worker, b->load);
        if (unequal(s)) { /* predicted times against the capacity-weighted ideal */
                b->imbalance = lbomp__snap_lambda(s, b->load, &b->max, &b->avg);
                b->lstar = lbomp__bound(s, b->avg);
                b->locality = lbomp__locality_cost(s, s->worker);
                return 0;
        }
        b->imbalance = lbomp__imbalance(b->load, s->nworkers, &b->max, &b->avg);
        double maxtask = 0;
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (s->cost[t] > maxtask)
                        maxtask = s->cost[t];
        b->lstar = b->avg > maxtask ? b->avg : maxtask;
        b->locality = lbomp__locality_cost(s, s->worker);
        return 0;
}

static void jnum(const char *key, double v)
{
        if (isfinite(v))
                printf(",\"%s\":%.6g", key, v);
        else
                printf(",\"%s\":null", key);
}

static void jstr(const char *key, const char *v)
{
        printf(",\"%s\":\"", key);
        for (const char *p = v; *p; p++) {
                if (*p == '"' || *p == '\\')
                        printf("\\%c", *p);
                else if ((unsigned char)*p < 0x20)
                        printf("\\u%04x", *p);
                else
                        putchar(*p);
        }
        putchar('"');
}

/* Where a run came from, for the report. */
struct origin {
        const char *input; /* "synthetic" or "trace" */
        const char *topo_name;
        const char *load, *links;
        uint32_t ncores;
        const int32_t *wcore;
        const struct lbomp__trace_step *rec; /* trace: the record, else NULL */
};

struct sim {
        const struct opts *o;
        struct lbomp__trace_writer *rec_out;
        uint32_t *dest;
        size_t dest_cap;
        struct lbomp__plan plan;
        int failures, mismatches, compared, text_header;
        long rejected;          /* plans refused by the never-worse check */
        struct lbomp__dec *dec; /* virtual workers, kept across runs as the runtime keeps its */
        uint32_t *blind;        /* unequal speeds: the speed-blind plan */
        double *bload;
        struct lbomp__plan bplan;
};

/* Speeds in the model or not (unequal speeds only): the policy's plan on the same snapshot with
 * every speed ignored, through the same never-worse check, and both plans' predicted step times
 * on the real workers and as if the speeds were equal. */
struct blindness {
        double step_s;          /* the speed-aware plan: max predicted time */
        double blind_step_s;    /* the speed-blind plan, on these workers */
        double ideal_s;         /* capacity-weighted ideal: Σ speed × load / Σ speed */
        double bound_s;         /* L*: the ideal, the largest task on the fastest worker */
        double step_if_equal_s; /* the speed-aware plan, speeds ignored */
        int rc;
};

static int run_blind(struct sim *sm, const struct lbomp__policy *p, const struct lbomp__snap *s,
                     struct blindness *bl)
{
        uint32_t T = s->ntasks, P = s->nworkers;
        free(sm->blind);
        free(sm->bload);
        sm->blind = malloc(((size_t)T + 1) * sizeof *sm->blind);
        sm->bload = malloc(((size_t)P + 1) * sizeof *sm->bload);
        if (!sm->blind || !sm->bload)
                return -ENOMEM;
        struct lbomp__snap b = *s;
        b.speed = NULL;
        b.speed_sum = b.speed_max = 0;
        lbomp__loads(&b, sm->dest, sm->bload); /* the aware plan, speeds ignored */
        lbomp__snap_lambda(&b, sm->bload, &bl->step_if_equal_s, NULL);
        if (lbomp__plan_begin(&sm->bplan, &b, sm->blind) < 0)
                return -ENOMEM;
        struct lbomp__pstats st = {0};
        if (p->kind == LBOMP__DECENTRAL && !sm->dec && !(sm->dec = lbomp__dec_create(1)))
                return -ENOMEM;
        bl->rc = lbomp__policy_run_offline_in(p, &b, sm->blind, &st, sm->dec);
        if (bl->rc == 0 && lbomp__plan_valid(&sm->bplan, NULL) == 0) {
                lbomp__plan_evaluate(&sm->bplan);
                lbomp__plan_guard(&sm->bplan);
        } else {
                memcpy(sm->blind, s->worker, (size_t)T * sizeof *sm->blind);
        }
        lbomp__loads(s, sm->blind, sm->bload); /* the blind plan on the real workers */
        lbomp__snap_lambda(s, sm->bload, &bl->blind_step_s, NULL);
        return 0;
}

static int run_policy(struct sim *sm, const struct lbomp__policy *p, const struct lbomp__snap *s,
                      const struct before *b, const struct origin *org, double setup_s)
{
        const struct opts *o = sm->o;
        uint32_t T = s->ntasks, P = s->nworkers;
        if ((size_t)T + 1 > sm->dest_cap) {
                uint32_t *d = realloc(sm->dest, ((size_t)T + 1) * sizeof *d);
                if (!d)
                        return -ENOMEM;
                sm->dest = d;
                sm->dest_cap = (size_t)T + 1;
        }
        if (lbomp__plan_begin(&sm->plan, s, sm->dest) < 0)
                return -ENOMEM;
        double times[1000], spans[1000];
        struct lbomp__pstats st;
        int rc = 0;
        for (long r = 0; r < o->repeat; r++) {
                memset(&st, 0, sizeof st);
                double t0 = now_s();
                if (p->kind == LBOMP__DECENTRAL && !sm->dec && !(sm->dec = lbomp__dec_create(1)))
                        return -ENOMEM;
                rc = lbomp__policy_run_offline_in(p, s, sm->dest, &st, sm->dec);
                times[r] = now_s() - t0;
                /* A decentralized decision's critical path: the slowest worker of each round,
                 * plus the time of the round's messages, which shared memory does not show:
                 * --round-us per round (collectives counted as their ceil(log2 P) rounds). */
                spans[r] = p->kind == LBOMP__DECENTRAL
                                   ? st.span_s + (double)st.rounds * o->round_us * 1e-6
                                   : times[r];
                if (rc < 0)
                        break;
        }
        long nrun = rc < 0 ? 1 : o->repeat;
        /* Noise on a shared machine only adds time: the minimum is the better estimate, the
         * median the more familiar one; both are reported. */
        double decision = median(times, nrun), span = median(spans, nrun);
        double decision_min = times[0], span_min = spans[0];
        uint32_t badt = 0;
        if (rc == 0 && lbomp__plan_valid(&sm->plan, &badt) != 0) {
                fprintf(stderr,
                        "lbomp-sim: policy %s produced an invalid plan: task %u -> worker %u "
                        "(%u workers)\n",
                        p->name, badt, sm->dest[badt], P);
                rc = -EFAULT;
        }
        double imb_after = NAN, eff = NAN, loc_after = NAN;
        uint64_t migrations = 0, mig_bytes = 0;
        long plan_diff = -1;
        bool rejected = false;
        if (rc == 0) {
                lbomp__plan_evaluate(&sm->plan);
                /* What the runtime applies: a plan that does not lower the maximum is refused. */
                rejected = lbomp__plan_guard(&sm->plan);
                sm->rejected += rejected;
                imb_after = sm->plan.lambda_new;
                eff = sm->plan.max_new > 0 ? b->lstar / sm->plan.max_new : 1.0;
                loc_after = lbomp__locality_cost(s, sm->dest);
                migrations = sm->plan.moves.tasks;
                mig_bytes = sm->plan.moves.bytes;
                if (org->rec) {
                        plan_diff = 0;
                        for (uint32_t t = 0; t < T; t++)
                                plan_diff += sm->dest[t] != org->rec->plan[t];
                }
        } else {
                sm->failures++;
        }
        struct blindness bl = {.rc = 1};
        bool speeds = rc == 0 && unequal(s);
        if (speeds) {
                bl.step_s = sm->plan.max_new;
                lbomp__snap_lambda(s, sm->plan.load_new, NULL, &bl.ideal_s);
                bl.bound_s = lbomp__bound(s, bl.ideal_s);
                /* the aware plan is in sm->dest: run_blind reads it before using its own */
                if (run_blind(sm, p, s, &bl) < 0)
                        return -ENOMEM;
        }
        bool same_policy = org->rec && strcmp(org->rec->policy, p->name) == 0;
        bool plan_equal = same_policy && rc == 0 && plan_diff == 0;
        sm->compared += same_policy;
        if (same_policy && !plan_equal)
                sm->mismatches++;
        if (sm->rec_out && rc == 0) {
                const struct lbomp__trace_meta m = {
                        .policy = p->name,
                        .topo_name = org->topo_name,
                        .ncores = org->ncores,
                        .wcore = org->wcore,
                        .step = org->rec ? org->rec->step : 0,
                        .error = rc,
                        .decision_s = decision,
                        .messages = st.messages,
                        .rounds = st.rounds,
                };
                char msg[400];
                if (lbomp__trace_write(sm->rec_out, &m, s, sm->dest, msg, sizeof msg) < 0) {
                        fprintf(stderr, "lbomp-sim: --record: %s\n", msg);
                        return -EIO;
                }
        }
        double rss = peak_rss_mb();
        const char *err = rc ? lbomp_strerror(rc) : NULL;
        if (o->json) {
                printf("{\"policy\":\"%s\"", p->name);
                jstr("kind", p->kind == LBOMP__DECENTRAL ? "decentralized" : "centralized");
                jstr("input", org->input);
                printf(",\"lb_step\":%llu", (unsigned long long)s->lb_step);
                jstr("topology", org->topo_name);
                printf(",\"cores\":%u,\"nodes\":%u,\"tasks\":%u,\"links\":%u", P, s->nnodes, T,
                       s->link_off ? s->link_off[T] / 2 : 0);
                if (org->load)
                        jstr("load", org->load);
                if (org->links)
                        jstr("link_pattern", org->links);
                jnum("imbalance_before", b->imbalance);
                jnum("imbalance_after", imb_after);
                jnum("efficiency", eff);
                printf(",\"migrations\":%llu,\"migrated_bytes\":%llu",
                       (unsigned long long)migrations, (unsigned long long)mig_bytes);
                jnum("locality_cost_before", b->locality);
                jnum("locality_cost_after", loc_after);
                printf(",\"messages\":%llu,\"rounds\":%u", (unsigned long long)st.messages,
                       st.rounds);
                if (st.msg_kind_names) {
                        printf(",\"messages_by_kind\":{");
                        for (int k = 0; k < 8 && st.msg_kind_names[k]; k++)
                                printf("%s\"%s\":%llu", k ? "," : "", st.msg_kind_names[k],
                                       (unsigned long long)st.msg_by_kind[k]);
                        printf("}");
                }
                if (p->kind == LBOMP__DECENTRAL)
                        printf(",\"packs\":%u,\"rejected\":%u,\"forced\":%u,\"withdrawn\":%u",
                               st.packs, st.rejected, st.forced, st.withdrawn);
                if (st.attempts) {
                        printf(",\"attempts\":%u", st.attempts);
                        jnum("factor", st.factor);
                }
                printf(",\"plan_rejected\":%s", rejected ? "true" : "false");
                if (speeds) {
                        jnum("step_s", bl.step_s);
                        jnum("blind_step_s", bl.blind_step_s);
                        jnum("ideal_s", bl.ideal_s);
                        jnum("bound_s", bl.bound_s);
                        jnum("step_if_equal_s", bl.step_if_equal_s);
                        jnum("step_over_ideal", bl.step_s / bl.ideal_s);
                        jnum("blind_over_ideal", bl.blind_step_s / bl.ideal_s);
                }
                if (rejected)
                        jnum("imbalance_planned", sm->plan.lambda_planned);
                jnum("decision_s", decision);
                jnum("decision_span_s", span);
                jnum("decision_min_s", decision_min);
                jnum("decision_span_min_s", span_min);
                if (p->kind == LBOMP__DECENTRAL) {
                        jnum("round_us", o->round_us);
                        jnum("span_compute_s", st.span_s);
                }
                printf(",\"repeat\":%ld", nrun);
                jnum("setup_s", setup_s);
                jnum("peak_rss_mb", rss);
                printf(",\"seed\":%llu", (unsigned long long)s->seed);
                if (org->rec) {
                        jstr("recorded_policy", org->rec->policy);
                        printf(",\"record\":%llu,\"step\":%llu",
                               (unsigned long long)org->rec->index,
                               (unsigned long long)org->rec->step);
                        if (plan_diff >= 0)
                                printf(",\"plan_diff\":%ld", plan_diff);
                        if (same_policy)
                                printf(",\"plan_equal\":%s", plan_equal ? "true" : "false");
                }
                if (err)
                        jstr("error", err);
                else
                        printf(",\"error\":null");
                printf("}\n");
        } else {
                if (!sm->text_header++)
                        printf("%-12s %6s %5s %9s %8s %8s %6s %9s %12s %12s %9s %6s %11s %11s "
                               "%8s%s\n",
                               "policy", "lbstep", "cores", "tasks", "λ-before", "λ-after", "eff",
                               "moves", "locality-0", "locality-1", "messages", "rounds",
                               "decision-s", "span-s", "rss-MB", org->rec ? "  plan" : "");
                printf("%-12s %6llu %5u %9u %8.4f %8.4f %6.3f %9llu %12.4g %12.4g %9llu %6u "
                       "%11.4g %11.4g %8.1f",
                       p->name, (unsigned long long)s->lb_step, P, T, b->imbalance, imb_after, eff,
                       (unsigned long long)migrations, b->locality, loc_after,
                       (unsigned long long)st.messages, st.rounds, decision, span, rss);
                if (org->rec && plan_diff >= 0)
                        printf("  %s %ld differ", same_policy ? "same policy," : "", plan_diff);
                if (rejected)
                        printf("  plan rejected: predicted λ %.4f", sm->plan.lambda_planned);
                if (speeds)
                        printf("  speeds: step %.4g s (%.3f x ideal), speed-blind plan %.4g s "
                               "(%.3f x ideal), ideal %.4g s, this plan if speeds ignored %.4g s",
                               bl.step_s, bl.step_s / bl.ideal_s, bl.blind_step_s,
                               bl.blind_step_s / bl.ideal_s, bl.ideal_s, bl.step_if_equal_s);
                if (err)
                        printf("  error: %s", err);
                printf("\n");
        }
        fflush(stdout);
        return 0;
}

static int run_all(struct sim *sm, const struct lbomp__snap *s, const struct origin *org,
                   double setup_s)
{
        struct before b;
        if (measure_before(s, &b) < 0)
                return -ENOMEM;
        int rc = 0;
        for (int i = 0; i < sm->o->npol && rc == 0; i++)
                rc = run_policy(sm, sm->o->pol[i], s, &b, org, setup_s);
        free(b.load);
        return rc;
}

/*
 * --steps N on a synthetic workload: each policy runs N LB steps on the same costs, each from the
 * mapping the previous one applied (after the never-worse check), with the runtime's seed of
 * that LB step; then the first mapping is restored for the next policy.
 */
static int run_steps(struct sim *sm, struct world *w, const struct origin *org, double setup_s)
{
        const struct opts *o = sm->o;
        uint32_t T = w->s->ntasks;
        struct lbomp__snap_arrays a = lbomp__snap_arrays(w->sb);
        uint32_t *first = malloc(((size_t)T + 1) * sizeof *first);
        if (!first)
                return -ENOMEM;
        memcpy(first, a.worker, (size_t)T * sizeof *first);
        int rc = 0;
        for (int i = 0; i < o->npol && rc == 0; i++) {
                for (long k = 0; k < o->steps && rc == 0; k++) {
                        struct lbomp__snap s = *w->s;
                        s.seed = lbomp__snap_seed(o->seed, (uint64_t)k);
                        s.lb_step = (uint64_t)k;
                        struct before b;
                        if (measure_before(&s, &b) < 0)
                                rc = -ENOMEM;
                        else
                                rc = run_policy(sm, o->pol[i], &s, &b, org, setup_s);
                        free(b.load);
                        if (rc == 0 && k + 1 < o->steps) {
                                memcpy(a.worker, sm->dest, (size_t)T * sizeof *a.worker);
                                lbomp__snap_rebuild(w->sb);
                        }
                }
                memcpy(a.worker, first, (size_t)T * sizeof *a.worker);
                lbomp__snap_rebuild(w->sb);
        }
        free(first);
        return rc;
}

static int replay(struct sim *sm)
{
        const struct opts *o = sm->o;
        struct lbomp__trace_reader *r;
        char err[600];
        if (lbomp__trace_open(&r, o->trace, err, sizeof err) < 0) {
                fprintf(stderr, "lbomp-sim: %s\n", err);
                return 2;
        }
        struct lbomp__trace_step st;
        int rc, n = 0;
        double t0 = now_s();
        while ((rc = lbomp__trace_next(r, &st, err, sizeof err)) == 1) {
                double setup = now_s() - t0;
                if (o->seed_set) /* the runtime's rule: LBOMP_SEED mixed with the LB step */
                        st.snap.seed = lbomp__snap_seed(o->seed, st.snap.lb_step);
                struct origin org = {.input = "trace",
                                     .topo_name = st.topo_name,
                                     .ncores = st.ncores,
                                     .wcore = st.wcore,
                                     .rec = &st};
                if (o->auto_data) {
                        if (sim_auto_trace_row(o, &st.snap, o->trace) < 0) {
                                fprintf(stderr, "lbomp-sim: out of memory\n");
                                lbomp__trace_free(r);
                                return 1;
                        }
                } else if (run_all(sm, &st.snap, &org, setup) < 0) {
                        fprintf(stderr, "lbomp-sim: out of memory\n");
                        lbomp__trace_free(r);
                        return 1;
                }
                n++;
                t0 = now_s();
        }
        lbomp__trace_free(r);
        if (rc < 0) {
                fprintf(stderr, "lbomp-sim: %s\n", err);
                return 2;
        }
        if (n == 0) {
                fprintf(stderr, "lbomp-sim: %s: the trace holds no LB step\n", o->trace);
                return o->verify ? 1 : 0;
        }
        if (o->verify) {
                if (sm->mismatches) {
                        fprintf(stderr,
                                "lbomp-sim: --verify: %d of %d replayed plans differ from the "
                                "recorded ones\n",
                                sm->mismatches, sm->compared);
                        return 1;
                }
                if (!sm->compared) {
                        fprintf(stderr, "lbomp-sim: --verify: no --policy is the policy the trace "
                                        "recorded: nothing was compared\n");
                        return 1;
                }
        }
        return 0;
}

int main(int argc, char **argv)
{
        /* Thousands of virtual workers share this one thread and its heap: with transparent huge
         * pages, the worker whose allocation first touches a new 2 MiB page pays for zeroing it
         * (about 200 us, charged to one round of the decision span), a cost no real worker pays
         * in its own small allocations. Small pages keep the span the policy's own. */
        prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
        struct opts o;
        if (sim_parse(&o, argc, argv) < 0)
                return 2;
        if (o.ranks)
                return sim_ranks(&o);
        if (o.evolve_set)
                return sim_evolve(&o);
        struct sim sm = {.o = &o};
        if (o.record) {
                char err[400];
                if (lbomp__trace_create(&sm.rec_out, o.record, err, sizeof err) < 0) {
                        fprintf(stderr, "lbomp-sim: --record: %s\n", err);
                        return 2;
                }
        }
        int ret;
        if (o.trace) {
                ret = replay(&sm);
        } else {
                struct world w;
                double t0 = now_s();
                int rc = sim_build_world(&w, &o);
                if (rc < 0) {
                        if (rc == -ENOMEM)
                                fprintf(stderr, "lbomp-sim: out of memory building %ld tasks\n",
                                        o.tasks);
                        sim_world_free(&w);
                        lbomp__trace_close(sm.rec_out);
                        return 2;
                }
                double setup = now_s() - t0;
                struct origin org = {.input = "synthetic",
                                     .topo_name = w.topo_name,
                                     .load = o.load_name,
                                     .links = o.links_name,
                                     .ncores = w.ncores,
                                     .wcore = w.wcore};
                rc = o.steps > 1 ? run_steps(&sm, &w, &org, setup) : run_all(&sm, w.s, &org, setup);
                sim_world_free(&w);
                ret = rc < 0 ? 1 : 0;
                if (rc == -ENOMEM)
                        fprintf(stderr, "lbomp-sim: out of memory\n");
        }
        if (lbomp__trace_close(sm.rec_out) < 0) {
                fprintf(stderr, "lbomp-sim: --record '%s': closing failed\n", o.record);
                ret = ret ? ret : 1;
        }
        free(sm.dest);
        free(sm.blind);
        free(sm.bload);
        lbomp__plan_free(&sm.plan);
        lbomp__plan_free(&sm.bplan);
        lbomp__dec_destroy(sm.dec);
        if (ret == 0 && sm.failures)
                ret = 1;
        return ret;
}
