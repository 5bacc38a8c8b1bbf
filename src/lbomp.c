/*
 * lbomp.c — the public entry points that manage a runtime: its life cycle, the configuration
 * setters and getters, and the task table's calls. Each one checks its arguments and the state of
 * the runtime (no setter while a step runs) and hands the work to the part that owns it; the step
 * is in step.c, the reports in report.c, task memory in migrate.c.
 */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "loop.h"
#include "runtime.h"

/* -EBUSY with a message when a step of this runtime, or a run of one of its loops, gathers or
 * runs; -EPERM for a loop's handle (lbomp_loop()), which only the statistics getters take. */
static int busy(const struct lbomp *lb, const char *who)
{
        if (lb->root) {
                lbomp__set_error("lbomp: %s was given the handle of an LBOMP_FOR loop "
                                 "(lbomp_loop()); only the statistics getters take it",
                                 who);
                return -EPERM;
        }
        if (!lbomp__team_busy(&lb->team) && !lbomp__loops_busy(lb))
                return 0;
        lbomp__set_error("lbomp: %s is not allowed while a step of this runtime runs", who);
        return -EBUSY;
}

/* Also refused once the first step ran: what the team and the topology are made of (which the
 * loops share). */
static int started(const struct lbomp *lb, const char *who)
{
        int rc = busy(lb, who);
        if (rc == 0 && (lb->started || atomic_load(&((struct lbomp *)lb)->loops))) {
                lbomp__set_error("lbomp: %s is only allowed before the first step", who);
                rc = -EBUSY;
        }
        return rc;
}

int lbomp_create(lbomp_t **out)
{
        if (!out)
                return -EINVAL;
        *out = NULL;
        lbomp__clear_error();
        struct lbomp *lb = calloc(1, sizeof *lb);
        if (!lb)
                return -ENOMEM;
        if (lbomp__team_init(&lb->team) < 0) {
                lbomp__team_destroy(&lb->team);
                free(lb);
                return -ENOMEM;
        }
        lbomp__tsteps_init(&lb->ts_own);
        lb->ts = &lb->ts_own;
        int rc = lbomp__config_from_env(&lb->cfg);
        if (rc < 0) {
                lbomp__tsteps_destroy(&lb->ts_own);
                lbomp__team_destroy(&lb->team);
                free(lb);
                return rc;
        }
        lbomp__window_init(&lb->win, lb->cfg.history);
        /* Unavailable counters are not an error: only -ENOMEM stops here. */
        rc = lbomp__window_energy_open(&lb->win, lb->cfg.powercap_root, lb->cfg.verbose);
        if (rc < 0)
                goto fail;
        rc = lbomp__topo_load(&lb->topo, lb->cfg.topology);
        if (rc < 0)
                goto fail;
        lbomp__clock_init(&lb->clock);
        lb->omp_binds = omp_get_proc_bind() != omp_proc_bind_false;
        int n = omp_get_max_threads();
        if (n > LBOMP__MAX_WORKERS)
                n = LBOMP__MAX_WORKERS;
        rc = lbomp__lbs_init(&lb->lbs, lb->cfg.trace, lb->cfg.history);
        lb->ws.speeds = lb->cfg.speeds;
        lb->ws.verbose = lb->cfg.verbose > 0;
        if (rc == 0)
                rc = lbomp__workers_resize(&lb->ws, n, &lb->tasks, &lb->topo, lb->cfg.steal);
        if (rc < 0)
                goto fail;
        lbomp__window_restart(&lb->win, &lb->ws, 0, 0, true);
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
        lbomp__loops_free(lb);
        lbomp__workers_free(&lb->ws);
        lbomp__tasks_free(&lb->tasks);
        lbomp__window_free(&lb->win);
        lbomp__lbs_free(&lb->lbs);
        lbomp__data_free(&lb->data);
        lbomp__topo_free(&lb->topo);
        lbomp__config_free(&lb->cfg);
        lbomp__team_destroy(&lb->team);
        lbomp__tsteps_destroy(&lb->ts_own);
        free(lb);
}

int lbomp_set_policy(lbomp_t *lb, const char *name)
{
        if (!lb || !name)
                return -EINVAL;
        int rc = busy(lb, "lbomp_set_policy");
        if (rc < 0)
                return rc;
        if (strcmp(name, "help") == 0) {
                lbomp__set_error("lbomp: lbomp_set_policy(\"help\"): help is not a policy; "
                                 "lbomp_policy_help() lists them");
                return -EINVAL;
        }
        rc = lbomp__config_set(&lb->cfg, "LBOMP_POLICY", name, "lbomp_set_policy");
        if (rc == 0) /* the policy's default stealing (off under none) from the next step on */
                lbomp__step_steal_changed(lb);
        return rc;
}

