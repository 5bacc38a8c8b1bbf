/*
 * step.c — the step: every thread of the team takes its worker's tasks one by one and times each
 * with one counter read; at the end, the team meets at the step barrier, each worker adds its
 * step to the window, and when the window is due the LB step runs.
 *
 * This is the hot path: lbomp_iter_next() without stealing is one counter read, two stores and two
 * loads. Everything else happens once per step per thread (the start and the end) or at the LB
 * step. A step starts with a gathering: the team's threads meet at the runtime's own barrier,
 * whose watchdog refuses a team that does not arrive (a construct only some threads run), and
 * whose last arrival prepares the step (team size, deques) while the others wait.
 */
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

enum { MODE_PLAIN = 0, MODE_STEAL = 1 };

/* The result of the last step, for lbomp_step() and lbomp_last_step(); printed when asked. */
static int step_result(struct lbomp *lb, int rc, bool print, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int step_result(struct lbomp *lb, int rc, bool print, const char *fmt, ...)
{
        pthread_mutex_lock(&lb->team.lock);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lb->step_msg, sizeof lb->step_msg, fmt, ap);
        va_end(ap);
        atomic_store(&lb->step_rc, rc);
        if (print)
                lbomp__fail("%s", lb->step_msg);
        else
                lbomp__set_error("%s", lb->step_msg);
        pthread_mutex_unlock(&lb->team.lock);
        return rc;
}

/* A refusal by the team part (its message is the thread's last error): the step's result too. */
static int refused(struct lbomp *lb, int rc)
{
        return step_result(lb, rc, false, "%s", lbomp_last_error());
}

int lbomp_last_step(const lbomp_t *lb)
{
        if (!lb)
                return -EINVAL;
        struct lbomp *m = (struct lbomp *)lb; /* the lock only */
        pthread_mutex_lock(&m->team.lock);
        int rc = atomic_load(&m->step_rc);
        if (rc)
                lbomp__set_error("%s", m->step_msg);
        pthread_mutex_unlock(&m->team.lock);
        return rc;
}

/* Serial part of the gathering, on the last thread to arrive: the step can start. */
static void prepare(void *arg)
{
        struct lbomp *lb = arg;
        int team = omp_get_num_threads(), rc = 0;
        lb->team_n = team;
        if (team != lb->ws.n) {
                lbomp__log("lbomp: the team has %d thread(s) but the runtime had %d worker(s): "
                           "tasks redistributed over %d worker(s)",
                           team, lb->ws.n, team);
                rc = lbomp__workers_resize(&lb->ws, team, &lb->tasks, &lb->topo, lb->cfg.steal);
                for (int i = 0; i < lb->ws.n && rc == 0; i++)
                        lb->ws.w[i].steps = lb->steps;
        }
        /* The program's time step; for an LBOMP_FOR loop, its range and chunks (chunks.h). */
        int loop_rc = rc == 0 ? lbomp__chunks_prepare(lb) : 0;
        if (loop_rc < 0)
                rc = loop_rc;
        if (rc == 0)
                rc = lbomp__window_reserve(&lb->win, lb->tasks.n);
        if (rc == 0 && lb->tasks.dirty)
                rc = lbomp__workers_fill(&lb->ws, &lb->tasks);
        /* A window measures one task set, from the first step on. */
        if (rc == 0 && (!lb->started || lb->win.tasks_version != lb->tasks.version)) {
                lb->started = true;
                lb->win.tasks_version = lb->tasks.version;
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.n, lb->steps, true);
        }
        lb->prepare_rc = rc;
        if (rc < 0) {
                /* Nothing runs and nobody will leave the step: end it here, loudly. */
                if (loop_rc == -EINVAL)
                        step_result(lb, rc, true, "%s", lbomp_last_error());
                else
                        step_result(lb, rc, true,
                                    "lbomp: step %llu could not start: %s while preparing the "
                                    "workers' tasks; no task ran in it",
                                    (unsigned long long)lb->steps, lbomp_strerror(rc));
                lbomp__team_abort(&lb->team);
                return;
        }
        if (lb->cfg.steal != LBOMP__STEAL_OFF)
                for (int i = 0; i < lb->ws.n; i++)
                        lbomp__deque_reset(&lb->ws.w[i].dq, lb->ws.w[i].tasks, lb->ws.w[i].n);
        lbomp__team_run(&lb->team, (uint32_t)team);
}

