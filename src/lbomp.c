/*
 * lbomp.c — the public entry points: life cycle, configuration setters, tasks and links, the
 * step (callback and in-region forms) with its barrier, and the LB step that runs a policy on a
 * snapshot and applies its plan.
 *
 * The per-task path (lbomp_iter_next without stealing) is one counter read, two stores and two
 * loads; everything else (aggregation, snapshot, policy, plan, records) happens at the barrier.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mailbox.h"
#include "trace.h"

_Static_assert(LBOMP_MSG_KINDS == LBOMP__MSG_KINDS, "public and internal message kinds differ");

#define PENDING (UINT32_MAX - 1) /* added, not yet on a worker */
#define REMOVED UINT32_MAX

enum { MODE_PLAIN = 0, MODE_STEAL = 1 };

/* ---------------------------------------------------------------------------------------------
 * Errors
 */

static _Thread_local char last_error[512];

void lbomp__set_error(bool print, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
        if (print)
                fprintf(stderr, "%s\n", last_error);
}

const char *lbomp_last_error(void)
{
        return last_error;
}

const char *lbomp_strerror(int err)
{
        switch (err) {
        case 0:
                return "success";
        case -EINVAL:
                return "invalid argument";
        case -ENOMEM:
                return "out of memory";
        case -ENOENT:
                return "no such policy, file or task";
        case -ENOTSUP:
                return "not supported: backend not built or not present";
        case -EBUSY:
                return "not allowed while a step runs";
        case -ECANCELED:
                return "canceled: LBOMP_POLICY=help listed the policies";
        case -EFAULT:
                return "internal inconsistency (a bug in lbomp)";
        case -EAGAIN:
                return "policy could not complete";
        default:
                return "unknown error";
        }
}

/* ---------------------------------------------------------------------------------------------
 * Workers
 */

int lbomp__grow(void **p, size_t n, size_t size)
{
        void *q = realloc(*p, (n ? n : 1) * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        return 0;
}

static void worker_free(struct lbomp__worker *w)
{
        free(w->tasks);
        free(w->data);
        free(w->ticks);
        free(w->runner);
        free(w->victims);
}

/* Victims nearest first: own node, then by distance; within a distance, starting after self so
 * that thieves spread over victims. LBOMP_STEAL=node keeps only the own node. */
static void plan_victims(struct lbomp *lb)
{
        int P = lb->nworkers, n = lb->topo.nnodes;
        for (int i = 0; i < P; i++) {
                struct lbomp__worker *w = &lb->w[i];
                w->nvictims = 0;
                for (int k = 1; k < P; k++) {
                        int v = (i + k) % P;
                        if (lb->cfg.steal == LBOMP__STEAL_NODE && lb->w[v].node != w->node)
                                continue;
                        w->victims[w->nvictims++] = (uint32_t)v;
                }
                /* insertion sort by distance, stable: keeps the rotation within a distance */
                for (uint32_t a = 1; a < w->nvictims; a++) {
                        uint32_t x = w->victims[a];
                        double dx = lb->topo.dist[w->node * n + lb->w[x].node];
                        uint32_t b = a;
                        while (b > 0 &&
                               lb->topo.dist[w->node * n + lb->w[w->victims[b - 1]].node] > dx) {
                                w->victims[b] = w->victims[b - 1];
                                b--;
                        }
                        w->victims[b] = x;
                }
        }
}

static void place_workers(struct lbomp *lb)
{
        for (int i = 0; i < lb->nworkers; i++) {
                struct lbomp__worker *w = &lb->w[i];
                w->core = lbomp__topo_spread_core(&lb->topo, i, lb->nworkers);
                w->node = lb->topo.core_node[w->core];
                w->bound_once = false;
        }
        lb->oversubscribed =
                lb->nworkers > (lb->topo.is_host ? lb->topo.npus_allowed : lb->topo.ncores);
        if (!lb->topo.is_host) {
                /* A profile's cores are not ours: the threads share the host's PUs. */
                int host = omp_get_num_procs();
                if (lb->nworkers > host)
                        lb->oversubscribed = true;
        }
        plan_victims(lb);
}

static int set_workers(struct lbomp *lb, int n)
{
        for (int i = n; i < lb->nworkers; i++)
                worker_free(&lb->w[i]);
        struct lbomp__worker *w = NULL;
        if (posix_memalign((void **)&w, LBOMP__CACHELINE, (size_t)n * sizeof *w) != 0)
                return -ENOMEM;
        int keep = n < lb->nworkers ? n : lb->nworkers;
        if (keep > 0)
                memcpy(w, lb->w, (size_t)keep * sizeof *w);
        memset(w + keep, 0, (size_t)(n - keep) * sizeof *w);
        free(lb->w);
        lb->w = w;
        int old = lb->nworkers;
        lb->nworkers = n;
        for (int i = 0; i < n; i++) {
                void *v = realloc(lb->w[i].victims, (size_t)n * sizeof *lb->w[i].victims);
                if (!v)
                        return -ENOMEM;
                lb->w[i].victims = v;
        }
        /* Tasks of workers that are gone wait for a new home. */
        for (uint32_t t = 0; t < lb->ntask && n < old; t++)
                if (lb->task[t].worker != REMOVED && lb->task[t].worker >= (uint32_t)n)
                        lb->task[t].worker = PENDING;
        place_workers(lb);
        lb->deques_dirty = true;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Energy. The counters are read where a window starts and ends, so that every window gets its
 * own joules over exactly its wall time, and after a step once 10 ms have passed since the last
 * reading, so that the run's total ends with its last step without a sysfs read per step.
 * Unavailable counters cost nothing more than a test per step.
 */

#define ENERGY_STEP_GAP_S 0.01

/* Opens the counters named by the configuration; replaces the current ones only on success. */
static int energy_open(struct lbomp *lb)
{
        struct lbomp__energy *e;
        int rc = lbomp__energy_open(&e, lb->cfg.powercap_root);
        if (rc < 0)
                return rc;
        int n = lbomp__energy_ndomains(e);
        double *mark = calloc(n ? (size_t)n : 1, sizeof *mark);
        if (!mark) {
                lbomp__energy_close(e);
                return -ENOMEM;
        }
        lbomp__energy_close(lb->energy);
        free(lb->energy_mark);
        free(lb->win_dom_j);
        lb->energy = e;
        lb->energy_mark = mark;
        lb->win_dom_j = NULL;
        lb->win_dom_cap = 0;
        lb->energy_t0 = lb->energy_t_last = lbomp__mono_s();
        if (lb->cfg.verbose)
                fprintf(stderr, "lbomp: energy: %s\n", lbomp__energy_note(e));
        return 0;
}

static void energy_read(struct lbomp *lb)
{
        if (lbomp__energy_sample(lb->energy) == 0)
                lb->energy_t_last = lbomp__mono_s();
}

/* A window starts: remember every domain's total. */
static void energy_mark(struct lbomp *lb)
{
        energy_read(lb);
        for (int i = 0; i < lbomp__energy_ndomains(lb->energy); i++)
                lb->energy_mark[i] = lbomp__energy_total_j(lb->energy, i);
}

/* The window `ws` (the last one recorded) ends: its joules per domain and for the packages. */
static void energy_window_end(struct lbomp *lb, lbomp_window_stats_t *ws)
{
        int n = lbomp__energy_ndomains(lb->energy);
        double *dj = lb->win_dom_j ? lb->win_dom_j + (lb->nwin - 1) * (size_t)n : NULL;
        double pkg = 0;
        int npkg = 0;

        energy_read(lb);
        for (int i = 0; i < n; i++) {
                double j = lbomp__energy_total_j(lb->energy, i) - lb->energy_mark[i];
                if (dj)
                        dj[i] = j;
                if (lbomp__energy_domain_is_package(lb->energy, i)) {
                        pkg += j;
                        npkg++;
                }
        }
        ws->energy_j = lbomp__energy_available(lb->energy) && npkg ? pkg : NAN;
        ws->power_w = ws->wall_s > 0 ? ws->energy_j / ws->wall_s : NAN;
}

int lbomp_energy_get(const lbomp_t *lb, lbomp_energy_t *out)
{
        if (!lb || !out)
                return -EINVAL;
        const struct lbomp__energy *e = lb->energy;
        out->reader = lbomp__energy_reader(e);
        out->note = lbomp__energy_note(e);
        out->package_j = lbomp__energy_package_j(e);
        out->seconds = lbomp__energy_available(e) ? lb->energy_t_last - lb->energy_t0 : NAN;
        out->power_w = out->seconds > 0 ? out->package_j / out->seconds : NAN;
        return 0;
}

int lbomp_set_powercap_root(lbomp_t *lb, const char *dir)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step || lb->started)
                return -EBUSY;
        char *old = lb->cfg.powercap_root ? strdup(lb->cfg.powercap_root) : NULL;
        if (lb->cfg.powercap_root && !old)
                return -ENOMEM;
        int rc = 0;
        if (dir) {
                rc = lbomp__config_set(&lb->cfg, "LBOMP_POWERCAP_ROOT", dir);
        } else {
                free(lb->cfg.powercap_root);
                lb->cfg.powercap_root = NULL;
        }
        if (rc == 0)
                rc = energy_open(lb);
        if (rc < 0) { /* keep configuration and counters in agreement */
                free(lb->cfg.powercap_root);
                lb->cfg.powercap_root = old;
                return rc;
        }
        free(old);
        return 0;
}

