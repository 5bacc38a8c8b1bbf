/* prog.c — an unchanged OpenMP program with `schedule(runtime)` loops of every shape the preload
 * must take or refuse, built by check_preload.sh with gcc and clang and run with and without
 * liblbomp-preload.so. Each loop counts how many times each of its iterations ran (atomically,
 * so a run twice is seen) and folds what it computed into an order-independent integer checksum;
 * the program prints one line per loop (its checksum) and fails if any iteration of any run did
 * not run exactly once. Same output with and without the preload is the other half of the proof.
 * Usage: prog [steps]. */
#include <limits.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 4096, LOOPS = 32 };

static unsigned cnt[N];
static uint64_t sum[LOOPS];
static const char *names[LOOPS];
static long bad;

static void count(int64_t i)
{
        __atomic_fetch_add(&cnt[i], 1, __ATOMIC_RELAXED);
}

/* Every index in [0, n) ran `want` times since the last check (the others not at all). */
static void check(int loop, const char *name, int64_t n, unsigned want)
{
        names[loop] = name;
        for (int64_t i = 0; i < N; i++) {
                unsigned w = i < n ? want : 0;
                if (cnt[i] != w) {
                        if (bad++ < 10)
                                fprintf(stderr, "FAIL %s: index %lld ran %u times, want %u\n", name,
                                        (long long)i, cnt[i], w);
                }
        }
        memset(cnt, 0, sizeof cnt);
}

static uint64_t mix(uint64_t x)
{
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ull;
        return x ^ (x >> 29);
}

/* A persistently skewed iteration: the first quarter costs 8x. */
static uint64_t work(int64_t i)
{
        int reps = i < N / 4 ? 160 : 20;
        uint64_t x = (uint64_t)i;
        for (int k = 0; k < reps; k++)
                x = mix(x + (uint64_t)k);
        return x;
}

int main(int argc, char **argv)
{
        int steps = argc > 1 ? atoi(argv[1]) : 30;
        int n_var = N; /* a range not known at compile time */
        if (argc > 2)
                n_var = atoi(argv[2]);
        omp_set_max_active_levels(2);
        long last_lp = -1;
        for (int step = 0; step < steps; step++) {
                /* 0: combined parallel for over a constant range (GOMP_parallel_loop_*runtime) */
                uint64_t s0 = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : s0)
                for (int i = 0; i < N; i++) {
                        count(i);
                        s0 += work(i);
                }
                sum[0] += s0;
                check(0, "combined-skewed", N, 1);

                /* 1: parallel for over a runtime range */
                uint64_t s1 = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : s1)
                for (int i = 0; i < n_var; i++) {
                        count(i);
                        s1 += mix((uint64_t)i * 3);
                }
                sum[1] += s1;
                check(1, "parallel-for-n", n_var, 1);

                /* 2-6: one region, several loops: a barrier loop, a nowait loop, downward and
                 * strided, lastprivate, monotonic and nonmonotonic */
                uint64_t s2 = 0, s3 = 0, s4 = 0;
                long lp = -1;
#pragma omp parallel reduction(+ : s2, s3, s4)
                {
#pragma omp for schedule(runtime)
                        for (int i = 0; i < N / 2; i++) {
                                count(i);
                                s2 += mix((uint64_t)i);
                        }
#pragma omp for schedule(runtime) nowait
                        for (int i = N / 2; i < N; i++) {
                                count(i);
                                s2 += mix((uint64_t)i + 7);
                        }
#pragma omp barrier
#pragma omp single
                        check(2, "for+nowait", N, 1);
#pragma omp for schedule(runtime)
                        for (long i = N - 1; i >= 0; i -= 3) {
                                count(i);
                                s3 += mix((uint64_t)i + 11);
                        }
#pragma omp single
                        {
                                for (long i = N - 1; i >= 0; i -= 3)
                                        cnt[i]--;
                                check(3, "downward-stride3", 0, 0);
                        }
#pragma omp for schedule(runtime) lastprivate(lp)
                        for (long i = 5; i < N; i += 7) {
                                count(i);
                                lp = i * 2 + step;
                        }
#pragma omp single
                        {
                                for (long i = 5; i < N; i += 7)
                                        cnt[i]--;
                                check(4, "lastprivate", 0, 0);
                        }
#pragma omp for schedule(monotonic : runtime)
                        for (int i = 0; i < N; i++) {
                                count(i);
                                s4 += mix((uint64_t)i * 5);
                        }
#pragma omp for schedule(nonmonotonic : runtime)
                        for (int i = 0; i < N; i++) {
                                count(i);
                                s4 += mix((uint64_t)i * 13);
                        }
                }
                sum[2] += s2;
                sum[3] += s3;
                sum[4] += (uint64_t)lp;
                last_lp = lp;
                sum[5] += s4;
                check(5, "monotonic+nonmonotonic", N, 2);

                /* 6: unsigned long long range above 2^63 (GOMP_loop_ull_*, __kmpc_*_8u) */
                uint64_t s6 = 0;
                const unsigned long long base = (1ull << 63) + 12345;
#pragma omp parallel for schedule(runtime) reduction(+ : s6)
                for (unsigned long long u = base; u < base + (unsigned long long)n_var; u++) {
                        count((int64_t)(u - base));
                        s6 += mix(u);
                }
                sum[6] += s6;
                check(6, "ull-above-2^63", n_var, 1);

                /* 7: zero-trip and one-trip loops */
                int zero = argc > 3 ? atoi(argv[3]) : 0, one = zero + 1;
                uint64_t s7 = 0;
