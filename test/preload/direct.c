/* direct.c — libgomp entry points no current GCC emits for schedule(runtime) but the preload
 * covers, called as their compilers call them: GCC < 4.9's combined form
 * (GOMP_parallel_loop_runtime_start, the body run by the caller too, GOMP_parallel_end), and GCC
 * >= 9's GOMP_loop_start / GOMP_loop_ull_start with the runtime schedule as an argument and no
 * reductions, ended by GOMP_loop_end and GOMP_loop_end_cancel. Every index must run exactly once
 * per run; under OMP_SCHEDULE=lbomp check_preload.sh also expects the three loops in the report.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned n, long start,
                                      long end, long incr);
void GOMP_parallel_end(void);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags);
bool GOMP_loop_runtime_next(long *istart, long *iend);
void GOMP_loop_end(void);
void GOMP_loop_end_nowait(void);
bool GOMP_loop_end_cancel(void);
bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart,
                     long *iend, uintptr_t *reductions, void **mem);
bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end,
                         unsigned long long incr, long sched, unsigned long long chunk,
                         unsigned long long *istart, unsigned long long *iend,
                         uintptr_t *reductions, void **mem);
bool GOMP_loop_ull_runtime_next(unsigned long long *istart, unsigned long long *iend);

enum { N = 3000, STEPS = 15 };
static unsigned cnt[N];
static long bad;

static void count(long i)
{
        __atomic_fetch_add(&cnt[i], 1, __ATOMIC_RELAXED);
}

static void check(const char *what, unsigned want)
{
        for (long i = 0; i < N; i++) {
                if (cnt[i] != want && bad++ < 10)
                        fprintf(stderr, "FAIL %s: index %ld ran %u times, want %u\n", what, i,
                                cnt[i], want);
                cnt[i] = 0;
        }
}

/* The outlined body GCC 4.8 made of `parallel for schedule(runtime)`: next first. */
static void old_body(void *arg)
{
        (void)arg;
        long s, e;
        while (GOMP_loop_runtime_next(&s, &e))
                for (long i = s; i < e; i++)
                        count(i);
        GOMP_loop_end_nowait();
}

static void start_body(void *arg)
{
        (void)arg;
        long s, e;
        /* schedule(runtime), GFS_RUNTIME = 0; upward, stride 2 then the odd ones downward */
        if (GOMP_loop_start(0, N, 2, 0, 0, &s, &e, NULL, NULL)) {
                do
                        for (long i = s; i < e; i += 2)
                                count(i);
                while (GOMP_loop_runtime_next(&s, &e));
        }
        GOMP_loop_end();
        unsigned long long us, ue;
        const unsigned long long top = (1ull << 63) + N; /* odd indices N-1 .. 1, above 2^63 */
        if (GOMP_loop_ull_start(false, top - 1, (1ull << 63), (unsigned long long)-2, 0, 0, &us,
                                &ue, NULL, NULL)) {
                do
                        for (unsigned long long u = us; u > ue; u -= 2)
                                count((long)(u - (1ull << 63)));
                while (GOMP_loop_ull_runtime_next(&us, &ue));
        }
        (void)GOMP_loop_end_cancel();
}

int main(void)
{
        for (int step = 0; step < STEPS; step++) {
                GOMP_parallel_loop_runtime_start(old_body, NULL, 0, 0, N, 1);
                old_body(NULL);
                GOMP_parallel_end();
                check("GOMP_parallel_loop_runtime_start", 1);
                GOMP_parallel(start_body, NULL, 0, 0);
                check("GOMP_loop_start + GOMP_loop_ull_start", 1);
        }
        if (bad) {
                fprintf(stderr, "FAIL: %ld iteration counts wrong\n", bad);
                return 1;
        }
        printf("every iteration ran exactly once\n");
        return 0;
}
