/*
 * lbomp.h — the only public header of lbomp, a load balancer for iterative OpenMP programs on
 * shared-memory NUMA machines.
 *
 * A program registers persistent tasks (user pointers), runs them once per step through
 * lbomp_step() or inside its own `#pragma omp parallel` region with LBOMP_FOR_EACH_TASK, and
 * lbomp measures every task and, every LBOMP_PERIOD steps, moves tasks between the OpenMP threads
 * according to the chosen policy.
 *
 * Error convention (as in libuv): every function that can fail returns 0 on success or a negative
 * errno value, each with one meaning (lbomp_strerror() gives it, lbomp_err_name() its name):
 *   -EINVAL       invalid argument (the message names it and what is valid)
 *   -ENOMEM       out of memory
 *   -ENOENT       no such policy, file or task
 *   -ENOTSUP      a backend that is not built or not present (NUMA memory calls)
 *   -EBUSY        not allowed while a step of this runtime runs (setters, tasks); also a second
 *                 team entering a step while another team runs one
 *   -EPERM        not allowed from here: lbomp_step() inside a parallel region,
 *                 LBOMP_FOR_EACH_TASK outside one
 *   -ETIMEDOUT    a thread of the team did not enter a step within LBOMP_STEP_TIMEOUT (the loop
 *                 is inside `single`, `master` or `masked`, or some threads skip it)
 *   -EINTR        a step ended before every task ran (a break out of LBOMP_FOR_EACH_TASK)
 *   -ECANCELED    LBOMP_POLICY=help listed the policies, nothing was created
 *   -EAGAIN       the policy could not complete; the mapping was kept (lbomp_lb_stats_t.error)
 *   -ELOOP        a decentralized policy did not end; the mapping was kept (idem)
 *   -EINPROGRESS  the task is not placed yet: it gets its worker at the next step
 *   -ESTALE       the task id was removed (ids are never reused)
 *   -EFBIG        a file too large (LBOMP_TOPOLOGY)
 *   -EIO          a file could not be read or written
 *   -EFAULT       an internal inconsistency (a bug in lbomp: please report it)
 * and the errno of a file lbomp had to create (LBOMP_TRACE: -EACCES, -EISDIR, -EROFS, ...).
 * lbomp_last_error() gives the full message of the last failure on the calling thread (it names
 * the variable or call, the bad value and what is valid). Messages the user must see even when no
 * call returns them (a refused step, a policy that failed) are also written to stderr, or to the
 * function installed with lbomp_set_log_fn().
 *
 * Thread-safety: a runtime handle is used by one thread outside parallel regions (create, add,
 * link, set, report, destroy). Inside a step, every thread of the OpenMP team calls the iterator
 * functions for its own worker only; no other call is allowed while a step runs (a thread of the
 * team is inside it: between its first task and the end of the step's barrier).
 *
 * Environment variables set defaults when lbomp_create() runs; the API setters override them
 * (the OpenMP convention). See README.md for the table of LBOMP_* variables.
 */
#ifndef LBOMP_H
#define LBOMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LBOMP_VERSION_MAJOR 0
#define LBOMP_VERSION_MINOR 2
#define LBOMP_VERSION_PATCH 0

/** Opaque runtime handle. */
typedef struct lbomp lbomp_t;

/**
 * Task identifier. Ids are handed out in increasing order from 0 (the nth task added gets n - 1)
 * and are never reused: a removed id is refused for the rest of the run (-ESTALE), while the
 * runtime's memory and step time follow the tasks alive, not the ids ever handed out. A runtime
 * hands out at most 2^32 - 2 ids.
 */
typedef uint32_t lbomp_id_t;

/** "No preference" for a task's home NUMA node. */
#define LBOMP_NODE_ANY (-1)

/* ---------------------------------------------------------------------------------------------
 * Life cycle
 */

/**
 * Creates a runtime: reads the LBOMP_* environment, loads the topology (the host through hwloc, or
 * the file named by LBOMP_TOPOLOGY), and sizes the team from omp_get_max_threads().
 * On a bad environment value nothing is created: *out is set to NULL, one message naming the
 * variable, the value and what is valid is written to stderr and kept for lbomp_last_error().
 * Returns 0, -EINVAL (bad value), -ENOENT (unknown policy, missing topology file), -ENOMEM.
 * Thread-safety: may be called from any thread outside a parallel region.
 */
int lbomp_create(lbomp_t **out);

/** Frees everything. Accepts NULL. Must not be called while a step runs. */
void lbomp_destroy(lbomp_t *lb);

/** Static string for a return code of this library ("invalid argument", ...). Thread-safe. */
const char *lbomp_strerror(int err);

/** Full text of the last error on the calling thread ("" when none). Thread-safe (thread-local). */
const char *lbomp_last_error(void);

/** Name of a return code ("EINVAL", ...; "OK" for 0). Thread-safe. */
const char *lbomp_err_name(int err);