lbomp_iter_t lbomp_iter_begin(lbomp_t *lb)
{
        lbomp_iter_t it = {.lb = lb, .pos = -1};
        if (!lb)
                return it;
        int level = omp_get_level();
        if (level == 0) {
                step_result(lb, -EPERM, true,
                            "lbomp: LBOMP_FOR_EACH_TASK (lbomp_iter_begin) was called outside a "
                            "parallel region: it runs inside the program's `#pragma omp parallel`, "
                            "by every thread of the team; outside a region, use lbomp_step()");
                return it;
        }
        uint32_t team = (uint32_t)omp_get_num_threads(), self = (uint32_t)omp_get_thread_num();
        if (team > LBOMP__MAX_WORKERS) {
                step_result(lb, -EINVAL, true,
                            "lbomp: a team of %u threads entered a step; lbomp runs at most %d "
                            "workers",
                            team, LBOMP__MAX_WORKERS);
                return it;
        }
        int rc = lbomp__team_enter(&lb->team, lbomp__team_key(), self, team);
        if (rc < 0) {
                refused(lb, rc);
                return it;
        }
        uint32_t arrived = 0;
        rc = lbomp__barrier_wait(&lb->team.bar, team, lb->cfg.step_timeout, lb->ws.oversubscribed,
                                 prepare, lb, &arrived);
        if (rc == -ETIMEDOUT) {
                int p = lbomp__team_poisoned(&lb->team);
                if (!p)
                        p = lbomp__team_poison(
                                &lb->team, -ETIMEDOUT,
                                "lbomp: only %u of the %u threads of the team reached the start of "
                                "step %llu within %g s (LBOMP_STEP_TIMEOUT): every thread of the "
                                "team must run the loop (LBOMP_FOR_EACH_TASK, LBOMP_FOR), so it "
                                "cannot be inside "
                                "`#pragma omp single`, `master` or `masked`, or in a branch some "
                                "threads skip. No task of the step ran, and the runtime refuses "
                                "every later step",
                                arrived, team, (unsigned long long)lb->steps, lb->cfg.step_timeout);
                refused(lb, p);
                return it;
        }
        if (lb->prepare_rc < 0)
                return it;
        struct lbomp__worker *w = &lb->ws.w[self];
        lbomp__workers_bind(&lb->ws, (int)self, &lb->topo, lb->omp_binds);
        it.w = w;
        it.active = 1;
        it.mode = lb->cfg.steal != LBOMP__STEAL_OFF ? MODE_STEAL : MODE_PLAIN;
        if (!lb->cfg.time_wall)
                w->cpu0 = lbomp__thread_cpu_s();
        w->skipped = 0;
        w->stolen = 0;
        w->step_t0 = lbomp__ticks(lb->clock.tsc);
        return it;
}

