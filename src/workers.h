/*
 * workers.h — one worker per OpenMP thread of the team: its core and node, its tasks (slots, ids,
 * user pointers, the time slots of timed steps), its deque for stealing, and what it measured in
 * the step and the window. Placement follows OMP_PROC_BIND=spread over the topology. Below it:
 * topology, deque, the task table.
 */
#ifndef LBOMP_WORKERS_H
#define LBOMP_WORKERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "deque.h"
#include "tasks.h"
#include "topology.h"
#include "util.h"

#define LBOMP__STEAL_LOG 8  /* victims a thief remembers per step before it flushes unscaled */
#define LBOMP__RING      16 /* steps of loads a worker keeps until the step barrier folds them */

/* Timed steps of a window whose owned loads are kept (lbomp__window_persistent_excess). */
#define LBOMP__EXCESS_STEPS 8

/* What a worker measured in one step, in seconds: written by the worker before the step's
 * barrier, folded into the window by a serial part within LBOMP__RING steps, so that the step
 * barrier does not read every worker's lines at every step. */
struct lbomp__stepload {
        double own_s;           /* what it carried, minus its time in stolen tasks */
        double run_s;           /* what it carried: CPU time, or its span when not read */
        double busy_s;          /* timed steps: time in tasks (own and stolen), scaled */
        double bg_s;            /* timed steps: the rest of run_s */
        double cpu_s, wall_s;   /* CPU time and span of the step when CPU time was read, else 0 */
        uint64_t stolen;        /* tasks it stole */
        _Atomic uint64_t given; /* written by thieves: their time in its tasks, scaled to CPU
                                   time, in ticks */
};

/* Time a thief spent in one victim's tasks during the step (step.c), charged to the victim. */
struct lbomp__steal_rec {
        uint32_t victim;
        uint64_t ticks;
};

struct lbomp__worker {
        _Alignas(LBOMP__CACHELINE) struct lbomp__deque dq;
        _Alignas(LBOMP__CACHELINE) struct lbomp__stepload ring[LBOMP__RING]; /* by step number */
        _Alignas(LBOMP__CACHELINE) uint32_t *tasks; /* slots of this worker's tasks */
        uint32_t *ids;                              /* [cap] their public ids */
        void **data;                                /* [cap] their user pointers */
        uint32_t *victims;                          /* workers to steal from, nearest first */
        uint32_t nvictims;
        /* Timed steps only, two halves by the parity of the step number, so that the owner
         * folds step s into the window while thieves of step s + 1 already write the other. */
        uint64_t *ticks;  /* [2 * cap] ticks of tasks[i], written by whoever ran it */
        uint32_t *runner; /* [2 * cap] worker that ran tasks[i] */
        double scale[2];  /* factor from wall to CPU time in tasks (LBOMP_TIME=cpu) by parity,
                             read by owners of stolen tasks after the barrier */
        /* [cap + 1] prefix sums of the predicted costs of tasks[0..i) in the last LB step's
         * snapshot, so that the owner's batches are cut by cost (step.c); valid while pcost_ok,
         * which lbomp__workers_fill clears. */
        double *pcost;
        bool pcost_ok;
        /* its tasks were placed since the last LB step began: never timed where they are, so that
         * batches by count are cut finer (deque.h) */
        bool blind;
        /* windows in a row that ended without costs and with imbalanced steps
         * (lbomp__workers_costs_check): from LBOMP__FRONT_AFTER on, thieves take its next tasks
         * rather than its tail (deque.h) */
        uint32_t costless;
        uint32_t n, cap;
        int core, node; /* topology core index and node */
        int bind_rc;    /* 0 bound, 1 left to OpenMP, negative errno: binding refused */
        bool bound_once;
        /* this step (owner only; read by the serial part of the step barrier) */
        uint64_t step_t0;
        double cpu0;           /* thread CPU time at the start of the step, or < 0: not read */
        double cpu_s;          /* CPU time of the step, or < 0: not read */
        int64_t span;          /* ticks from entering the step to leaving its tasks */
        uint64_t busy;         /* ticks in tasks (timed steps; the span otherwise) */
        uint64_t stolen_ticks; /* ticks in tasks stolen from others */
        uint64_t stolen;       /* tasks this worker stole this step */
        double prev_span_s;    /* the last step's span: whether reading CPU time pays */
        /* What one of its tasks costs a thief, away from its data, over what it costs this worker
         * (window.c, update_kappa; 0: never measured, taken as 1): a thief steals only what it
         * can run before this worker would. Read by thieves; written between steps. */
        double kappa;
        /* its tasks' times in pairs of consecutive timed runs, one here and the other by a thief
         * (reference units; window.c, update_kappa) */
        double pair_log;     /* Σ log(away / home), over windows until KAPPA_PAIRS of them */
        uint32_t pairs;      /* how many */
        uint32_t pairs_seen; /* pairs at the last window's end */
        struct lbomp__steal_rec log[LBOMP__STEAL_LOG];
        uint32_t nlog;
        /* this window (folded in from the ring by serial parts) */
        double win_owned_s, win_run_s; /* sums over the window's clean steps */
        double step_owned_s;           /* its owned load in the last step folded in */
        uint64_t win_stolen;
        double win_busy_timed_s;  /* time in tasks (own and stolen) over the timed steps */
        double win_owned_timed_s; /* owned load over the timed steps: what its costs add up to */
        double win_bg_timed_s;    /* the rest of its run over the timed steps */
        uint64_t steps;           /* steps this worker has run */
        uint64_t clock_back;      /* readings earlier than the previous one, counted as 0 */
        /* owned load of each of the window's first timed steps */
        double win_timed_owned[LBOMP__EXCESS_STEPS];
        double win_cpu_s, win_wall_s; /* Σ cpu_s, wall_s of its clean steps in the window */
        /* Its speed (README "Unequal cores"), updated at every LB step (lbomp__window_speeds):
         * speed = prior × rel × share, task times × prior × rel = reference units. */
        double prior;      /* of its core's CPU kind (topology) */
        double rel;        /* measured: the same tasks' times on other workers */
        double share;      /* measured: share of wall time its thread got (LBOMP_TIME=cpu) */
        double win_share;  /* that share in the last window alone, or < 0: not measured */
        uint8_t share_low; /* windows in a row it was measured worse served than the best */
        double hw;         /* prior × rel, rounded: reference units per second of task time */
        double speed;      /* hw × share, rounded: what the snapshot gets */
        /* data moves of the current LB step (migrate.c), summed by the LB step */
        uint32_t data_moves;
        uint64_t data_bytes;
        int data_error;
};

