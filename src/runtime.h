/*
 * runtime.h — the runtime object behind lbomp_t: the parts it is made of, each owned by its own
 * file, and what belongs to the runtime as a whole (the step counter, the result of the last
 * step). Only the files that implement the public API and the step include it; the parts they use
 * take their own structures.
 */
#ifndef LBOMP_RUNTIME_H
#define LBOMP_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "chunks.h"
#include "clock.h"
#include "config.h"
#include "lbomp.h"
#include "lbstep.h"
#include "migrate.h"
#include "tasks.h"
#include "team.h"
#include "topology.h"
#include "tsteps.h"
#include "window.h"
#include "workers.h"

struct lbomp {
        struct lbomp__config cfg;
        struct lbomp__topo topo;
        struct lbomp__clock clock;
        struct lbomp__tasks tasks;
        struct lbomp__workers ws;
        struct lbomp__team team;
        struct lbomp__window win;
        struct lbomp__lbs lbs;
        struct lbomp__data data;
        /* Read by every thread entering a step, written only outside steps or when the team
         * gathers (the serial parts of the step barrier publish in team.bar.word instead). */
        bool started;              /* a step has run: topology and team are fixed */
        bool omp_binds;            /* OMP_PROC_BIND set by the user: OpenMP binds, not us */
        int team_n;                /* threads of the step's team */
        uint64_t gathered_version; /* tasks.version at the last gathering */
        int prepare_rc;            /* the step could not start: 0 or a negative errno */
        bool begun;    /* the gathering began this step's time step (else the step's end does) */
        bool refilled; /* the workers' arrays were rebuilt outside a step (lbomp_task_alloc):
                          the next step gathers */
        /* Loops (loop.h): a runtime's own task set and each of its LBOMP_FOR loops, which is a
         * runtime of its own made by loop.c, share the program's time steps. */
        struct lbomp__tsteps *ts;     /* the runtime's (ts_own); in a loop, its runtime's */
        struct lbomp *root;           /* in a loop: the runtime it belongs to; NULL otherwise */
        struct lbomp__chunks *chunks; /* in a loop: its range and chunks; NULL otherwise */
        struct lbomp__loops *_Atomic loops; /* the runtime's LBOMP_FOR loops, or NULL */
        /* Steps completed (for the API; the team reads the step barrier's word). Written at every
         * step, as are the time steps below: away from what the entering threads read. */
        _Alignas(LBOMP__CACHELINE) uint64_t steps;
        /* Stealing is armed in the steps before this one (step.c, steal_wanted): after a step
         * whose threads would have waited for the last one, and after a gathering that left the
         * workers' loads unknown (step.c, gathering_unknown). The serial parts alone read it. */
        uint64_t steal_until;
        struct lbomp__tsteps ts_own;
        struct lbomp__tset tset; /* this task set's place in the time steps */
        /* The result of the last step: 0 or a negative errno, and its message (under team.lock:
         * refusals are written by whichever threads were refused). */
        _Alignas(LBOMP__CACHELINE) _Atomic int step_rc;
        char step_msg[512];
};

/* The stealing mode changed between steps (lbomp_set_steal): the next step, whose word the last
 * one's end published, steals only as the new mode lets it (step.c). */
void lbomp__step_steal_changed(struct lbomp *lb);

#endif