/** Where lbomp writes the messages a user must see unasked (one line, no newline). */
typedef void (*lbomp_log_fn)(const char *line, void *arg);
/**
 * Sends those messages to fn(line, arg) instead of stderr (NULL: stderr again). Process-wide; fn
 * may be called from any thread, also concurrently. Thread-safe.
 */
void lbomp_set_log_fn(lbomp_log_fn fn, void *arg);

/* ---------------------------------------------------------------------------------------------
 * Configuration. Each setter is "the same as setting the variable", checked the same way, and
 * overrides it. Not allowed while a step runs (-EBUSY).
 */

/** Same as LBOMP_POLICY. "help" is not a policy here: see lbomp_policy_help(). -ENOENT if unknown.
 */
int lbomp_set_policy(lbomp_t *lb, const char *name);
/** Same as LBOMP_PERIOD: rebalance every `steps` steps (1 to 10^9). -EINVAL otherwise. */
int lbomp_set_period(lbomp_t *lb, int steps);
/** Same as LBOMP_SEED: seed of every random choice (policies are deterministic for a seed). */
int lbomp_set_seed(lbomp_t *lb, uint64_t seed);
/** Same as LBOMP_VERBOSE: 0 quiet, 1 one line per LB step on stderr, 2 more. -EINVAL otherwise.
 */
int lbomp_set_verbose(lbomp_t *lb, int level);
/** Same as LBOMP_TOLERANCE: allowed overload above the average, 1e-6 to 1 (default 0.05).
 * -EINVAL otherwise. */
int lbomp_set_tolerance(lbomp_t *lb, double tolerance);
/**
 * Same as LBOMP_STEP_TIMEOUT: seconds (0 to 86400, default 5) a step waits for a thread of its team
 * that has not entered it — at the start of a team's first step (or after its tasks or size
 * changed), at the end of the others — before the step is refused with -ETIMEDOUT and the runtime
 * refuses every later step; 0 waits forever. A thread still running its tasks is waited for
 * however long. A team that never arrives is a loop inside `single` or `master`; a program whose
 * threads legitimately reach the loop seconds apart raises it. -EINVAL otherwise.
 */
int lbomp_set_step_timeout(lbomp_t *lb, double seconds);
/** Same as LBOMP_FANOUT: peers each gossip send of a decentralized policy reaches, 1..64
 * (default 2). -EINVAL otherwise. */
int lbomp_set_fanout(lbomp_t *lb, int fanout);
/** Same as LBOMP_RETRIES: normal offers of a pack before packdrop sends it forced, 0..64 (default
 * 2: the first offer and one retry; 0 forces at once). -EINVAL otherwise. */
int lbomp_set_retries(lbomp_t *lb, int offers);
/**
 * Same as LBOMP_STEAL: stealing within a step by a worker with nothing left — "off", "node" (from
 * workers of its own NUMA node only) or "all" (nearest nodes first). Overrides the policy's
 * default (off under none, all otherwise), also for a policy set later. Allowed between steps;
 * the next step steals (or not) as told, and the runtime's LBOMP_FOR loops from their next run.
 * -EINVAL for NULL or another word. Since 0.2.
 */
int lbomp_set_steal(lbomp_t *lb, const char *mode);
/**
 * Same as LBOMP_TOPOLOGY: a hwloc XML file the library sees as the machine (NULL: the host).
 * Only before the first step and before tasks are added (-EBUSY otherwise); -ENOENT if the file
 * does not exist, -EINVAL if hwloc cannot parse it.
 */
int lbomp_set_topology(lbomp_t *lb, const char *xml_path);
/**
 * Number of workers (OpenMP threads of a step). Default omp_get_max_threads(). Before the first
 * step only (-EBUSY otherwise); -EINVAL if < 1 or > 4096; -ENOMEM (nothing changed).
 */
int lbomp_set_workers(lbomp_t *lb, int nworkers);
/**
 * Same as LBOMP_POWERCAP_ROOT: read energy from this directory laid out like /sys/class/powercap
 * (NULL: the machine's own counters, powercap then perf then MSR). Reopens the energy counters;
 * totals restart from 0. Only before the first step (-EBUSY otherwise); -EINVAL for "". A
 * directory that is missing or unreadable is not an error: energy becomes unavailable, and the
 * report says why. -ENOMEM.
 */
int lbomp_set_powercap_root(lbomp_t *lb, const char *dir);

/** Current values. Thread-safe while no setter runs. */
const char *lbomp_get_policy(const lbomp_t *lb);
int lbomp_get_period(const lbomp_t *lb);
int lbomp_get_workers(const lbomp_t *lb);

/**
 * The topology the library sees: its name ("host" or the XML file name), and in *nodes and *cores
 * (either may be NULL) its NUMA node and core counts. NULL if lb is NULL.
 */
const char *lbomp_topology(const lbomp_t *lb, int *nodes, int *cores);

/** Writes every policy with its one-line description to `out`. Thread-safe. */
void lbomp_policy_help(FILE *out);

