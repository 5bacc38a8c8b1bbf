/*
 * window.h — measurement between two LB steps: what each worker carried and owned in every step
 * (so the λ of every step), what each task cost in the steps the next decision reads, the energy
 * counters read where a window starts and ends, and the record of every window and step. Below
 * it: workers, tasks, clock, energy.
 *
 * What the policy is handed. A step costs one counter read per worker at each end; tasks are
 * timed one by one only in the last LBOMP__TIMED steps of each window (every step when the period
 * is that short), because those are the steps the decision reads: a task's cost is its median over
 * them, rescaled so that a worker's tasks add up to what it measured in those steps. So the costs
 * describe the window's end, what the next steps will look like if loads persist, not its average:
 * a hotspot that moved during the window is seen where it is now. What moves faster than that
 * (within the last steps) no plan can follow; the per-step λ records it (a window whose summed
 * loads look balanced while each step was not), and stealing absorbs it within the step. Every
 * step also yields each worker's owned load (the time of its own tasks, whoever ran them, plus its
 * background) and carried load (what its thread ran), from the per-worker reads alone.
 */
#ifndef LBOMP_WINDOW_H
#define LBOMP_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "history.h"
#include "energy.h"
#include "lbomp.h"
#include "workers.h"

struct lbomp__snap;

#define LBOMP__TIMED 3 /* steps at the end of a window whose tasks are timed one by one */

/* One step of the run: its λ (owned and carried; NAN until folded in) and the tasks that did not
 * run in it. */
struct lbomp__steprec {
        float lambda, lambda_run;
        float max_s;     /* the largest owned load of the step, seconds */
        float run_max_s; /* the longest a worker's thread ran in it (its tasks and steals) */
        uint32_t skipped;
        bool clean; /* every task ran: its loads count */
        bool timed; /* its tasks were timed one by one */
};

struct lbomp__window {
        double *ticks;  /* [cap] scaled ticks of each task over the window's timed steps */
        float *hist;    /* [cap * LBOMP__TIMED] its value in each timed step it ran in */
        uint32_t *hrun; /* [cap * LBOMP__TIMED] the worker that ran it then */
        /* Its median on its owner in the last window where its owner alone ran it (reference
         * units), and that owner (UINT32_MAX: none): a task that migrated since is timed on two
         * workers (lbomp__window_speeds). */
        float *last_v;
        uint32_t *last_w;
        uint8_t *ns; /* [cap] timed runs it was measured in (hist keeps the last ones) */
        uint32_t cap;
        uint64_t first;       /* first step of the window being measured */
        uint64_t steps;       /* its steps measured: those in which every task ran */
        uint32_t timed;       /* of which timed task by task */
        uint32_t steal_steps; /* steps of the window in which stealing was armed */
        uint32_t steal_front; /* of which some worker's thieves took from its front */
        uint32_t nexcess;     /* timed steps kept in the workers' win_timed_owned */
        uint32_t descheduled; /* bit k: in kept timed step k, some worker's thread was off its
                                 core for more than LBOMP__DISTURBED of its span */
        double wall0;         /* when it started */
        double lam_sum;       /* Σ per-step λ over its steps */
        double lam_max;       /* max per-step λ */
        double lamr_sum;      /* Σ per-step λ of what the workers carried */
        /* the run's steps (struct lbomp__steprec): the last 16 × LBOMP_HISTORY kept; steprecs.n
         * counts every one */
        struct lbomp__history steprecs;
        uint64_t folded; /* steps whose loads are folded in (the rest wait in the workers' rings) */
        /* The timed step `pending_step` is not folded task by task yet: each worker does it when
         * it enters the next step (lbomp__window_aggregate), or a serial part for all of them. */
        bool pending;
        uint64_t pending_step;
        bool stole_last; /* stealing was armed in the last step recorded: its runners are written */
        /* the run's windows (lbomp_window_stats_t): the last LBOMP_HISTORY kept, recs.n counts
         * every one; the first one, and the tasks stolen and steps with stealing armed in those no
         * longer kept, for the totals */
        struct lbomp__history recs;
        lbomp_window_stats_t first_rec;
        uint64_t stolen_gone, steal_steps_gone, steal_front_gone;
        /* energy: opened at create, read where windows start and end, and after steps */
        struct lbomp__energy *energy;
        double energy_t0;     /* when the counters were opened */
        double energy_t_last; /* last successful reading */
        double *mark;         /* [ndomains] totals at the start of the current window */
        /* joules per domain (ndomains doubles) of the windows since the counters were opened:
         * window i's are record i - dom_first */
        struct lbomp__history dom;
        uint64_t dom_first;
};

/* Opens the energy counters of `powercap_root` (NULL: the machine's); replaces the current ones
 * only on success (-ENOMEM otherwise; unavailable counters are not an error). */
int lbomp__window_energy_open(struct lbomp__window *win, const char *powercap_root, bool verbose);
/* After a step: a reading when 10 ms have passed since the last one, so that the run's total
 * ends within 10 ms of its last step. */
