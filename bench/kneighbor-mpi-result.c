/*
 * kneighbor-mpi-result.c — kneighbor-mpi's results: kneighbor's checksum, summed on rank 0 in task
 * order over the data gathered from every rank (so it does not depend on where tasks ran), the
 * exactly-once check across ranks, and the report: kneighbor's JSON keys with the ranks' λ, plus
 * the MPI level's own keys.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kneighbor-mpi.h"

/* On rank 0: kneighbor's checksum over every task's data, in task order; also checks that every
 * task is on exactly one rank and ran every step. */
int kmpi_checksum(struct app *a, long steps, double *sum, int *once)
{
        int cnt = (int)a->nlocal, *cnts = NULL, *dsp = NULL, *dcnt = NULL, *ddsp = NULL;
        long *meta = malloc((2 * a->nlocal + 1) * sizeof *meta), *all_meta = NULL;
        double *mine = malloc((a->nlocal * a->nd + 1) * sizeof *mine), *all = NULL;
        if (!meta || !mine)
                return -ENOMEM;
        for (size_t q = 0; q < a->nlocal; q++) {
                meta[2 * q] = a->local[q]->i;
                meta[2 * q + 1] = a->local[q]->runs;
                memcpy(mine + q * a->nd, a->local[q]->data, a->nd * sizeof(double));
        }
        if (a->rank == 0) {
                cnts = malloc((size_t)a->size * sizeof *cnts);
                dsp = malloc((size_t)a->size * sizeof *dsp);
                dcnt = malloc((size_t)a->size * sizeof *dcnt);
                ddsp = malloc((size_t)a->size * sizeof *ddsp);
        }
        MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        long total = 0;
        if (a->rank == 0) {
                for (int r = 0; r < a->size; r++) {
                        dsp[r] = (int)(2 * total);
                        ddsp[r] = (int)(total * (long)a->nd);
                        total += cnts[r];
                        dcnt[r] = cnts[r] * (int)a->nd;
                        cnts[r] *= 2;
                }
                all_meta = malloc((2 * (size_t)total + 1) * sizeof *all_meta);
                all = malloc(((size_t)total * a->nd + 1) * sizeof *all);
        }
        MPI_Gatherv(meta, 2 * cnt, MPI_LONG, all_meta, cnts, dsp, MPI_LONG, 0, MPI_COMM_WORLD);
        MPI_Gatherv(mine, cnt * (int)a->nd, MPI_DOUBLE, all, dcnt, ddsp, MPI_DOUBLE, 0,
                    MPI_COMM_WORLD);
        int rc = 0;
        if (a->rank == 0) {
                const double **row = calloc((size_t)a->n, sizeof *row);
                if (!row)
                        return -ENOMEM;
                *once = total == a->n;
                for (long q = 0; q < total; q++) {
                        long i = all_meta[2 * q], runs = all_meta[2 * q + 1];
                        if (i < 0 || i >= a->n || row[i] || runs != steps) {
                                if (*once)
                                        fprintf(stderr,
                                                "kneighbor-mpi: task %ld %s (ran %ld times in %ld "
                                                "steps): exactly-once violated\n",
                                                i,
                                                i >= 0 && i < a->n && row[i] ? "is on two ranks"
                                                                             : "is wrong",
                                                runs, steps);
                                *once = 0;
                        }
                        if (i >= 0 && i < a->n)
                                row[i] = all + q * (long)a->nd;
                }
                double s = 0;
                for (long i = 0; i < a->n; i++)
                        if (!row[i])
                                *once = 0;
                for (long i = 0; i < a->n && *once; i++)
                        for (size_t d = 0; d < a->nd; d++)
                                s += row[i][d] * (double)((d % 7) + 1);
                *sum = *once ? s : NAN;
                free(row);
        }
        free(meta);
        free(mine);
        free(all_meta);
        free(all);
        free(cnts);
        free(dsp);
        free(dcnt);
        free(ddsp);
        return rc;
}

