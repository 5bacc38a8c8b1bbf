/*
 * stepcost.c — what an lbomp step costs beyond the loop it replaces. Empty steps (one empty task
 * per thread, no work) run inside one persistent `#pragma omp parallel` region, in blocks that
 * alternate between three variants: LBOMP_FOR_EACH_TASK, `#pragma omp for` over the same number
 * of iterations (its implied barrier included), and one `#pragma omp barrier` alone. A block is
 * --steps steps; blocks are interleaved --repeats times and the medians compared, so machine
 * drift hits the three alike. The callback form (lbomp_step, one parallel region per step) is
 * measured the same way against `#pragma omp parallel for`.
 *
 * It prints lbomp's extra cost per step against `omp for` and that extra in barriers. The lbomp
 * steps use the runtime as configured (LBOMP_* variables, default policy and period), so LB steps
 * are included at their share (one every LBOMP_PERIOD steps).
 * Usage: stepcost [--threads T] [--steps S] [--repeats R] [--tasks N] [--report]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        ++*(volatile long *)data;
}

int main(int argc, char **argv)
{
        long threads = 2, steps = 200, repeats = 101, ntasks = 0;
        int report = 0;
        for (int i = 1; i < argc; i += 2) {
                if (strcmp(argv[i], "--report") == 0) {
                        report = 1;
                        i--;
                        continue;
                }
                if (i + 1 >= argc) {
                        fprintf(stderr, "stepcost: %s needs a value\n", argv[i]);
                        return 2;
                }
                char *end;
                long v = strtol(argv[i + 1], &end, 10);
                if (*end || v <= 0) {
                        fprintf(stderr, "stepcost: %s needs a positive integer, not '%s'\n",
                                argv[i], argv[i + 1]);
                        return 2;
                }
                if (strcmp(argv[i], "--threads") == 0)
                        threads = v;
                else if (strcmp(argv[i], "--steps") == 0)
                        steps = v;
                else if (strcmp(argv[i], "--repeats") == 0)
                        repeats = v;
                else if (strcmp(argv[i], "--tasks") == 0)
                        ntasks = v;
                else {
                        fprintf(stderr, "usage: stepcost [--report] [--threads T] [--steps S] "
                                        "[--repeats R] [--tasks N]\n");
                        return 2;
                }
        }
        if (ntasks == 0)
                ntasks = threads; /* one empty task per thread */
        long *cell = calloc((size_t)ntasks, sizeof *cell);
        double *t_lb = malloc((size_t)repeats * sizeof *t_lb);
        double *t_for = malloc((size_t)repeats * sizeof *t_for);
        double *t_bar = malloc((size_t)repeats * sizeof *t_bar);
        double *t_step = malloc((size_t)repeats * sizeof *t_step);
        double *t_pfor = malloc((size_t)repeats * sizeof *t_pfor);
        lbomp_t *lb;
        if (!cell || !t_lb || !t_for || !t_bar || !t_step || !t_pfor || lbomp_create(&lb) < 0 ||
            lbomp_set_workers(lb, (int)threads) < 0) {
                fprintf(stderr, "stepcost: setup failed: %s\n", lbomp_last_error());
                return 2;
        }
        for (long i = 0; i < ntasks; i++)
                if (lbomp_task_add(lb, &cell[i], sizeof cell[i], LBOMP_NODE_ANY, NULL) < 0) {
                        fprintf(stderr, "stepcost: lbomp_task_add: %s\n", lbomp_last_error());
                        return 2;
                }
        /* One warm-up step places the tasks (the first step gathers the team). */
        lbomp_step(lb, cb, cell);
        double t0 = 0;
#pragma omp parallel num_threads(threads)
        for (long r = 0; r < repeats; r++) {
#pragma omp barrier
#pragma omp master
                t0 = omp_get_wtime();
                for (long s = 0; s < steps; s++) {
                        LBOMP_FOR_EACH_TASK (lb, long *, c)
                                ++*(volatile long *)c;
                }
#pragma omp barrier
#pragma omp master
                {
                        t_lb[r] = (omp_get_wtime() - t0) / (double)steps;
                        t0 = omp_get_wtime();
                }
                for (long s = 0; s < steps; s++) {
#pragma omp for schedule(static)
                        for (long i = 0; i < ntasks; i++)
                                ++*(volatile long *)&cell[i];
                }
#pragma omp barrier
#pragma omp master
                {
                        t_for[r] = (omp_get_wtime() - t0) / (double)steps;
                        t0 = omp_get_wtime();
                }
                for (long s = 0; s < steps; s++) {
#pragma omp barrier
                }
#pragma omp barrier
#pragma omp master
                t_bar[r] = (omp_get_wtime() - t0) / (double)steps;
        }
        int rc = lbomp_last_step(lb);
        /* The callback form: a parallel region per step, against `omp parallel for`. */
        long csteps = steps / 4 > 0 ? steps / 4 : 1;
        for (long r = 0; r < repeats && rc == 0; r++) {
                t0 = omp_get_wtime();
                for (long s = 0; s < csteps && rc == 0; s++)
                        rc = lbomp_step(lb, cb, NULL);
                t_step[r] = (omp_get_wtime() - t0) / (double)csteps;
                t0 = omp_get_wtime();
                for (long s = 0; s < csteps; s++) {
#pragma omp parallel for schedule(static) num_threads(threads)
                        for (long i = 0; i < ntasks; i++)
                                ++*(volatile long *)&cell[i];
                }
                t_pfor[r] = (omp_get_wtime() - t0) / (double)csteps;
        }
        if (rc < 0) {
                fprintf(stderr, "stepcost: a step failed: %s\n", lbomp_last_error());
                return 1;
        }
        double lbs = median(t_lb, repeats), fors = median(t_for, repeats);
        double bar = median(t_bar, repeats), st = median(t_step, repeats);
        double pf = median(t_pfor, repeats);
        printf("stepcost: %ld threads, %ld task(s), policy %s, period %d; %ld repeats of %ld "
               "steps, "
               "medians\n",
               threads, ntasks, lbomp_get_policy(lb), lbomp_get_period(lb), repeats, steps);
        printf("  in-region: lbomp step %.3f us, omp for %.3f us, omp barrier %.3f us\n", lbs * 1e6,
               fors * 1e6, bar * 1e6);
        printf("  in-region: lbomp's extra cost per step %.3f us = %.2f barrier(s)\n",
               (lbs - fors) * 1e6, (lbs - fors) / bar);
        printf("  callback:  lbomp_step %.3f us, omp parallel for %.3f us: extra %.3f us = %.2f "
               "barrier(s)\n",
               st * 1e6, pf * 1e6, (st - pf) * 1e6, (st - pf) / bar);
        if (report)
                lbomp_report(lb, stdout);
        lbomp_destroy(lb);
        free(cell);
        free(t_lb);
        free(t_for);
        free(t_bar);
        free(t_step);
        free(t_pfor);
        return 0;
}
