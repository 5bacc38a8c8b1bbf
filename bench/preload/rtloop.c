/*
 * rtloop.c — an unchanged OpenMP program for the drop-in (liblbomp-preload.so): one time-step
 * loop per step, `#pragma omp parallel for schedule(runtime)`, so OMP_SCHEDULE picks static,
 * dynamic,1, guided or, under the preload, lbomp, on the same binary. Two workloads:
 *   skew  N iterations of pure arithmetic, the first quarter 8x dearer (a persistent skew);
 *   mem   N iterations that each own two vectors (a `stream` kernel: the pair rotated in place
 *         `--passes` times per step), the first quarter owning 4x the elements, the whole
 *         `--kib` KiB (default 1536: more than one core's L2 here, each thread's balanced half
 *         less), so a schedule that keeps an iteration on its core finds its data in that core's
 *         cache, and one that deals iterations anew each step does not. The element loop is
 *         `omp simd`, as memtask's stream kernel: without it gcc 12 at -O2 does not vectorise it
 *         (clang does), and the loop would be arithmetic for one compiler and memory for the
 *         other.
 * It prints the loop's wall time over all steps (setup and first touch excluded) and a checksum
 * of what the loop computed, the same bit for bit under every schedule (each iteration's
 * arithmetic does not depend on the thread that runs it; the checksum adds in iteration order).
 * Usage: rtloop --kind skew|mem [--n N] [--steps S] [--passes P] [--kib K]
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ull;
        return x ^ (x >> 29);
}

static int usage(void)
{
        fprintf(stderr,
                "usage: rtloop --kind skew|mem [--n N] [--steps S] [--passes P] [--kib K]\n");
        return 2;
}

int main(int argc, char **argv)
{
        const char *kind = NULL;
        long n = -1, steps = -1, passes = 4, kib = 1536;
        for (int a = 1; a + 1 < argc; a += 2) {
                if (!strcmp(argv[a], "--kind"))
                        kind = argv[a + 1];
                else if (!strcmp(argv[a], "--n"))
                        n = atol(argv[a + 1]);
                else if (!strcmp(argv[a], "--steps"))
                        steps = atol(argv[a + 1]);
                else if (!strcmp(argv[a], "--passes"))
                        passes = atol(argv[a + 1]);
                else if (!strcmp(argv[a], "--kib"))
                        kib = atol(argv[a + 1]);
                else
                        return usage();
        }
        if (!kind || (argc - 1) % 2)
                return usage();
        double t0, t1;
        uint64_t check = 0;
        if (!strcmp(kind, "skew")) {
                if (n < 0)
                        n = 4096;
                if (steps < 0)
                        steps = 200;
                uint64_t *out = calloc((size_t)n, sizeof *out);
                t0 = omp_get_wtime();
                for (long s = 0; s < steps; s++) {
#pragma omp parallel for schedule(runtime)
                        for (long i = 0; i < n; i++) {
                                int reps = i < n / 4 ? 320 : 40;
                                uint64_t x = (uint64_t)i + (uint64_t)s * 0x1000193;
                                for (int k = 0; k < reps; k++)
                                        x = mix(x + (uint64_t)k);
                                out[i] += x;
                        }
                }
                t1 = omp_get_wtime();
                for (long i = 0; i < n; i++)
                        check = mix(check + out[i]);
                free(out);
        } else if (!strcmp(kind, "mem")) {
                if (n < 0)
                        n = 64;
                if (steps < 0)
                        steps = 600;
                /* elements per light iteration: 2 vectors of doubles, the first quarter 4x */
                long units = n / 4 * 4 + (n - n / 4);
                long base = kib * 1024 / (16 * units);
                double **x = calloc((size_t)n, sizeof *x);
                long *len = calloc((size_t)n, sizeof *len);
                for (long i = 0; i < n; i++) {
                        len[i] = i < n / 4 ? 4 * base : base;
                        x[i] = malloc(2 * (size_t)len[i] * sizeof(double));
                        for (long e = 0; e < 2 * len[i]; e++)
                                x[i][e] = (double)((i * 7 + e) % 101) / 101.0;
                }
                const double c = cos(0.015625), sn = sin(0.015625);
                t0 = omp_get_wtime();
                for (long s = 0; s < steps; s++) {
#pragma omp parallel for schedule(runtime)
                        for (long i = 0; i < n; i++) {
                                /* locals: the outlined loop body sees c and sn by reference,
                                 * and clang would reload them after every store */
                                const long m = len[i];
                                const double cs = c, sc = sn;
                                double *restrict a = x[i], *restrict b = x[i] + m;
                                for (long p = 0; p < passes; p++)
#pragma omp simd
                                        for (long e = 0; e < m; e++) {
                                                double u = a[e], v = b[e];
                                                a[e] = cs * u - sc * v;
                                                b[e] = sc * u + cs * v;
                                        }
                        }
                }
                t1 = omp_get_wtime();
                double sum = 0;
                for (long i = 0; i < n; i++) {
                        for (long e = 0; e < 2 * len[i]; e++)
                                sum += x[i][e] * (double)(e % 3 + 1);
                        free(x[i]);
                }
                memcpy(&check, &sum, sizeof check);
                free(x);
                free(len);
        } else {
                return usage();
        }
        printf("time_s %.6f checksum %016llx\n", t1 - t0, (unsigned long long)check);
        return 0;
}