static void num(FILE *out, const char *key, double v)
{
        if (isfinite(v))
                fprintf(out, ",\"%s\":%.6g", key, v);
        else
                fprintf(out, ",\"%s\":null", key);
}

int kmpi_fail(const struct app *a, const char *what, int rc)
{
        fprintf(stderr, "kneighbor-mpi: rank %d: %s: %s\n", a->rank, what,
                *lbomp_mpi_last_error() ? lbomp_mpi_last_error()
                : *lbomp_last_error()   ? lbomp_last_error()
                                        : lbomp_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
}

/* Everything rank 0 prints: the contract of kneighbor plus the MPI keys. */
void kmpi_report(struct app *a, double total_s, double step_med, double sum, int once)
{
        struct kn_opts *o = &a->o.kn;
        /* The runtime of every rank: its intra-rank figures, summed (migrations, messages,
         * stolen, move cost) or at their worst (λ of the threads, decision time). */
        double intra[6] = {0}, worst[3] = {0};
        lbomp_totals_t t; /* the whole run, whatever LBOMP_HISTORY keeps */
        lbomp_totals_get(a->lb, &t, sizeof t);
        intra[0] = (double)t.migrations;
        intra[1] = (double)t.messages;
        intra[2] = t.move_cost;
        worst[0] = t.decision_s;
        intra[3] = (double)t.stolen;
        if (t.windows) {
                worst[1] = t.imbalance_last;
                worst[2] = t.imbalance_first;
        }
        intra[4] = (double)t.lb_steps;
        intra[5] = (double)a->ghost_msgs;
        double ghost_bytes = (double)a->ghost_bytes;
        MPI_Allreduce(MPI_IN_PLACE, intra, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, worst, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &ghost_bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        uint64_t msgs = 0, bytes = 0, colls = 0;
        lbomp_mpi_counters(a->m, &msgs, &bytes, &colls);
        uint64_t mpi[2] = {msgs, bytes};
        MPI_Allreduce(MPI_IN_PLACE, mpi, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        /* The rank level: one record per LB step, the same on every rank but for reduce_s,
         * whose minimum over ranks is what the reduction costs (the last rank to arrive waits for
         * nobody). */
        size_t nr = lbomp_mpi_lb_count(a->m);
        double *red = calloc(nr ? nr : 1, sizeof *red), *bal = calloc(nr ? nr : 1, sizeof *bal);
        if (!red || !bal) {
                kmpi_fail(a, "out of memory", -ENOMEM);
                return;
        }
        for (size_t i = 0; i < nr; i++) {
                lbomp_mpi_lb_stats_t r;
                lbomp_mpi_lb_get(a->m, i, &r, sizeof r);
                red[i] = r.reduce_s;
        }
        MPI_Allreduce(MPI_IN_PLACE, red, (int)nr, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        if (a->rank != 0) {
                free(red);
                free(bal);
                return;
        }
        double imb_first = NAN, imb_last = NAN, rank_dec = 0, rank_s = 0, pred = NAN;
        unsigned long long rank_mig = 0, rank_msgs = 0, balanced = 0, pack_fail = 0,
                           unpack_fail = 0;
        int first_err = 0;
        for (size_t i = 0; i < nr; i++) {
                lbomp_mpi_lb_stats_t r;
                lbomp_mpi_lb_get(a->m, i, &r, sizeof r);
                if (i == 0)
                        imb_first = r.imbalance;
                imb_last = r.imbalance;
                rank_mig += r.migrations;
                rank_msgs += r.messages;
                rank_dec += r.decision_s;
                rank_s += red[i] + r.total_s;
                if (r.balanced) {
                        bal[balanced++] = r.total_s;
                        pred = r.imbalance_after;
                }
                pack_fail += r.pack_failures;
                unpack_fail += r.unpack_failures;
                if (!first_err)
                        first_err = r.error;
        }
        double check_med = nr ? bench_median(red, (long)nr) : NAN;
        double bal_med = balanced ? bench_median(bal, (long)balanced) : NAN;
        free(red);
        free(bal);
        int nodes = 0, cores = 0;
        const char *topo = lbomp_topology(a->lb, &nodes, &cores);
        if (!o->c.json) {
                lbomp_mpi_report(a->m, stdout);
                printf("kneighbor-mpi: %d ranks, %ld tasks, %ld iters, load %s: total %.3f s, "
                       "median step %.3g s, ranks λ %.3f -> %.3f, %llu tasks changed rank, "
                       "checksum %.17g\n",
                       a->size, a->n, o->c.iters, o->load, total_s, step_med, imb_first, imb_last,
                       rank_mig, sum);
                return;
        }
        printf("{\"bench\":\"kneighbor-mpi\",\"policy\":\"%s\",\"baseline\":null",
               lbomp_get_policy(a->lb));
        printf(",\"threads\":%d,\"tasks\":%ld,\"k\":%ld,\"iters\":%ld,\"period\":%d,\"load\":\"%"
               "s\"",
               lbomp_get_workers(a->lb), a->n, a->k, o->c.iters, lbomp_get_period(a->lb), o->load);
        num(stdout, "total_s", total_s);
        num(stdout, "step_s_median", step_med);
        printf(",\"lb_steps\":%zu", nr);
        num(stdout, "imbalance_first", imb_first);
        num(stdout, "imbalance_last", imb_last);
        num(stdout, "imbalance_predicted", pred);
        printf(",\"migrations\":%.0f", intra[0]);
        num(stdout, "decision_s", worst[0] + rank_dec);
        printf(",\"messages\":%.0f", intra[1] + (double)rank_msgs);
        printf(",\"topology\":\"%s\",\"nodes\":%d,\"cores\":%d", topo ? topo : "", nodes, cores);
        printf(",\"locality_cost_first\":null,\"locality_cost_last\":null");
        num(stdout, "move_cost", intra[2]);
        printf(",\"stolen\":%.0f,\"exactly_once\":%s", intra[3], once ? "true" : "false");
        printf(",\"energy_j\":null,\"energy_note\":\"not summed over ranks\"");
        printf(",\"msg_bytes\":%ld,\"work_us\":%ld", o->msg_bytes, o->work_us);
        if (strcmp(o->load, "drift") == 0)
                printf(",\"drift_every\":%ld", o->drift_every);
        printf(",\"ranks\":%d,\"rank_policy\":\"%s\",\"rank_period\":", a->size,
               lbomp_mpi_get_policy(a->m));
        if (lbomp_mpi_get_period(a->m))
                printf("%d", lbomp_mpi_get_period(a->m));
        else
                printf("\"auto\"");
        printf(",\"rank_migrations\":%llu,\"rank_balance_steps\":%llu", rank_mig, balanced);
        printf(",\"mpi_messages\":%llu,\"mpi_bytes\":%llu,\"rank_messages\":%llu",
               (unsigned long long)mpi[0], (unsigned long long)mpi[1], rank_msgs);
        printf(",\"mpi_collectives\":%llu", (unsigned long long)colls);
        num(stdout, "rank_lb_s", rank_s);
        num(stdout, "rank_check_s_median", check_med);
        num(stdout, "rank_balance_s_median", bal_med);
        num(stdout, "rank_decision_s", rank_dec);
        printf(",\"ghost_messages\":%.0f,\"ghost_bytes\":%.0f", intra[5], ghost_bytes);
        num(stdout, "imbalance_threads_first", worst[2]);
        num(stdout, "imbalance_threads_last", worst[1]);
        printf(",\"intra_lb_steps\":%.0f", intra[4]);
        printf(",\"pack_failures\":%llu,\"unpack_failures\":%llu,\"rank_error\":", pack_fail,
               unpack_fail);
        if (first_err)
                printf("\"%s\"", lbomp_err_name(first_err));
        else
                printf("null");
        printf(",\"checksum\":%.17g}\n", sum);
        fflush(stdout);
}