/* Restarts the measurement window: after the balancer ran, or when the task set changed. */
static void window_restart(struct lbomp *lb)
{
        lb->win_first = lb->steps;
        lb->win_wall0 = lbomp__mono_s();
        energy_mark(lb);
        if (lb->ntask) /* win_ticks is NULL before the first task: memset(NULL, 0, 0) is UB */
                memset(lb->win_ticks, 0, lb->ntask * sizeof *lb->win_ticks);
        for (int i = 0; i < lb->nworkers; i++) {
                struct lbomp__worker *w = &lb->w[i];
                w->win_bg_s = w->win_busy_s = 0;
                w->win_stolen = 0;
                w->win_steps = 0;
        }
}

/* Gives pending tasks a worker (contiguous blocks, as schedule(static) would) and rebuilds every
 * worker's arrays in ascending id order. One thread, no step running. */
static int rebuild_deques(struct lbomp *lb)
{
        uint32_t P = (uint32_t)lb->nworkers, npending = 0, k = 0;
        for (uint32_t t = 0; t < lb->ntask; t++)
                npending += lb->task[t].worker == PENDING;
        for (uint32_t t = 0; t < lb->ntask && npending; t++)
                if (lb->task[t].worker == PENDING)
                        lb->task[t].worker = (uint32_t)((uint64_t)k++ * P / npending);
        for (uint32_t i = 0; i < P; i++)
                lb->w[i].n = 0;
        for (uint32_t t = 0; t < lb->ntask; t++)
                if (lb->task[t].worker < P)
                        lb->w[lb->task[t].worker].n++;
        for (uint32_t i = 0; i < P; i++) {
                struct lbomp__worker *w = &lb->w[i];
                if (w->n > w->cap || !w->tasks) {
                        uint32_t cap = w->n > 2 * w->cap ? w->n : 2 * w->cap;
                        if (cap < 16)
                                cap = 16;
                        if (LBOMP__GROW(w->tasks, cap) || LBOMP__GROW(w->data, cap) ||
                            LBOMP__GROW(w->ticks, cap) || LBOMP__GROW(w->runner, cap))
                                return -ENOMEM;
                        w->cap = cap;
                }
                w->n = 0;
        }
        for (uint32_t t = 0; t < lb->ntask; t++) {
                uint32_t wi = lb->task[t].worker;
                if (wi >= P)
                        continue;
                struct lbomp__worker *w = &lb->w[wi];
                w->tasks[w->n] = t;
                w->data[w->n] = lb->task[t].data;
                w->ticks[w->n] = 0;
                w->runner[w->n] = wi;
                w->n++;
        }
        lb->deques_dirty = false;
        return 0;
}

int lbomp__place_tasks(struct lbomp *lb)
{
        if (!lb->deques_dirty)
                return 0;
        int rc = rebuild_deques(lb);
        if (rc == 0)
                window_restart(lb);
        return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Life cycle and configuration
 */

int lbomp_create(lbomp_t **out)
{
        if (!out)
                return -EINVAL;
        *out = NULL;
        last_error[0] = 0;
        struct lbomp *lb = calloc(1, sizeof *lb);
        if (!lb)
                return -ENOMEM;
        int rc = lbomp__config_from_env(&lb->cfg);
        if (rc < 0) {
                free(lb);
                return rc;
        }
        /* Unavailable counters are not an error: only -ENOMEM stops here. */
        rc = energy_open(lb);
        if (rc < 0)
                goto fail;
        rc = lbomp__topo_load(&lb->topo, lb->cfg.topology);
        if (rc < 0)
                goto fail;
        lbomp__clock_init(&lb->clock);
        lb->omp_binds = omp_get_proc_bind() != omp_proc_bind_false;
        lb->sb = lbomp__snapbuf_create();
        lb->dec = lbomp__dec_create(1);
        int n = omp_get_max_threads();
        if (n > LBOMP__MAX_WORKERS)
                n = LBOMP__MAX_WORKERS;
        if (!lb->sb || !lb->dec || (rc = set_workers(lb, n)) < 0) {
                rc = rc < 0 ? rc : -ENOMEM;
                goto fail;
        }
        if (lb->cfg.trace) {
                char msg[400];
                rc = lbomp__trace_create(&lb->trace, lb->cfg.trace, msg, sizeof msg);
                if (rc < 0) {
                        lbomp__set_error(true,
                                         "lbomp: LBOMP_TRACE='%s' cannot be created: %s; expected "
                                         "the path of a file to write the LB trace to",
                                         lb->cfg.trace, strerror(-rc));
                        goto fail;
                }
        }
        window_restart(lb);
        *out = lb;
        return 0;
fail:
        lbomp_destroy(lb);
        return rc;
}

void lbomp_destroy(lbomp_t *lb)
{
        if (!lb)
                return;
        for (int i = 0; i < lb->nworkers; i++)
                worker_free(&lb->w[i]);
        free(lb->w);
        free(lb->task);
        free(lb->win_ticks);
        free(lb->win_hist);
        free(lb->link);
        free(lb->lb);
        free(lb->win);
        free(lb->arrived);
        free(lb->arrived_off);
        free(lb->arrived_from);
        lbomp__dec_destroy(lb->dec);
        lbomp__snapbuf_destroy(lb->sb);
        if (lbomp__trace_close(lb->trace) < 0)
                fprintf(stderr,
                        "lbomp: LBOMP_TRACE='%s': closing the trace failed; its last "
                        "record may be incomplete\n",
                        lb->cfg.trace);
        free(lb->trace_wcore);
        lbomp__topo_free(&lb->topo);
        lbomp__config_free(&lb->cfg);
        lbomp__energy_close(lb->energy);
        free(lb->energy_mark);
        free(lb->win_dom_j);
        free(lb);
}

int lbomp_set_policy(lbomp_t *lb, const char *name)
{
        if (!lb || !name)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        if (strcmp(name, "help") == 0)
                return -EINVAL;
        return lbomp__config_set(&lb->cfg, "LBOMP_POLICY", name);
}

int lbomp_set_period(lbomp_t *lb, int steps)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        if (steps < 1) {
                lbomp__set_error(
                        false, "lbomp: lbomp_set_period(%d): the period is a number of steps >= 1",
                        steps);
                return -EINVAL;
        }
        lb->cfg.period = steps;
        return 0;
}