/* ---------------------------------------------------------------------------------------------
 * Tasks and links. Not allowed while a step runs (-EBUSY).
 */

/**
 * Adds a persistent task. `data` is the user pointer handed back when the task runs (not NULL:
 * NULL is what ends LBOMP_FOR_EACH_TASK), `bytes` the
 * size of its data (used by the locality cost model), `home_node` the NUMA node its data lives on
 * or LBOMP_NODE_ANY. Tasks added since the last step are placed at the start of the next step in
 * contiguous blocks of ids over all workers, as schedule(static) would place them when the
 * workers' speeds are equal, of sizes by capacity otherwise (README "Unequal cores"); the
 * balancer moves them from there.
 * Returns 0 and the new id in *id (may be NULL), -EINVAL (data NULL, home_node out of range),
 * -ENOMEM.
 */
int lbomp_task_add(lbomp_t *lb, void *data, size_t bytes, int home_node, lbomp_id_t *id);

/**
 * Removes a task: it no longer runs, its links are gone, and its slot in lbomp's tables is reused
 * by a later lbomp_task_add() (its id never is). Returns 0, -ENOENT (no task ever had this id),
 * -ESTALE (the task was removed already), -EBUSY.
 */
int lbomp_task_remove(lbomp_t *lb, lbomp_id_t id);

/** Number of live tasks (added and not removed). 0 for NULL. */
uint32_t lbomp_task_count(const lbomp_t *lb);

/**
 * Declares that tasks a and b exchange `bytes` per step (undirected; repeated calls add up). The
 * link lasts while both tasks live.
 * -ENOENT / -ESTALE if either task does not exist / was removed, -EINVAL if a == b, -ENOMEM.
 */
int lbomp_link(lbomp_t *lb, lbomp_id_t a, lbomp_id_t b, size_t bytes);

/** Worker that currently holds task `id`; -ENOENT (no such task), -ESTALE (removed),
 * -EINPROGRESS (added since the last step: it gets its worker at the next step, or at
 * lbomp_task_alloc()). */
int lbomp_task_worker(const lbomp_t *lb, lbomp_id_t id);

/* ---------------------------------------------------------------------------------------------
 * Data with the task. A task's memory can be placed on its worker's NUMA node and follow the task
 * when a rebalance moves it to another node: lbomp moves the pages itself (LBOMP_MOVE_PAGES=on,
 * libnuma move_pages) and/or calls the application's migrate callback so that it moves its own
 * structures. Nodes are those of the topology lbomp sees (lbomp_topology()). With a profile
 * (LBOMP_TOPOLOGY) they are virtual: memory is allocated on the host as usual, no page is moved,
 * and the report counts the bytes that would have moved. lbomp_alloc_on_node() and lbomp_free()
 * may be called from any thread at any time; the other calls are not allowed while a step runs
 * (-EBUSY).
 */

/**
 * Allocates `bytes` (> 0) of page-aligned memory on NUMA node `node` of the topology, or on the
 * calling thread's node with LBOMP_NODE_ANY (libnuma numa_alloc_onnode / numa_alloc_local). With
 * a profile topology the memory is allocated on the host's local node whatever `node` says.
 * Free it with lbomp_free(). Returns 0 and the memory in *out, -EINVAL (node out of range, bytes
 * 0, NULL out), -ENOTSUP (the kernel has no NUMA support: numa_available() < 0), -ENOMEM.
 */
int lbomp_alloc_on_node(lbomp_t *lb, size_t bytes, int node, void **out);

/** Frees memory of lbomp_alloc_on_node() or lbomp_task_alloc(); `bytes` is the size asked for.
 * Accepts NULL. Thread-safe. */
void lbomp_free(void *p, size_t bytes);

/**
 * Allocates `bytes` for task `id` on the node of its worker and registers it as the task's memory
 * (lbomp_task_set_memory) with that node as its home. Tasks added since the last step get their
 * worker now, as the next step would give it, so add every task first and allocate afterwards.
 * Returns 0 and the memory in *out, -ENOENT (no such task), -ESTALE (removed), and the errors of
 * lbomp_alloc_on_node().
 */
int lbomp_task_alloc(lbomp_t *lb, lbomp_id_t id, size_t bytes, void **out);

/**
 * Registers [addr, addr + bytes) as the memory of task `id`: the pages that follow it when it
 * changes node. `node` is where the memory lives, or LBOMP_NODE_ANY when unknown (then the first
 * migration of the task moves its pages to its new node whatever the old one was); a node given
 * here also becomes the task's home node (lbomp_task_add). Pages are whole: the first and last
 * page of the range move even when they also hold other data. addr NULL (or bytes 0) forgets the
 * registration. Returns 0, -ENOENT (no such task), -ESTALE (removed), -EINVAL (node out of range).
 */
int lbomp_task_set_memory(lbomp_t *lb, lbomp_id_t id, void *addr, size_t bytes, int node);

