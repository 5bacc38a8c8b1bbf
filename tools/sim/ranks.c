/*
 * ranks.c — lbomp-sim --ranks: the two levels of liblbomp-mpi replayed at any scale. The workers
 * of the synthetic snapshot are MPI ranks of --rank-threads threads each; a rank's load is the
 * cost of its tasks divided by its threads, as liblbomp-mpi measures it. Each --policy runs as the
 * rank level (the same code: centralized on one thread, as rank 0 would run it; decentralized on
 * virtual ranks, whose messages and rounds are counted), then every rank runs --inner on its own
 * threads, as each runtime does at its LB step, with the tasks that arrived placed in blocks as
 * the runtime places new tasks. Reported: the ranks' λ and efficiency, messages (the policy's,
 * and one per task that changes rank), decision time and span, and λ and efficiency over all
 * ranks × threads — also with the inner level alone, which no rank-level policy helps.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"
#include "plan.h"
#include "sim.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

/* What the inner level gives over all ranks × threads. */
struct threads {
        double max, total; /* thread loads, seconds per step */
        double decide_max; /* the slowest rank's inner decision (they run at once) */
        uint64_t moves;    /* tasks that change thread */
        int err;
};

struct inner {
        const struct opts *o;
        const struct lbomp__snap *s; /* the rank level's snapshot */
        const double *cost;          /* [ntasks] seconds per step of one thread */
        uint32_t R, T;
        struct lbomp__snapbuf *sb;
        uint32_t *start, *off, *list; /* tasks by rank: list[off[r] .. off[r+1]) */
        uint32_t *dest;
        double *load;
        size_t dest_cap;
        double dist;
};

/* Each rank's runtime, after the rank level: its tasks over its T threads. Tasks that stayed keep
 * their thread of the block placement; the ones that arrived are placed in blocks (as the runtime
 * places new tasks); then the inner policy runs. */
static int run_inner(struct inner *in, const uint32_t *rank_of, struct threads *out)
{
        const struct lbomp__snap *s = in->s;
        uint32_t R = in->R, T = in->T, N = s->ntasks;
        memset(out, 0, sizeof *out);
        memset(in->off, 0, ((size_t)R + 1) * sizeof *in->off);
        for (uint32_t t = 0; t < N; t++)
                in->off[rank_of[t] + 1]++;
        for (uint32_t r = 0; r < R; r++)
                in->off[r + 1] += in->off[r];
        memcpy(in->start, in->off, (size_t)R * sizeof *in->start);
        for (uint32_t t = 0; t < N; t++)
                in->list[in->start[rank_of[t]]++] = t;
        struct lbomp__params prm = lbomp__params_default();
        const struct lbomp__policy *p = in->o->inner;
        for (uint32_t r = 0; r < R; r++) {
                uint32_t lo = in->off[r], n = in->off[r + 1] - lo, arrived = 0;
                uint32_t home_n = s->wtask_off[r + 1] - s->wtask_off[r];
                size_t nlinks = 0;
                for (uint32_t i = 0; i < n; i++) {
                        uint32_t t = in->list[lo + i];
                        arrived += s->worker[t] != r;
                        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++)
                                nlinks += s->link_dst[k] > t && rank_of[s->link_dst[k]] == r;
                }
                if (lbomp__snap_begin(in->sb, T, 1, &in->dist, n, N, nlinks) < 0)
                        return -ENOMEM;
                uint32_t k_arr = 0;
                for (uint32_t i = 0; i < n; i++) {
                        uint32_t t = in->list[lo + i], w;
                        if (s->worker[t] == r) /* its place in the block placement of rank r */
                                w = (uint32_t)((uint64_t)(t - s->wtask[s->wtask_off[r]]) * T /
                                               (home_n ? home_n : 1));
                        else
                                w = (uint32_t)((uint64_t)k_arr++ * T / arrived);
                        lbomp__snap_task(in->sb, w < T ? w : T - 1, t, in->cost[t], s->bytes[t],
                                         -1);
                }
                for (uint32_t i = 0; i < n; i++) {
                        uint32_t t = in->list[lo + i];
                        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++)
                                if (s->link_dst[k] > t && rank_of[s->link_dst[k]] == r)
                                        lbomp__snap_link(in->sb, t, s->link_dst[k],
                                                         s->link_bytes[k]);
                }
                const struct lbomp__snap *rs =
                        lbomp__snap_end(in->sb, lbomp__snap_seed(in->o->seed ^ r, 0), 0, &prm);
                if ((size_t)n + 1 > in->dest_cap) {
                        uint32_t *d = realloc(in->dest, ((size_t)n + 1) * sizeof *d);
                        if (!d)
                                return -ENOMEM;
                        in->dest = d;
                        in->dest_cap = (size_t)n + 1;
                }
                struct lbomp__pstats st;
                memset(&st, 0, sizeof st);
                double t0 = now_s();
                int rc = lbomp__policy_run_offline(p, rs, in->dest, &st);
                double dt = now_s() - t0;
                if (rc < 0 && !out->err)
                        out->err = rc;
                out->decide_max = dt > out->decide_max ? dt : out->decide_max;
                lbomp__loads(rs, in->dest, in->load);
                for (uint32_t w = 0; w < T; w++) {
                        out->total += in->load[w];
                        out->max = in->load[w] > out->max ? in->load[w] : out->max;
                }
                for (uint32_t i = 0; i < n; i++)
                        out->moves += in->dest[i] != rs->worker[i];
        }
        return 0;
}