struct lbomp__workers {
        int n;
        struct lbomp__worker *w;
        bool oversubscribed;       /* more workers than PUs we may run on */
        enum lbomp__speeds speeds; /* LBOMP_SPEEDS: off leaves every speed 1.0 */
        bool verbose;              /* LBOMP_VERBOSE: a line when a speed changes */
        uint32_t costs_off;        /* windows in a row whose loads the costs did not match */
        /* workers whose thieves take from the front (lbomp__workers_front), counted wherever
         * what it reads changes (fill, costs, costs_check) */
        uint32_t nfront;
        /* each placed task's place in its worker's arrays, by slot, valid after a fill that
         * succeeded (pos_ok): where a removal left its hole, and which tasks a keep fill finds
         * in place */
        uint32_t *pos;
        uint32_t pos_cap;
        bool pos_ok;
        uint64_t quick_fills; /* fills that read only the additions and removals (test_fill) */
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
/* Every worker's victims, nearest first, as LBOMP_STEAL says (node: its own node's only); after
 * the stealing mode changed. One thread, no step running. */
void lbomp__workers_victims(struct lbomp__workers *ws, const struct lbomp__topo *topo,
                            enum lbomp__steal steal);
/*
 * Gives pending tasks a worker (contiguous blocks of slots, of sizes by capacity: as
 * schedule(static) would place ids when the speeds are equal, lbomp__place_counts otherwise) and
 * rebuilds every worker's arrays: in ascending slot order, or with `keep` (a gathering: a few tasks
 * came and went) keeping each entry that still holds one of the worker's tasks where it is, the
 * others' places taken by the tasks it gained and the rest filled from the end, writing only
 * what changes (workers.c, keep_fill); when only additions and removals happened since the last
 * fill (tasks->gone, tasks->added, !tasks->reshaped), reading only those (quick_fill), else
 * every slot and every worker's arrays. One thread, no step running.
 * 0 or -ENOMEM (then the arrays are unchanged and tasks->dirty stays set).
 */
int lbomp__workers_fill(struct lbomp__workers *ws, struct lbomp__tasks *tasks, bool keep);
/*
 * Gives every worker the predicted cost of each of its tasks, slot_cost[slot] in seconds (the last
 * snapshot's costs, after its plan was applied and the arrays filled), as prefix sums for the
 * batches of a step. One thread, no step running.
 */
void lbomp__workers_costs(struct lbomp__workers *ws, const double *slot_cost);
/*
 * Drops the workers' costs (pcost_ok) when the loads they add up to no longer say how the load is
 * spread: some worker's share of what the costs predict and its share of what it owned over the
 * window (win_owned_s) differ by more than `err` of the mean load, or the window's steps were
 * LBOMP__FRONT_LAMBDA times as imbalanced as the costs predict (step_lambda against their largest
 * worker total over the mean: a load that moves within a window), in two windows in a row (one
 * alone may be a thread kept from its core for a while). Costs that put a hotspot on a worker it
 * has left make its owner cut small batches of light tasks and thieves pass over heavy ones as
 * not worth a steal; cut by count, batches leave that to the thieves. Returns whether it dropped
 * them. Called at every window's end, it also counts each worker's windows in a row that ended
 * without costs while the window's steps were imbalanced (costless; step_lambda: the mean over
 * its steps of max owned load / mean), costs that did not predict the steps counting as none.
 * One thread, no step running.
 */
bool lbomp__workers_costs_check(struct lbomp__workers *ws, double err, double step_lambda);
/*
 * Whether thieves take worker w's next tasks (front) rather than its last ones (tail): when it
 * has gone LBOMP__FRONT_AFTER windows without predicted costs while their steps were imbalanced
 * (per-step owned λ at least LBOMP__FRONT_LAMBDA on average), a load that no plan follows (it
 * moves faster than plans, or nothing plans). Costs dropped now and then, as a core that slows
 * for a while makes the check do, keep the tail, which keeps stolen tasks' data where it went,
 * and so do balanced steps whose costs were dropped and never renewed, since no plan was needed
 * (in face far the l2 memtasks were 1–3 % slower with front there: bench/README, *Stealing
 * from the front, when no plan follows the load*).
 */
#define LBOMP__FRONT_AFTER  8
#define LBOMP__FRONT_LAMBDA 1.2
static inline bool lbomp__workers_front(const struct lbomp__worker *w)
{
        return !w->pcost_ok && w->costless >= LBOMP__FRONT_AFTER;
}
/* Binds the calling thread to worker w's core, once (not with a profile, a flat host, or when
 * OpenMP binds because the user set OMP_PROC_BIND/OMP_PLACES). */
void lbomp__workers_bind(struct lbomp__workers *ws, int w, const struct lbomp__topo *topo,
                         bool omp_binds);
void lbomp__workers_free(struct lbomp__workers *ws);

/*
 * What a task of victim v costs thief over what it costs v: away from its data (v's kappa, when
 * above 1) and at the thief's speed against v's (their hw).
 */
static inline double lbomp__steal_cost(const struct lbomp__worker *thief,
                                       const struct lbomp__worker *v)
{
        return (v->kappa > 1 ? v->kappa : 1) * (v->hw / thief->hw);
}

/*
 * How much of its own a victim v must have left, over the cost c of its last run, for thief to
 * take that run (lbomp__deque_steal_paying's `ratio`). The thief runs it at k·h·c (k: the
 * victim's kappa, at least 1; h: its speed over the thief's), and the victim, running it again
 * next step, finds the data the thief took at about (k - 1)·c more. With R left besides the run,
 * the step ends at R + c without the steal, at max(R, k·h·c) with it; so the steal pays while
 * R > (k·h + k - 2)·c. From k = 2 on the data's way back alone would eat what the steal saves:
 * there the thief takes the run only when it is done before the victim, R ≥ k·h·c, the rule
 * before this one (2026-11-26: the paying steal on the balanced 1 MiB memtask), which left a heavy
 * last task with less than its cost below it to the victim while the thief waited. At k = 1 a
 * thief takes any run, the last one too: its data anywhere, the step ends sooner (the threads'
 * wait for the last one over a run: kneighbor-drift 11–19 → 5–8 ms, leanmd 9–10 → 4–5 ms;
 * bench/README, *The last task of a step*).
 */
static inline double lbomp__steal_ratio(const struct lbomp__worker *thief,
                                        const struct lbomp__worker *v)
{
        double k = v->kappa > 1 ? v->kappa : 1;
        return lbomp__steal_cost(thief, v) + (k < 2 ? k - 2 : 0);
}

/*
 * A thief's time in victim v's tasks, as what they would have cost v: × scale (the thief's wall
 * to CPU time), over lbomp__steal_cost. Charged at the thief's time, a victim whose tasks' data
 * stays in its cache looked κ times as loaded as it was for every task taken.
 */
static inline double lbomp__steal_charge(double scale, const struct lbomp__worker *thief,
                                         const struct lbomp__worker *v)
{
        return scale / lbomp__steal_cost(thief, v);
}

#endif