/**
 * Application callback for a task that changes NUMA node: `data` is the task's user pointer,
 * `from_node` the node its data was on (its home node, else its old worker's node), `to_node` its
 * new worker's node. It runs at the LB step, after the plan is applied and before the next step,
 * on the OpenMP thread of the task's new worker (so first-touch allocations land on the new node
 * when threads are bound); calls for different tasks run concurrently on different threads. It
 * must not call lbomp. Afterwards the task's home node is `to_node`.
 */
typedef void (*lbomp_migrate_fn)(void *data, lbomp_id_t id, int from_node, int to_node, void *arg);

/** Sets (or, with NULL, removes) the migrate callback. -EBUSY while a step runs. */
int lbomp_set_migrate_fn(lbomp_t *lb, lbomp_migrate_fn fn, void *arg);

/**
 * Same as LBOMP_MOVE_PAGES (on = 1, off = 0): move a migrating task's registered pages to its new
 * node with move_pages. -EBUSY while a step runs, -ENOTSUP when turning it on without kernel NUMA
 * support.
 */
int lbomp_set_move_pages(lbomp_t *lb, int on);

/* ---------------------------------------------------------------------------------------------
 * Running steps
 */

/** Task function of the callback form: `data` is the task's user pointer. */
typedef void (*lbomp_task_fn)(void *data, lbomp_id_t id, void *arg);

/**
 * Runs one step: opens an OpenMP parallel region of lbomp_get_workers() threads, runs every task
 * exactly once, and ends at the step barrier (loads recorded; every LBOMP_PERIOD steps the policy
 * runs and tasks move). Must be called outside any parallel region.
 * Returns 0, or -EINVAL (NULL fn), -EPERM (called inside a parallel region), -EBUSY (a step of
 * this runtime runs on another thread), -ENOMEM (the step could not start: no task ran), or the
 * error that made the runtime refuse steps (-EBUSY, -ETIMEDOUT: see lbomp_last_step()).
 */
int lbomp_step(lbomp_t *lb, lbomp_task_fn fn, void *arg);

/**
 * The result of the last step, for the in-region form (which has no return value): 0; -EINTR
 * (some tasks did not run: a break out of the loop; the message says how many, and that step's
 * times were not used for balancing); -ENOMEM (the step could not start: no task ran); -EPERM
 * (LBOMP_FOR_EACH_TASK outside a parallel region); -EBUSY (a second team entered while another
 * ran a step) or -ETIMEDOUT (a thread of the team never entered): then the runtime refuses every
 * later step
 * with the same error. The message is also left for lbomp_last_error() on the calling thread, and
 * a refusal or a failed start is written to stderr (or the log function) when it happens.
 * Thread-safe; call it after the region or between steps.
 */
int lbomp_last_step(const lbomp_t *lb);

/**
 * In-region form. Inside the user's `#pragma omp parallel` region, every thread of the team runs
 *
 *     LBOMP_FOR_EACH_TASK(lb, struct cell *, c) { update(c); }
 *
 * which takes this thread's tasks one by one and ends with the step barrier, so every thread of
 * the team must run the loop. A team that ran the previous step enters the next one without
 * waiting for the others (the barrier at its end is the only one, as with `#pragma omp for`); a
 * new team, or one whose tasks or size changed, meets first. Inside `single`, `master` or
 * `masked`, or outside a parallel region, the step is refused (lbomp_last_step()): it never hangs
 * nor runs a task twice. With the team gathered (its first step, or after tasks changed) no task
 * of a refused step runs; a step entered without gathering is refused at its end, and the tasks
 * of the threads that never came did not run (the message says how many).
 * A `break` ends the thread's part of the step: its remaining tasks do not run in this step (other
 * threads may still steal some of them), and the step reports how many did not run (-EINTR from
 * lbomp_last_step()). `lbomp_it_.id` is the id of the current task.
 * The region may also contain the loop over steps. The iterator below is what the macro expands
 * to; its fields are internal except `id`, the id of the task just returned. Its layout may change
 * from one minor version to the next while the version is 0.x (the fast path is inline).
 */
typedef struct lbomp_iter {
        lbomp_id_t id;         /* id of the task just returned by lbomp_iter_next() */
        int fast;              /* internal: positions [pos, end) are taken inline, untimed */
        int64_t pos, end;      /* internal: the run of positions being taken */
        const lbomp_id_t *ids; /* internal: this worker's task ids */
        void *const *data;     /* internal: their user pointers */
        lbomp_t *lb;           /* internal */
        void *w;               /* internal: this thread's worker */
        uint64_t *slot;        /* internal: where the running task's time goes (timed steps) */
        uint64_t t0, busy;     /* internal: start of the running task, time in tasks */
        uint32_t victim;       /* internal: owner of the stolen run being taken */
        int mode, par;         /* internal */
        int active;            /* internal: 1 until lbomp_iter_end() */
} lbomp_iter_t;

