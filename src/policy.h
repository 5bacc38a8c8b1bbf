/*
 * policy.h — the contract between the framework and the balancing policies.
 *
 * A policy reads an immutable snapshot of what the runtime measured (per task: cost, worker,
 * bytes, home node, links; per worker: background load, node; the node distance matrix) and
 * writes a plan: a destination worker for every task. It does no I/O, reads no environment, and is
 * deterministic for a given snapshot and seed, so the same code runs live, in tests, and in the
 * simulator. Centralized policies are one function; decentralized ones are a round function run by
 * every worker at once, talking only through the mailbox layer (mailbox.h).
 */
#ifndef LBOMP_POLICY_H
#define LBOMP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Tunables of every policy. Defaults come from POLICIES.md; config.c sets them from LBOMP_*. */
struct lbomp__params {
        double tolerance;       /* v (packdrop), overload allowed above the average: 0.05 */
        double refine_factor;   /* f (refine): 1.05 */
        double smart_threshold; /* smart: do nothing while 1 - min/max <= this: 0.05 */
        int fanout;             /* gossip fanout: 2 */
        int retries; /* packdrop: normal offers of a pack before it is sent forced: 2, i.e. the
                        first offer and the one retry POLICIES.md allows; 0 forces at once */
};

/* The defaults, for the runtime's configuration and for whoever builds a snapshot by hand (the
 * simulator, the tests). */
static inline struct lbomp__params lbomp__params_default(void)
{
        return (struct lbomp__params){
                .tolerance = 0.05,
                .refine_factor = 1.05,
                .smart_threshold = 0.05,
                .fanout = 2,
                .retries = 2,
        };
}

/*
 * The immutable snapshot. Tasks are numbered 0..ntasks-1 here (compact: removed tasks are not in
 * it); `id` maps back to the runtime's task ids. Loads are seconds per step. The costs of one
 * worker's tasks add up to the mean over the window of the time it spent in them per step; each
 * task's share is its median step (over the last LBOMP__HIST steps, windows of 3 steps or more),
 * so that a pause of the thread (preemption) is not charged to the one task it interrupted.
 */
struct lbomp__auto_hist;

struct lbomp__snap {
        uint32_t ntasks, nworkers, nnodes;
        const double *cost;     /* [ntasks] seconds per step */
        const uint32_t *worker; /* [ntasks] current worker */
        const uint64_t *bytes;  /* [ntasks] data bytes */
        const int32_t *home;    /* [ntasks] node the data lives on, or -1 when unknown */
        const uint32_t *id;     /* [ntasks] runtime task id */
        /* links, symmetric CSR: neighbours of task t are link_dst[link_off[t] .. link_off[t+1]) */
        const uint32_t *link_off; /* [ntasks + 1] */
        const uint32_t *link_dst; /* [link_off[ntasks]] */
        const double *link_bytes; /* [link_off[ntasks]] bytes per step */
        /* tasks of each worker, CSR: tasks of w are wtask[wtask_off[w] .. wtask_off[w+1]) */
        const uint32_t *wtask_off; /* [nworkers + 1] */
        const uint32_t *wtask;     /* [ntasks] */
        const double *bg;          /* [nworkers] background load, seconds per step */
        /* [nworkers] speed of each worker, or NULL: every speed 1.0. A task's cost is in
         * reference units, what it costs on a worker of speed 1; on worker w it takes
         * cost / speed[w] seconds. The background load is seconds on its worker already. */
        const double *speed;
        double speed_sum, speed_max; /* Σ and max of the speeds (lbomp__snap_speeds) */
        const int32_t *wnode;        /* [nworkers] NUMA node of each worker */
        const double *dist;          /* [nnodes * nnodes], normalised: local = 1.0 */
        uint64_t seed;               /* LBOMP_SEED mixed with the LB step number */
        uint64_t lb_step;            /* 0 for the first LB step */
        const struct lbomp__params *params;
        /* auto (policy/auto.h): what the window measured beyond the costs, and where auto says
         * what it chose; NULL for the other policies and for a snapshot built without it */
        struct lbomp__auto_hist *hist;
};

/* Worker w's speed (1.0 when the snapshot has none). */
static inline double lbomp__speed(const struct lbomp__snap *s, uint32_t w)
{
        return s->speed ? s->speed[w] : 1.0;
}
/* Seconds that `cost` (reference units) takes on worker w: cost / speed, which is the cost itself,
 * bit for bit, at speed 1.0. */
