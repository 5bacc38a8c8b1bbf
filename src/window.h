/*
 * window.h — measurement between two LB steps: what each task cost in every step of the window
 * (scaled from wall to CPU time where a thread was descheduled), what each worker spent in tasks
 * and around them, the energy counters read where a window starts and ends, and the record of
 * every window. Below it: workers, tasks, clock, energy.
 */
#ifndef LBOMP_WINDOW_H
#define LBOMP_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "energy.h"
#include "lbomp.h"
#include "workers.h"

#define LBOMP__HIST 8 /* steps of each task kept for the robust cost */

struct lbomp__window {
        double *ticks; /* [cap] scaled ticks of each task in this window */
        float *hist;   /* [cap * LBOMP__HIST] its last steps' values, for the median */
        uint32_t cap;
        uint64_t first;         /* first step of the window being measured */
        uint64_t steps;         /* its steps measured: those in which every task ran */
        uint64_t tasks_version; /* the task set it measures (lbomp__tasks.version) */
        double wall0;           /* when it started */
        /* records */
        lbomp_window_stats_t *rec;
        size_t n, rec_cap;
        /* energy: opened at create, read where windows start and end, and after steps */
        struct lbomp__energy *energy;
        double energy_t0;     /* when the counters were opened */
        double energy_t_last; /* last successful reading */
        double *mark;         /* [ndomains] totals at the start of the current window */
        double *dom_j;        /* [dom_cap * ndomains] joules per domain of each window */
        size_t dom_cap;
};

/* Opens the energy counters of `powercap_root` (NULL: the machine's); replaces the current ones
 * only on success (-ENOMEM otherwise; unavailable counters are not an error). */
int lbomp__window_energy_open(struct lbomp__window *win, const char *powercap_root, bool verbose);
/* After a step: a reading when 10 ms have passed since the last one, so that the run's total
 * ends within 10 ms of its last step. */
void lbomp__window_energy_tick(struct lbomp__window *win);

/* Room for tasks with ids below ntask. 0 or -ENOMEM. */
int lbomp__window_reserve(struct lbomp__window *win, uint32_t ntask);
/* A new window starts at step `steps` (after an LB step, or when the task set changed); with
 * `read_energy`, the counters are read to mark its start (false: the reading that closed the last
 * window is the mark). */
void lbomp__window_restart(struct lbomp__window *win, struct lbomp__workers *ws, uint32_t ntask,
                           uint64_t steps, bool read_energy);

/*
 * The end of worker w's part of a step: `busy` ticks in its tasks over a span of `span` ticks.
 * With cpu time (not time_wall), tasks that took longer on the wall clock than the thread ran are
 * scaled down to its CPU time; the rest of its CPU time is its background. Sets w->scale, w->busy_s
 * and w->bg_s.
 */
void lbomp__window_step_end(struct lbomp__worker *w, const struct lbomp__clock *clock,
                            bool time_wall, uint64_t busy, int64_t span);
/* Worker `self`, after the barrier that ends the tasks: its step into the window (its tasks'
 * times, stolen ones scaled by their thief's factor, and its own sums). */
void lbomp__window_aggregate(struct lbomp__window *win, struct lbomp__workers *ws, int self,
                             bool steal);

/* The robust costs of worker w's tasks over the window, seconds per step, into cost[0..w->n):
 * each task's median step (with 3 steps or more), rescaled so that they add up to the worker's
 * mean time in tasks, so that a pause of the thread is not charged to the one task it hit. */
void lbomp__window_costs(const struct lbomp__window *win, const struct lbomp__worker *w,
                         uint64_t steps, double ticks_per_s, double *cost);

/*
 * Closes the window that ends at step `steps`: a record with λ of `load` (owner-based, [n]), the
 * workers' own λ, stolen tasks, wall time and energy (one reading, which also marks the next
 * window's start). Returns the record, or NULL when out of memory.
 */
lbomp_window_stats_t *lbomp__window_close(struct lbomp__window *win,
                                          const struct lbomp__workers *ws, const double *load,
                                          uint64_t steps);
void lbomp__window_free(struct lbomp__window *win);

#endif
