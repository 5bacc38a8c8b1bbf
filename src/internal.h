/*
 * internal.h — the runtime's own structures, shared by the files of src/ and never installed.
 *
 * The runtime owns a task table, one worker per OpenMP thread (its core, node and deque), the
 * measurement window, and the records of every window and LB step. Cross-file functions carry the
 * lbomp__ prefix.
 */
#ifndef LBOMP_INTERNAL_H
#define LBOMP_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "energy.h"
#include "lbomp.h"
#include "policy.h"

#define LBOMP__CACHELINE   64
#define LBOMP__MAX_WORKERS 4096
#define LBOMP__HIST        8 /* steps of each task kept for the robust cost (snapshot.c) */

/* ---- errors (lbomp.c) ---- */
/* Formats the thread's last error message; also printed on stderr when `print` is set. */
void lbomp__set_error(bool print, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Resizes *p to n elements of `size` bytes (at least one); 0 or -ENOMEM, *p kept on failure. */
int lbomp__grow(void **p, size_t n, size_t size);
#define LBOMP__GROW(ptr, n) lbomp__grow((void **)&(ptr), (n), sizeof *(ptr))

/* ---- clock (clock.c) ---- */
/*
 * Task timing reads the time-stamp counter where it is invariant (x86-64 with constant_tsc and
 * nonstop_tsc), else CLOCK_MONOTONIC. Ticks become seconds with a rate calibrated against
 * CLOCK_MONOTONIC over the whole run.
 */
struct lbomp__clock {
        bool tsc;
        uint64_t tick0;
        double mono0;
        double ticks_per_s;
};
void lbomp__clock_init(struct lbomp__clock *c);
/* Re-estimates ticks_per_s from the time since init (cheap: two clock reads). */
void lbomp__clock_calibrate(struct lbomp__clock *c);
double lbomp__mono_s(void);
double lbomp__thread_cpu_s(void);
const char *lbomp__clock_name(const struct lbomp__clock *c);

uint64_t lbomp__mono_ns(void);

/* Test hook (clock.c): when set, replaces CLOCK_MONOTONIC as the tick source of runtimes that do
 * not use the TSC, so tests can feed zero or backwards readings. NULL in every real run. */
extern uint64_t (*lbomp__ticks_hook)(void);

static inline uint64_t lbomp__ticks(bool tsc)
{
#if defined(__x86_64__) || defined(__i386__)
        if (tsc)
                return __builtin_ia32_rdtsc();
#endif
        (void)tsc;
        if (__builtin_expect(lbomp__ticks_hook != NULL, 0))
                return lbomp__ticks_hook();
        return lbomp__mono_ns();
}

/* ---- configuration (config.c: the only getenv() caller) ---- */
enum lbomp__steal { LBOMP__STEAL_OFF, LBOMP__STEAL_NODE, LBOMP__STEAL_ALL };

struct lbomp__config {
        const struct lbomp__policy *policy;
        int period;
        uint64_t seed;
        int verbose;
        char *topology; /* NULL: host */
        char *trace;    /* LBOMP_TRACE: file recording every LB step, or NULL */
        enum lbomp__steal steal;
        bool time_wall;      /* LBOMP_TIME=wall: raw wall time; default cpu: bounded by CPU time */
        bool move_pages;     /* LBOMP_MOVE_PAGES=on: a task's registered pages follow it */
        char *powercap_root; /* LBOMP_POWERCAP_ROOT; NULL: the machine's own counters */
        struct lbomp__params params;
};
/* Fills defaults, then the environment. On a bad value: message + negative errno. */
int lbomp__config_from_env(struct lbomp__config *c);
void lbomp__config_free(struct lbomp__config *c);
/* The table of variables, for the report and README: name, default, meaning. */
void lbomp__config_print(const struct lbomp__config *c, FILE *out);
/* Strict parsers shared by the setters and the environment. */
int lbomp__parse_int(const char *var, const char *s, long lo, long hi, long *out);
int lbomp__parse_u64(const char *var, const char *s, uint64_t *out);
/* Same checks as the variable `var` when given through the environment. */
int lbomp__config_set(struct lbomp__config *c, const char *var, const char *value);
int lbomp__parse_double(const char *var, const char *s, double lo, double hi, double *out);

/* ---- topology (topology.c) ---- */
struct lbomp__topo {
        char *source;       /* "host" or the XML path */
        char *name;         /* file name without directory, or "host" */
        int ncores;         /* cores the process may use (all cores of a profile) */
        int nnodes;         /* NUMA nodes (at least 1) */
        int *core_node;     /* [ncores] logical node index of each core */
        int *core_os;       /* [ncores] OS index of the core's first PU (host only), else -1 */
        int *node_os;       /* [nnodes] OS index of each node (the kernel's node number) */
        double *dist;       /* [nnodes * nnodes], local = 1.0 */
        bool dist_measured; /* false: no matrix in the topology, 1.0 / 2.0 assumed */
        bool is_host;
        bool restricted;    /* host: limited to the process's CPU set (taskset, cpuset) */
        bool flat;          /* host: hwloc could not read it; one node, threads not bound */
        int ncores_machine; /* cores of the whole machine (host), before the restriction */
        int npus_allowed;   /* PUs this process may run on (host), for oversubscription */
        void *hwloc;        /* hwloc_topology_t */
};
/* Loads the host (path NULL) or an XML file. -ENOENT missing file, -EINVAL unparsable. */
int lbomp__topo_load(struct lbomp__topo *t, const char *path);
void lbomp__topo_free(struct lbomp__topo *t);
/* Core of worker w among n, as OMP_PROC_BIND=spread places threads over the cores. */
int lbomp__topo_spread_core(const struct lbomp__topo *t, int w, int n);
/* Binds the calling thread to core c (host only). 0 or negative errno. */
int lbomp__topo_bind(const struct lbomp__topo *t, int c);

/* ---- deque (deque.c): Chase-Lev over a fixed array, refilled at every step ---- */
struct lbomp__deque {
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t top;    /* thieves take here */
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t bottom; /* the owner pops here */
        _Alignas(LBOMP__CACHELINE) const uint32_t *items;  /* not written while stealing */
};
enum lbomp__take { LBOMP__TAKEN, LBOMP__EMPTY, LBOMP__LOST_RACE };
/* Owner, while no thief runs: items[0..n) become the deque's content. */
void lbomp__deque_reset(struct lbomp__deque *d, const uint32_t *items, int64_t n);
/* Owner: the last item (LIFO end). On TAKEN, *pos is its index in items. */
enum lbomp__take lbomp__deque_pop(struct lbomp__deque *d, int64_t *pos);
/* Any thread: the first item (FIFO end). LOST_RACE means retry may succeed. */
enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos);

