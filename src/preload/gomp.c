/*
 * gomp.c — the entry points GCC emits for `schedule(runtime)` loops against libgomp (checked with
 * GCC 12: `omp for` calls GOMP_loop[_ull][_maybe_nonmonotonic|_nonmonotonic]_runtime_start, then
 * _next, then GOMP_loop_end[_nowait|_cancel]; a combined `parallel for` over a range known before
 * the region calls GOMP_parallel_loop[_maybe_nonmonotonic|_nonmonotonic]_runtime, whose body
 * calls _next first; GOMP_loop[_ull]_start takes the schedule as an argument when the loop has
 * task reductions). Under OMP_SCHEDULE=lbomp a loop lbomp takes never reaches libgomp, so
 * libgomp's own work shares stay consistent: it sees the other loops only. Ordered and doacross
 * loops are refused with a line and run by libgomp. Everything else forwards unchanged.
 */
#include <stdbool.h>
#include <stdint.h>

#include "preload.h"

#define EXPORT __attribute__((visibility("default")))
#define SITE   __builtin_return_address(0)

typedef unsigned long long ull;

/* libgomp's schedule argument (enum gomp_schedule_type): GFS_RUNTIME is 0, with the monotonic
 * flag 0x80000000 for schedule(monotonic: runtime). */
static bool is_runtime(long sched)
{
        return (sched & 0x7fffffffL) == 0;
}

static struct lbp_range range_long(const char *entry, long start, long end, long incr)
{
        return (struct lbp_range){.type = LBP_LONG,
                                  .start = (uint64_t)start,
                                  .end = (uint64_t)end,
                                  .incr = (uint64_t)incr,
                                  .count = lbp__count_gomp(false, true, (uint64_t)start,
                                                           (uint64_t)end, (uint64_t)incr),
                                  .entry = entry};
}

static struct lbp_range range_ull(const char *entry, bool up, ull start, ull end, ull incr)
{
        return (struct lbp_range){.type = LBP_ULL,
                                  .start = start,
                                  .end = end,
                                  .incr = incr,
                                  .count = lbp__count_gomp(true, up, start, end, incr),
                                  .entry = entry};
}

/* The thread's next chunk as libgomp gives it: [istart, iend) in the loop's values, the last
 * chunk ending at `end` itself; computed in unsigned 64-bit arithmetic for both entry kinds. */
static bool next_ull(ull *istart, ull *iend)
{
        int64_t lo, hi;
        if (!lbp__next(&lo, &hi))
                return false;
        const struct lbp_range *r = lbp__range();
        *istart = r->start + (uint64_t)lo * r->incr;
        *iend = hi == r->count ? r->end : r->start + (uint64_t)hi * r->incr;
        return true;
}

static bool next_long(long *istart, long *iend)
{
        ull a, b;
        if (!next_ull(&a, &b))
                return false;
        *istart = (long)a;
        *iend = (long)b;
        return true;
}

/* ---------------------------------------------------------------------------------------------
 * omp for schedule(runtime): start, next
 */

typedef bool (*start_long_fn)(long, long, long, long *, long *);
typedef bool (*next_long_fn)(long *, long *);
typedef bool (*start_ull_fn)(bool, ull, ull, ull, ull *, ull *);
typedef bool (*next_ull_fn)(ull *, ull *);