/* Stealing mode: own deque first (LIFO end), then victims nearest first. */
__attribute__((noinline)) static void *next_steal(lbomp_iter_t *it)
{
        struct lbomp *lb = it->lb;
        struct lbomp__worker *w = it->w;
        int64_t pos;
        uint32_t self = (uint32_t)(w - lb->ws.w);
        if (lbomp__deque_pop(&w->dq, &pos) == LBOMP__TAKEN) {
                it->slot = &w->ticks[pos];
                w->runner[pos] = self;
                it->id = w->tasks[pos];
                return w->data[pos];
        }
        for (uint32_t k = 0; k < w->nvictims; k++) {
                struct lbomp__worker *v = &lb->ws.w[w->victims[k]];
                enum lbomp__take r;
                while ((r = lbomp__deque_steal(&v->dq, &pos)) == LBOMP__LOST_RACE)
                        ;
                if (r == LBOMP__TAKEN) {
                        /* The slot is the victim's: the task's time stays the task's, and the
                         * owner reads it after the step barrier with our scale (runner). */
                        w->stolen++;
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

/* Serial part of the step barrier: the step is over. */
static void step_done(void *arg)
{
        struct lbomp *lb = arg;
        uint64_t skipped = 0;
        for (int i = 0; i < lb->ws.n; i++)
                skipped += lb->ws.w[i].skipped;
        lb->step_clean = skipped == 0;
        if (skipped)
                step_result(lb, -EINTR, lb->cfg.verbose > 0,
                            "lbomp: step %llu ended before %llu of its %u tasks ran (a break or "
                            "return out of LBOMP_FOR_EACH_TASK); the step's times are not used "
                            "for balancing",
                            (unsigned long long)lb->steps, (unsigned long long)skipped,
                            lb->tasks.nalive);
        else
                atomic_store(&lb->step_rc, 0);
        lb->steps++;
        if (lb->step_clean)
                lb->win.steps++;
        /* Every LBOMP_PERIOD time steps of the program, not runs of this task set (tsteps.h). */
        lb->lb_due = lb->step_clean &&
                     lbomp__tsteps_due(lb->ts, &lb->tset, lb->win.steps, lb->cfg.period);
        lbomp__window_energy_tick(&lb->win);
}

void lbomp_iter_end(lbomp_iter_t *it)
{
        if (!it->active)
                return;
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
                        w->runner[pos] = (uint32_t)(w - lb->ws.w);
                        w->skipped++;
                }
        }
        int64_t span = (int64_t)(now - w->step_t0);
        w->clock_back += span < 0;
        lbomp__window_step_end(w, &lb->clock, lb->cfg.time_wall, it->busy, span);
        w->steps++;
        it->active = 0;
        int self = (int)(w - lb->ws.w);
        lbomp__barrier_wait(&lb->team.bar, (uint32_t)lb->team_n, 0, lb->ws.oversubscribed,
                            step_done, lb, NULL);
        if (lb->step_clean)
                lbomp__window_aggregate(&lb->win, &lb->ws, self, lb->cfg.steal != LBOMP__STEAL_OFF);
        if (lb->lb_due && lbomp__lb_step(lb, self) < 0 && self == 0)
                step_result(lb, -ENOMEM, true,
                            "lbomp: the LB step after step %llu ran out of memory; the mapping "
                            "was kept",
                            (unsigned long long)(lb->steps - 1));
        lbomp__team_leave(&lb->team);
}

int lbomp_step(lbomp_t *lb, lbomp_task_fn fn, void *arg)
{
        if (!lb || !fn)
                return -EINVAL;
        int level = omp_get_level();
        if (level > 0) {
                lbomp__set_error("lbomp: lbomp_step was called inside a parallel region (nesting "
                                 "level %d): it opens its own team of lbomp_get_workers() "
                                 "threads. Call it outside any region, or use "
                                 "LBOMP_FOR_EACH_TASK inside yours",
                                 level);
                return -EPERM;
        }
        int p = lbomp__team_poisoned(&lb->team);
        if (p)
                return p;
        if (lbomp__team_busy(&lb->team)) {
                lbomp__set_error("lbomp: lbomp_step: a step of this runtime is running on another "
                                 "thread; one runtime runs one step at a time");
                return -EBUSY;
        }
        atomic_store(&lb->step_rc, 0);
#pragma omp parallel num_threads(lb->ws.n)
        {
                lbomp_iter_t it = lbomp_iter_begin(lb);
                if (it.active) {
                        void *d;
                        while ((d = lbomp_iter_next(&it)) != NULL)
                                fn(d, it.id, arg);
                        lbomp_iter_end(&it);
                }
        }
        return lbomp_last_step(lb);
}
