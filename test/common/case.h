/*
 * case.h — assertions for tests written as a list of cases: a failed assertion prints the file,
 * line, the case's name (the including file's `test_name`) and both sides, then makes the case
 * function return 1, so that the remaining cases still run and temporary files still get removed.
 * Also the removal of a scratch tree.
 */
#ifndef LBOMP_TEST_CASE_H
#define LBOMP_TEST_CASE_H

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define FAIL_AT(...)                                                                               \
        do {                                                                                       \
                fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, test_name);                     \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
                return 1;                                                                          \
        } while (0)

#define ASSERT_TRUE(c)                                                                             \
        do {                                                                                       \
                if (!(c))                                                                          \
                        FAIL_AT("expected %s", #c);                                                \
        } while (0)

#define ASSERT_EQ(a, b)                                                                            \
        do {                                                                                       \
                long long a_ = (long long)(a), b_ = (long long)(b);                                \
                if (a_ != b_)                                                                      \
                        FAIL_AT("%s == %s: %lld vs %lld", #a, #b, a_, b_);                         \
        } while (0)

#define ASSERT_NEAR(a, b, eps)                                                                     \
        do {                                                                                       \
                double a_ = (a), b_ = (b);                                                         \
                if (!(fabs(a_ - b_) <= (eps)))                                                     \
                        FAIL_AT("%s ~= %s: %.9f vs %.9f (eps %g)", #a, #b, a_, b_, (double)(eps)); \
        } while (0)

#define ASSERT_NAN(a)                                                                              \
        do {                                                                                       \
                double a_ = (a);                                                                   \
                if (!isnan(a_))                                                                    \
                        FAIL_AT("%s: expected NAN, got %.9f", #a, a_);                             \
        } while (0)

#define ASSERT_STREQ(a, b)                                                                         \
        do {                                                                                       \
                const char *a_ = (a), *b_ = (b);                                                   \
                if (!a_ || !b_ ? a_ != b_ : strcmp(a_, b_) != 0)                                   \
                        FAIL_AT("%s == %s: \"%s\" vs \"%s\"", #a, #b, a_ ? a_ : "(null)",          \
                                b_ ? b_ : "(null)");                                               \
        } while (0)

#define ASSERT_CONTAINS(hay, needle)                                                               \
        do {                                                                                       \
                const char *h_ = (hay), *n_ = (needle);                                            \
                if (!h_ || !strstr(h_, n_))                                                        \
                        FAIL_AT("%s contains \"%s\": got \"%s\"", #hay, n_, h_ ? h_ : "(null)");   \
        } while (0)

static inline int case_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        (void)sb;
        (void)flag;
        (void)ftw;
        return remove(path);
}

/* Removes a scratch directory and everything below it. */
static inline void case_rm_tree(const char *dir)
{
        nftw(dir, case_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
