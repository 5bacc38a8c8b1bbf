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

#endif
