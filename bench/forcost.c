/*
 * forcost.c — what LBOMP_FOR costs against `#pragma omp parallel for schedule(static)` on a
 * balanced loop whose body is one multiply-add per index (a stream over an array): per index on
 * 10^6 indices, and per run on 64 indices (where only the fixed cost of a loop shows), with the
 * task form (LBOMP_FOR_EACH_TASK over 32 registered ranges of the same indices) alongside, to tell
 * what the loop layer adds to the step's own cost. The forms run in one process, interleaved in
 * blocks of runs, with the default configuration (no LBOMP_* variable should be set); the medians
 * of the blocks are printed with their differences.
 * Usage: forcost [THREADS [BLOCKS]]   (default 2 threads, 15 blocks)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbomp.h"

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof *v, cmp);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
        int threads = argc > 1 ? atoi(argv[1]) : 2, blocks = argc > 2 ? atoi(argv[2]) : 15;
        if (threads < 1 || blocks < 1) {
                fprintf(stderr, "usage: forcost [THREADS [BLOCKS]]\n");
                return 2;
        }
        omp_set_num_threads(threads);
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0) {
                fprintf(stderr, "forcost: %s\n", lbomp_last_error());
                return 2;
        }
        const long sizes[2] = {1000000, 64};
        const int runs[2] = {20, 2000}; /* runs per block */
        double *x = calloc((size_t)sizes[0], sizeof *x);
        double *t_omp = malloc((size_t)blocks * sizeof(double)),
               *t_for = malloc((size_t)blocks * sizeof(double)),
               *t_each = malloc((size_t)blocks * sizeof(double));
        if (!x || !t_omp || !t_for || !t_each)
                return 2;
        /* The task form: 32 registered ranges over the 64 indices of the tiny loop, in a runtime of
         * their own. */
        enum { NT = 32 };
        static long range[NT][2];
        lbomp_t *tasks;
        if (lbomp_create(&tasks) != 0)
                return 2;
        for (int t = 0; t < NT; t++) {
                range[t][0] = t * sizes[1] / NT;
                range[t][1] = (t + 1) * sizes[1] / NT;
                if (lbomp_task_add(tasks, range[t], sizeof range[t], LBOMP_NODE_ANY, NULL) != 0)
                        return 2;
        }
        printf("forcost: %d threads, %d interleaved blocks, medians; load %s", threads, blocks, "");
        FILE *la = fopen("/proc/loadavg", "r");
        char load[64] = "?\n";
        if (la) {
                if (!fgets(load, sizeof load, la))
                        load[0] = 0;
                fclose(la);
        }
        printf("%s", load);
        for (int k = 0; k < 2; k++) {
                long n = sizes[k];
                const char *name = k == 0 ? "stream" : "tiny";
                for (int b = 0; b < blocks; b++) {
                        double t0 = omp_get_wtime();
                        for (int r = 0; r < runs[k]; r++) {
#pragma omp parallel for schedule(static)
                                for (long i = 0; i < n; i++)
                                        x[i] = x[i] * 0.999 + 1.0;
                        }
                        double t1 = omp_get_wtime();
                        for (int r = 0; r < runs[k]; r++) {
#pragma omp parallel
                                LBOMP_FOR (lb, name, i, 0, n)
                                        x[i] = x[i] * 0.999 + 1.0;
                        }
                        double t2 = omp_get_wtime();
                        for (int r = 0; k == 1 && r < runs[k]; r++) {
#pragma omp parallel
                                LBOMP_FOR_EACH_TASK (tasks, long *, rg)
                                        for (long i = rg[0]; i < rg[1]; i++)
                                                x[i] = x[i] * 0.999 + 1.0;
                        }
                        double t3 = omp_get_wtime();
                        t_omp[b] = (t1 - t0) / runs[k];
                        t_for[b] = (t2 - t1) / runs[k];
                        t_each[b] = (t3 - t2) / runs[k];
                }
                double mo = median(t_omp, blocks), mf = median(t_for, blocks);
                lbomp_loop_stats_t st = {0};
                lbomp_loop_get(lb, (size_t)k, &st, sizeof st);
                printf("%-6s %8ld indices: omp for static %9.2f us per run, LBOMP_FOR %9.2f us "
                       "(%u chunks): ratio %.3f, difference %+.2f us per run = %+.3f ns per "
                       "index\n",
                       name, n, mo * 1e6, mf * 1e6, st.chunks, mf / mo, (mf - mo) * 1e6,
                       (mf - mo) * 1e9 / (double)n);
                if (k == 1) {
                        double me = median(t_each, blocks);
                        printf("       task form, %d tasks: %9.2f us per run: LBOMP_FOR adds %+.2f "
                               "us "
                               "per run to it\n",
                               NT, me * 1e6, (mf - me) * 1e6);
                }
        }
        double s = 0;
        for (long i = 0; i < sizes[0]; i++)
                s += x[i];
        printf("checksum %.6g\n", s);
        lbomp_destroy(lb);
        lbomp_destroy(tasks);
        free(t_each);
        free(x);
        free(t_omp);
        free(t_for);
        return 0;
}
