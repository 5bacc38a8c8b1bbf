/*
 * pertask.c — what lbomp costs per task: empty tasks (one add each) run through the in-region
 * iterator under the configuration of the environment (default: none set), each step against the
 * same adds in a plain `omp for schedule(static)`, interleaved, medians taken. The difference
 * divided by the tasks per thread is lbomp's cost per task, for the three kinds of step:
 *   untimed   most steps: no clock read per task (two loads and two stores, inline)
 *   timed     the last LBOMP__TIMED (3) steps of each window: one counter read per task
 *   LB        the step that ends a window, with its LB step (per task of the whole run: the
 *             snapshot, the policy and the plan are serial)
 * and the mean per task over a window of LBOMP_PERIOD steps without its LB step, which is what a
 * step path costs on average. Which steps are timed follows the library's rule (the last 3 of a
 * window, none under LBOMP_POLICY=none). Empty tasks' times are noise, which a policy would act
 * on, scattering the tasks over memory; so unless LBOMP_TOLERANCE is set, the tolerance is 1 and
 * the mapping stays (an LB step then records the window without running the policy).
 * Usage: pertask [--tasks N] [--windows W] [--threads T]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"

#define TIMED 3 /* src/window.h LBOMP__TIMED */

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

static double median(double *v, long n)
{
        if (n == 0)
                return 0;
        qsort(v, (size_t)n, sizeof *v, cmp);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
        long ntasks = 200000, windows = 8, threads = 2;
        for (int i = 1; i + 1 < argc; i += 2) {
                long v = strtol(argv[i + 1], NULL, 10);
                if (strcmp(argv[i], "--tasks") == 0 && v > 0)
                        ntasks = v;
                else if (strcmp(argv[i], "--windows") == 0 && v > 0)
                        windows = v;
                else if (strcmp(argv[i], "--threads") == 0 && v > 0)
                        threads = v;
                else {
                        fprintf(stderr, "usage: pertask [--tasks N] [--windows W] [--threads T]\n");
                        return 2;
                }
        }
        long *cell = calloc((size_t)ntasks, sizeof *cell);
        lbomp_t *lb;
        if (!cell || lbomp_create(&lb) < 0 || lbomp_set_workers(lb, (int)threads) < 0 ||
            (!getenv("LBOMP_TOLERANCE") && lbomp_set_tolerance(lb, 1.0) < 0)) {
                fprintf(stderr, "pertask: setup failed: %s\n", lbomp_last_error());
                return 2;
        }
        for (long i = 0; i < ntasks; i++)
                lbomp_task_add(lb, &cell[i], sizeof cell[i], LBOMP_NODE_ANY, NULL);
        long period = lbomp_get_period(lb), steps = windows * period;
        int times = strcmp(lbomp_get_policy(lb), "none") != 0;
        double *d[3]; /* per kind: lbomp - omp for, seconds */
        long nd[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++)
                d[k] = malloc((size_t)steps * sizeof *d[k]);
        double per_thread = (double)ntasks / (double)threads;
        for (long s = 0; s < steps; s++) {
                double t0 = now_s();
#pragma omp parallel num_threads(threads)
                LBOMP_FOR_EACH_TASK (lb, long *, c) {
                        (*c)++;
                }
                double t_lb = now_s() - t0;
                t0 = now_s();
#pragma omp parallel num_threads(threads)
                {
#pragma omp for schedule(static)
                        for (long i = 0; i < ntasks; i++)
                                cell[i]++;
                }
                double t_omp = now_s() - t0;
                long in = s % period; /* the step's place in its window */
                int kind = in == period - 1 ? 2 : times && in + TIMED >= period ? 1 : 0;
                d[kind][nd[kind]++] = t_lb - t_omp;
        }
        for (long i = 0; i < ntasks; i++)
                if (cell[i] != 2 * steps) {
                        fprintf(stderr, "pertask: task %ld ran %ld times, expected %ld\n", i,
                                cell[i], 2 * steps);
                        return 1;
                }
        double untimed = median(d[0], nd[0]) / per_thread * 1e9;
        double timed = median(d[1], nd[1]) / per_thread * 1e9;
        double lbstep = median(d[2], nd[2]) / (double)ntasks * 1e9;
        /* A window's steps without its LB step: the last TIMED - 1 timed ones and the rest. */
        long ntimed = times ? (period < TIMED ? period : TIMED) : 0;
        long nuntimed = period - ntimed;
        double mean = period > 1 ? (nuntimed * untimed + (ntimed - (ntimed > 0)) * timed) /
                                           (double)(period - 1)
                                 : timed;
        printf("pertask: %ld tasks, %ld threads, policy %s, period %ld, tolerance %s, %ld steps: "
               "per "
               "task, "
               "untimed step %.2f ns, timed step %.2f ns, window mean (without its LB step) %.2f "
               "ns; LB step %.2f ns per task of the run\n",
               ntasks, threads, lbomp_get_policy(lb), period,
               getenv("LBOMP_TOLERANCE") ? getenv("LBOMP_TOLERANCE") : "1", steps, untimed,
               nd[1] ? timed : 0, mean, lbstep);
        lbomp_destroy(lb);
        free(cell);
        for (int k = 0; k < 3; k++)
                free(d[k]);
        return 0;
}