/** Enters the step on the calling thread's worker. Called by every thread of the team. */
lbomp_iter_t lbomp_iter_begin(lbomp_t *lb);
/** Next task's user pointer of this thread (its id in it->id), or NULL when none is left. */
void *lbomp_iter_next(lbomp_iter_t *it);
/** Ends the step for this thread: records its loads and waits at the step barrier. */
void lbomp_iter_end(lbomp_iter_t *it);

/** What LBOMP_FOR_EACH_TASK calls: lbomp_iter_next(), with its untimed path inline. */
static inline void *lbomp_iter_next_fast(lbomp_iter_t *it)
{
        int64_t p = it->pos;
        if (it->fast && p < it->end) {
                it->pos = p + 1;
                it->id = it->ids[p];
                return it->data[p];
        }
        return lbomp_iter_next(it);
}

#define LBOMP_FOR_EACH_TASK(lb, type, var)                                                         \
        for (lbomp_iter_t lbomp_it_ = lbomp_iter_begin(lb); lbomp_it_.active;                      \
             lbomp_iter_end(&lbomp_it_))                                                           \
                for (type var; (var = (type)lbomp_iter_next_fast(&lbomp_it_)) != NULL;)

/** Inside the body of LBOMP_FOR_EACH_TASK: the id (lbomp_id_t) of the task being run. */
#define LBOMP_TASK_ID (lbomp_it_.id)

/**
 * Reduction in the callback form: a step like lbomp_step() whose task function returns a number;
 * *sum receives the sum of what every task returned (added per thread in its task order, then over
 * threads in thread order: the same sum for the same mapping). Returns what lbomp_step() returns,
 * also -EINVAL for a NULL sum (then nothing runs); *sum is 0 when no task ran.
 */
typedef double (*lbomp_task_sum_fn)(void *data, lbomp_id_t id, void *arg);
int lbomp_step_sum(lbomp_t *lb, lbomp_task_sum_fn fn, void *arg, double *sum);

/* ---------------------------------------------------------------------------------------------
 * Index loops and time steps
 *
 *     #pragma omp parallel reduction(+:epot)
 *     LBOMP_FOR(lb, "force", i, 0, ncells) {
 *             epot += force_on_cell(i);
 *     }
 *
 * Inside the program's own `#pragma omp parallel`, every thread of the team runs LBOMP_FOR, which
 * declares `i` (int64_t) and runs every index of [begin, end) exactly once across the team, like
 * `#pragma omp for`, ending with a barrier. A loop is known by its name: each named loop is a task
 * set of its own (its chunks, their costs, their mapping, its LB steps), and one runtime may run
 * any number of them. lbomp groups the indices into persistent, contiguous chunks, times each
 * chunk, and at the loop's barrier, every LBOMP_PERIOD time steps, balances them with the
 * runtime's policy. The first cut is even (16 chunks per thread); the second comes from the first
 * run's costs, and after each LB step chunks are cut again where they are too coarse for the
 * balance or too fine for lbomp's own cost per chunk, each to cost about the same (at most 100 us),
 * so a hot index may become a chunk of its own; cuts never cross a change of thread. The range may
 * change between runs: the chunks follow it, costs carried over by index. The body may use
 * `continue`; a `break` ends the thread's part of the run like a `break` out of LBOMP_FOR_EACH_TASK
 * (the run reports -EINTR). Refused, with an error in lbomp_last_step() and a message, never a hang
 * or an index run twice: LBOMP_FOR outside a parallel region
 * (-EPERM); run by only some threads of the team (inside `single`, `master`; -ETIMEDOUT after
 * LBOMP_STEP_TIMEOUT, and that loop refuses its later runs); threads that pass different ranges,
 * or a second run in one time step with another range under the same name (-EINVAL: two loops
 * need two names; the run is refused, later runs are not).
 *
 * Time steps. The runtime's steps are the program's time steps, shared by all its loops and its
 * own task set (LBOMP_FOR_EACH_TASK, lbomp_step), and LBOMP_PERIOD counts time steps: each loop
 * balances once every PERIOD time steps, however many times it runs in one. Unless the program
 * calls lbomp_time_step(), the first loop (or task set) that runs a second time marks them: each
 * of its runs begins a time step, so setup loops before the step loop do not count. A program
 * whose first recurring loop runs several times per time step marks them itself.
 */

/** The iterator LBOMP_FOR expands to; only `active` is meant to be read. */
typedef struct lbomp_for {
        lbomp_iter_t it; /* internal: the run of the loop's task set */
        void *loop;      /* internal */
        int64_t lo, hi;  /* internal to the macro: the chunk being run */
        int left;        /* internal to the macro: 1 while a chunk runs (left 1 by a break) */
        int active;      /* 1 until lbomp_for_end() */
} lbomp_for_t;

/**
 * Enters a run of the loop `name` over [begin, end) (begin >= end: no index) on the calling
 * thread; every thread of the team calls it with the same range. On refusal `active` is 0 and
 * lbomp_last_step() says why. Thread-safe within the team.
 */
