/*
 * range.c — how many iterations a loop the runtimes hand over has: libgomp's end-exclusive ranges
 * (signed long, or unsigned long long with a direction) and libomp's inclusive ones (32 or 64
 * bits, signed or not, any stride), in 128-bit arithmetic so that no range overflows while it is
 * counted. A count that does not fit in int64_t is the caller's cue to leave the loop alone.
 */
#include "preload.h"

int64_t lbp__count_gomp(bool is_ull, bool up, uint64_t start, uint64_t end, uint64_t incr)
{
        unsigned __int128 n;
        if (!is_ull) {
                int64_t s = (int64_t)start, e = (int64_t)end, i = (int64_t)incr;
                if (i == 0)
                        return -2;
                if (i > 0) {
                        if (e <= s)
                                return 0;
                        n = (unsigned __int128)(((__int128)e - s + i - 1) / i);
                } else {
                        if (e >= s)
                                return 0;
                        n = (unsigned __int128)(((__int128)s - e - i - 1) / -(__int128)i);
                }
        } else if (up) {
                if (incr == 0)
                        return -2;
                if (end <= start)
                        return 0;
                n = ((unsigned __int128)(end - start) + incr - 1) / incr;
        } else {
                uint64_t d = -incr; /* a downward ull loop's increment is negative */
                if (d == 0)
                        return -2;
                if (end >= start)
                        return 0;
                n = ((unsigned __int128)(start - end) + d - 1) / d;
        }
        return n > (unsigned __int128)INT64_MAX ? -1 : (int64_t)n;
}

int64_t lbp__count_kmpc(bool is_unsigned, int bits, uint64_t lb_, uint64_t ub, int64_t st)
{
        if (st == 0)
                return -2;
        __int128 l, u;
        if (is_unsigned) {
                l = bits == 32 ? (__int128)(uint32_t)lb_ : (__int128)lb_;
                u = bits == 32 ? (__int128)(uint32_t)ub : (__int128)ub;
        } else {
                l = bits == 32 ? (__int128)(int32_t)lb_ : (__int128)(int64_t)lb_;
                u = bits == 32 ? (__int128)(int32_t)ub : (__int128)(int64_t)ub;
        }
        __int128 n;
        if (st > 0)
                n = u < l ? 0 : (u - l) / st + 1;
        else
                n = l < u ? 0 : (l - u) / -(__int128)st + 1;
        return n > (__int128)INT64_MAX ? -1 : (int64_t)n;
}