static inline double lbomp__time_on(const struct lbomp__snap *s, uint32_t w, double cost)
{
        return s->speed ? cost / s->speed[w] : cost;
}
/* Σ of the speeds (P when the snapshot has none) and the largest one. */
static inline double lbomp__speed_sum(const struct lbomp__snap *s)
{
        return s->speed && s->speed_sum > 0 ? s->speed_sum : (double)s->nworkers;
}
static inline double lbomp__speed_max(const struct lbomp__snap *s)
{
        return s->speed && s->speed_max > 0 ? s->speed_max : 1.0;
}
/* Sets speed_sum and speed_max from speed[] (the snapshot builder calls it; whoever changes the
 * speeds of a snapshot by hand calls it again). */
void lbomp__snap_speeds(struct lbomp__snap *s);

#define LBOMP__MSG_KINDS 8 /* message kinds a policy may name (struct lbomp__policy.msg_kinds) */

/* What a policy tells about its own run, beyond the plan. */
struct lbomp__pstats {
        uint64_t messages;                      /* total messages sent */
        uint64_t msg_by_kind[LBOMP__MSG_KINDS]; /* per message kind (policy-defined names) */
        const char *const *msg_kind_names;      /* NULL-terminated, static */
        uint32_t rounds;        /* rounds of a decentralized run, collectives included */
        uint32_t collectives;   /* reductions and quiescence detections, ceil(log2 P) rounds each */
        uint32_t gossip_rounds; /* rounds in which a message of the kind "gossip" was sent */
        double span_s;          /* critical path: sum over rounds of the slowest worker */
        uint32_t packs;         /* packdrop: packs formed */
        double pack_max;        /* packdrop: cost of the largest pack */
        uint32_t rejected;      /* offers rejected by their target */
        uint32_t forced;        /* packdrop: packs sent forced */
        uint32_t withdrawn;     /* packdrop: packs that stayed home (no target could help) */
        uint32_t attempts;      /* refine: attempts with different factors */
        double factor;          /* refine: the factor that succeeded */
};

enum lbomp__policy_kind { LBOMP__CENTRAL, LBOMP__DECENTRAL };

struct lbomp__dctx; /* mailbox.h: the decentralized run of one LB step */

/* Return value of a decentralized round function. */
enum { LBOMP__ROUND_BUSY = 0, LBOMP__ROUND_DONE = 1 };

struct lbomp__policy {
        const char *name;
        const char *help; /* one line */
        enum lbomp__policy_kind kind;
        /*
         * Centralized: fill dest[t] for every task (dest arrives filled with the current worker).
         * Returns 0 or a negative errno; on error the framework keeps the current mapping.
         */
        int (*plan)(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st);
        /*
         * Decentralized: called for worker `self` once per round (round 0, 1, ...) by the
         * framework, on every worker, until every worker returned LBOMP__ROUND_DONE in a round in
         * which no message was sent and no collective started (a negative return ends the run on
         * every worker with that error). Messages sent in round r are delivered in round r + 1. A
         * worker writes dest[] only for the tasks it holds (snapshot wtask of self). `state` is
         * wstate_size zeroed bytes private to the worker for this LB step.
         */
        size_t wstate_size;
        int (*round)(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state);
        /* Decentralized: names of the message kinds, NULL-terminated, at most LBOMP__MSG_KINDS. */
        const char *const *msg_kinds;
};

/* registry.c: the policies of src/policy/policies.list, in that order. */
const struct lbomp__policy *lbomp__policy_find(const char *name);
size_t lbomp__policy_count(void);
const struct lbomp__policy *lbomp__policy_at(size_t i);
/* "none, greedy, refine, ..." into buf (always NUL-terminated). */
void lbomp__policy_names(char *buf, size_t len);
/* Every policy with its one-line description, one per line. */
void lbomp__policy_help(FILE *out);
/* offline.c: one policy on a snapshot, centralized on this thread, decentralized on virtual
 * workers stepped by this thread (mailbox.h): the simulator's and the tests' entry point. dest is
 * filled with the current workers first; on error it is left so (the mapping kept). */
int lbomp__policy_run_offline(const struct lbomp__policy *p, const struct lbomp__snap *s,
                              uint32_t *dest, struct lbomp__pstats *st);