#define START_LONG(name)                                                                           \
        EXPORT bool name(long start, long end, long incr, long *istart, long *iend)                \
        {                                                                                          \
                if (lbp__on) {                                                                     \
                        struct lbp_range r = range_long(#name, start, end, incr);                  \
                        if (lbp__begin(SITE, &r))                                                  \
                                return next_long(istart, iend);                                    \
                }                                                                                  \
                return LBP_REAL(start_long_fn, name)(start, end, incr, istart, iend);              \
        }

/* The first `next` of a combined parallel loop's body begins the loop the team was made for:
 * lbomp's run, or the runtime's own start of the same kind. */
#define NEXT_LONG(name, start_name)                                                                \
        EXPORT bool name(long *istart, long *iend)                                                 \
        {                                                                                          \
                if (lbp__on) {                                                                     \
                        struct lbp_pending *p = lbp__take_pending();                               \
                        if (p) {                                                                   \
                                struct lbp_range r =                                               \
                                        range_long(#start_name, p->start, p->end, p->incr);        \
                                if (lbp__begin(p->site, &r))                                       \
                                        return next_long(istart, iend);                            \
                                return LBP_REAL(start_long_fn, start_name)(p->start, p->end,       \
                                                                           p->incr, istart, iend); \
                        }                                                                          \
                        if (lbp__open())                                                           \
                                return next_long(istart, iend);                                    \
                }                                                                                  \
                return LBP_REAL(next_long_fn, name)(istart, iend);                                 \
        }

#define START_ULL(name)                                                                            \
        EXPORT bool name(bool up, ull start, ull end, ull incr, ull *istart, ull *iend)            \
        {                                                                                          \
                if (lbp__on) {                                                                     \
                        struct lbp_range r = range_ull(#name, up, start, end, incr);               \
                        if (lbp__begin(SITE, &r))                                                  \
                                return next_ull(istart, iend);                                     \
                }                                                                                  \
                return LBP_REAL(start_ull_fn, name)(up, start, end, incr, istart, iend);           \
        }

#define NEXT_ULL(name)                                                                             \
        EXPORT bool name(ull *istart, ull *iend)                                                   \
        {                                                                                          \
                if (lbp__on && lbp__open())                                                        \
                        return next_ull(istart, iend);                                             \
                return LBP_REAL(next_ull_fn, name)(istart, iend);                                  \
        }

START_LONG(GOMP_loop_runtime_start)
START_LONG(GOMP_loop_nonmonotonic_runtime_start)
START_LONG(GOMP_loop_maybe_nonmonotonic_runtime_start)
NEXT_LONG(GOMP_loop_runtime_next, GOMP_loop_runtime_start)
NEXT_LONG(GOMP_loop_nonmonotonic_runtime_next, GOMP_loop_nonmonotonic_runtime_start)
NEXT_LONG(GOMP_loop_maybe_nonmonotonic_runtime_next, GOMP_loop_maybe_nonmonotonic_runtime_start)
START_ULL(GOMP_loop_ull_runtime_start)
START_ULL(GOMP_loop_ull_nonmonotonic_runtime_start)
START_ULL(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
NEXT_ULL(GOMP_loop_ull_runtime_next)
NEXT_ULL(GOMP_loop_ull_nonmonotonic_runtime_next)
NEXT_ULL(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)

/* The schedule as an argument (GCC >= 9, loops with task reductions or conditional
 * lastprivate): those keep state in libgomp's work share, so only a plain runtime loop is taken.
 */
typedef bool (*loop_start_fn)(long, long, long, long, long, long *, long *, uintptr_t *, void **);
EXPORT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk_size,
                            long *istart, long *iend, uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched)) {
                if (!reductions && !mem && istart) {
                        struct lbp_range r = range_long("GOMP_loop_start", start, end, incr);
                        if (lbp__begin(SITE, &r))
                                return next_long(istart, iend);
                } else {
                        lbp__refuse(SITE, "GOMP_loop_start",
                                    "has task reductions or state libgomp keeps for it");
                }
        }
        return LBP_REAL(loop_start_fn, GOMP_loop_start)(start, end, incr, sched, chunk_size, istart,
                                                        iend, reductions, mem);
}

typedef bool (*loop_ull_start_fn)(bool, ull, ull, ull, long, ull, ull *, ull *, uintptr_t *,
                                  void **);
EXPORT bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk_size,
                                ull *istart, ull *iend, uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched)) {
                if (!reductions && !mem && istart) {
                        struct lbp_range r = range_ull("GOMP_loop_ull_start", up, start, end, incr);
                        if (lbp__begin(SITE, &r))
                                return next_ull(istart, iend);
                } else {
                        lbp__refuse(SITE, "GOMP_loop_ull_start",
                                    "has task reductions or state libgomp keeps for it");
                }
        }
        return LBP_REAL(loop_ull_start_fn, GOMP_loop_ull_start)(
                up, start, end, incr, sched, chunk_size, istart, iend, reductions, mem);
}