lbomp_for_t lbomp_for_begin(lbomp_t *lb, const char *name, int64_t begin, int64_t end);
/** The calling thread's next chunk, [*lo, *hi): 1, or 0 when it has none left (the previous
 * chunk is then timed as complete). */
int lbomp_for_next(lbomp_for_t *it, int64_t *lo, int64_t *hi);
/** Ends the calling thread's part: the loop's barrier, and its LB step when due. */
void lbomp_for_end(lbomp_for_t *it);

#define LBOMP_FOR(lb, name, var, begin, end)                                                       \
        for (lbomp_for_t lbomp_fo_ = lbomp_for_begin(lb, name, begin, end); lbomp_fo_.active;      \
             lbomp_for_end(&lbomp_fo_))                                                            \
                while (lbomp_fo_.left == 0 &&                                                      \
                       lbomp_for_next(&lbomp_fo_, &lbomp_fo_.lo, &lbomp_fo_.hi))                   \
                        for (int64_t var = (lbomp_fo_.left = 1, lbomp_fo_.lo),                     \
                                     lbomp_fe_ = lbomp_fo_.hi;                                     \
                             var < lbomp_fe_ || (lbomp_fo_.left = 0); var++)

/**
 * Marks the start of a time step: the next loop or step to run begins it (see "Time steps"). From
 * the first call on, only marks begin time steps. Call it from outside a parallel region, or from
 * any thread(s) inside one before the time step's first loop (marks that no run separates count
 * once). Returns 0, -EINVAL (NULL). Thread-safe.
 */
int lbomp_time_step(lbomp_t *lb);

/**
 * The task set of loop `name` of lb, as a handle for the statistics getters (lbomp_lb_count,
 * lbomp_lb_get, lbomp_window_count, lbomp_window_get, lbomp_task_count, lbomp_report,
 * lbomp_report_json): its tasks are its chunks, its windows and LB steps count its runs. NULL when
 * no loop of that name has run. Valid until lbomp_destroy(lb). Not for any other call.
 */
const lbomp_t *lbomp_loop(const lbomp_t *lb, const char *name);

/** What one loop is and did. */
typedef struct lbomp_loop_stats {
        const char *name;      /* valid until lbomp_destroy() */
        const lbomp_t *handle; /* lbomp_loop(lb, name) */
        int64_t begin, end;    /* range of its last run */
        uint32_t chunks;       /* chunks now */
        uint64_t runs;         /* runs begun */
        uint64_t recuts;       /* times new chunks were cut from measured costs */
        uint64_t rebuilds;     /* times new chunks were cut because the range changed */
        uint64_t resizes;      /* range changes that the edge chunks followed */
        double target_s;       /* cost per step a chunk aimed at in the last cut from costs (0:
                                  none yet) */
} lbomp_loop_stats_t;

/** Number of loops lb has run so far. */
size_t lbomp_loop_count(const lbomp_t *lb);
/** Loop i (in the order of their first runs) into *out (`size` = sizeof *out). -ENOENT if i is
 * out of range, -EINVAL for NULL or size 0. Not while a loop of lb runs. */
int lbomp_loop_get(const lbomp_t *lb, size_t i, lbomp_loop_stats_t *out, size_t size);

/* ---------------------------------------------------------------------------------------------
 * Statistics and report
 */

/** Message kinds a decentralized policy may count separately (lbomp_lb_stats_t.kind_name). */
#define LBOMP_MSG_KINDS 8