/* A numeric setter: the variable's own checks, through the one validation path. */
static int set_num(lbomp_t *lb, const char *var, double v, const char *who)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, who);
        return rc < 0 ? rc : lbomp__config_set_num(&lb->cfg, var, v, who);
}

int lbomp_set_period(lbomp_t *lb, int steps)
{
        return set_num(lb, "LBOMP_PERIOD", steps, "lbomp_set_period");
}

int lbomp_set_verbose(lbomp_t *lb, int level)
{
        int rc = set_num(lb, "LBOMP_VERBOSE", level, "lbomp_set_verbose");
        if (rc == 0)
                lb->ws.verbose = lb->cfg.verbose > 0;
        return rc;
}

int lbomp_set_tolerance(lbomp_t *lb, double tolerance)
{
        return set_num(lb, "LBOMP_TOLERANCE", tolerance, "lbomp_set_tolerance");
}

int lbomp_set_fanout(lbomp_t *lb, int fanout)
{
        return set_num(lb, "LBOMP_FANOUT", fanout, "lbomp_set_fanout");
}

int lbomp_set_retries(lbomp_t *lb, int offers)
{
        return set_num(lb, "LBOMP_RETRIES", offers, "lbomp_set_retries");
}

int lbomp_set_step_timeout(lbomp_t *lb, double seconds)
{
        return set_num(lb, "LBOMP_STEP_TIMEOUT", seconds, "lbomp_set_step_timeout");
}

int lbomp_set_seed(lbomp_t *lb, uint64_t seed)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, "lbomp_set_seed");
        if (rc == 0)
                lb->cfg.seed = seed; /* every 64-bit value is a seed, as for LBOMP_SEED */
        return rc;
}

int lbomp_set_steal(lbomp_t *lb, const char *mode)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, "lbomp_set_steal");
        if (rc == 0)
                rc = lbomp__config_set(&lb->cfg, "LBOMP_STEAL", mode, "lbomp_set_steal");
        if (rc == 0) { /* node keeps other nodes' workers off the victims */
                lbomp__workers_victims(&lb->ws, &lb->topo, lb->cfg.steal);
                lbomp__step_steal_changed(lb);
        }
        return rc;
}

int lbomp_set_topology(lbomp_t *lb, const char *xml_path)
{
        if (!lb)
                return -EINVAL;
        int rc = started(lb, "lbomp_set_topology");
        if (rc == 0 && lb->tasks.next_id) {
                lbomp__set_error("lbomp: lbomp_set_topology is only allowed before tasks are "
                                 "added");
                rc = -EBUSY;
        }
        if (rc < 0)
                return rc;
        if (xml_path && !*xml_path) {
                lbomp__set_error("lbomp: lbomp_set_topology(\"\") (as LBOMP_TOPOLOGY) is not "
                                 "valid; expected the path of a hwloc XML file, or NULL for the "
                                 "host");
                return -EINVAL;
        }
        char *path = xml_path ? strdup(xml_path) : NULL;
        if (xml_path && !path)
                return -ENOMEM;
        struct lbomp__topo t;
        rc = lbomp__topo_load(&t, xml_path);
        if (rc < 0) {
                free(path);
                return rc;
        }
        lbomp__topo_free(&lb->topo);
        lb->topo = t;
        free(lb->cfg.topology);
        lb->cfg.topology = path;
        lbomp__workers_place(&lb->ws, &lb->topo, lb->cfg.steal);
        lb->tasks.gen++; /* the workers' nodes and distances changed */
        return 0;
}

int lbomp_set_workers(lbomp_t *lb, int nworkers)
{
        if (!lb)
                return -EINVAL;
        if (nworkers < 1 || nworkers > LBOMP__MAX_WORKERS) {
                lbomp__set_error("lbomp: lbomp_set_workers(%d) is not valid; expected a number "
                                 "of workers from 1 to %d",
                                 nworkers, LBOMP__MAX_WORKERS);
                return -EINVAL;
        }
        int rc = started(lb, "lbomp_set_workers");
        if (rc == 0)
                rc = lbomp__workers_resize(&lb->ws, nworkers, &lb->tasks, &lb->topo, lb->cfg.steal);
        if (rc == 0)
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, true);
        return rc;
}

