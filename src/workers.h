/*
 * workers.h — one worker per OpenMP thread of the team: its core and node, its tasks (ids, user
 * pointers, the step's time slots), its deque for stealing, and what it measured in the step and
 * the window. Placement follows OMP_PROC_BIND=spread over the topology. Below it: topology, deque,
 * the task table.
 */
#ifndef LBOMP_WORKERS_H
#define LBOMP_WORKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "deque.h"
#include "tasks.h"
#include "topology.h"
#include "util.h"

struct lbomp__worker {
        _Alignas(LBOMP__CACHELINE) struct lbomp__deque dq;
        _Alignas(LBOMP__CACHELINE) uint32_t *tasks; /* ids of this worker's tasks, ascending */
        void **data;                                /* [cap] their user pointers */
        uint32_t *victims;                          /* workers to steal from, nearest first */
        uint32_t nvictims;
        uint64_t *ticks;  /* [cap] ticks of tasks[i] this step, written by whoever ran it */
        uint32_t *runner; /* [cap] worker that ran tasks[i] this step (stealing only) */
        double scale;     /* this step's factor from wall to CPU time in tasks (LBOMP_TIME=cpu),
                             read by owners of stolen tasks after the barrier */
        uint32_t n, cap;
        int core, node; /* topology core index and node */
        int bind_rc;    /* 0 bound, 1 left to OpenMP, negative errno: binding refused */
        bool bound_once;
        /* this step (owner only) */
        uint64_t step_t0;
        double cpu0;     /* thread CPU time at the start of the step (LBOMP_TIME=cpu) */
        double busy_s;   /* time in tasks this step, scaled */
        double bg_s;     /* the rest of the step's span (or CPU time) */
        uint64_t stolen; /* tasks this worker stole this step */
        /* this window (owner only) */
        double win_bg_s;   /* span not spent in tasks */
        double win_busy_s; /* time in tasks it ran (its own and stolen) */
        uint64_t win_stolen;
        uint64_t steps;      /* steps this worker has run */
        uint64_t win_steps;  /* steps of the current window */
        uint64_t skipped;    /* tasks left when a thread broke out of the loop */
        uint64_t clock_back; /* readings earlier than the previous one, counted as 0 */
        /* data moves of the current LB step (migrate.c), summed by the LB step */
        uint32_t data_moves;
        uint64_t data_bytes;
        int data_error;
};

struct lbomp__workers {
        int n;
        struct lbomp__worker *w;
        bool oversubscribed; /* more workers than PUs we may run on */
};

/*
 * Makes n workers (1..LBOMP__MAX_WORKERS): keeps the first min(n, old) with their tasks, gives
 * the tasks of the workers that are gone back to placement, and places every worker on a core.
 * On failure (-ENOMEM) nothing changed.
 */
int lbomp__workers_resize(struct lbomp__workers *ws, int n, struct lbomp__tasks *tasks,
                          const struct lbomp__topo *topo, enum lbomp__steal steal);
/* Cores, nodes and stealing victims of every worker, after the topology changed. */
void lbomp__workers_place(struct lbomp__workers *ws, const struct lbomp__topo *topo,
                          enum lbomp__steal steal);
/*
 * Gives pending tasks a worker (contiguous blocks of ids, as schedule(static) would) and rebuilds
 * every worker's arrays in ascending id order. One thread, no step running. 0 or -ENOMEM (then the
 * arrays are unchanged and tasks->dirty stays set).
 */
int lbomp__workers_fill(struct lbomp__workers *ws, struct lbomp__tasks *tasks);
/* Binds the calling thread to worker w's core, once (not with a profile, a flat host, or when
 * OpenMP binds because the user set OMP_PROC_BIND/OMP_PLACES). */
void lbomp__workers_bind(struct lbomp__workers *ws, int w, const struct lbomp__topo *topo,
                         bool omp_binds);
void lbomp__workers_free(struct lbomp__workers *ws);

#endif
