/*
 * test.h — assertions that print both sides and where they failed, for every lbomp test.
 * A failed assertion exits 1; a test that cannot run here exits 77 (meson: skipped) with the
 * reason.
 */
#ifndef LBOMP_TEST_H
#define LBOMP_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* SANITIZED: built under ASan or TSan (gcc says so with __SANITIZE_*__, clang with
 * __has_feature), where timings, the allocator and the process size are the sanitizer's. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#define FAIL(...)                                                                                  \
        do {                                                                                       \
                fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
                exit(1);                                                                           \
        } while (0)

#define SKIP(...)                                                                                  \
        do {                                                                                       \
                fprintf(stderr, "skipped: ");                                                      \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
                exit(77);                                                                          \
        } while (0)

#define ASSERT(c)                                                                                  \
        do {                                                                                       \
                if (!(c))                                                                          \
                        FAIL("assertion failed: %s", #c);                                          \
        } while (0)

#define ASSERT_CMP_(a, op, b, fmt, type)                                                           \
        do {                                                                                       \
                type a_ = (a), b_ = (b);                                                           \
                if (!(a_ op b_))                                                                   \
                        FAIL("%s %s %s: " fmt " vs " fmt, #a, #op, #b, a_, b_);                    \
        } while (0)

#define ASSERT_EQ(a, b)  ASSERT_CMP_(a, ==, b, "%lld", long long)
#define ASSERT_NE(a, b)  ASSERT_CMP_(a, !=, b, "%lld", long long)
#define ASSERT_LT(a, b)  ASSERT_CMP_(a, <, b, "%lld", long long)
#define ASSERT_LE(a, b)  ASSERT_CMP_(a, <=, b, "%lld", long long)
#define ASSERT_GT(a, b)  ASSERT_CMP_(a, >, b, "%lld", long long)
#define ASSERT_DLE(a, b) ASSERT_CMP_(a, <=, b, "%.9g", double)
#define ASSERT_DGE(a, b) ASSERT_CMP_(a, >=, b, "%.9g", double)
#define ASSERT_DEQ(a, b) ASSERT_CMP_(a, ==, b, "%.17g", double)
#define ASSERT_STR_CONTAINS(hay, needle)                                                           \
        do {                                                                                       \
                const char *h_ = (hay), *n_ = (needle);                                            \
                if (!h_ || !strstr(h_, n_))                                                        \
                        FAIL("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);            \
        } while (0)

/* A task's busy work: n dependent multiply-adds on *x (the tests' reference kernel). */
static inline void test_spin(double *x, long n)
{
        for (long i = 0; i < n; i++)
                *x = *x * 0.9999999 + 1e-7;
}

/* The process's CPU time and the monotonic wall time, in seconds: two readings bound a part of
 * a test, whose threads had their cores when the CPU time it took is nearly the wall time times
 * their number (test_served). */
struct test_times {
        double cpu, wall;
};

static inline struct test_times test_times_now(void)
{
        struct rusage ru;
        struct timespec ts;
        if (getrusage(RUSAGE_SELF, &ru) != 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
                FAIL("getrusage or clock_gettime failed");
        return (struct test_times){
                .cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec),
                .wall = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec};
}

/* The share of `threads` cores the process had between two readings: 0.99-1.00 for two busy
 * threads on the 2-core machine, 0.67-0.75 beside a `yes` pinned to one core. Timing-sensitive
 * checks of a test hold only from TEST_SERVED_MIN on (a thread kept from its core is a slower
 * core to lbomp). */
#define TEST_SERVED_MIN 0.9
static inline double test_served(struct test_times a, struct test_times b, int threads)
{
        double wall = b.wall - a.wall;
        return wall > 0 ? (b.cpu - a.cpu) / (threads * wall) : 1.0;
}

#endif