/* The same, a decentralized policy on the virtual workers of `dec` (mailbox.h; NULL: its own),
 * which keep their memory from one run to the next as the runtime's do between LB steps. */
struct lbomp__dec;
int lbomp__policy_run_offline_in(const struct lbomp__policy *p, const struct lbomp__snap *s,
                                 uint32_t *dest, struct lbomp__pstats *st, struct lbomp__dec *dec);

/* metrics.c: helpers shared by policies, the framework and the simulator. */
/* Loads of every worker under mapping `map` (a per-task worker array), in seconds per step: its
 * background plus the time of its tasks on it, bg + Σ cost / speed (predicted time). */
void lbomp__loads(const struct lbomp__snap *s, const uint32_t *map, double *load);
/* λ = max / avg of loads (1.0 when the average is 0). Also returns max and avg when non-NULL. */
double lbomp__imbalance(const double *load, uint32_t n, double *max, double *avg);
/*
 * What of a worker's excess over the mean persisted over n steps (n 1..8, its values e[0..n)):
 * the least of them, and no more than their mean less t99 (one-sided, n - 1 degrees of freedom)
 * of its standard error. The persistence test of the pays check (the window's timed steps,
 * lbomp__window_persistent_excess) and of auto's when-rule (the last steps' loads); +inf for n 0.
 */
double lbomp__persisted(const double *e, uint32_t n);
/* The same for the workers of a snapshot, the average being the capacity-weighted ideal
 * Σ speed·load / Σ speed: the step time if every worker finished at once (with equal speeds, the
 * plain average, bit for bit). */
double lbomp__snap_lambda(const struct lbomp__snap *s, const double *load, double *max,
                          double *avg);
/*
 * Whether a plan whose predicted maximum load is `max_new` pays against a current maximum `max`:
 * it must lower it by more than rounding (sums in another order differ in the last bits). The one
 * rule of the runtime's never-worse check (plan.c) and of every policy's own check, so that no
 * policy ships a plan the runtime would refuse.
 */
static inline bool lbomp__lowers_max(double max_new, double max)
{
        return max_new < max * (1.0 - 1e-9);
}
/* The lower bound of a step's time: L* = max(average load (the capacity-weighted ideal of
 * lbomp__snap_lambda), largest task cost on the fastest worker, largest background load), no
 * mapping can do better. */
double lbomp__bound(const struct lbomp__snap *s, double avg);
/* 0 if every task has exactly one valid destination, else -EINVAL with the first bad task. */
int lbomp__plan_check(const struct lbomp__snap *s, const uint32_t *dest, uint32_t *bad_task);
/* Σ over links of bytes × distance between the nodes of the two tasks' workers (each link once). */
double lbomp__locality_cost(const struct lbomp__snap *s, const uint32_t *map);
/* Node a task prefers: its home node, else the node of its current worker. */
int32_t lbomp__task_node(const struct lbomp__snap *s, uint32_t t);

/*
 * What a plan moves. A migration is a task whose worker changes; it crosses nodes when the new
 * worker's node differs from the old worker's. The move cost is Σ over migrations of data bytes ×
 * d(node the data is on, node of the new worker), the data being on the task's home node when
 * known, else on its old worker's node (so a move inside a node costs bytes × 1.0, like a local
 * link).
 */
struct lbomp__moves {
        uint32_t tasks;      /* migrations */
        uint32_t node_tasks; /* migrations to another node */
        uint64_t bytes;      /* data bytes of the migrations */
        uint64_t node_bytes; /* data bytes of the migrations to another node */
        double node_load;    /* Σ cost of the migrations to another node, seconds per step */
        double cost;         /* the move cost, bytes × normalised distance */
};
void lbomp__moves(const struct lbomp__snap *s, const uint32_t *dest, struct lbomp__moves *m);

/*
 * Placement by capacity (metrics.c): how many of n new tasks each of P workers gets, into
 * count[P]. With equal speeds (speed NULL or all equal) and nothing held, today's blocks: worker
 * w gets the tasks k with floor(k P / n) = w, as schedule(static) gives ids out. Otherwise the
 * rule of the LAM/MPI heterogeneous launcher: each task in turn goes to the worker of the best
 * speed ÷ (tasks it holds + tasks placed there + 1), ties to the lower id; `held` (NULL: none) is
 * what each worker holds already. The caller lays the counts out as contiguous blocks in worker
 * order, so that neighbouring ids stay together. O(n + P) for equal speeds, O(n log P) otherwise
 * (O(n P) beyond 64 workers is avoided by a heap).
 */