int lbomp_set_powercap_root(lbomp_t *lb, const char *dir)
{
        if (!lb)
                return -EINVAL;
        int rc = started(lb, "lbomp_set_powercap_root");
        if (rc < 0)
                return rc;
        char *old = lb->cfg.powercap_root ? strdup(lb->cfg.powercap_root) : NULL;
        if (lb->cfg.powercap_root && !old)
                return -ENOMEM;
        if (dir) {
                rc = lbomp__config_set(&lb->cfg, "LBOMP_POWERCAP_ROOT", dir,
                                       "lbomp_set_powercap_root");
        } else {
                free(lb->cfg.powercap_root);
                lb->cfg.powercap_root = NULL;
        }
        if (rc == 0)
                rc = lbomp__window_energy_open(&lb->win, lb->cfg.powercap_root, lb->cfg.verbose);
        if (rc < 0) { /* keep configuration and counters in agreement */
                free(lb->cfg.powercap_root);
                lb->cfg.powercap_root = old;
                return rc;
        }
        free(old);
        lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, false);
        return 0;
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
        return lb ? lb->ws.n : -EINVAL;
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
        lbomp__policy_help(out);
}

/* ---------------------------------------------------------------------------------------------
 * Tasks and links
 */

int lbomp_task_add(lbomp_t *lb, void *data, size_t bytes, int home_node, lbomp_id_t *id)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, "lbomp_task_add");
        if (rc < 0)
                return rc;
        if (!data) {
                /* NULL is how lbomp_iter_next says "no task left": a NULL task would silently end
                 * its thread's part of every step. */
                lbomp__set_error("lbomp: lbomp_task_add: data is NULL; every task needs a "
                                 "non-NULL pointer (NULL ends LBOMP_FOR_EACH_TASK)");
                return -EINVAL;
        }
        if (home_node != LBOMP_NODE_ANY && (home_node < 0 || home_node >= lb->topo.nnodes)) {
                lbomp__set_error("lbomp: lbomp_task_add: home node %d does not exist (the "
                                 "topology has %d)",
                                 home_node, lb->topo.nnodes);
                return -EINVAL;
        }
        rc = lbomp__tasks_add(&lb->tasks, data, bytes, home_node, id);
        if (rc == -ENOMEM && lb->tasks.next_id >= LBOMP__MAX_ID)
                lbomp__set_error("lbomp: lbomp_task_add: this runtime handed out all its %u task "
                                 "ids (ids are never reused)",
                                 (unsigned)LBOMP__MAX_ID);
        return rc;
}

/* The message of a bad task id (-ENOENT: never handed out; -ESTALE: removed). */
static int bad_id(const struct lbomp *lb, const char *who, lbomp_id_t id, int rc)
{
        if (rc == -ESTALE)
                lbomp__set_error("lbomp: %s: task %u was removed; ids are never reused", who, id);
        else if (rc == -ENOENT)
                lbomp__set_error("lbomp: %s: no task has id %u (%u ids handed out so far)", who, id,
                                 lb->tasks.next_id);
        return rc;
}

int lbomp_task_remove(lbomp_t *lb, lbomp_id_t id)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, "lbomp_task_remove");
        if (rc == 0)
                rc = bad_id(lb, "lbomp_task_remove", id, lbomp__tasks_remove(&lb->tasks, id));
        return rc;
}

uint32_t lbomp_task_count(const lbomp_t *lb)
{
        return lb ? lb->tasks.nalive : 0;
}

int lbomp_task_worker(const lbomp_t *lb, lbomp_id_t id)
{
        if (!lb)
                return -EINVAL;
        int rc = bad_id(lb, "lbomp_task_worker", id, lbomp__tasks_check(&lb->tasks, id));
        if (rc < 0)
                return rc;
        uint32_t w = lb->tasks.task[lbomp__tasks_slot(&lb->tasks, id)].worker;
        return w == LBOMP__PENDING ? -EINPROGRESS : (int)w;
}

int lbomp_link(lbomp_t *lb, lbomp_id_t a, lbomp_id_t b, size_t bytes)
{
        if (!lb)
                return -EINVAL;
        int rc = busy(lb, "lbomp_link");
        if (rc == 0) {
                rc = lbomp__tasks_link(&lb->tasks, a, b, bytes);
                if (rc == -ENOENT || rc == -ESTALE)
                        bad_id(lb, "lbomp_link", lbomp__tasks_check(&lb->tasks, a) ? a : b, rc);
        }
        return rc;
}