/** What one load-balancing step did. Times in seconds, loads in seconds per step. */
typedef struct lbomp_lb_stats {
        uint64_t step;           /* the step after which the balancer ran (0-based) */
        const char *policy;      /* static string */
        double imbalance_before; /* λ = max load / average load of the window just measured */
        double imbalance_after;  /* λ the plan predicts with the same measured costs */
        double max_load, avg_load;
        uint32_t migrations;     /* tasks whose worker changed */
        uint64_t migrated_bytes; /* their data bytes */
        double decision_s;       /* snapshot to complete plan */
        double apply_s;          /* plan check and deque rebuild */
        uint64_t messages;       /* decentralized policies: messages sent, 0 otherwise */
        uint32_t rounds;         /* decentralized policies: rounds, 0 otherwise */
        double locality_before;  /* Σ links bytes × node distance, before the moves */
        double locality_after;   /* the same after the moves */
        int error;               /* 0, or the policy's error code (then nothing moved) */
        /* Move cost: Σ over migrations of data bytes × distance(node the data was on, node of the
         * new worker); the data is on the task's home node when known, else on its old worker's
         * node. Distances are normalised (local = 1.0), so a move inside a node costs its bytes. */
        double move_cost;
        uint32_t node_migrations;     /* migrations to a worker on another NUMA node */
        uint64_t node_migrated_bytes; /* their data bytes */
        /* Data with the task (LBOMP_MOVE_PAGES, lbomp_set_migrate_fn): */
        uint32_t data_moves; /* tasks whose data followed them: pages moved or callback called */
        uint64_t data_bytes; /* bytes of registered memory moved by move_pages; with a profile
                                topology, the bytes that would have moved (nothing is moved) */
        double data_s;       /* wall time of the page moves and migrate callbacks */
        int data_error;      /* 0, or the first error of move_pages (the run goes on) */
        /* Decentralized policies only (0 / NULL otherwise). `rounds` above counts the rounds every
         * worker ran plus ceil(log2 workers) for each collective (reduction, quiescence check). */
        uint32_t gossip_rounds;   /* rounds in which gossip messages were sent */
        uint32_t collectives;     /* reductions and quiescence detections */
        uint32_t packs;           /* packdrop: packs formed by the overloaded workers */
        uint32_t offers_rejected; /* offers (of a pack or a task) refused by their target */
        uint32_t packs_forced;    /* packdrop: packs sent forced after their normal offers */
        uint32_t packs_withdrawn; /* packdrop: packs kept home (no target could take them) */
        double span_s; /* critical path of the decision: Σ over rounds of the slowest worker */
        const char *kind_name[LBOMP_MSG_KINDS];  /* names of the message kinds, static; NULL after
                                                    the last */
        uint64_t kind_messages[LBOMP_MSG_KINDS]; /* messages of each kind; they add up to
                                                    `messages` */
        /* Never worse: before a plan is applied, its maximum worker load is predicted from the
         * measured costs; a plan that moves tasks without lowering it is not applied (the mapping
         * is kept, migrations 0, imbalance_after = imbalance_before) and plan_rejected is 1, with
         * imbalance_planned the λ that plan predicted (0 when not rejected). */
        int plan_rejected;
        double imbalance_planned;
        /* 1 when this LB step's plan was not the policy's but the tasks interleaved over the
         * workers in the order of their ids: the load moved within the window (its steps
         * imbalanced, its sum not) and the interleaving lowered the largest worker's time of the
         * window's timed steps by more than it costs over the steps it lasts (README, "Loads that
         * move within a window"); the note of the report says the gain and the cost. */
        int interleaved;
        /* Since 0.2. 1 when this LB step put the tasks back where they were before the last
         * interleaving, whose window ran its steps more than 2 % slower than the window it was
         * judged on (README, "Interleavings on probation"); the next interleaving then waits 2, 4
         * … 32 LB steps. */
        int interleave_undone;
} lbomp_lb_stats_t;

/** What one window (the steps between two balancer runs) measured. */
typedef struct lbomp_window_stats {
        uint64_t first_step, steps;
        double imbalance; /* λ of the measured loads of the window: each worker's owned load
                             as a predicted time (÷ its speed) over the capacity-weighted mean
                             (README "Unequal cores"); plain max / mean with equal speeds */
        double max_load, avg_load;
        double wall_s;   /* wall time of the window's steps */
        uint64_t stolen; /* tasks run by another worker than their owner (LBOMP_STEAL) */
        double energy_j; /* joules of all packages (RAPL) over the window; NAN when unavailable */
        double power_w;  /* energy_j / wall_s; NAN when unavailable */
        /* λ of what each worker actually carried (its time in tasks, stolen ones included, plus
         * its background), while `imbalance` charges every task to its owner. Equal without
         * stealing; lower with it when stealing absorbed part of the imbalance. */
        double imbalance_run;
        /* Since 0.2. λ of every step (max over workers of the step's owned load / their mean),
         * averaged over the window's steps, and its maximum: a hotspot that moves within the
         * window is imbalanced here while `imbalance`, of the loads summed over the window, looks
         * balanced. The same mean for the loads the workers carried (what stealing left). Each
         * step's values: lbomp_step_get(). */
        double imbalance_step_mean;
        double imbalance_step_max;
        double imbalance_run_step_mean;
        /* Steps whose tasks were timed one by one: the last ones, which the decision reads. */
        uint64_t timed_steps;
        /* Steps in which stealing was armed (LBOMP_STEAL not off): after steps whose threads
         * would have waited for the last one (README "Stealing"). */
        uint64_t steal_steps;
        /* Of those, steps in which some worker's thieves took from its front (its next tasks)
         * rather than its tail: a worker gone 8 windows without predicted costs (README
         * "Stealing"). */
        uint64_t steal_front_steps;
} lbomp_window_stats_t;

/** One step (since 0.2). Loads are each worker's wall time in the step, or its CPU time where it
 * was read (steps of 100 µs or more, or an oversubscribed team). */
typedef struct lbomp_step_stats {
        uint64_t step;
        double imbalance;     /* max over workers of its owned load (its own tasks, whoever ran
                                 them) / their mean */
        double imbalance_run; /* the same for what each worker carried */
        uint64_t skipped;     /* tasks that did not run in it (a break): then its loads were not
                                 used for balancing */
} lbomp_step_stats_t;