/* ---- runtime (lbomp.c) ---- */
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
        uint64_t step_t0, busy_ticks, ran;
        double cpu0; /* thread CPU time at the start of the step (LBOMP_TIME=cpu) */
        /* this window (owner only) */
        double win_bg_s;   /* span not spent in tasks */
        double win_busy_s; /* time in tasks it ran (its own and stolen) */
        uint64_t win_stolen;
        uint64_t steps;      /* steps this worker has run */
        uint64_t win_steps;  /* steps of the current window */
        uint64_t skipped;    /* tasks left when a thread broke out of the loop */
        uint64_t clock_back; /* readings earlier than the previous one, counted as 0 */
        /* data moves of the current LB step (migrate.c), summed by the master */
        uint32_t data_moves;
        uint64_t data_bytes;
        int data_error;
};

struct lbomp__task {
        void *data;
        uint64_t bytes;
        int32_t home;
        uint32_t worker; /* UINT32_MAX when removed */
        void *mem;       /* registered memory that follows the task (migrate.c), or NULL */
        size_t mem_bytes;
};

struct lbomp__link {
        uint32_t a, b;
        double bytes;
};

/* Everything one LB step records beyond the public fields. */
struct lbomp__lbrec {
        lbomp_lb_stats_t pub;
        char note[96]; /* why the plan is what it is, when that needs saying; "" otherwise */
        struct lbomp__pstats ps;
        double locality_before, locality_after;
        double energy_j, power_w; /* of the window that led to this step; NAN when unknown */
};

