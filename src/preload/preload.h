/*
 * preload.h — liblbomp-preload.so: the `schedule(runtime)` loops of an unchanged OpenMP program run
 * by lbomp when OMP_SCHEDULE=lbomp[,policy]. gomp.c and kmpc.c interpose the entry points GCC's
 * libgomp and LLVM's libomp export for such loops; this part decides, once per loop run and the
 * same way on every thread of the team, whether lbomp runs it (a persistent chunked loop of
 * loop.h keyed by call site and range) or the real runtime does, and keeps each thread's run.
 * Every entry point forwards to the real runtime unchanged unless OMP_SCHEDULE named lbomp.
 */
#ifndef LBOMP_PRELOAD_H
#define LBOMP_PRELOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lbomp.h"

/* The OpenMP calls the preload makes, resolved in the program's own runtime (the preload links
 * none, so that one library serves libgomp and libomp programs alike). */
int omp_get_level(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
int omp_get_max_threads(void);
int omp_get_cancellation(void);

/* 1 once the constructor found OMP_SCHEDULE=lbomp[,policy] and made the runtime; 0: every entry
 * point forwards. Written before main, read-only afterwards. */
extern int lbp__on;

/* The real function `name` of the runtime after this library (dlsym(RTLD_NEXT)), cached in *slot.
 * NULL when no runtime has it. */
void *lbp__real(void **slot, const char *name);
#define LBP_REAL(type, name)                                                                       \
        ({                                                                                         \
                static void *slot_;                                                                \
                (type) lbp__real(&slot_, #name);                                                   \
        })

/* An iteration space: values start, start + incr, ... (count of them), in the caller's type. */
enum lbp_type { LBP_LONG, LBP_ULL, LBP_I32, LBP_U32, LBP_I64, LBP_U64 };
struct lbp_range {
        enum lbp_type type;
        uint64_t start, end, incr; /* the caller's values, two's complement */
        int64_t count;
        const char *entry; /* the entry point, for messages */
        const void *loc;   /* kmpc: the ident_t (source location), else NULL */
};

/* Count of a GOMP range (end exclusive; ull: `up` says the direction) or of a kmpc range (ub
 * inclusive); -1 when it does not fit an int64_t, -2 for a zero increment. */
int64_t lbp__count_gomp(bool is_ull, bool up, uint64_t start, uint64_t end, uint64_t incr);
int64_t lbp__count_kmpc(bool is_unsigned, int bits, uint64_t lb, uint64_t ub, int64_t st);

/* Begins the calling thread's part of a run at call site `site`: true when lbomp runs it (the
 * thread's run is open: lbp__next, lbp__end), false when the real runtime must (and then the
 * reason was said once on stderr, unless the loop is simply empty). Same answer on every thread
 * of the team. */
bool lbp__begin(const void *site, const struct lbp_range *r);
/* The thread's next chunk [lo, hi) of indices 0..count-1; false when it has none left. */
bool lbp__next(int64_t *lo, int64_t *hi);
/* Whether the calling thread has an lbomp run open at this nesting level. */
bool lbp__open(void);
/* The range of the thread's open run. */
const struct lbp_range *lbp__range(void);
/* Ends the thread's part: the loop's barrier (and LB step when due). */
void lbp__end(void);
/* A loop lbomp does not take (ordered, task reductions): one line on stderr per site and reason.
 */
void lbp__refuse(const void *site, const char *entry, const char *why);

/* A combined `parallel for` (GOMP_parallel_loop_*runtime*): the loop each thread of the new team
 * begins at its first `next` call. */
struct lbp_pending {
        void (*fn)(void *);
        void *data;
        const void *site;
        long start, end, incr;
};
/* The pending loop of the calling thread (set by the team's body, consumed by the first next),
 * or NULL. */
struct lbp_pending *lbp__take_pending(void);
void lbp__set_pending(struct lbp_pending *p);

#endif