static void jnum(const char *key, double v)
{
        if (isfinite(v))
                printf(",\"%s\":%.6g", key, v);
        else
                printf(",\"%s\":null", key);
}

int sim_ranks(const struct opts *o0)
{
        struct opts o = *o0;
        o.cores = o.ranks;
        struct world w;
        int rc = sim_build_world(&w, &o);
        if (rc < 0) {
                if (rc == -ENOMEM)
                        fprintf(stderr, "lbomp-sim: out of memory building %ld tasks\n", o.tasks);
                sim_world_free(&w);
                return 2;
        }
        const struct lbomp__snap *s = w.s;
        uint32_t R = (uint32_t)o.ranks, T = (uint32_t)o.rank_threads, N = s->ntasks;
        /* The rank level sees a rank's step time: its tasks' costs over its threads. */
        struct lbomp__snap_arrays arr = lbomp__snap_arrays(w.sb);
        double *cost = malloc((N ? N : 1) * sizeof *cost);
        uint32_t *dest = malloc(((size_t)N + 1) * sizeof *dest);
        struct inner in = {.o = &o, .s = s, .R = R, .T = T, .dist = 1.0};
        in.sb = lbomp__snapbuf_create();
        in.start = malloc((size_t)R * sizeof *in.start);
        in.off = malloc(((size_t)R + 1) * sizeof *in.off);
        in.list = malloc((N ? N : 1) * sizeof *in.list);
        in.load = malloc((size_t)T * sizeof *in.load);
        in.cost = cost;
        int ret = 0;
        struct lbomp__plan plan = {0};
        if (!cost || !dest || !in.sb || !in.start || !in.off || !in.list || !in.load) {
                fprintf(stderr, "lbomp-sim: out of memory\n");
                ret = 2;
                goto out;
        }
        double maxtask = 0;
        for (uint32_t t = 0; t < N; t++) {
                cost[t] = arr.cost[t];
                arr.cost[t] /= T;
                maxtask = cost[t] > maxtask ? cost[t] : maxtask;
        }
        if (lbomp__plan_begin(&plan, s, dest) < 0) {
                ret = 2;
                goto out;
        }
        double lstar_rank = plan.avg > maxtask / T ? plan.avg : maxtask / T;
        double thr_avg = 0; /* per thread, over all ranks */
        for (uint32_t t = 0; t < N; t++)
                thr_avg += cost[t];
        thr_avg /= (double)R * T;
        double lstar_thr = thr_avg > maxtask ? thr_avg : maxtask;
        /* The inner level alone: every rank keeps its tasks. */
        struct threads alone;
        if ((rc = run_inner(&in, s->worker, &alone)) < 0) {
                fprintf(stderr, "lbomp-sim: out of memory\n");
                ret = 2;
                goto out;
        }
        size_t nlinks = s->link_off ? s->link_off[N] / 2 : 0;
        for (int pi = 0; pi < o.npol; pi++) {
                const struct lbomp__policy *p = o.pol[pi];
                double times[1000], spans[1000];
                struct lbomp__pstats st;
                rc = 0;
                for (long r = 0; r < o.repeat && rc == 0; r++) {
                        memset(&st, 0, sizeof st);
                        double t0 = now_s();
                        rc = lbomp__policy_run_offline(p, s, dest, &st);
                        times[r] = now_s() - t0;
                        spans[r] = p->kind == LBOMP__DECENTRAL ? st.span_s : times[r];
                }
                long nrun = rc < 0 ? 1 : o.repeat;
                double dmin = times[0], smin = spans[0];
                for (long r = 1; r < nrun; r++) {
                        dmin = times[r] < dmin ? times[r] : dmin;
                        smin = spans[r] < smin ? spans[r] : smin;
                }
                double decision = median(times, nrun), span = median(spans, nrun);
                uint32_t bad;
                if (rc == 0 && lbomp__plan_valid(&plan, &bad) != 0) {
                        fprintf(stderr,
                                "lbomp-sim: policy %s produced an invalid plan: task %u -> "
                                "rank %u\n",
                                p->name, bad, dest[bad]);
                        rc = -EFAULT;
                }
                if (rc < 0) {
                        ret = 1;
                        lbomp__plan_keep(&plan);
                }
                lbomp__plan_evaluate(&plan);
                struct threads two;
                if (run_inner(&in, dest, &two) < 0) {
                        fprintf(stderr, "lbomp-sim: out of memory\n");
                        ret = 2;
                        goto out;
                }
                uint64_t mig = plan.moves.tasks;
                /* What rank 0 gathers for a centralized plan: per task its gid, cost and bytes
                 * (20 bytes), per link its two gids and bytes (16); a decentralized plan gathers
                 * nothing. */
                double gather = p->kind == LBOMP__CENTRAL ? 20.0 * N + 16.0 * (double)nlinks : 0;
                double eff_rank = plan.max_new > 0 ? lstar_rank / plan.max_new : 1.0;
                if (o.json) {
                        printf("{\"mode\":\"ranks\",\"policy\":\"%s\",\"kind\":\"%s\"", p->name,
                               p->kind == LBOMP__DECENTRAL ? "decentralized" : "centralized");
                        printf(",\"ranks\":%u,\"threads_per_rank\":%u,\"threads\":%llu,\"tasks\":%"
                               "u,"
                               "\"links\":%zu,\"load\":\"%s\",\"link_pattern\":\"%s\"",
                               R, T, (unsigned long long)R * T, N, nlinks, o.load_name,
                               o.links_name);
                        jnum("rank_imbalance_before", plan.lambda);
                        jnum("rank_imbalance_after", plan.lambda_new);
                        jnum("rank_efficiency", eff_rank);
                        printf(",\"migrations\":%llu,\"migrated_bytes\":%llu",
                               (unsigned long long)mig, (unsigned long long)plan.moves.bytes);
                        printf(",\"messages\":%llu,\"task_messages\":%llu,\"total_messages\":%llu",
                               (unsigned long long)st.messages, (unsigned long long)mig,
                               (unsigned long long)(st.messages + mig));
                        if (st.msg_kind_names) {
                                printf(",\"messages_by_kind\":{");
                                for (int k = 0; k < LBOMP__MSG_KINDS && st.msg_kind_names[k]; k++)
                                        printf("%s\"%s\":%llu", k ? "," : "", st.msg_kind_names[k],
                                               (unsigned long long)st.msg_by_kind[k]);
                                printf("}");
                        }
                        printf(",\"rounds\":%u,\"collectives\":%u", st.rounds, st.collectives);
                        jnum("gather_bytes", gather);
                        jnum("decision_s", decision);
                        jnum("decision_span_s", span);
                        jnum("decision_min_s", dmin);
                        jnum("decision_span_min_s", smin);
                        printf(",\"repeat\":%ld,\"inner_policy\":\"%s\"", nrun, o.inner->name);
                        jnum("thread_imbalance_inner_only", alone.max / thr_avg);
                        jnum("efficiency_inner_only", lstar_thr / alone.max);
                        jnum("thread_imbalance_after", two.max / thr_avg);
                        jnum("efficiency", lstar_thr / two.max);
                        jnum("inner_decision_max_s", two.decide_max);
                        printf(",\"inner_migrations\":%llu,\"seed\":%llu",
                               (unsigned long long)two.moves, (unsigned long long)o.seed);
                        if (rc < 0)
                                printf(",\"error\":\"%s\"}\n", lbomp_strerror(rc));
                        else
                                printf(",\"error\":null}\n");
                } else {
                        if (pi == 0)
                                printf("%u ranks x %u threads, %u tasks (%s, %s); inner policy %s;"
                                       " with the inner level alone: thread λ %.3f, efficiency "
                                       "%.3f\n"
                                       "%-12s %8s %8s %6s %9s %9s %9s %6s %11s %11s %8s %6s\n",
                                       R, T, N, o.load_name, o.links_name, o.inner->name,
                                       alone.max / thr_avg, lstar_thr / alone.max, "policy",
                                       "λ-ranks", "λ-after", "eff", "moves", "messages",
                                       "task-msgs", "rounds", "decision-s", "span-s", "λ-thr",
                                       "eff-2");
                        printf("%-12s %8.4f %8.4f %6.3f %9llu %9llu %9llu %6u %11.4g %11.4g %8.4f "
                               "%6.3f%s%s\n",
                               p->name, plan.lambda, plan.lambda_new, eff_rank,
                               (unsigned long long)mig, (unsigned long long)st.messages,
                               (unsigned long long)mig, st.rounds, decision, span,
                               two.max / thr_avg, lstar_thr / two.max, rc ? "  error: " : "",
                               rc ? lbomp_strerror(rc) : "");
                }
                fflush(stdout);
        }
out:
        lbomp__plan_free(&plan);
        free(cost);
        free(dest);
        lbomp__snapbuf_destroy(in.sb);
        free(in.start);
        free(in.off);
        free(in.list);
        free(in.load);
        free(in.dest);
        sim_world_free(&w);
        return ret;
}