void lbomp__window_energy_tick(struct lbomp__window *win);

/* An empty window keeping the last `keep` windows and 16 × keep steps. Allocates nothing. */
void lbomp__window_init(struct lbomp__window *win, uint32_t keep);
/* Room for tasks in slots below nslots, and for one more step record. 0 or -ENOMEM. */
int lbomp__window_reserve(struct lbomp__window *win, uint32_t nslots);
/* λ of the window's steps so far (max owned load over the mean, per step), averaged; 1 without
 * steps. */
static inline double lbomp__window_step_lambda(const struct lbomp__window *win)
{
        return win->steps ? win->lam_sum / (double)win->steps : 1.0;
}
/* Steps recorded so far, and step i's record (NULL when it is no longer kept or not there). */
static inline uint64_t lbomp__window_nsteps(const struct lbomp__window *win)
{
        return win->steprecs.n;
}
static inline struct lbomp__steprec *lbomp__window_steprec(const struct lbomp__window *win,
                                                           uint64_t i)
{
        return (struct lbomp__steprec *)lbomp__history_at(&win->steprecs, i);
}
/* Windows closed so far, and window i's record (NULL when no longer kept or not there); its
 * joules per domain, or NULL. */
static inline uint64_t lbomp__window_count(const struct lbomp__window *win)
{
        return win->recs.n;
}
static inline const lbomp_window_stats_t *lbomp__window_rec(const struct lbomp__window *win,
                                                            uint64_t i)
{
        return (const lbomp_window_stats_t *)lbomp__history_at(&win->recs, i);
}
static inline const double *lbomp__window_domains(const struct lbomp__window *win, uint64_t i)
{
        return i >= win->dom_first
                       ? (const double *)lbomp__history_at(&win->dom, i - win->dom_first)
                       : NULL;
}
/* Tasks stolen, steps with stealing armed and those of them with some worker's thieves at its
 * front, over every window of the run (those no longer kept included). */
void lbomp__window_run_sums(const struct lbomp__window *win, uint64_t *stolen,
                            uint64_t *steal_steps, uint64_t *steal_front);
/* The slots given to new tasks: what they measured for a removed task is forgotten. */
void lbomp__window_forget(struct lbomp__window *win, const uint32_t *slots, uint32_t n);
/* The same for slots 0..nslots-1 (a task table rebuilt as a whole). */
void lbomp__window_forget_all(struct lbomp__window *win, uint32_t nslots);
/* A new window starts at step `steps` (after an LB step, or when the team changed); with
 * `read_energy`, the counters are read to mark its start (false: the reading that closed the last
 * window is the mark). */
void lbomp__window_restart(struct lbomp__window *win, struct lbomp__workers *ws, uint32_t nslots,
                           uint64_t steps, bool read_energy);
/* Whether a run in time step t of a window that ends at time step `end` is timed: one of the
 * window's last LBOMP__TIMED time steps (every run of them, for a task set that runs several
 * times per time step; the times of its last LBOMP__TIMED runs are kept). */
static inline bool lbomp__window_timed(uint64_t t, uint64_t end)
{
        return t + LBOMP__TIMED >= end;
}

/*
 * Worker w's part of step `step` ended (on its thread, before the barrier): from its span, its
 * time in tasks and its CPU time when read, the factor that scales its task times down to CPU
 * time (LBOMP_TIME=cpu) where the thread was descheduled, and its loads into its ring.
 */
void lbomp__window_step_end(struct lbomp__worker *w, const struct lbomp__clock *clock,
                            uint64_t step);
/*
 * The step is over (the serial part of its barrier): its record, and, when it is `clean` (every
 * task ran), one more step in the window (`steal`: one in which stealing was armed; `front`:
 * some worker's thieves took from its front). Its loads are folded in later. Call
 * lbomp__window_reserve first.
 */
void lbomp__window_step(struct lbomp__window *win, uint64_t skipped, bool clean, bool timed,
                        bool steal, bool front);
/* Whether the workers' rings are full: lbomp__window_fold must run in this serial part. */
static inline bool lbomp__window_ring_full(const struct lbomp__window *win)
{
        return win->steprecs.n - win->folded >= LBOMP__RING;
}
/*
 * Folds the steps waiting in the workers' rings (serial part, or no step running): every
 * worker's owned load (its own share plus what thieves spent in its tasks) and carried load, the
 * λ of each step, and for the clean steps the window's sums.
 */
void lbomp__window_fold(struct lbomp__window *win, struct lbomp__workers *ws,
                        const struct lbomp__clock *clock);
/* Worker `self`, after a clean timed step of parity `par` (the last step recorded): its tasks'
 * times into the window, stolen ones (when stealing was armed in it: who ran each is in
 * `runner`) scaled by their thief's factor. */
void lbomp__window_aggregate(struct lbomp__window *win, struct lbomp__workers *ws, int self,
                             int par);

/* A serial part, with no step running: the pending timed step, for every worker. */
void lbomp__window_aggregate_pending(struct lbomp__window *win, struct lbomp__workers *ws);

