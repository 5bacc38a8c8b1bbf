/*
 * tsteps.h — the program's time steps. A runtime's own task set (LBOMP_FOR_EACH_TASK, lbomp_step)
 * and each of its LBOMP_FOR loops is a task set that runs once or several times per time step of
 * the program; they share one count of time steps, and the balancing period of every task set
 * counts time steps, not its own runs. A time step begins either where the program marks it
 * (lbomp_time_step()) or, until it does, at each run of the "head": the program's first task set,
 * unless it was a setup loop (see lbomp__tsteps_begin). Below it: nothing.
 */
#ifndef LBOMP_TSTEPS_H
#define LBOMP_TSTEPS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct lbomp__tset;

/* Shared by a runtime and its loops; owned by the runtime. */
struct lbomp__tsteps {
        pthread_mutex_t lock;             /* runs of different teams would race without it */
        uint64_t now;                     /* the current time step (0-based) */
        _Atomic uint64_t begun;           /* time steps begun: 0 before any run, then now + 1 */
        const struct lbomp__tset *head;   /* whose runs begin time steps */
        const struct lbomp__tset *former; /* the head it replaced, as a setup loop */
        bool marked;                      /* the program marks time steps (lbomp_time_step()) */
        _Atomic int mark;                 /* a mark since the last run began */
};

/* One task set's place in the time steps. */
struct lbomp__tset {
        uint64_t t;    /* time step of its last run */
        uint64_t runs; /* runs begun */
        uint64_t t_lb; /* time step after which its last LB step ran, + 1 (0: none yet) */
        uint64_t t_first;
};

void lbomp__tsteps_init(struct lbomp__tsteps *ts);
void lbomp__tsteps_destroy(struct lbomp__tsteps *ts);

/*
 * Task set s begins a run (in the serial part of its team's gathering). Without marks, the first
 * task set to run is the head and each of its runs begins a time step. While the head has run only
 * once, a task set that runs again in the current time step replaces it (the first was a setup
 * loop) and begins a time step; if the replaced head runs again after all, it is the head again
 * and begins one (it was the step's first loop, and the other runs twice per time step). With a
 * mark pending, this run begins a time step, and from the first mark on only marks do. Returns
 * true when s had already run in the time step this run belongs to.
 */
bool lbomp__tsteps_begin(struct lbomp__tsteps *ts, struct lbomp__tset *s);

/* The program says a time step begins: the next run of any task set starts it. Marks that no run
 * separates count once. Thread-safe. */
void lbomp__tsteps_mark(struct lbomp__tsteps *ts);

/*
 * After a run of s in which every task ran, its window holding `measured` such runs: whether its
 * LB step is due, i.e. `period` time steps have begun since its last one (or since its first run).
 * When it is, the LB step is recorded as done at this time step.
 */
bool lbomp__tsteps_due(struct lbomp__tsteps *ts, struct lbomp__tset *s, uint64_t measured,
                       int period);

/* The time step s's window began at: the one after its last LB step, or its first run. */
static inline uint64_t lbomp__tsteps_base(const struct lbomp__tset *s)
{
        return s->t_lb ? s->t_lb : s->t_first;
}

/* The time step whose run closes s's window: its LB step is due after a run in the time step
 * before it (lbomp__tsteps_due), `period` time steps after its last LB step or its first run. */
static inline uint64_t lbomp__tsteps_end(const struct lbomp__tset *s, int period)
{
        return lbomp__tsteps_base(s) + (uint64_t)period;
}

/* Time steps begun so far. Thread-safe. */
uint64_t lbomp__tsteps_count(const struct lbomp__tsteps *ts);

#endif
