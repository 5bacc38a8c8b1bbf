/*
 * pertask.c — what lbomp costs per task: empty tasks (one add each) run through the in-region
 * iterator with policy none, against the same adds in a plain `omp for schedule(static)`, steps
 * interleaved and medians taken. The difference divided by the tasks per thread is the per-task
 * cost of lbomp's path (one counter read, the time store, the next task's loads).
 * Usage: pertask [--tasks N] [--steps S] [--threads T]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        long ntasks = 200000, steps = 41, threads = 2;
        for (int i = 1; i + 1 < argc; i += 2) {
                long v = strtol(argv[i + 1], NULL, 10);
                if (strcmp(argv[i], "--tasks") == 0 && v > 0)
                        ntasks = v;
                else if (strcmp(argv[i], "--steps") == 0 && v > 0)
                        steps = v;
                else if (strcmp(argv[i], "--threads") == 0 && v > 0)
                        threads = v;
                else {
                        fprintf(stderr, "usage: pertask [--tasks N] [--steps S] [--threads T]\n");
                        return 2;
                }
        }
        long *cell = calloc((size_t)ntasks, sizeof *cell);
        lbomp_t *lb;
        if (!cell || lbomp_create(&lb) < 0 || lbomp_set_policy(lb, "none") < 0 ||
            lbomp_set_workers(lb, (int)threads) < 0 || lbomp_set_period(lb, 1000000) < 0) {
                fprintf(stderr, "pertask: setup failed: %s\n", lbomp_last_error());
                return 2;
        }
        for (long i = 0; i < ntasks; i++)
                lbomp_task_add(lb, &cell[i], sizeof cell[i], LBOMP_NODE_ANY, NULL);
        double *t_lb = malloc((size_t)steps * sizeof *t_lb),
               *t_omp = malloc((size_t)steps * sizeof *t_omp);
        for (long s = 0; s < steps; s++) {
                double t0 = now_s();
#pragma omp parallel num_threads(threads)
                LBOMP_FOR_EACH_TASK (lb, long *, c) {
                        (*c)++;
                }
                t_lb[s] = now_s() - t0;
                t0 = now_s();
#pragma omp parallel num_threads(threads)
                {
#pragma omp for schedule(static)
                        for (long i = 0; i < ntasks; i++)
                                cell[i]++;
                }
                t_omp[s] = now_s() - t0;
        }
        for (long i = 0; i < ntasks; i++)
                if (cell[i] != 2 * steps) {
                        fprintf(stderr, "pertask: task %ld ran %ld times, expected %ld\n", i,
                                cell[i], 2 * steps);
                        return 1;
                }
        qsort(t_lb, (size_t)steps, sizeof *t_lb, cmp);
        qsort(t_omp, (size_t)steps, sizeof *t_omp, cmp);
        double per_thread = (double)ntasks / (double)threads;
        double ns = (t_lb[steps / 2] - t_omp[steps / 2]) / per_thread * 1e9;
        printf("pertask: %ld tasks, %ld threads, %ld steps: median step lbomp %.3f ms, omp for "
               "%.3f ms; "
               "lbomp costs %.1f ns per task (%.1f ns per task in all)\n",
               ntasks, threads, steps, t_lb[steps / 2] * 1e3, t_omp[steps / 2] * 1e3, ns,
               t_lb[steps / 2] / per_thread * 1e9);
        lbomp_destroy(lb);
        free(cell);
        free(t_lb);
        free(t_omp);
        return 0;
}