int lbomp_set_seed(lbomp_t *lb, uint64_t seed)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        lb->cfg.seed = seed;
        return 0;
}

int lbomp_set_verbose(lbomp_t *lb, int level)
{
        if (!lb || level < 0 || level > 2)
                return -EINVAL;
        lb->cfg.verbose = level;
        return 0;
}

int lbomp_set_tolerance(lbomp_t *lb, double tolerance)
{
        if (!lb || !(tolerance > 0 && tolerance <= 1.0))
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        lb->cfg.params.tolerance = tolerance;
        return 0;
}

int lbomp_set_fanout(lbomp_t *lb, int fanout)
{
        if (!lb || fanout < 1 || fanout > 64)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        lb->cfg.params.fanout = fanout;
        return 0;
}

int lbomp_set_retries(lbomp_t *lb, int offers)
{
        if (!lb || offers < 0 || offers > 64)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        lb->cfg.params.retries = offers;
        return 0;
}

int lbomp_set_topology(lbomp_t *lb, const char *xml_path)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step || lb->started || lb->ntask)
                return -EBUSY;
        struct lbomp__topo t;
        int rc = lbomp__topo_load(&t, xml_path);
        if (rc < 0)
                return rc;
        lbomp__topo_free(&lb->topo);
        lb->topo = t;
        free(lb->cfg.topology);
        lb->cfg.topology = xml_path ? strdup(xml_path) : NULL;
        place_workers(lb);
        return 0;
}

int lbomp_set_workers(lbomp_t *lb, int nworkers)
{
        if (!lb || nworkers < 1 || nworkers > LBOMP__MAX_WORKERS)
                return -EINVAL;
        if (lb->in_step || lb->started)
                return -EBUSY;
        int rc = set_workers(lb, nworkers);
        if (rc == 0)
                window_restart(lb);
        return rc;
}

const char *lbomp_get_policy(const lbomp_t *lb)
{
        return lb ? lb->cfg.policy->name : NULL;
}

int lbomp_get_period(const lbomp_t *lb)
{
        return lb ? lb->cfg.period : -EINVAL;
}

int lbomp_get_workers(const lbomp_t *lb)
{
        return lb ? lb->nworkers : -EINVAL;
}

const char *lbomp_topology(const lbomp_t *lb, int *nodes, int *cores)
{
        if (!lb)
                return NULL;
        if (nodes)
                *nodes = lb->topo.nnodes;
        if (cores)
                *cores = lb->topo.ncores;
        return lb->topo.name;
}

void lbomp_policy_help(FILE *out)
{
        for (size_t i = 0; i < lbomp__policy_count(); i++) {
                const struct lbomp__policy *p = lbomp__policy_at(i);
                fprintf(out, "%-14s %s\n", p->name, p->help);
        }
}

/* ---------------------------------------------------------------------------------------------
 * Tasks and links
 */

int lbomp_task_add(lbomp_t *lb, void *data, size_t bytes, int home_node, lbomp_id_t *id)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        if (!data) {
                /* NULL is how lbomp_iter_next says "no task left": a NULL task would silently end
                 * its thread's part of every step. */
                lbomp__set_error(false, "lbomp: lbomp_task_add: data is NULL; every task needs a "
                                        "non-NULL pointer (NULL ends LBOMP_FOR_EACH_TASK)");
                return -EINVAL;
        }
        if (home_node != LBOMP_NODE_ANY && (home_node < 0 || home_node >= lb->topo.nnodes)) {
                lbomp__set_error(
                        false,
                        "lbomp: lbomp_task_add: home node %d does not exist (the topology has %d)",
                        home_node, lb->topo.nnodes);
                return -EINVAL;
        }
        if (lb->ntask == UINT32_MAX - 2)
                return -ENOMEM;
        if (lb->ntask == lb->task_cap) {
                uint32_t cap = lb->task_cap ? 2 * lb->task_cap : 64;
                if (LBOMP__GROW(lb->task, cap) || LBOMP__GROW(lb->win_ticks, cap) ||
                    LBOMP__GROW(lb->win_hist, (size_t)cap * LBOMP__HIST))
                        return -ENOMEM;
                lb->task_cap = cap;
        }
        uint32_t t = lb->ntask++;
        lb->task[t] = (struct lbomp__task){
                .data = data, .bytes = bytes, .home = home_node, .worker = PENDING};
        lb->win_ticks[t] = 0;
        lb->nalive++;
        lb->deques_dirty = true;
        if (id)
                *id = t;
        return 0;
}

int lbomp_task_remove(lbomp_t *lb, lbomp_id_t id)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        if (id >= lb->ntask || lb->task[id].worker == REMOVED)
                return -ENOENT;
        lb->task[id].worker = REMOVED;
        lb->nalive--;
        lb->deques_dirty = true;
        return 0;
}

uint32_t lbomp_task_count(const lbomp_t *lb)
{
        return lb ? lb->ntask : 0;
}

int lbomp_task_worker(const lbomp_t *lb, lbomp_id_t id)
{
        if (!lb)
                return -EINVAL;
        if (id >= lb->ntask || lb->task[id].worker == REMOVED)
                return -ENOENT;
        return lb->task[id].worker == PENDING ? -EAGAIN : (int)lb->task[id].worker;
}

