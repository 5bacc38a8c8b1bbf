/*
 * chunks.h — an LBOMP_FOR loop's chunks: persistent, contiguous ranges of its indices, each one
 * task of the loop's own task set, so that the runtime times and balances chunks exactly as it does
 * tasks. How many chunks, and where they are cut, comes from what the last LB step measured: each
 * chunk should cost about a target that keeps lbomp's cost per chunk small and the loop's balance
 * fine enough for the tolerance, so a hot region gets short chunks and a hot index may become a
 * chunk of its own. Cuts never cross a change of worker, so new chunks keep the mapping (and the
 * data in each core's cache) of the old ones. When the loop's range changes, the chunks follow it,
 * and costs carry over by index. Every run of every task set begins in lbomp__chunks_prepare(),
 * which also counts the program's time steps (tsteps.h). Below it: tsteps, the task table, and
 * what the runtime's LB step left (runtime.h).
 */
#ifndef LBOMP_CHUNKS_H
#define LBOMP_CHUNKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct lbomp;

/* A chunk: the indices [lo, hi). Its address is the user pointer of its task. */
struct lbomp__chunk {
        int64_t lo, hi;
};

/* A piece of the index range with its cost per step and its worker (LBOMP__PENDING: none). */
struct lbomp__seg {
        int64_t lo, hi;
        double cost;
        uint32_t owner;
};

#define LBOMP__CHUNKS_PER_WORKER 16 /* first cut, before anything is measured */
#define LBOMP__CHUNKS_MAX        (1u << 24)
/* A chunk is timed on the wall clock: one that lasts as long as a scheduler's time slice holds a
 * preemption in most steps, and the median over the window can no longer filter it out (a 5 ms
 * chunk on a loaded machine measured 2-4x its cost). Chunks stay well below a slice. */
#define LBOMP__CHUNK_MAX_S 100e-6

struct lbomp__chunks {
        char *name; /* for messages */
        /* The range the team passes in the run being gathered: every thread folds its begin and
         * end in; they all agree when OR equals AND. req[2 t], req[2 t + 1] is thread t's range
         * (t < req_cap), for the message when they do not. */
        _Atomic uint64_t b_or, b_and, e_or, e_and;
        int64_t *req;
        uint32_t req_cap;
        /* The chunks: contiguous, ascending, covering [begin, end). */
        bool built;
        int64_t begin, end;
        struct lbomp__chunk *c;
        uint32_t n;
        uint64_t len_first, len_last; /* lengths of the edge chunks when they were cut */
        /* What the last LB step measured, by index (the chunks it saw): costs carry over. */
        struct lbomp__seg *seg;
        uint32_t nseg, seg_cap;
        size_t lb_seen;   /* LB steps of the loop's task set already read */
        double lb_task_s; /* the last LB step's decision and apply time per chunk */
        double tick_s;    /* one reading of the task clock */
        double target_s;  /* the chunk cost aimed at since the last LB step (moves by 2x or more) */
        /* This time step's range, to refuse a second, different range under the same name. */
        int64_t ts_begin, ts_end;
        /* What happened to the chunks. */
        uint64_t recuts;   /* new chunks from measured costs */
        uint64_t rebuilds; /* new chunks because the range changed */
        uint64_t resizes;  /* the range changed and the edge chunks followed it */
};

/* Empty, for a team of up to `req_cap` threads named in messages (more are checked, not named).
 * 0 or -ENOMEM. */
int lbomp__chunks_init(struct lbomp__chunks *ch, const char *name, uint32_t req_cap, double tick_s);
void lbomp__chunks_free(struct lbomp__chunks *ch);

/* Thread `self` of the team asks for [begin, end) in the run it is about to gather for. */
void lbomp__chunks_ask(struct lbomp__chunks *ch, uint32_t self, int64_t begin, int64_t end);

/*
 * Every run of every task set begins here, in the serial part of the gathering, once the team's
 * size is settled: the time step it belongs to, and for a loop the team's range (refused with
 * -EINVAL and a message when the threads disagree, or when the loop already ran with another range
 * in this time step), new chunks from the last LB step's costs, and chunks that follow a new
 * range. 0, -EINVAL, or -ENOMEM (the chunks stay as they were).
 */
int lbomp__chunks_prepare(struct lbomp *lb);

/* Whether the coming run of lb (a loop that has not measured its chunks yet) should time them
 * all: its first run gives the chunks before the first LB step. False for a runtime's own tasks. */
bool lbomp__chunks_want_times(const struct lbomp *lb);

/* Seconds per step a chunk should cost: a `tolerance`-fine share of a worker's load but at most
 * LBOMP__CHUNK_MAX_S, and at least 200 times lbomp's own cost per chunk and step, but no more than
 * a worker's load. */
double lbomp__chunks_target(double total, uint32_t nworkers, double tolerance, double per_chunk_s);

/*
 * Cuts the pieces (contiguous, ascending, non-empty) into chunks of about `target` cost each,
 * a piece's cost spread evenly over its indices, never across a change of owner nor into a piece
 * that costs `target` or more (it is cut alone); each chunk gets
 * the owner of the pieces it comes from. Returns 0 and new arrays in *c, *owner (free them) with
 * *n chunks, or -ENOMEM.
 */
int lbomp__chunks_cut(const struct lbomp__seg *piece, uint32_t npiece, double target,
                      struct lbomp__chunk **c, uint32_t **owner, uint32_t *n);

#endif