int lbomp__place_counts(const double *speed, const uint32_t *held, uint32_t P, uint32_t n,
                        uint32_t *count);

/*
 * interleave.c: loads that move within a window (a hotspot going round the tasks faster than the
 * LB period). lbomp__interleave_wanted: the window's mean per-step λ is at least 1 + 4 × the
 * tolerance, and its excess at least twice that of the window's λ (the sums balanced, the steps
 * not). lbomp__interleave: the snapshot's tasks in the order of their runtime ids, dealt to the
 * workers in turn, each as many as its speed's share (lbomp__place_counts), into dest; 0 or
 * -ENOMEM. lbomp__steps_max: the mean over nsteps steps of the largest worker time (Σ of
 * step_cost[k][t] over its tasks under map, at its speed); load is scratch [nworkers].
 */
bool lbomp__interleave_wanted(double step_lambda, double window_lambda, double tolerance);
/* Seconds per byte × normalised distance a data move is taken to cost before one was measured
 * (10 GB/s: a copy inside a node). */
#define LBOMP__BYTE_S_GUESS 1e-10
int lbomp__interleave(const struct lbomp__snap *s, uint32_t *dest);
/* Whether an interleaving in place still suits the load: balanced over the whole window (its last
 * steps alone may not be, where the load moves). */
static inline bool lbomp__interleave_suits(bool interleaved, double window_lambda, double tolerance)
{
        return interleaved && window_lambda <= 1.0 + tolerance;
}
/* auto's back-off for judging the interleaving (lbstep.c and lbomp-sim alike), and the probation's
 * below: a judgment that did not move tasks (it did not pay, or they were interleaved already)
 * makes the next wait 2, 4 … 32 windows; one that moved them, none. lbomp__spread_judged after a
 * judgment; lbomp__spread_open once per window: whether no wait holds (it counts one down);
 * lbomp__spread_arm at the end of a window auto did not arm: whether the next one is armed for a
 * judgment (no wait holds, the load moves within the window, `within`, and no interleaving suits
 * it). */
struct lbomp__spread_backoff {
        uint32_t no, wait;
};
void lbomp__spread_judged(struct lbomp__spread_backoff *b, bool moved);
bool lbomp__spread_open(struct lbomp__spread_backoff *b);
bool lbomp__spread_arm(struct lbomp__spread_backoff *b, bool within, bool suits);
double lbomp__steps_max(const struct lbomp__snap *s, const uint32_t *map,
                        const double *const *step_cost, uint32_t nsteps, double *load);
/*
 * An interleaving on probation (the runtime's, lbstep.c; lbomp-sim's estimate is exact, it needs
 * none). The estimate judges an interleaving on the costs the tasks had where they ran; tasks that
 * own data run slower on a worker whose cache does not hold it, and steals, which already carried
 * part of the moving load, refill caches the estimate does not see. So every interleaving that
 * moves tasks is checked on the window after it: its median step (the longest thread of each,
 * the first LBOMP__PROBE_SKIP left out) against that of the window it was judged on; when it took
 * more than LBOMP__PROBE_TOL longer, the next LB step puts every task back on the worker it had
 * before (`map`, by task slot) and the next interleaving waits 2, 4 … 32 LB steps (`backoff`,
 * kept by lbomp__probe_verdict, counted down by lbomp__spread_open). With that net, an interleaving
 * the estimate finds short of paying for itself is tried when, by the estimate, its steps would be
 * at most LBOMP__PROBE_BAND longer than they were (lbstep.c, spread_pays): steps whose stolen tasks
 * refilled their caches weigh those tasks as they ran stolen, and an interleaving that ends the
 * stealing runs them faster.
 */
#define LBOMP__PROBE_TOL  0.02
#define LBOMP__PROBE_BAND 0.10
#define LBOMP__PROBE_SKIP 2
struct lbomp__probe {
        bool pending;  /* an interleaving moved tasks at the last LB step */
        double before; /* the median step of the window it was judged on, seconds */
        double after;  /* the window after it, once judged */
        uint32_t *map; /* [cap] each task slot's worker before it (UINT32_MAX: no task) */
        uint32_t cap;
        /* no: undone in a row; wait: LB steps before the next interleaving */
        struct lbomp__spread_backoff backoff;
};
/* The verdict on the pending interleaving from the median step of the window after it (`after`, of
 * `n` steps; fewer than 2 keep it): true when it is to be undone. Sets the back-off. */