/* The mean over the window's last n clean timed steps of the longest a thread ran in each
 * (seconds): what those steps took, stealing included. 0 when there are fewer than n. */
double lbomp__window_timed_run_max(const struct lbomp__window *win, uint32_t n);
/* The median of the same over the window's clean steps from its (skip + 1)-th on, timed or not
 * (*n of them: the last LBOMP__RUN_MEDIAN_MAX whose records are still kept): what a step took
 * under the window's mapping, the first ones after an LB step, which refill the caches of the
 * tasks it moved, left out, and a step slowed by the machine (a descheduled thread) not weighing
 * more than any other. 0 with none. */
#define LBOMP__RUN_MEDIAN_MAX 64
double lbomp__window_run_median(const struct lbomp__window *win, uint32_t skip, uint32_t *n);
/*
 * The snapshot's tasks' times in each of the window's timed steps (seconds, reference units),
 * into step_cost[k][t] for k < the returned count: the runs kept of every task (at most
 * LBOMP__TIMED), oldest first. 0 when the tasks were not all timed the same number of times (tasks
 * added within the window, a task set run several times a step) or fewer than twice: no step can
 * then be read across the tasks.
 */
uint32_t lbomp__window_step_costs(const struct lbomp__window *win, const struct lbomp__snap *s,
                                  double ticks_per_s, double *const *step_cost);
/* The robust costs of worker w's tasks over the window's timed steps, seconds per step, into
 * cost[0..w->n): each task's median (mean below 3 values), rescaled so that they add up to the
 * worker's mean time in them, so that a pause of the thread is not charged to the one task it
 * hit. */
void lbomp__window_costs(const struct lbomp__window *win, const struct lbomp__worker *w,
                         double ticks_per_s, double *cost);
/*
 * At an LB step, with no step running (after the window's steps are folded in): every worker's
 * speed (workers.h) from this window. LBOMP_SPEEDS=off: 1.0. prior: its core's CPU kind only.
 * auto: the prior × rel × share, where share (LBOMP_TIME=cpu, a team with a core per thread) is
 * its thread's CPU time ÷ wall time over the window's steps, and rel moves toward what the tasks
 * timed on more than one worker say (a task that migrated: its mean time on its old owner against
 * that on its new one, in two timed windows in a row; stolen runs are left out, as a thief runs a
 * task with its neighbours' data in the victim's caches, which says nothing of the thief's speed;
 * under LBOMP_TIME=cpu, only between workers whose threads had their cores to themselves); each
 * smoothed over windows, and rounded (1/64, and to 1.0 within 5 %) so that an unshared machine of
 * one kind keeps every speed at exactly 1.0; a speed changes only by more than 10 % (noise moves no
 * task). Shares count relative to the best-served thread's (within 30 % of it, or until a thread
 * was measured below that in 3 windows in a row: 1.0), from windows of 50 ms measured or more. An
 * oversubscribed team measures neither share nor rel.
 */
void lbomp__window_speeds(struct lbomp__window *win, struct lbomp__workers *ws, bool time_wall);
/* Worker w's background (seconds per step) over the window's timed steps. */
double lbomp__window_bg(const struct lbomp__window *win, const struct lbomp__worker *w);
/* A timed step was disturbed (another process took a core, or its caches, for part of it), and
 * the persistent excess leaves it out, when some worker's thread was off its core for more than
 * this share of its span (its CPU time against its wall time, when read: the time off is spread
 * over its tasks, own and stolen, in proportion, and a long one inside one stolen task charged
 * most of the thread's step to the victim), or when the workers' loads add up to less than the
 * steps' lower median total by this share, or to more (the tasks of a step add up to the same work
 * wherever they ran), as long as two steps, or three for the latter, are left. */
#define LBOMP__DISTURBED 0.10
/* The excess that persisted over the window's undisturbed timed steps, as the current speeds
 * predict it: the largest, over workers, of the least predicted time above the step's
 * capacity-weighted mean and of the mean of it less t99 standard errors (≤ 0 when no worker
 * stayed above it at every such step, or by less than the steps' noise); +inf when no timed step
 * was kept. */
double lbomp__window_persistent_excess(const struct lbomp__window *win,
                                       const struct lbomp__workers *ws);
/* λ of the workers' owned loads over the window's timed steps (what the costs of a snapshot
 * would add up to, worker by worker), as predicted times (owned × hw / speed) against the
 * capacity-weighted mean, with the max and mean load per step; 1.0 when none. */
double lbomp__window_timed_lambda(const struct lbomp__window *win, const struct lbomp__workers *ws,
                                  double *max, double *avg);

/*
 * Closes the window that ends at step `steps`: a record with λ of the workers' owned and carried
 * loads, per-step λ, stolen tasks, wall time and energy (one reading, which also marks the next
 * window's start). Returns the record, or NULL when out of memory.
 */
lbomp_window_stats_t *lbomp__window_close(struct lbomp__window *win,
                                          const struct lbomp__workers *ws, uint64_t steps);
void lbomp__window_free(struct lbomp__window *win);

#endif