/* ---------------------------------------------------------------------------------------------
 * The end of a loop: lbomp's barrier for its runs, libgomp's for the others
 */

typedef void (*void_fn)(void);
typedef bool (*bool_fn)(void);

EXPORT void GOMP_loop_end(void)
{
        if (lbp__on && lbp__open()) {
                lbp__end();
                return;
        }
        LBP_REAL(void_fn, GOMP_loop_end)();
}

/* A `nowait` loop of lbomp's still ends at its barrier: every thread of the team reaches the end
 * of a worksharing loop, so the barrier costs time, never correctness. */
EXPORT void GOMP_loop_end_nowait(void)
{
        if (lbp__on && lbp__open()) {
                lbp__end();
                return;
        }
        LBP_REAL(void_fn, GOMP_loop_end_nowait)();
}

/* lbomp takes no loop while cancellation is enabled, so its runs are never cancelled. */
EXPORT bool GOMP_loop_end_cancel(void)
{
        if (lbp__on && lbp__open()) {
                lbp__end();
                return false;
        }
        return LBP_REAL(bool_fn, GOMP_loop_end_cancel)();
}

/* ---------------------------------------------------------------------------------------------
 * parallel for schedule(runtime): the team is made by GOMP_parallel, each thread begins the loop
 * at its body's first `next`
 */

typedef void (*body_fn)(void *);
typedef void (*parallel_fn)(body_fn, void *, unsigned, unsigned);
typedef void (*parallel_loop_fn)(body_fn, void *, unsigned, long, long, long, unsigned);

static void body(void *arg)
{
        struct lbp_pending *p = arg;
        lbp__set_pending(p);
        p->fn(p->data);
        lbp__set_pending(NULL);
}

#define PARALLEL_LOOP(name)                                                                        \
        EXPORT void name(body_fn fn, void *data, unsigned nthreads, long start, long end,          \
                         long incr, unsigned flags)                                                \
        {                                                                                          \
                if (lbp__on && omp_get_level() == 0) {                                             \
                        struct lbp_pending p = {fn, data, SITE, start, end, incr};                 \
                        LBP_REAL(parallel_fn, GOMP_parallel)(body, &p, nthreads, flags);           \
                        return;                                                                    \
                }                                                                                  \
                if (lbp__on)                                                                       \
                        lbp__refuse(SITE, #name,                                                   \
                                    "is in a nested team (lbomp balances the outermost team's "    \
                                    "loops)");                                                     \
                LBP_REAL(parallel_loop_fn, name)(fn, data, nthreads, start, end, incr, flags);     \
        }

PARALLEL_LOOP(GOMP_parallel_loop_runtime)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* The GOMP_1.0 form (GCC before 4.9): the team starts, the caller runs the body on its own
 * thread and ends the region with GOMP_parallel_end. */
typedef void (*parallel_start_fn)(body_fn, void *, unsigned);
typedef void (*parallel_loop_start_fn)(body_fn, void *, unsigned, long, long, long);
static __thread struct lbp_pending old_form;

EXPORT void GOMP_parallel_loop_runtime_start(body_fn fn, void *data, unsigned nthreads, long start,
                                             long end, long incr)
{
        if (lbp__on && omp_get_level() == 0) {
                old_form = (struct lbp_pending){fn, data, SITE, start, end, incr};
                LBP_REAL(parallel_start_fn, GOMP_parallel_start)(body, &old_form, nthreads);
                lbp__set_pending(&old_form);
                return;
        }
        if (lbp__on)
                lbp__refuse(SITE, "GOMP_parallel_loop_runtime_start",
                            "is in a nested team (lbomp balances the outermost team's loops)");
        LBP_REAL(parallel_loop_start_fn, GOMP_parallel_loop_runtime_start)
        (fn, data, nthreads, start, end, incr);
}