struct lbomp {
        struct lbomp__config cfg;
        struct lbomp__topo topo;
        struct lbomp__clock clock;
        int nworkers;
        struct lbomp__worker *w;
        bool oversubscribed; /* more workers than PUs we may run on */
        bool in_step;
        bool started;   /* a step has run: topology and team are fixed */
        bool omp_binds; /* OMP_PROC_BIND set by the user: OpenMP binds, not us */
        char bind_note[160];

        /* tasks */
        struct lbomp__task *task;
        uint32_t ntask, task_cap, nalive;
        double *win_ticks; /* [task_cap] scaled ticks of each task in this window */
        float *win_hist;   /* [task_cap * LBOMP__HIST] its last steps' values, for the median */
        struct lbomp__link *link;
        size_t nlink, link_cap;
        bool deques_dirty; /* tasks added, removed or moved: rebuild worker arrays */

        /* the step in progress */
        lbomp_task_fn fn;
        void *fn_arg;
        uint64_t steps;     /* steps completed */
        uint64_t win_first; /* first step of the window being measured */
        double win_wall0;
        int lb_rc;         /* result of the last LB step, shared with the team */
        bool said_no_time; /* the "clock did not advance" line was printed */

        /* the LB step in progress, shared by the team between barriers */
        struct {
                const struct lbomp__snap *snap;
                struct lbomp__lbrec *rec;
                double t_decide, t_data;
                bool skip;
        } lbs;

        /* records */
        struct lbomp__lbrec *lb;
        size_t nlb, lb_cap;
        lbomp_window_stats_t *win;
        size_t nwin, win_cap;

        /* data with the task (migrate.c) */
        lbomp_migrate_fn migrate_fn;
        void *migrate_arg;
        uint32_t *arrived;     /* [ntask] tasks that changed node, grouped by new worker */
        uint32_t *arrived_off; /* [nworkers + 1] */
        int32_t *arrived_from; /* [ntask] the node each one's data was on */
        size_t arrived_cap;
        bool data_pending; /* the team has page moves or callbacks to run */
        /* energy (energy.h): opened at create, read at window boundaries and after steps */
        struct lbomp__energy *energy;
        double energy_t0;     /* when the counters were opened */
        double energy_t_last; /* last successful reading */
        double *energy_mark;  /* [ndomains] totals at the start of the current window */
        double *win_dom_j;    /* [win_dom_cap * ndomains] joules per domain of each window */
        size_t win_dom_cap;

        /* LB step scratch, reused */
        struct lbomp__dec *dec;
        struct lbomp__snapbuf *sb;

        /* LBOMP_TRACE: records every LB step's snapshot and plan (trace.h), or NULL */
        struct lbomp__trace_writer *trace;
        int32_t *trace_wcore; /* [nworkers] core of each worker, for the trace */
};

/* snapshot.c: builds the immutable snapshot from the runtime's window. */
struct lbomp__snapbuf;
struct lbomp__snapbuf *lbomp__snapbuf_create(void);
void lbomp__snapbuf_destroy(struct lbomp__snapbuf *b);
/* Fills b from the runtime's current window; returns the snapshot (valid until the next call). */
const struct lbomp__snap *lbomp__snapshot(struct lbomp *lb, struct lbomp__snapbuf *b, int *rc);
uint32_t *lbomp__snap_dest(struct lbomp__snapbuf *b);

/* lbomp.c: gives tasks added since the last step their worker now (as the next step would).
 * One thread, no step running. 0 or -ENOMEM. */
int lbomp__place_tasks(struct lbomp *lb);

/* migrate.c: data with the task. */
/* Master, after the plan is applied: lists the tasks whose data must follow them. Returns the
 * count, or -ENOMEM. `from` is the node each task's data was on before the plan. */
int lbomp__data_plan(struct lbomp *lb, const struct lbomp__snap *s, const uint32_t *dest);
/* Every worker of the team: moves the pages / calls the callback of the tasks that arrived to it.
 */
void lbomp__data_run(struct lbomp *lb, int self);
/* Whether NUMA memory calls can work here (libnuma and kernel support). */
bool lbomp__numa_ok(void);

#endif
