/*
 * autodecide.c — what one auto decision costs (policy/auto.h): the features of a snapshot and the
 * model's answer, on one core. The snapshot is --tasks tasks (default 10,000) on --workers workers
 * (default 64), ring links, 4 KiB per task, costs lbtest-like; the worker loads are given, as the
 * LB step has them already (its record's λ-before), and, separately, computed (one more pass over
 * the tasks). Each variant runs --reps times in blocks of 100 decisions, interleaved; the median
 * per decision is printed, for the committed model (auto_table.c) and for a kNN table of --rows
 * random rows (k = 3), so that both model kinds are measured whichever the table holds.
 * Usage: autodecide [--tasks N] [--workers P] [--rows R] [--reps K] [--json]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "policy/auto.h"
#include "snapshot.h"

static volatile int sink;

/* Median seconds per decision over reps blocks of 100. */
static double measure(const struct lbomp__snap *s, struct lbomp__auto_hist *h,
                      const struct lbomp__auto_model *m, double *scratch, double *t, long reps)
{
        float f[LBOMP__AUTO_NFEAT];
        for (long r = 0; r < reps; r++) {
                double t0 = bench_now_s();
                for (int i = 0; i < 100; i++) {
                        lbomp__auto_features(s, h, scratch, f);
                        sink += lbomp__auto_classify(m, f);
                }
                t[r] = (bench_now_s() - t0) / 100;
        }
        return bench_median(t, reps);
}

int main(int argc, char **argv)
{
        long T = 10000, P = 64, rows = 1000, reps = 51;
        int json = 0;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0)
                        json = 1;
                else if (i + 1 < argc && strcmp(argv[i], "--tasks") == 0)
                        T = atol(argv[++i]);
                else if (i + 1 < argc && strcmp(argv[i], "--workers") == 0)
                        P = atol(argv[++i]);
                else if (i + 1 < argc && strcmp(argv[i], "--rows") == 0)
                        rows = atol(argv[++i]);
                else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0)
                        reps = atol(argv[++i]);
                else {
                        fprintf(stderr, "usage: autodecide [--tasks N] [--workers P] [--rows R] "
                                        "[--reps K] [--json]\n");
                        return 2;
                }
        }
        if (T < 1 || P < 1 || rows < 3 || reps < 1 || T > 100000000 || P > 65536) {
                fprintf(stderr, "autodecide: sizes out of range\n");
                return 2;
        }
        const struct lbomp__auto_model *table = lbomp__auto_model();
        if (!table) {
                fprintf(stderr, "autodecide: the committed table does not fit this code\n");
                return 1;
        }
        struct lbomp__snapbuf *sb = lbomp__snapbuf_create();
        double dist = 1.0;
        if (!sb || lbomp__snap_begin(sb, (uint32_t)P, 1, &dist, (uint32_t)T, (uint32_t)T,
                                     (size_t)T * 2) < 0) {
                fprintf(stderr, "autodecide: out of memory\n");
                return 1;
        }
        struct lbomp__rng rng;
        lbomp__rng_seed(&rng, 1);
        for (long w = 0; w < P; w++)
                lbomp__snap_worker(sb, (uint32_t)w, 0, 0);
        for (long t = 0; t < T; t++) {
                double u = lbomp__rng_unit(&rng);
                lbomp__snap_task(sb, (uint32_t)(t * P / T), (uint32_t)t,
                                 (30 + 8970 * u * u * u * u) * 1e-6, 4096, 0);
        }
        for (long t = 0; t < T; t++) {
                lbomp__snap_link(sb, (uint32_t)t, (uint32_t)((t + 1) % T), 1024);
                lbomp__snap_link(sb, (uint32_t)t, (uint32_t)((t + 2) % T), 1024);
        }
        struct lbomp__params params = lbomp__params_default();
        const struct lbomp__snap *s = lbomp__snap_end(sb, 1, 0, &params);
        double *load = malloc((size_t)P * sizeof *load),
               *scratch = malloc((size_t)P * sizeof *load);
        double *t = malloc((size_t)reps * sizeof *t);
        float *krows = malloc((size_t)rows * LBOMP__AUTO_NFEAT * sizeof *krows);
        uint8_t *klabel = malloc((size_t)rows);
        if (!load || !scratch || !t || !krows || !klabel)
                return 1;
        lbomp__loads(s, s->worker, load);
        for (long i = 0; i < rows * LBOMP__AUTO_NFEAT; i++)
                krows[i] = (float)(2 * lbomp__rng_unit(&rng) - 1);
        for (long i = 0; i < rows; i++)
                klabel[i] = (uint8_t)lbomp__rng_below(&rng, LBOMP__AUTO_NCAND);
        struct lbomp__auto_model knn = {.version = LBOMP__AUTO_TABLE_VERSION,
                                        .kind = 0,
                                        .k = 3,
                                        .nrows = (uint32_t)rows,
                                        .mean = table->mean,
                                        .scale = table->scale,
                                        .rows = krows,
                                        .label = klabel};
        struct lbomp__auto_hist given = {.step_var = 1.1, .drift = 0.01, .load = load};
        struct lbomp__auto_hist own = {.step_var = 1.1, .drift = 0.01};
        /* interleaved: each variant's blocks alternate with the others' */
        double *tv[4];
        for (int v = 0; v < 4; v++)
                tv[v] = malloc((size_t)reps * sizeof *tv[v]);
        for (long r = 0; r < reps; r++) {
                double one;
                measure(s, &given, table, scratch, &one, 1);
                tv[0][r] = one;
                measure(s, &own, table, scratch, &one, 1);
                tv[1][r] = one;
                measure(s, &given, &knn, scratch, &one, 1);
                tv[2][r] = one;
                measure(s, &own, &knn, scratch, &one, 1);
                tv[3][r] = one;
        }
        double med[4];
        for (int v = 0; v < 4; v++)
                med[v] = bench_median(tv[v], reps);
        const char *kind = table->kind ? "tree" : "knn";
        if (json)
                printf("{\"tasks\":%ld,\"workers\":%ld,\"table\":\"%s\",\"table_given_us\":%.4g,"
                       "\"table_own_loads_us\":%.4g,\"knn_rows\":%ld,\"knn_given_us\":%.4g,"
                       "\"knn_own_loads_us\":%.4g}\n",
                       T, P, kind, med[0] * 1e6, med[1] * 1e6, rows, med[2] * 1e6, med[3] * 1e6);
        else
                printf("auto decision, %ld tasks on %ld workers (median of %ld blocks of 100):\n"
                       "  committed table (%s): %.3g us with the LB step's loads, %.3g us "
                       "computing "
                       "them\n"
                       "  kNN k=3 over %ld rows:   %.3g us with the LB step's loads, %.3g us "
                       "computing them\n",
                       T, P, reps, kind, med[0] * 1e6, med[1] * 1e6, rows, med[2] * 1e6,
                       med[3] * 1e6);
        for (int v = 0; v < 4; v++)
                free(tv[v]);
        free(load);
        free(scratch);
        free(t);
        free(krows);
        free(klabel);
        lbomp__snapbuf_destroy(sb);
        return sink == -1;
}