bool lbomp__probe_verdict(struct lbomp__probe *p, double after, uint32_t n);

/* sort.c. Task indices heaviest first, ties by the lower index (radix sort, exact): the first
 * returns all of them in a new array (NULL when out of memory), the second sorts `tasks` in
 * place (0 or -ENOMEM), the third as well and sets *sorted to a new array of cost[tasks[i]] in
 * that order (the caller frees it; NULL on error), which the sort gathers where a caller walking
 * the tasks in order would wait on each cost. */
uint32_t *lbomp__tasks_by_cost_desc(const struct lbomp__snap *s);
int lbomp__sort_tasks_desc(const double *cost, uint32_t *tasks, uint32_t n);
int lbomp__sort_tasks_desc_costs(const double *cost, uint32_t *tasks, uint32_t n, double **sorted);

/* pays.c: moves that pay. The loads of the current mapping into load[P] and its maximum into
 * *max; true when that maximum is within (1 + v) of the bound L* (lbomp__bound), i.e. when no
 * move is needed. */
bool lbomp__within_tolerance(const struct lbomp__snap *s, double *load, double *max);
/* The same, with the bound L* it compared with into *lstar (one O(T) pass less for a policy that
 * needs L* too). */
bool lbomp__within_tolerance_bound(const struct lbomp__snap *s, double *load, double *max,
                                   double *lstar);
/* After a plan: when dest does not lower the maximum below `max` (lbomp__lowers_max), dest
 * becomes the current mapping again and true is returned. load[P] is scratch. */
bool lbomp__keep_unless_lower(const struct lbomp__snap *s, uint32_t *dest, double max,
                              double *load);
/*
 * Greedy over a part of the machine: gives each of `tasks` (heaviest first) to the least loaded of
 * `workers`, starting from the loads load0[i] of workers[i]; ties keep a task on its worker, then
 * prefer the nearest node. Writes dest[t] for those tasks only. Uses no shared state, so disjoint
 * calls may run in parallel. 0 or -ENOMEM.
 */
int lbomp__greedy_assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                         const uint32_t *workers, uint32_t nworkers, const double *load0,
                         uint32_t *dest);

/* greedy.c: the plans of greedy-refine and greedy-comm (same contract as lbomp__policy.plan). */
int lbomp__greedy_refine_plan(const struct lbomp__snap *s, uint32_t *dest,
                              struct lbomp__pstats *st);
int lbomp__greedy_comm_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st);

/*
 * A min-heap of workers keyed by load (ties: the lower id), with each worker's position so that a
 * load can change in either direction. Workers are local indices 0..n-1; `id` (or NULL: the index
 * itself) gives the id that breaks ties. Shared by greedy, hierarchical and smart (policy/heap.c).
 */
struct lbomp__wheap {
        uint32_t *w;   /* heap of local indices */
        uint32_t *pos; /* pos[i]: where i sits in the heap */
        double *load;  /* [n] by local index, filled by the caller before lbomp__wheap_build() */
        const uint32_t *id;
        uint32_t n;
};
/* Allocates for n workers. 0 or -ENOMEM (then lbomp__wheap_free() is still safe). */
int lbomp__wheap_init(struct lbomp__wheap *h, uint32_t n, const uint32_t *id);
/* Orders the heap after the caller filled load[]. */
void lbomp__wheap_build(struct lbomp__wheap *h);
/* Restores the order after the load of the worker at heap index i went down (up) or up (down). */
void lbomp__wheap_up(struct lbomp__wheap *h, uint32_t i);
void lbomp__wheap_down(struct lbomp__wheap *h, uint32_t i);
void lbomp__wheap_free(struct lbomp__wheap *h);

/* rng.c: deterministic random numbers (splitmix64 seeding a xoshiro256**). */
struct lbomp__rng {
        uint64_t s[4];
};
void lbomp__rng_seed(struct lbomp__rng *r, uint64_t seed);
uint64_t lbomp__rng_next(struct lbomp__rng *r);
/* Uniform in [0, n), n > 0. */
uint32_t lbomp__rng_below(struct lbomp__rng *r, uint32_t n);
/* Uniform in [0, 1). */
double lbomp__rng_unit(struct lbomp__rng *r);

#endif
