/* test_preload_range.c — the preload's iteration counts (src/preload/range.c) against loops run
 * the way compiled code runs them, over small ranges of every sign, direction and stride, and
 * the edges: ranges whose count needs 64 bits (refused: -1), zero strides (-2), 32-bit wrap. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "preload/preload.h"

static int fails;
#define CHECK_EQ(a, b)                                                                             \
        do {                                                                                       \
                long long a_ = (long long)(a), b_ = (long long)(b);                                \
                if (a_ != b_) {                                                                    \
                        fprintf(stderr, "%s:%d: %s = %lld, want %s = %lld\n", __FILE__, __LINE__,  \
                                #a, a_, #b, b_);                                                   \
                        fails++;                                                                   \
                }                                                                                  \
        } while (0)

int main(void)
{
        /* gomp long: for (i = s; incr > 0 ? i < e : i > e; i += incr) */
        for (long s = -9; s <= 9; s++)
                for (long e = -9; e <= 9; e++)
                        for (long inc = -4; inc <= 4; inc++) {
                                if (inc == 0)
                                        continue;
                                long n = 0;
                                for (long i = s; inc > 0 ? i < e : i > e; i += inc)
                                        n++;
                                CHECK_EQ(lbp__count_gomp(false, true, (uint64_t)s, (uint64_t)e,
                                                         (uint64_t)inc),
                                         n);
                        }
        /* gomp ull, up and down (a downward increment is negative in two's complement) */
        for (unsigned long long s = 0; s <= 12; s++)
                for (unsigned long long e = 0; e <= 12; e++)
                        for (long inc = -4; inc <= 4; inc++) {
                                if (inc == 0)
                                        continue;
                                bool up = inc > 0;
                                long n = 0;
                                for (unsigned long long i = s; up ? i < e : i > e;
                                     i += (unsigned long long)inc) {
                                        n++;
                                        if (!up && i < (unsigned long long)-inc)
                                                break; /* would wrap below 0 */
                                }
                                CHECK_EQ(lbp__count_gomp(true, up, s, e, (uint64_t)inc), n);
                        }
        /* kmpc, inclusive bounds: for (i = lb; st > 0 ? i <= ub : i >= ub; i += st) */
        for (int lb = -9; lb <= 9; lb++)
                for (int ub = -9; ub <= 9; ub++)
                        for (int st = -4; st <= 4; st++) {
                                if (st == 0)
                                        continue;
                                long n = 0;
                                for (int i = lb; st > 0 ? i <= ub : i >= ub; i += st)
                                        n++;
                                CHECK_EQ(lbp__count_kmpc(false, 32, (uint64_t)(int64_t)lb,
                                                         (uint64_t)(int64_t)ub, st),
                                         n);
                                CHECK_EQ(lbp__count_kmpc(false, 64, (uint64_t)(int64_t)lb,
                                                         (uint64_t)(int64_t)ub, st),
                                         n);
                        }
        /* The edges. */
        CHECK_EQ(lbp__count_gomp(false, true, (uint64_t)LONG_MIN, (uint64_t)LONG_MAX, 1), -1);
        /* 2^63 iterations: one more than int64_t holds */
        CHECK_EQ(lbp__count_gomp(false, true, (uint64_t)LONG_MIN, (uint64_t)LONG_MAX, 2), -1);
        CHECK_EQ(lbp__count_gomp(false, true, (uint64_t)LONG_MIN, (uint64_t)LONG_MAX, 4),
                 1ll << 62);
        /* LONG_MAX, then -1, then below LONG_MIN */
        CHECK_EQ(lbp__count_gomp(false, true, (uint64_t)LONG_MAX, (uint64_t)LONG_MIN,
                                 (uint64_t)LONG_MIN),
                 2);
        CHECK_EQ(lbp__count_gomp(false, true, 0, 10, 0), -2);
        CHECK_EQ(lbp__count_gomp(true, true, 0, ULLONG_MAX, 1), -1);
        CHECK_EQ(lbp__count_gomp(true, true, 0, ULLONG_MAX, 2), -1); /* 2^63 */
        CHECK_EQ(lbp__count_gomp(true, true, 0, ULLONG_MAX, 3), (long long)(ULLONG_MAX / 3));
        CHECK_EQ(lbp__count_gomp(true, false, ULLONG_MAX, 0, (uint64_t)-1), -1);
        CHECK_EQ(lbp__count_gomp(true, true, 1ull << 63, (1ull << 63) + 1000, 7), 143);
        CHECK_EQ(lbp__count_kmpc(true, 32, 0, UINT32_MAX, 1), 1ll << 32);
        CHECK_EQ(lbp__count_kmpc(true, 64, 0, UINT64_MAX, 1), -1);
        CHECK_EQ(lbp__count_kmpc(true, 64, 0, UINT64_MAX - 1, 2), -1); /* 2^63 */
        CHECK_EQ(lbp__count_kmpc(true, 64, 0, UINT64_MAX - 3, 2), INT64_MAX);
        CHECK_EQ(lbp__count_kmpc(false, 64, (uint64_t)INT64_MIN, (uint64_t)INT64_MAX, 1), -1);
        CHECK_EQ(lbp__count_kmpc(false, 32, (uint64_t)INT32_MAX, (uint64_t)INT32_MIN, -1),
                 1ll << 32);
        CHECK_EQ(lbp__count_kmpc(false, 32, 5, 5, 0), -2);
        if (fails) {
                fprintf(stderr, "%d failure(s)\n", fails);
                return 1;
        }
        printf("preload range counts: all match\n");
        return 0;
}
