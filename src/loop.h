/*
 * loop.h — index loops (LBOMP_FOR): a runtime keeps any number of loops, each found by a key and
 * each a task set of its own (a runtime made by loop.c that shares the configuration, topology,
 * clock and time steps of the runtime it belongs to), whose tasks are the loop's chunks
 * (chunks.h). Every thread of the team runs a loop as begin → next chunk … → end, exactly as the
 * LBOMP_FOR macro does; the end is the loop's barrier, where its own LB step runs when its period
 * is over. Below it: the step (step.c), chunks, tsteps, and the parts a runtime is made of.
 *
 * The internal iterator, for C code that is not the macro (the preload of `schedule(runtime)`
 * loops; every call from the OpenMP thread that runs that part of the loop):
 *
 *   struct lbomp__loop_key key = {.site = call_site, .begin = b, .end = e}; // or {.name = "force"}
 *   struct lbomp__loop *l;
 *   int rc = lbomp__loop_find(lb, &key, &l);    // any thread, any time; makes it on first use
 *   lbomp_for_t it = lbomp__loop_begin(l, b, e); // every thread of the team, same [b, e)
 *   int64_t lo, hi;
 *   while (lbomp_for_next(&it, &lo, &hi))        // this thread's next chunk [lo, hi), timed
 *           run(lo, hi);                          //   until the next call
 *   lbomp_for_end(&it);                           // every thread: the loop's barrier (and LB)
 *
 * lbomp__loop_begin() returns it.active == 0 when the run is refused (a thread outside the team,
 * a watchdog timeout, threads that disagree on [b, e), out of memory); then no index ran, the next
 * and end calls do nothing, and lbomp_last_step() of the runtime gives the error and its message.
 * Indices are int64_t with increment 1: a caller maps its own iteration space (unsigned, strided)
 * onto [0, count) itself. A loop keyed by site and range is a different loop for each range.
 */
#ifndef LBOMP_LOOP_H
#define LBOMP_LOOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "chunks.h"
#include "lbomp.h"

struct lbomp;

/* What identifies a loop of a runtime: a name (compared by content), or, with name NULL, a call
 * site together with its range. */
struct lbomp__loop_key {
        const char *name;
        const void *site;
        int64_t begin, end;
};

struct lbomp__loop {
        struct lbomp__loop *next; /* in its bucket; set before the loop is published */
        uint64_t hash;
        bool by_site;
        const void *site;
        int64_t key_begin, key_end;
        struct lbomp *rt;        /* its task set */
        struct lbomp__chunks ch; /* its name (for a site: "site 0x…[b, e)"), range and chunks */
};

#define LBOMP__LOOP_BUCKETS 256

struct lbomp__loops {
        pthread_mutex_t lock; /* making a loop */
        struct lbomp__loop *_Atomic bucket[LBOMP__LOOP_BUCKETS];
        struct lbomp__loop **all; /* in the order they were made */
        size_t n, cap;
};

/* The loop of `key` in runtime lb, made on first use with as many workers as the calling team has
 * threads. Thread-safe. 0, -EINVAL (no name and no site), -ENOMEM. */
int lbomp__loop_find(struct lbomp *lb, const struct lbomp__loop_key *key, struct lbomp__loop **out);
/* Thread of the team: enters the loop's run over [begin, end) (see above). */
lbomp_for_t lbomp__loop_begin(struct lbomp__loop *l, int64_t begin, int64_t end);

/* Whether any loop of lb gathers or runs now. */
bool lbomp__loops_busy(const struct lbomp *lb);
/* Frees every loop of lb. No loop may run. */
void lbomp__loops_free(struct lbomp *lb);

#endif
