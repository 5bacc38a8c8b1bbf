/*
 * kmpc.c — the entry points clang emits for `schedule(runtime)` loops against LLVM's libomp
 * (checked with clang 14): each thread calls __kmpc_dispatch_init_{4,4u,8,8u} with the schedule
 * kmp_sch_runtime (37, with the monotonic or nonmonotonic modifier bit), then
 * __kmpc_dispatch_next_* until it returns 0; the loop's barrier, when it has one, is a separate
 * __kmpc_barrier. Bounds are inclusive. lbomp's run ends (its barrier) when a thread's next
 * returns 0. An ordered loop (kmp_ord_runtime, 69) is refused with a line and runs on libomp,
 * which then calls __kmpc_dispatch_fini_* after each chunk; those forward unchanged.
 */
#include <stdbool.h>
#include <stdint.h>

#include "preload.h"

#define EXPORT __attribute__((visibility("default")))
#define SITE   __builtin_return_address(0)

enum {
        KMP_SCH_RUNTIME = 37,
        KMP_ORD_RUNTIME = 69,
        KMP_SCH_MODIFIERS = (1 << 29) | (1 << 30), /* monotonic, nonmonotonic */
};

/* ident_t is opaque here: only its source string is read, for the report (preload.c). */
typedef struct ident ident_t;

/* Whether lbomp begins this thread's run; refuses ordered loops with a line. */
static bool take(const void *site, const ident_t *loc, const char *entry, int sched,
                 enum lbp_type type, uint64_t lb, uint64_t ub, int64_t st)
{
        if (!lbp__on)
                return false;
        int kind = sched & ~KMP_SCH_MODIFIERS;
        if (kind == KMP_ORD_RUNTIME) {
                lbp__refuse(site, entry,
                            "is ordered (only the runtime's own schedule keeps its order)");
                return false;
        }
        if (kind != KMP_SCH_RUNTIME)
                return false;
        bool uns = type == LBP_U32 || type == LBP_U64;
        int bits = type == LBP_I32 || type == LBP_U32 ? 32 : 64;
        struct lbp_range r = {.type = type,
                              .start = lb,
                              .end = ub,
                              .incr = (uint64_t)st,
                              .count = lbp__count_kmpc(uns, bits, lb, ub, st),
                              .entry = entry,
                              .loc = loc};
        return lbp__begin(site, &r);
}

/* The thread's next chunk as libomp gives it: inclusive bounds, the stride, and *p_last set on
 * the chunk that holds the last iteration. After the last chunk, lbomp's run ends (barrier). */
static bool next(int32_t *p_last, uint64_t *lbv, uint64_t *ubv)
{
        int64_t lo, hi;
        if (!lbp__next(&lo, &hi)) {
                lbp__end();
                return false;
        }
        const struct lbp_range *r = lbp__range();
        *lbv = r->start + (uint64_t)lo * r->incr;
        *ubv = r->start + (uint64_t)(hi - 1) * r->incr;
        if (p_last)
                *p_last = hi == r->count;
        return true;
}

#define DISPATCH(sfx, type, T, ST, tag)                                                            \
        typedef void (*init_##sfx##_fn)(ident_t *, int32_t, int, T, T, ST, ST);                    \
        EXPORT void __kmpc_dispatch_init_##sfx(ident_t *loc, int32_t gtid, int sched, T lb, T ub,  \
                                               ST st, ST chunk)                                    \
        {                                                                                          \
                if (take(SITE, loc, "__kmpc_dispatch_init_" #sfx, sched, tag, (uint64_t)lb,        \
                         (uint64_t)ub, (int64_t)st))                                               \
                        return;                                                                    \
                LBP_REAL(init_##sfx##_fn, __kmpc_dispatch_init_##sfx)                              \
                (loc, gtid, sched, lb, ub, st, chunk);                                             \
        }                                                                                          \
        typedef int (*next_##sfx##_fn)(ident_t *, int32_t, int32_t *, T *, T *, ST *);             \
        EXPORT int __kmpc_dispatch_next_##sfx(ident_t *loc, int32_t gtid, int32_t *p_last,         \
                                              T *p_lb, T *p_ub, ST *p_st)                          \
        {                                                                                          \
                if (lbp__on && lbp__open()) {                                                      \
                        uint64_t l, u;                                                             \
                        if (!next(p_last, &l, &u))                                                 \
                                return 0;                                                          \
                        *p_lb = (T)l;                                                              \
                        *p_ub = (T)u;                                                              \
                        if (p_st)                                                                  \
                                *p_st = (ST)lbp__range()->incr;                                    \
                        return 1;                                                                  \
                }                                                                                  \
                return LBP_REAL(next_##sfx##_fn, __kmpc_dispatch_next_##sfx)(loc, gtid, p_last,    \
                                                                             p_lb, p_ub, p_st);    \
        }                                                                                          \
        typedef void (*fini_##sfx##_fn)(ident_t *, int32_t);                                       \
        EXPORT void __kmpc_dispatch_fini_##sfx(ident_t *loc, int32_t gtid)                         \
        {                                                                                          \
                LBP_REAL(fini_##sfx##_fn, __kmpc_dispatch_fini_##sfx)(loc, gtid);                  \
        }

DISPATCH(4, int32_t, int32_t, int32_t, LBP_I32)
DISPATCH(4u, uint32_t, uint32_t, int32_t, LBP_U32)
DISPATCH(8, int64_t, int64_t, int64_t, LBP_I64)
DISPATCH(8u, uint64_t, uint64_t, int64_t, LBP_U64)