#pragma omp parallel reduction(+ : s7)
                {
#pragma omp for schedule(runtime)
                        for (int i = 0; i < zero; i++) {
                                count(i);
                                s7 += 1000;
                        }
#pragma omp for schedule(runtime)
                        for (int i = 0; i < one; i++) {
                                count(i);
                                s7 += 1;
                        }
                }
                sum[7] += s7;
                check(7, "zero+one-trip", one, 1);

                /* 8: a range that changes at every step (one loop per range) */
                int nr = N / 2 + step * 37;
                uint64_t s8 = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : s8)
                for (int i = 0; i < nr; i++) {
                        count(i);
                        s8 += mix((uint64_t)i ^ 0x55);
                }
                sum[8] += s8;
                check(8, "changing-range", nr, 1);

                /* 9: ordered: refused, the runtime keeps the order */
                uint64_t s9 = 0;
#pragma omp parallel for schedule(runtime) ordered
                for (int i = 0; i < 256; i++) {
                        count(i);
#pragma omp ordered
                        s9 = s9 * 31 + (uint64_t)i; /* order-dependent on purpose */
                }
                sum[9] += s9;
                check(9, "ordered", 256, 1);

                /* 10: nested team: the inner loop is refused, the outer one is lbomp's */
                uint64_t s10 = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : s10)
                for (int o = 0; o < 4; o++) {
                        uint64_t in = 0;
#pragma omp parallel for schedule(runtime) num_threads(2) reduction(+ : in)
                        for (int i = 0; i < 64; i++) {
                                count(o * 64 + i);
                                in += mix((uint64_t)(o * 64 + i));
                        }
                        s10 += in;
                }
                sum[10] += s10;
                check(10, "nested", 256, 1);

                /* 11: collapse(2) */
                uint64_t s11 = 0;
#pragma omp parallel for schedule(runtime) collapse(2) reduction(+ : s11)
                for (int a = 0; a < 32; a++)
                        for (int b = 0; b < 64; b++) {
                                count(a * 64 + b);
                                s11 += mix((uint64_t)(a * 1000 + b));
                        }
                sum[11] += s11;
                check(11, "collapse2", 32 * 64, 1);

                /* 12: a team of another size than the loop's first run's, at the last step */
                uint64_t s12 = 0;
                int nt = step == steps - 1 && omp_get_max_threads() > 1 ? 1 : omp_get_max_threads();
#pragma omp parallel for schedule(runtime) num_threads(nt) reduction(+ : s12)
                for (int i = 0; i < 512; i++) {
                        count(i);
                        s12 += mix((uint64_t)i * 17);
                }
                sum[12] += s12;
                check(12, "team-size", 512, 1);

                /* 13: ordered(1) with depend (doacross): refused, the runtime keeps the order */
                static uint64_t chain[257];
                chain[0] = (uint64_t)step;
#pragma omp parallel for schedule(runtime) ordered(1)
                for (int i = 1; i <= 256; i++) {
                        count(i - 1);
#pragma omp ordered depend(sink : i - 1)
                        chain[i] = mix(chain[i - 1] + (uint64_t)i);
#pragma omp ordered depend(source)
                }
                sum[13] += chain[256];
                check(13, "doacross", 256, 1);

                /* 15: downward unsigned long long, stride 5, above 2^63; 16: unsigned int
                 * (clang: __kmpc_dispatch_*_4u) */
                uint64_t s15 = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : s15)
                for (unsigned long long u = base + 5 * (unsigned long long)n_var; u > base;
                     u -= 5) {
                        count((int64_t)((u - base) / 5 - 1));
                        s15 += mix(u);
                }
                sum[15] += s15;
                check(15, "ull-downward", n_var, 1);
                uint64_t s16 = 0;
                unsigned ubase = 4000000000u;
#pragma omp parallel for schedule(runtime) reduction(+ : s16)
                for (unsigned u = ubase; u < ubase + (unsigned)n_var; u++) {
                        count((int64_t)(u - ubase));
                        s16 += mix(u);
                }
                sum[16] += s16;
                check(16, "unsigned-int", n_var, 1);

#if defined(__GNUC__) && !defined(__clang__)
                /* 14: a task reduction (GOMP_loop_start with the schedule as an argument):
                 * refused, libgomp keeps the reduction in its work share */
                uint64_t s14 = 0;
#pragma omp parallel
                {
#pragma omp for schedule(runtime) reduction(task, + : s14)
                        for (int i = 0; i < 300; i++) {
                                count(i);
#pragma omp task in_reduction(+ : s14)
                                s14 += mix((uint64_t)i * 19);
                        }
                }
                sum[14] += s14;
                check(14, "task-reduction", 300, 1);
#endif
        }
        for (int l = 0; l < LOOPS; l++)
                if (names[l])
                        printf("%-24s %016llx\n", names[l], (unsigned long long)sum[l]);
        printf("lastprivate %ld\n", last_lp);
        if (bad) {
                fprintf(stderr, "FAIL: %ld iteration counts wrong\n", bad);
                return 1;
        }
        printf("every iteration ran exactly once\n");
        return 0;
}