/*
 * The statistics getters take the size of the caller's struct (pass sizeof *out): fields are only
 * ever added at the end, so a program compiled against an older lbomp.h gets the fields it knows,
 * and one compiled against a newer header gets zeros for the fields this library lacks.
 */

/*
 * A run keeps a bounded history (LBOMP_HISTORY, default 128): the last N LB steps, the last N
 * windows and the last 16 N steps; the counts and the report's totals cover the whole run. Indices
 * are the run's (0 = its first LB step); the oldest kept is lbomp_lb_first() (0 until more than N
 * have run), and an index older than that gives -ENOENT.
 */
/** Since 0.2. What the whole run added up to, whatever LBOMP_HISTORY keeps. */
typedef struct lbomp_totals {
        uint64_t lb_steps, windows; /* so far */
        uint64_t migrations, migrated_bytes, node_migrations;
        uint64_t messages; /* of decentralized policies */
        uint64_t stolen;   /* tasks run by another worker than their owner */
        uint64_t data_moves, data_bytes;
        double decision_s, apply_s, move_cost, data_s;
        double imbalance_first, imbalance_last; /* λ of the first and the last window; NAN: none */
        double locality_first;                  /* locality_before of the first LB step */
        double locality_last;                   /* locality_after of the last LB step */
        uint64_t steal_steps;       /* steps in which stealing was armed (README, "Stealing") */
        uint64_t steal_front_steps; /* of which some worker's thieves took from its front */
} lbomp_totals_t;
/** Fills *out (`size` = sizeof *out). -EINVAL for NULL or size 0. */
int lbomp_totals_get(const lbomp_t *lb, lbomp_totals_t *out, size_t size);

/** Number of LB steps so far (over the whole run). */
size_t lbomp_lb_count(const lbomp_t *lb);
/** Since 0.2. Index of the oldest LB step still kept (LBOMP_HISTORY); 0 until more have run. */
size_t lbomp_lb_first(const lbomp_t *lb);
/** Copies LB step i into *out (`size` = sizeof *out). -ENOENT if i is out of range or no longer
 * kept, -EINVAL for NULL or size 0. */
int lbomp_lb_get(const lbomp_t *lb, size_t i, lbomp_lb_stats_t *out, size_t size);
/** Number of complete windows so far (over the whole run). */
size_t lbomp_window_count(const lbomp_t *lb);
/** Since 0.2. Index of the oldest window still kept (LBOMP_HISTORY); 0 until more have run. */
size_t lbomp_window_first(const lbomp_t *lb);
/** Copies window i into *out (`size` = sizeof *out). -ENOENT if i is out of range or no longer
 * kept, -EINVAL for NULL or size 0. */
int lbomp_window_get(const lbomp_t *lb, size_t i, lbomp_window_stats_t *out, size_t size);
/** Time steps of the program so far (see "Time steps"): with LBOMP_FOR_EACH_TASK or lbomp_step()
 * alone, the steps run; a step refused at its end (lbomp_last_step()) is not among them. Call it
 * between steps. */
uint64_t lbomp_steps(const lbomp_t *lb);
/** Copies step `step` (0 .. lbomp_steps() - 1) into *out (`size` = sizeof *out). -ENOENT if it
 * did not run or is no longer kept (the last 16 × LBOMP_HISTORY steps are), -EINVAL for NULL or
 * size 0. */
int lbomp_step_get(const lbomp_t *lb, uint64_t step, lbomp_step_stats_t *out, size_t size);

/**
 * Energy read from the processor's counters (RAPL) since lbomp_create(). Counters are read at
 * every window boundary and at the end of a step when 10 ms or more have passed since the last
 * reading, so the totals cover the run up to its last step (within 10 ms).
 */
typedef struct lbomp_energy {
        const char *reader; /* "powercap", "perf" or "msr"; NULL when unavailable */
        /* One line: the reader and why the preferred ones were not used, or "unavailable: <reason>"
         * (e.g. "unavailable: /sys/class/powercap not present; perf: ...; msr: ..."). */
        const char *note;
        double package_j; /* joules of all packages (never psys nor sub-domains); NAN if unavailable
                           */
        double seconds;   /* span those joules cover; NAN when unavailable */
        double power_w;   /* package_j / seconds; NAN when unavailable */
} lbomp_energy_t;

/**
 * Fills *out. The strings stay valid until the next step, lbomp_set_powercap_root() or
 * lbomp_destroy(). Unavailable energy is not an error: returns 0 with NAN figures and the reason
 * in note. -EINVAL for NULL arguments.
 */
int lbomp_energy_get(const lbomp_t *lb, lbomp_energy_t *out);

/**
 * Prints the human-readable report: configuration, binding, one line per LB step (a second one
 * with messages by kind, rounds, packs, rejected and forced offers for decentralized policies),
 * totals.
 */
int lbomp_report(const lbomp_t *lb, FILE *out);
/** Prints the same as one JSON object (one line). */
int lbomp_report_json(const lbomp_t *lb, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* LBOMP_H */