/* ---------------------------------------------------------------------------------------------
 * Ordered and doacross loops: their order is the runtime's to keep
 */

#define ORDERED_WHY "is ordered (only the runtime's own schedule keeps its order)"

EXPORT bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long *istart,
                                            long *iend)
{
        if (lbp__on)
                lbp__refuse(SITE, "GOMP_loop_ordered_runtime_start", ORDERED_WHY);
        return LBP_REAL(start_long_fn, GOMP_loop_ordered_runtime_start)(start, end, incr, istart,
                                                                        iend);
}

EXPORT bool GOMP_loop_ull_ordered_runtime_start(bool up, ull start, ull end, ull incr, ull *istart,
                                                ull *iend)
{
        if (lbp__on)
                lbp__refuse(SITE, "GOMP_loop_ull_ordered_runtime_start", ORDERED_WHY);
        return LBP_REAL(start_ull_fn, GOMP_loop_ull_ordered_runtime_start)(up, start, end, incr,
                                                                           istart, iend);
}

EXPORT bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk_size,
                                    long *istart, long *iend, uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched))
                lbp__refuse(SITE, "GOMP_loop_ordered_start", ORDERED_WHY);
        return LBP_REAL(loop_start_fn, GOMP_loop_ordered_start)(start, end, incr, sched, chunk_size,
                                                                istart, iend, reductions, mem);
}

EXPORT bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched,
                                        ull chunk_size, ull *istart, ull *iend,
                                        uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched))
                lbp__refuse(SITE, "GOMP_loop_ull_ordered_start", ORDERED_WHY);
        return LBP_REAL(loop_ull_start_fn, GOMP_loop_ull_ordered_start)(
                up, start, end, incr, sched, chunk_size, istart, iend, reductions, mem);
}

#define DOACROSS_WHY "is ordered(n) (doacross: only the runtime's own schedule keeps its order)"

typedef bool (*doacross_fn)(unsigned, long *, long *, long *);
EXPORT bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long *counts, long *istart,
                                             long *iend)
{
        if (lbp__on)
                lbp__refuse(SITE, "GOMP_loop_doacross_runtime_start", DOACROSS_WHY);
        return LBP_REAL(doacross_fn, GOMP_loop_doacross_runtime_start)(ncounts, counts, istart,
                                                                       iend);
}

typedef bool (*doacross_ull_fn)(unsigned, ull *, ull *, ull *);
EXPORT bool GOMP_loop_ull_doacross_runtime_start(unsigned ncounts, ull *counts, ull *istart,
                                                 ull *iend)
{
        if (lbp__on)
                lbp__refuse(SITE, "GOMP_loop_ull_doacross_runtime_start", DOACROSS_WHY);
        return LBP_REAL(doacross_ull_fn, GOMP_loop_ull_doacross_runtime_start)(ncounts, counts,
                                                                               istart, iend);
}

typedef bool (*doacross_start_fn)(unsigned, long *, long, long, long *, long *, uintptr_t *,
                                  void **);
EXPORT bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk_size,
                                     long *istart, long *iend, uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched))
                lbp__refuse(SITE, "GOMP_loop_doacross_start", DOACROSS_WHY);
        return LBP_REAL(doacross_start_fn, GOMP_loop_doacross_start)(
                ncounts, counts, sched, chunk_size, istart, iend, reductions, mem);
}

typedef bool (*doacross_ull_start_fn)(unsigned, ull *, long, ull, ull *, ull *, uintptr_t *,
                                      void **);
EXPORT bool GOMP_loop_ull_doacross_start(unsigned ncounts, ull *counts, long sched, ull chunk_size,
                                         ull *istart, ull *iend, uintptr_t *reductions, void **mem)
{
        if (lbp__on && is_runtime(sched))
                lbp__refuse(SITE, "GOMP_loop_ull_doacross_start", DOACROSS_WHY);
        return LBP_REAL(doacross_ull_start_fn, GOMP_loop_ull_doacross_start)(
                ncounts, counts, sched, chunk_size, istart, iend, reductions, mem);
}