int lbomp_link(lbomp_t *lb, lbomp_id_t a, lbomp_id_t b, size_t bytes)
{
        if (!lb)
                return -EINVAL;
        if (lb->in_step)
                return -EBUSY;
        if (a >= lb->ntask || b >= lb->ntask || lb->task[a].worker == REMOVED ||
            lb->task[b].worker == REMOVED)
                return -ENOENT;
        if (a == b)
                return -EINVAL;
        if (lb->nlink == lb->link_cap) {
                size_t cap = lb->link_cap ? 2 * lb->link_cap : 64;
                if (LBOMP__GROW(lb->link, cap))
                        return -ENOMEM;
                lb->link_cap = cap;
        }
        lb->link[lb->nlink++] = (struct lbomp__link){.a = a, .b = b, .bytes = (double)bytes};
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The step
 */

static void warn_team(struct lbomp *lb, int team)
{
        fprintf(stderr,
                "lbomp: the team has %d thread(s) but the runtime had %d worker(s): tasks "
                "redistributed over %d worker(s)\n",
                team, lb->nworkers, team);
}

/* Master, at the start of a step, while the other threads wait at the following barrier. */
static void step_prepare(struct lbomp *lb, int team)
{
        lb->in_step = true;
        if (team != lb->nworkers) {
                warn_team(lb, team);
                if (set_workers(lb, team) < 0)
                        lb->lb_rc = -ENOMEM;
                for (int i = 0; i < lb->nworkers; i++)
                        lb->w[i].steps = lb->steps;
        }
        if (lb->deques_dirty) {
                if (rebuild_deques(lb) < 0)
                        lb->lb_rc = -ENOMEM;
                window_restart(lb);
        }
        if (!lb->started) {
                lb->started = true;
                lb->win_wall0 = lbomp__mono_s();
                energy_mark(lb);
        }
        if (lb->cfg.steal != LBOMP__STEAL_OFF)
                for (int i = 0; i < lb->nworkers; i++)
                        lbomp__deque_reset(&lb->w[i].dq, lb->w[i].tasks, lb->w[i].n);
}

static void bind_self(struct lbomp *lb, struct lbomp__worker *w)
{
        w->bound_once = true;
        if (lb->omp_binds || !lb->topo.is_host || lb->topo.flat) {
                w->bind_rc = 1;
                return;
        }
        w->bind_rc = lbomp__topo_bind(&lb->topo, w->core);
}

lbomp_iter_t lbomp_iter_begin(lbomp_t *lb)
{
        lbomp_iter_t it = {.lb = lb, .pos = -1};
        int team = omp_get_num_threads(), self = omp_get_thread_num();
#pragma omp master
        step_prepare(lb, team);
#pragma omp barrier
        if (lb->lb_rc == -ENOMEM || self >= lb->nworkers)
                return it; /* inactive: nothing to run, no barrier to join */
        struct lbomp__worker *w = &lb->w[self];
        if (!w->bound_once)
                bind_self(lb, w);
        it.w = w;
        it.active = 1;
        it.mode = lb->cfg.steal != LBOMP__STEAL_OFF ? MODE_STEAL : MODE_PLAIN;
        if (!lb->cfg.time_wall)
                w->cpu0 = lbomp__thread_cpu_s();
        w->skipped = 0;
        w->step_t0 = lbomp__ticks(lb->clock.tsc);
        return it;
}

/* Stealing mode: own deque first (LIFO end), then victims nearest first. */
static void *next_steal(lbomp_iter_t *it)
{
        struct lbomp *lb = it->lb;
        struct lbomp__worker *w = it->w;
        int64_t pos;
        uint32_t self = (uint32_t)(w - lb->w);
        if (lbomp__deque_pop(&w->dq, &pos) == LBOMP__TAKEN) {
                it->slot = &w->ticks[pos];
                w->runner[pos] = self;
                it->id = w->tasks[pos];
                return w->data[pos];
        }
        for (uint32_t k = 0; k < w->nvictims; k++) {
                struct lbomp__worker *v = &lb->w[w->victims[k]];
                enum lbomp__take r;
                while ((r = lbomp__deque_steal(&v->dq, &pos)) == LBOMP__LOST_RACE)
                        ;
                if (r == LBOMP__TAKEN) {
                        /* The slot is the victim's: the task's time stays the task's, and the
                         * owner reads it after the step barrier with our scale (runner). */
                        w->win_stolen++;
                        it->slot = &v->ticks[pos];
                        v->runner[pos] = self;
                        it->id = v->tasks[pos];
                        return v->data[pos];
                }
        }
        it->slot = NULL;
        return NULL;
}

void *lbomp_iter_next(lbomp_iter_t *it)
{
        struct lbomp__worker *w = it->w;
        if (!it->active)
                return NULL;
        uint64_t now = lbomp__ticks(it->lb->clock.tsc);
        if (it->slot) {
                /* A backwards reading (a thread moved to a core whose counter lags) counts 0. */
                int64_t dt = (int64_t)(now - it->t0);
                if (dt < 0) {
                        w->clock_back++;
                        dt = 0;
                }
                *it->slot = (uint64_t)dt;
                it->busy += (uint64_t)dt;
        }
        it->t0 = now;
        if (it->mode == MODE_PLAIN) {
                int64_t p = ++it->pos;
                if (p >= (int64_t)w->n) {
                        it->slot = NULL;
                        return NULL;
                }
                it->slot = &w->ticks[p];
                it->id = w->tasks[p];
                return w->data[p];
        }
        return next_steal(it);
}

/* Owner, after the barrier that ends the tasks: its slots into the window's per-task sums. A
 * stolen task was timed by its thief, so it is scaled by the thief's factor: the sum of task
 * costs then equals the sum of the workers' time in tasks, whoever ran what. */
static void aggregate(struct lbomp *lb, struct lbomp__worker *w)
{
        bool steal = lb->cfg.steal != LBOMP__STEAL_OFF;
        size_t slot = (size_t)((w->win_steps - 1) % LBOMP__HIST); /* same on every worker */
        for (uint32_t i = 0; i < w->n; i++) {
                uint32_t t = w->tasks[i];
                double v = (double)w->ticks[i] * (steal ? lb->w[w->runner[i]].scale : w->scale);
                lb->win_ticks[t] += v;
                lb->win_hist[(size_t)t * LBOMP__HIST + slot] = (float)v;
        }
}

static void lb_step(struct lbomp *lb, int self);

void lbomp_iter_end(lbomp_iter_t *it)
{
        if (!it->active) {
                it->active = 0;
                return;
        }
        struct lbomp *lb = it->lb;
        struct lbomp__worker *w = it->w;
        uint64_t now = lbomp__ticks(lb->clock.tsc);
        if (it->slot) { /* the loop was left with a task running (break) */
                int64_t dt = (int64_t)(now - it->t0);
                w->clock_back += dt < 0;
                *it->slot = dt > 0 ? (uint64_t)dt : 0;
                it->busy += *it->slot;
                it->slot = NULL;
        }
        if (it->mode == MODE_PLAIN) {
                for (int64_t p = it->pos + 1; p < (int64_t)w->n; p++) {
                        w->ticks[p] = 0;
                        w->skipped++;
                }
        } else {
                int64_t pos;
                while (lbomp__deque_pop(&w->dq, &pos) == LBOMP__TAKEN) {
                        w->ticks[pos] = 0;
                        w->runner[pos] = (uint32_t)(w - lb->w);
                        w->skipped++;
                }
        }
        int64_t span = (int64_t)(now - w->step_t0);
        w->clock_back += span < 0;
        if (span < (int64_t)it->busy)
                span = (int64_t)it->busy;
        double tps = lb->clock.ticks_per_s;
        double busy_s = (double)it->busy / tps, bg_s = (double)(span - (int64_t)it->busy) / tps;
        double scale = 1.0;
        if (!lb->cfg.time_wall) {
                /* Time the thread was descheduled (other threads, other processes) is not the
                 * tasks'. The thread's CPU time bounds what its tasks used: when they took longer
                 * on the wall clock, they are scaled down to it. The pause is not spread over the
                 * whole step, because it often falls outside the tasks (a thread woken late from
                 * the barrier starts its first task late) and its tasks then ran uninterrupted.
                 * What CPU time is left over is the worker's background load. */
                double cpu = lbomp__thread_cpu_s() - w->cpu0;
                if (cpu > 0 && busy_s > cpu)
                        scale = cpu / busy_s;
                double rest = cpu - busy_s * scale;
                if (cpu > 0)
                        bg_s = rest > 0 ? rest : 0;
        }
        w->scale = scale;
        w->win_busy_s += busy_s * scale;
        w->win_bg_s += bg_s;
        w->steps++;
        w->win_steps++;
        it->active = 0;
        int self = (int)(w - lb->w);
#pragma omp barrier
        aggregate(lb, w);
        bool due = w->win_steps >= (uint64_t)lb->cfg.period;
#pragma omp master
        {
                lb->steps++;
                if (lbomp__energy_available(lb->energy) &&
                    lbomp__mono_s() - lb->energy_t_last >= ENERGY_STEP_GAP_S)
                        energy_read(lb);
        }
        if (due) {
#pragma omp barrier
                lb_step(lb, self);
        }
#pragma omp master
        lb->in_step = false;
        /* No barrier here: the next step's begin has one, and the region's end has its own. */
}

int lbomp_step(lbomp_t *lb, lbomp_task_fn fn, void *arg)
{
        if (!lb || !fn)
                return -EINVAL;
        if (lb->in_step || omp_in_parallel())
                return -EBUSY;
        int rc = 0;
#pragma omp parallel num_threads(lb->nworkers)
        {
                lbomp_iter_t it = lbomp_iter_begin(lb);
                if (it.active) {
                        void *d;
                        while ((d = lbomp_iter_next(&it)) != NULL)
                                fn(d, it.id, arg);
                        lbomp_iter_end(&it);
                }
        }
        if (lb->lb_rc == -ENOMEM)
                rc = -ENOMEM;
        return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The LB step: snapshot, policy, check, apply, record. Every thread of the team calls it between
 * barriers; the master does the centralized work, every worker runs a decentralized policy.
 */

static int record_window(struct lbomp *lb, const struct lbomp__snap *s, double *load)
{
        if (lb->nwin == lb->win_cap) {
                size_t cap = lb->win_cap ? 2 * lb->win_cap : 16;
                if (LBOMP__GROW(lb->win, cap))
                        return -ENOMEM;
                lb->win_cap = cap;
        }
        size_t nd = (size_t)lbomp__energy_ndomains(lb->energy);
        if (nd && lb->nwin == lb->win_dom_cap) {
                size_t cap = lb->win_dom_cap ? 2 * lb->win_dom_cap : 16;
                if (LBOMP__GROW(lb->win_dom_j, cap * nd))
                        return -ENOMEM;
                lb->win_dom_cap = cap;
        }
        lbomp_window_stats_t *ws = &lb->win[lb->nwin++];
        memset(ws, 0, sizeof *ws);
        ws->first_step = lb->win_first;
        ws->steps = lb->steps - lb->win_first;
        ws->imbalance = lbomp__imbalance(load, s->nworkers, &ws->max_load, &ws->avg_load);
        ws->wall_s = lbomp__mono_s() - lb->win_wall0;
        for (int i = 0; i < lb->nworkers; i++)
                ws->stolen += lb->w[i].win_stolen;
        /* What the workers carried: `load` charges tasks to their owners (what the policy plans
         * with); this charges them to the threads that ran them. */
        double *run = malloc((size_t)lb->nworkers * sizeof *run);
        ws->imbalance_run = NAN;
        if (run) {
                for (int i = 0; i < lb->nworkers; i++)
                        run[i] = lb->w[i].win_busy_s + lb->w[i].win_bg_s;
                ws->imbalance_run = lbomp__imbalance(run, (uint32_t)lb->nworkers, NULL, NULL);
                free(run);
        }
        energy_window_end(lb, ws);
        return 0;
}

static struct lbomp__lbrec *new_lbrec(struct lbomp *lb)
{
        if (lb->nlb == lb->lb_cap) {
                size_t cap = lb->lb_cap ? 2 * lb->lb_cap : 16;
                if (LBOMP__GROW(lb->lb, cap))
                        return NULL;
                lb->lb_cap = cap;
        }
        struct lbomp__lbrec *r = &lb->lb[lb->nlb++];
        memset(r, 0, sizeof *r);
        return r;
}

/* Master: moves tasks to their destination; the deques are rebuilt from the task table. */
static int apply_plan(struct lbomp *lb, const struct lbomp__snap *s, const uint32_t *dest,
                      struct lbomp__lbrec *r)
{
        struct lbomp__moves m;
        lbomp__moves(s, dest, &m);
        r->pub.migrations = m.tasks;
        r->pub.migrated_bytes = m.bytes;
        r->pub.node_migrations = m.node_tasks;
        r->pub.node_migrated_bytes = m.node_bytes;
        r->pub.move_cost = m.cost;
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (dest[t] != s->worker[t])
                        lb->task[s->id[t]].worker = dest[t];
        return m.tasks ? rebuild_deques(lb) : 0;
}

/* Master, after the plan is known: one trace record. A failure stops tracing with a message but
 * not the run, whose balance does not depend on it. */
static void trace_step(struct lbomp *lb, const struct lbomp__snap *s, const uint32_t *dest,
                       const struct lbomp__lbrec *r)
{
        int32_t *wcore = realloc(lb->trace_wcore, (size_t)lb->nworkers * sizeof *wcore);
        if (wcore) {
                lb->trace_wcore = wcore;
                for (int i = 0; i < lb->nworkers; i++)
                        wcore[i] = lb->w[i].core;
        }
        struct lbomp__trace_meta m = {
                .policy = r->pub.policy,
                .topo_name = lb->topo.name,
                .ncores = (uint32_t)lb->topo.ncores,
                .wcore = wcore,
                .step = r->pub.step,
                .error = r->pub.error,
                .decision_s = r->pub.decision_s,
                .messages = r->ps.messages,
                .rounds = r->ps.rounds,
        };
        char msg[400];
        if (lbomp__trace_write(lb->trace, &m, s, dest, msg, sizeof msg) < 0) {
                fprintf(stderr, "lbomp: LBOMP_TRACE: %s; tracing stops after %llu records\n", msg,
                        (unsigned long long)lbomp__trace_records(lb->trace));
                lbomp__trace_close(lb->trace);
                lb->trace = NULL;
        }
}

static void lb_step(struct lbomp *lb, int self)
{
        /* Shared with the team between barriers. In the runtime, not static: two runtimes may
         * balance at the same time from two threads (test_two_runtimes). */
#define snap     lb->lbs.snap
#define rec      lb->lbs.rec
#define t_decide lb->lbs.t_decide
#define t_data   lb->lbs.t_data
#define skip     lb->lbs.skip /* no time was measured: nothing to decide from */
        const struct lbomp__policy *pol = lb->cfg.policy;
        (void)self;
#pragma omp master
        {
                int rc = 0;
                lbomp__clock_calibrate(&lb->clock);
                snap = lbomp__snapshot(lb, lb->sb, &rc);
                rec = snap ? new_lbrec(lb) : NULL;
                lb->lb_rc = rc ? rc : (rec ? 0 : -ENOMEM);
                if (rec) {
                        double *load = malloc(snap->nworkers * sizeof *load);
                        rec->energy_j = rec->power_w = NAN;
                        if (load) {
                                lbomp__loads(snap, snap->worker, load);
                                if (record_window(lb, snap, load) == 0) {
                                        rec->energy_j = lb->win[lb->nwin - 1].energy_j;
                                        rec->power_w = lb->win[lb->nwin - 1].power_w;
                                }
                                rec->pub.imbalance_before =
                                        lbomp__imbalance(load, snap->nworkers, &rec->pub.max_load,
                                                         &rec->pub.avg_load);
                                free(load);
                        }
                        rec->pub.step = lb->steps - 1;
                        rec->pub.policy = pol->name;
                        rec->locality_before = lbomp__locality_cost(snap, snap->worker);
                        t_decide = lbomp__mono_s();
                        /* A clock that did not advance over the window (zero or backwards
                         * readings) leaves every cost 0: a plan from that would move tasks at
                         * random, so the mapping stays. */
                        double measured = 0;
                        for (uint32_t t = 0; t < snap->ntasks; t++)
                                measured += snap->cost[t];
                        skip = snap->ntasks > 0 && !(measured > 0);
                        if (skip) {
                                snprintf(rec->note, sizeof rec->note,
                                         "no time measured: mapping kept");
                                if (!lb->said_no_time || lb->cfg.verbose)
                                        fprintf(stderr,
                                                "lbomp: LB step %zu: the clock did not advance "
                                                "during the window (every task time is 0); "
                                                "mapping kept\n",
                                                lb->nlb - 1);
                                lb->said_no_time = true;
                        } else if (pol->kind == LBOMP__CENTRAL) {
                                rec->pub.error =
                                        pol->plan(snap, lbomp__snap_dest(lb->sb), &rec->ps);
                        } else {
                                rec->pub.error = lbomp__dec_prepare(lb->dec, pol, snap,
                                                                    lbomp__snap_dest(lb->sb));
                        }
                }
        }
        if (pol->kind == LBOMP__DECENTRAL) {
#pragma omp barrier
                if (lb->lb_rc == 0 && !skip && rec->pub.error == 0) {
                        int rc = lbomp__dec_run_team(lb->dec, (uint32_t)self);
#pragma omp master
                        {
                                rec->pub.error = rc;
                                lbomp__dec_stats(lb->dec, &rec->ps);
                        }
                }
        }
#pragma omp master
        if (lb->lb_rc == 0) {
                uint32_t *dest = lbomp__snap_dest(lb->sb);
                rec->pub.decision_s = lbomp__mono_s() - t_decide;
                double t_apply = lbomp__mono_s();
                uint32_t bad = 0;
                if (rec->pub.error == 0 && lbomp__plan_check(snap, dest, &bad) != 0) {
                        rec->pub.error = -EFAULT;
                        fprintf(stderr,
                                "lbomp: policy %s produced an invalid plan (task %u -> worker %u); "
                                "mapping kept\n",
                                pol->name, snap->id[bad], dest[bad]);
                }
                if (rec->pub.error != 0) {
                        if (lb->cfg.verbose || rec->pub.error != -EFAULT)
                                fprintf(stderr,
                                        "lbomp: policy %s failed at step %llu: %s; mapping kept\n",
                                        pol->name, (unsigned long long)rec->pub.step,
                                        lbomp_strerror(rec->pub.error));
                        memcpy(dest, snap->worker, snap->ntasks * sizeof *dest);
                }
                double *load = malloc(snap->nworkers * sizeof *load);
                if (load) {
                        lbomp__loads(snap, dest, load);
                        rec->pub.imbalance_after =
                                lbomp__imbalance(load, snap->nworkers, NULL, NULL);
                        free(load);
                }
                /* A task heavier than the average load bounds λ from below whatever the policy
                 * does: say so rather than let it look like the policy's failure. */
                uint32_t heavy = 0;
                for (uint32_t t = 1; t < snap->ntasks; t++)
                        if (snap->cost[t] > snap->cost[heavy])
                                heavy = t;
                if (!rec->note[0] && snap->ntasks && rec->pub.avg_load > 0 &&
                    snap->cost[heavy] > 1.05 * rec->pub.avg_load)
                        snprintf(rec->note, sizeof rec->note,
                                 "λ >= %.2f: task %u alone costs that much",
                                 snap->cost[heavy] / rec->pub.avg_load, snap->id[heavy]);
                rec->locality_after = lbomp__locality_cost(snap, dest);
                rec->pub.locality_before = rec->locality_before;
                rec->pub.locality_after = rec->locality_after;
                rec->pub.messages = rec->ps.messages;
                rec->pub.rounds = rec->ps.rounds;
                rec->pub.gossip_rounds = rec->ps.gossip_rounds;
                rec->pub.collectives = rec->ps.collectives;
                rec->pub.packs = rec->ps.packs;
                rec->pub.offers_rejected = rec->ps.rejected;
                rec->pub.packs_forced = rec->ps.forced;
                rec->pub.packs_withdrawn = rec->ps.withdrawn;
                rec->pub.span_s = rec->ps.span_s;
                for (int k = 0;
                     k < LBOMP_MSG_KINDS && rec->ps.msg_kind_names && rec->ps.msg_kind_names[k];
                     k++) {
                        rec->pub.kind_name[k] = rec->ps.msg_kind_names[k];
                        rec->pub.kind_messages[k] = rec->ps.msg_by_kind[k];
                }
                if (lb->trace)
                        trace_step(lb, snap, dest, rec);
                if (apply_plan(lb, snap, dest, rec) < 0)
                        lb->lb_rc = -ENOMEM;
                /* The snapshot still holds the old homes and workers: list the data to move. */
                if (lbomp__data_plan(lb, snap, dest) < 0)
                        lb->lb_rc = -ENOMEM;
                rec->pub.apply_s = lbomp__mono_s() - t_apply;
                if (lb->cfg.verbose)
                        fprintf(stderr,
                                "lbomp: LB step %zu after step %llu: %s λ %.3f -> %.3f, %u "
                                "migrations, decision %.3g s\n",
                                lb->nlb - 1, (unsigned long long)rec->pub.step, pol->name,
                                rec->pub.imbalance_before, rec->pub.imbalance_after,
                                rec->pub.migrations, rec->pub.decision_s);
                window_restart(lb);
                t_data = lbomp__mono_s();
        }
#pragma omp barrier
        if (lb->lb_rc == 0 && lb->data_pending) {
                /* Every worker moves the data of the tasks it received, all at once. */
                lbomp__data_run(lb, self);
#pragma omp barrier
#pragma omp master
                {
                        rec->pub.data_s = lbomp__mono_s() - t_data;
                        for (int i = 0; i < lb->nworkers; i++) {
                                const struct lbomp__worker *w = &lb->w[i];
                                rec->pub.data_moves += w->data_moves;
                                rec->pub.data_bytes += w->data_bytes;
                                if (!rec->pub.data_error)
                                        rec->pub.data_error = w->data_error;
                        }
                        lb->data_pending = false;
                }
        }
#undef snap
#undef rec
#undef t_decide
#undef t_data
#undef skip
}

/* ---------------------------------------------------------------------------------------------
 * Statistics and report
 */

size_t lbomp_lb_count(const lbomp_t *lb)
{
        return lb ? lb->nlb : 0;
}

int lbomp_lb_get(const lbomp_t *lb, size_t i, lbomp_lb_stats_t *out)
{
        if (!lb || !out)
                return -EINVAL;
        if (i >= lb->nlb)
                return -ENOENT;
        *out = lb->lb[i].pub;
        return 0;
}

size_t lbomp_window_count(const lbomp_t *lb)
{
        return lb ? lb->nwin : 0;
}

int lbomp_window_get(const lbomp_t *lb, size_t i, lbomp_window_stats_t *out)
{
        if (!lb || !out)
                return -EINVAL;
        if (i >= lb->nwin)
                return -ENOENT;
        *out = lb->win[i];
        return 0;
}

uint64_t lbomp_steps(const lbomp_t *lb)
{
        return lb ? lb->steps : 0;
}

/* One line saying how threads were bound. */
static void binding_note(const struct lbomp *lb, char *buf, size_t len)
{
        if (!lb->topo.is_host) {
                snprintf(buf, len,
                         "not bound: the topology is the profile %s; threads run where the host "
                         "allows",
                         lb->topo.name);
                return;
        }
        if (lb->topo.flat) {
                snprintf(buf, len,
                         "not bound: hwloc could not read the host, flat topology of %d core(s)%s",
                         lb->topo.ncores, lb->oversubscribed ? ", oversubscribed" : "");
                return;
        }
        if (lb->omp_binds) {
                snprintf(buf, len, "by OpenMP (OMP_PROC_BIND/OMP_PLACES set by the user)");
                return;
        }
        char cpuset[96] = "";
        if (lb->topo.restricted)
                snprintf(cpuset, sizeof cpuset,
                         " (the process may use %d of the machine's %d cores)", lb->topo.ncores,
                         lb->topo.ncores_machine);
        int ok = 0, failed = 0, first_err = 0;
        for (int i = 0; i < lb->nworkers; i++) {
                if (!lb->w[i].bound_once)
                        continue;
                if (lb->w[i].bind_rc == 0)
                        ok++;
                else if (lb->w[i].bind_rc < 0) {
                        failed++;
                        if (!first_err)
                                first_err = lb->w[i].bind_rc;
                }
        }
        if (failed)
                snprintf(buf, len,
                         "partial: %d of %d workers bound, the others refused (%s) and run where "
                         "the system puts them%s",
                         ok, ok + failed, strerror(-first_err), cpuset);
        else
                snprintf(buf, len,
                         "lbomp bound %d workers to %d core(s)%s, spread over %d node(s)%s", ok,
                         lb->topo.ncores, cpuset, lb->topo.nnodes,
                         lb->oversubscribed ? ", oversubscribed" : "");
}

static void totals(const struct lbomp *lb, uint64_t *mig, double *dec, uint64_t *msgs)
{
        *mig = 0;
        *dec = 0;
        *msgs = 0;
        for (size_t i = 0; i < lb->nlb; i++) {
                *mig += lb->lb[i].pub.migrations;
                *dec += lb->lb[i].pub.decision_s;
                *msgs += lb->lb[i].pub.messages;
        }
}

/* The decentralized part of an LB step: one indented line under the step's row. */
static void report_messages(const lbomp_lb_stats_t *r, FILE *out)
{
        fprintf(out, "  %11s messages %llu (", "", (unsigned long long)r->messages);
        for (int k = 0; k < LBOMP_MSG_KINDS && r->kind_name[k]; k++)
                fprintf(out, "%s%s %llu", k ? ", " : "", r->kind_name[k],
                        (unsigned long long)r->kind_messages[k]);
        fprintf(out,
                "), rounds %u (gossip %u, collectives %u), packs %u, rejected %u, forced %u, "
                "withdrawn %u, span %.3g s\n",
                r->rounds, r->gossip_rounds, r->collectives, r->packs, r->offers_rejected,
                r->packs_forced, r->packs_withdrawn, r->span_s);
}

struct data_totals {
        uint64_t node_migrations, moves, bytes;
        double move_cost, seconds;
};

static void data_totals(const struct lbomp *lb, struct data_totals *d)
{
        memset(d, 0, sizeof *d);
        for (size_t i = 0; i < lb->nlb; i++) {
                const lbomp_lb_stats_t *p = &lb->lb[i].pub;
                d->node_migrations += p->node_migrations;
                d->moves += p->data_moves;
                d->bytes += p->data_bytes;
                d->move_cost += p->move_cost;
                d->seconds += p->data_s;
        }
}

/* One line: "energy: <reader note>; packages J over s, W; per domain J" or "energy: unavailable:
 * <reason>". */
static void energy_line(const struct lbomp *lb, FILE *out)
{
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        if (!en.reader) {
                fprintf(out, "  energy: %s\n", en.note);
                return;
        }
        fprintf(out, "  energy: %s; packages %.4g J over %.3g s, %.4g W", en.note, en.package_j,
                en.seconds, en.power_w);
        for (int i = 0; i < lbomp__energy_ndomains(lb->energy); i++)
                fprintf(out, "%s %s %.4g J", i ? "," : ";",
                        lbomp__energy_domain_name(lb->energy, i),
                        lbomp__energy_total_j(lb->energy, i));
        fputc('\n', out);
}

int lbomp_report(const lbomp_t *lb, FILE *out)
{
        if (!lb || !out)
                return -EINVAL;
        char note[256];
        binding_note(lb, note, sizeof note);
        fprintf(out, "lbomp report\n");
        fprintf(out, "  policy %s, period %d, seed %llu, steal %s\n", lb->cfg.policy->name,
                lb->cfg.period, (unsigned long long)lb->cfg.seed,
                lb->cfg.steal == LBOMP__STEAL_OFF    ? "off"
                : lb->cfg.steal == LBOMP__STEAL_NODE ? "node"
                                                     : "all");
        fprintf(out, "  topology %s: %d node(s), %d core(s), distances %s\n", lb->topo.name,
                lb->topo.nnodes, lb->topo.ncores,
                lb->topo.dist_measured ? "from the topology" : "assumed (10/20)");
        fprintf(out, "  workers %d; binding: %s\n", lb->nworkers, note);
        fprintf(out, "  time: %s, %s%s\n", lbomp__clock_name(&lb->clock),
                lb->cfg.time_wall ? "wall time"
                                  : "wall time, bounded by each thread's CPU time in the step",
                lb->oversubscribed ? "; oversubscribed: more workers than cores" : "");
        fprintf(out, "  steps %llu, tasks %u, links %zu\n", (unsigned long long)lb->steps,
                lb->nalive, lb->nlink);
        uint64_t back = 0;
        for (int i = 0; i < lb->nworkers; i++)
                back += lb->w[i].clock_back;
        if (back)
                fprintf(out, "  clock: %llu backwards reading(s), counted as 0 s\n",
                        (unsigned long long)back);
        energy_line(lb, out);
        fprintf(out, "  data: %s%s\n",
                !lb->cfg.move_pages ? "pages stay (LBOMP_MOVE_PAGES=off)"
                : lb->topo.is_host  ? "registered pages follow their task (move_pages)"
                                    : "pages counted, not moved (the nodes are the profile's)",
                lb->migrate_fn ? "; migrate callback set" : "");
        /* The first eleven columns are fixed (scripts read window-W as the 11th); new ones go
         * after them. */
        fprintf(out, "  %4s %6s %-10s %7s %7s %6s %10s %10s %12s %9s %8s %6s %10s %12s %10s %s\n",
                "lb", "step", "policy", "λ-before", "λ-after", "moves", "decide-s", "apply-s",
                "locality", "window-J", "window-W", "x-node", "move-cost", "loc-before", "data-B",
                "note");
        for (size_t i = 0; i < lb->nlb; i++) {
                const struct lbomp__lbrec *r = &lb->lb[i];
                char ej[32] = "-", pw[32] = "-";
                if (isfinite(r->energy_j))
                        snprintf(ej, sizeof ej, "%.4g", r->energy_j);
                if (isfinite(r->power_w))
                        snprintf(pw, sizeof pw, "%.4g", r->power_w);
                fprintf(out,
                        "  %4zu %6llu %-10s %7.3f %7.3f %6u %10.3g %10.3g %12.4g %9s %8s %6u "
                        "%10.4g "
                        "%12.4g %10llu %s\n",
                        i, (unsigned long long)r->pub.step, r->pub.policy, r->pub.imbalance_before,
                        r->pub.imbalance_after, r->pub.migrations, r->pub.decision_s,
                        r->pub.apply_s, r->locality_after, ej, pw, r->pub.node_migrations,
                        r->pub.move_cost, r->locality_before, (unsigned long long)r->pub.data_bytes,
                        r->pub.error        ? lbomp_strerror(r->pub.error)
                        : r->pub.data_error ? strerror(-r->pub.data_error)
                                            : r->note);
                if (r->pub.kind_name[0])
                        report_messages(&r->pub, out);
        }
        uint64_t mig, msgs;
        double dec;
        totals(lb, &mig, &dec, &msgs);
        double lam_first = lb->nwin ? lb->win[0].imbalance : NAN;
        double lam_last = lb->nwin ? lb->win[lb->nwin - 1].imbalance : NAN;
        fprintf(out,
                "  total: %zu LB steps, %llu migrations, decision %.3g s, messages %llu; λ first "
                "window %.3f, last window %.3f\n",
                lb->nlb, (unsigned long long)mig, dec, (unsigned long long)msgs, lam_first,
                lam_last);
        struct data_totals d;
        data_totals(lb, &d);
        fprintf(out,
                "  locality: link cost first %.6g, last %.6g; %llu migrations across nodes, move "
                "cost %.6g; data followed %llu tasks, %llu bytes in %.3g s\n",
                lb->nlb ? lb->lb[0].locality_before : NAN,
                lb->nlb ? lb->lb[lb->nlb - 1].locality_after : NAN,
                (unsigned long long)d.node_migrations, d.move_cost, (unsigned long long)d.moves,
                (unsigned long long)d.bytes, d.seconds);
        return 0;
}

static void json_num(FILE *out, double v)
{
        if (isfinite(v))
                fprintf(out, "%.6g", v);
        else
                fputs("null", out);
}

/* A JSON string: notes carry paths, and a path may hold any byte but NUL. */
static void json_str(FILE *out, const char *s)
{
        if (!s) {
                fputs("null", out);
                return;
        }
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(out, "\\%c", *p);
                else if (*p < 0x20)
                        fprintf(out, "\\u%04x", *p);
                else
                        fputc(*p, out);
        }
        fputc('"', out);
}

/* {"name":joules,...} over the domains: a window's `j`, or (NULL) the run's totals; null when
 * there is nothing to say. */
static void json_domains(FILE *out, const struct lbomp *lb, const double *j)
{
        const struct lbomp__energy *e = lb->energy;
        int n = lbomp__energy_ndomains(e);
        if (n == 0 || (!j && !lbomp__energy_available(e))) {
                fputs("null", out);
                return;
        }
        fputc('{', out);
        for (int i = 0; i < n; i++) {
                if (i)
                        fputc(',', out);
                json_str(out, lbomp__energy_domain_name(e, i));
                fputc(':', out);
                json_num(out, j ? j[i] : lbomp__energy_total_j(e, i));
        }
        fputc('}', out);
}

int lbomp_report_json(const lbomp_t *lb, FILE *out)
{
        if (!lb || !out)
                return -EINVAL;
        uint64_t mig, msgs;
        double dec;
        totals(lb, &mig, &dec, &msgs);
        fprintf(out, "{\"policy\":\"%s\",\"period\":%d,\"workers\":%d,\"topology\":",
                lb->cfg.policy->name, lb->cfg.period, lb->nworkers);
        json_str(out, lb->topo.name); /* a file name may hold quotes */
        fprintf(out, ",\"nodes\":%d,\"cores\":%d,", lb->topo.nnodes, lb->topo.ncores);
        fprintf(out, "\"steps\":%llu,\"tasks\":%u,\"migrations\":%llu,\"decision_s\":",
                (unsigned long long)lb->steps, lb->nalive, (unsigned long long)mig);
        json_num(out, dec);
        struct data_totals d;
        data_totals(lb, &d);
        fprintf(out, ",\"messages\":%llu,\"node_migrations\":%llu,\"move_cost\":",
                (unsigned long long)msgs, (unsigned long long)d.node_migrations);
        json_num(out, d.move_cost);
        fprintf(out, ",\"move_pages\":\"%s\",\"data_moves\":%llu,\"data_bytes\":%llu,\"data_s\":",
                !lb->cfg.move_pages ? "off"
                : lb->topo.is_host  ? "on"
                                    : "counted",
                (unsigned long long)d.moves, (unsigned long long)d.bytes);
        json_num(out, d.seconds);
        fprintf(out, ",\"windows\":[");
        for (size_t i = 0; i < lb->nwin; i++) {
                fprintf(out, "%s{\"first_step\":%llu,\"steps\":%llu,\"imbalance\":", i ? "," : "",
                        (unsigned long long)lb->win[i].first_step,
                        (unsigned long long)lb->win[i].steps);
                json_num(out, lb->win[i].imbalance);
                fprintf(out, ",\"wall_s\":");
                json_num(out, lb->win[i].wall_s);
                fprintf(out, ",\"stolen\":%llu,\"imbalance_run\":",
                        (unsigned long long)lb->win[i].stolen);
                json_num(out, lb->win[i].imbalance_run);
                fprintf(out, ",\"energy_j\":");
                json_num(out, lb->win[i].energy_j);
                fprintf(out, ",\"power_w\":");
                json_num(out, lb->win[i].power_w);
                fprintf(out, ",\"domains_j\":");
                if (isfinite(lb->win[i].energy_j) && lb->win_dom_j && i < lb->win_dom_cap)
                        json_domains(out, lb,
                                     lb->win_dom_j +
                                             i * (size_t)lbomp__energy_ndomains(lb->energy));
                else
                        fputs("null", out);
                fputc('}', out);
        }
        fprintf(out, "],\"lb_steps\":[");
        for (size_t i = 0; i < lb->nlb; i++) {
                const struct lbomp__lbrec *r = &lb->lb[i];
                fprintf(out, "%s{\"step\":%llu,\"imbalance_before\":", i ? "," : "",
                        (unsigned long long)r->pub.step);
                json_num(out, r->pub.imbalance_before);
                fprintf(out, ",\"imbalance_after\":");
                json_num(out, r->pub.imbalance_after);
                fprintf(out, ",\"migrations\":%u,\"migrated_bytes\":%llu,\"decision_s\":",
                        r->pub.migrations, (unsigned long long)r->pub.migrated_bytes);
                json_num(out, r->pub.decision_s);
                fprintf(out, ",\"apply_s\":");
                json_num(out, r->pub.apply_s);
                fprintf(out, ",\"locality_before\":");
                json_num(out, r->locality_before);
                fprintf(out, ",\"locality_after\":");
                json_num(out, r->locality_after);
                fprintf(out, ",\"node_migrations\":%u,\"move_cost\":", r->pub.node_migrations);
                json_num(out, r->pub.move_cost);
                fprintf(out,
                        ",\"data_moves\":%u,\"data_bytes\":%llu,\"data_s\":", r->pub.data_moves,
                        (unsigned long long)r->pub.data_bytes);
                json_num(out, r->pub.data_s);
                fprintf(out, ",\"data_error\":%d", r->pub.data_error);
                fprintf(out, ",\"messages\":%llu,\"rounds\":%u,\"error\":%d",
                        (unsigned long long)r->pub.messages, r->pub.rounds, r->pub.error);
                if (r->pub.kind_name[0]) { /* decentralized policies */
                        fprintf(out, ",\"messages_by_kind\":{");
                        for (int k = 0; k < LBOMP_MSG_KINDS && r->pub.kind_name[k]; k++)
                                fprintf(out, "%s\"%s\":%llu", k ? "," : "", r->pub.kind_name[k],
                                        (unsigned long long)r->pub.kind_messages[k]);
                        fprintf(out,
                                "},\"gossip_rounds\":%u,\"collectives\":%u,\"packs\":%u,"
                                "\"offers_rejected\":%u,\"packs_forced\":%u,"
                                "\"packs_withdrawn\":%u,\"span_s\":",
                                r->pub.gossip_rounds, r->pub.collectives, r->pub.packs,
                                r->pub.offers_rejected, r->pub.packs_forced,
                                r->pub.packs_withdrawn);
                        json_num(out, r->pub.span_s);
                }
                fputc('}', out);
        }
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        fprintf(out, "],\"energy\":{\"reader\":");
        json_str(out, en.reader);
        fprintf(out, ",\"note\":");
        json_str(out, en.note);
        fprintf(out, ",\"package_j\":");
        json_num(out, en.package_j);
        fprintf(out, ",\"seconds\":");
        json_num(out, en.seconds);
        fprintf(out, ",\"power_w\":");
        json_num(out, en.power_w);
        fprintf(out, ",\"domains_j\":");
        json_domains(out, lb, NULL);
        fprintf(out, "}}\n");
        return 0;
}
