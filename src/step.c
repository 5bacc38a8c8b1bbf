/*
 * step.c — the step: every thread of the team takes its worker's tasks, at the end the team meets
 * at the step barrier, whose serial part records the step and, when the window is due, runs the
 * centralized LB step; for a decentralized policy or data moves the team then runs the rest of
 * the LB step together. A timed step's task times are folded into the window by each worker when
 * it enters the next step, so nothing else waits after the barrier.
 *
 * This is the hot path. In most steps a task costs two loads and two stores, inline in the
 * caller (lbomp_iter_next_fast in lbomp.h); a worker reads the counter once when it enters the
 * step and once when it leaves its tasks. Only the last LBOMP__TIMED steps of each window (which
 * the decision reads) time every task, and only a thread whose previous step took 100 µs or more
 * (or an oversubscribed team) reads its CPU time, a system call. A team that ran the last step
 * enters the next one without gathering, so a step has one barrier, its end. The internal
 * structure, for code built on it (index loops): enter (lbomp_iter_begin), take tasks
 * (lbomp_iter_next_fast / lbomp_iter_next), leave through the step barrier (lbomp_iter_end);
 * every per-step decision (timed or not, LB step or not) is made in a serial part and read by the
 * team after the barrier that published it.
 */
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

/* Iterator mode flags (it->mode); 0 means the inline path takes care of everything. */
enum {
        M_TIMED = 1,  /* every task is timed into its slot */
        M_STEAL = 2,  /* tasks come in batches from the deque, then from victims */
        M_STOLEN = 4, /* the running task is a victim's: close its time at the next call */
        M_DONE = 8,   /* nothing left: return NULL */
        M_EMPTY = 16, /* the own deque is empty (it took all that was left): no more pops */
};

#define CPU_READ_MIN_S 100e-6 /* a step this long pays for two CPU-time reads (~1 µs) */

/* What a serial part tells the team about the step just ended and the next one, in the step
 * barrier's word (it travels with the barrier's release): the number of the next step, whether
 * it is timed, whether the step that ended was timed and clean (each worker folds its tasks' times
 * in when it enters the next step), whether it closed a window (the LB step runs). */
enum { W_TIMED = 1, W_FOLD = 2, W_LB = 4, W_STEAL = 8, W_SHIFT = 4 };

static uint64_t word_of(const struct lbomp *lb)
{
        return atomic_load_explicit(&lb->team.bar.word, memory_order_relaxed);
}

/* The next step steals: stealing is on and armed (steal_wanted, gathering_unknown). */
static uint64_t steal_bit(const struct lbomp *lb)
{
        return lb->cfg.steal != LBOMP__STEAL_OFF && lb->steps < lb->steal_until ? W_STEAL : 0;
}

static void publish(struct lbomp *lb, bool timed, bool fold, bool lb_due)
{
        atomic_store_explicit(&lb->team.bar.word,
                              lb->steps << W_SHIFT | (timed ? W_TIMED : 0) | (fold ? W_FOLD : 0) |
                                      (lb_due ? W_LB : 0) | steal_bit(lb),
                              memory_order_relaxed);
}

void lbomp__step_steal_changed(struct lbomp *lb)
{
        /* between steps: no thread reads or writes the word */
        atomic_store_explicit(&lb->team.bar.word,
                              (word_of(lb) & ~(uint64_t)W_STEAL) | steal_bit(lb),
                              memory_order_relaxed);
}

#define STEAL_HOLD    4     /* steps stealing stays armed after a step that wanted it */
#define SETTLE_WAIT_S 50e-6 /* the longest a thief waits for a victim to settle its deque */

/*
 * Serial part, after a step: whether the next steps steal. A step in which stealing found little
 * to take still cost its owners their batches (a pop and a fence each) and its thieves a look at
 * every victim's deque, lines their owners write: on two cores that do not share their caches,
 * ≈ 1.2 µs of a 12 µs step, and each task taken brings its data over (bench/README, "Stealing
 * on demand"). So stealing is armed for STEAL_HOLD steps after a step whose threads would have
 * waited for the last one (lbomp__deque_wanted: on average more than 2 % of the step or 20 µs,
 * whichever is less, and 2 µs, counting the thieves' time in stolen tasks as waiting saved), and
 * after a gathering that left the loads unknown (gathering_unknown). One mark per thread on the
 * barrier's line says it (lbomp__barrier_mark).
 */
static void steal_wanted(struct lbomp *lb)
{
        uint64_t ends, last, stolen;
        lbomp__barrier_take_marks(&lb->team.bar, &ends, &last, &stolen);
        if (lb->cfg.steal != LBOMP__STEAL_OFF &&
            lbomp__deque_wanted(ends, last, stolen, (uint32_t)lb->team_n, lb->ws.w[0].step_t0,
                                lb->clock.ticks_per_s))
                lb->steal_until = lb->steps + STEAL_HOLD;
}

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

/* The current window's length in time steps: LBOMP_PERIOD, doubled once per quiet window before
 * it (lbstep.h; only while LBOMP_PERIOD is unset), or, when auto armed an LB step or a quiet window
 * was cut short, the steps up to LBOMP__TIMED time steps after the one that decided it. */
static int period_of(const struct lbomp *lb)
{
        if (lb->lbs.auto_period)
                return lb->lbs.auto_period;
        return lb->cfg.period_set ? lb->cfg.period : lb->cfg.period << lb->lbs.quiet;
}

/* Whether auto times the tasks in every window's last steps, as the other policies do: when the
 * LB steps it does not arm still read them (a trace, another library's costs, a loop's chunks),
 * or when the period is so short that every step is timed. Otherwise it times them only after
 * its when-rule armed an LB step: an LB step it did not arm reads no task cost. */
static bool auto_times_always(const struct lbomp *lb)
{
        const struct lbomp__lbs *l = &lb->lbs;
        return l->trace || l->keep_costs || lb->chunks || lb->cfg.period <= LBOMP__TIMED;
}

/* auto's when-rule after a clean step (serial part): the step's λ and maximum from its loads
 * folded in now; an LB step it arms ends the window LBOMP__TIMED time steps later, so that the
 * tasks are timed in those steps — past LBOMP_PERIOD when they are timed only once armed. */
static void auto_when(struct lbomp *lb)
{
        struct lbomp__lbs *l = &lb->lbs;
        lbomp__window_fold(&lb->win, &lb->ws, &lb->clock);
        l->when.ntasks = lb->tasks.nalive;
        if (l->armed)
                return;
        double *load = lbomp__auto_when_loads(&l->when, (uint32_t)lb->ws.n);
        if (!load) {
                if (!l->said_when_nomem)
                        lbomp__log("lbomp: auto: no memory for the workers' step loads: no LB "
                                   "step is armed before LBOMP_PERIOD's");
                l->said_when_nomem = true;
                return;
        }
        for (int i = 0; i < lb->ws.n; i++)
                load[i] = lb->ws.w[i].step_owned_s;
        if (!lbomp__auto_when_step(&l->when, lb->cfg.params.tolerance,
                                   lbomp__auto_horizon(lb->steps, lb->cfg.period)))
                return;
        l->armed = true;
        uint64_t want = lb->tset.t + 1 - lbomp__tsteps_base(&lb->tset) + LBOMP__TIMED;
        if (want < (uint64_t)lb->cfg.period ||
            (want > (uint64_t)lb->cfg.period && !auto_times_always(lb)))
                l->auto_period = (int)want;
}

/* Whether this LB step needs the tasks' costs: a policy that never moves (none) does not, unless
 * the trace records the snapshots or another library reads them (keep_costs); auto only when its
 * when-rule armed the LB step (auto_times_always). */
static bool needs_costs(const struct lbomp *lb)
{
        if (lb->cfg.policy == &lbomp__policy_auto)
                return lb->lbs.armed || auto_times_always(lb) || lb->cfg.trace;
        return strcmp(lb->cfg.policy->name, "none") != 0 || lb->cfg.trace || lb->lbs.keep_costs;
}

/*
 * Whether a gathering leaves the workers' loads unknown, so that the step after it steals before
 * any step asked for it: the first step, a new team, a table rebuilt as a whole (an LBOMP_FOR
 * loop's first chunks or new ones), or tasks added and removed since the last gathering by an
 * eighth of the live ones or more. Otherwise the last steps still say what this one will be
 * like, and stealing stays on demand (steal_wanted): a program that replaces a few tasks at every
 * step, or a loop whose chunks stay, would else steal at every step, balanced or not, paying a
 * pop and a fence per batch and a look at every victim for nothing (bench/churn, 4,096 tasks,
 * 64 replaced per step: a step took 59 µs under auto, 49 under none, which does not steal). Moves
 * of an LB step do not count: its plan came from the measured loads.
 */
static bool gathering_unknown(const struct lbomp *lb, bool fresh, bool renewed)
{
        uint64_t changed = lb->tasks.version - lb->gathered_version;
        return fresh || renewed || 8 * changed >= (uint64_t)lb->tasks.nalive;
}

/* Serial part of the gathering, on the last thread to arrive: the step can start. */
static void prepare(void *arg)
{
        struct lbomp *lb = arg;
        int team = omp_get_num_threads(), rc = 0;
        bool fresh = !lb->started || team != lb->ws.n, renewed = false;
        /* The last steps' loads and times belong to the workers as they were. */
        lbomp__window_fold(&lb->win, &lb->ws, &lb->clock);
        lbomp__window_aggregate_pending(&lb->win, &lb->ws);
        lb->team_n = team;
        if (team != lb->ws.n) {
                lbomp__log("lbomp: the team has %d thread(s) but the runtime had %d worker(s): "
                           "tasks redistributed over %d worker(s)",
                           team, lb->ws.n, team);
                rc = lbomp__workers_resize(&lb->ws, team, &lb->tasks, &lb->topo, lb->cfg.steal);
                for (int i = 0; i < lb->ws.n && rc == 0; i++)
                        lb->ws.w[i].steps = lb->steps;
                /* A window measures one team. */
                if (rc == 0)
                        lb->started = false;
        }
        /* The program's time step; for an LBOMP_FOR loop, its range and chunks (chunks.h). */
        int loop_rc = rc == 0 ? lbomp__chunks_prepare(lb) : 0;
        if (loop_rc < 0)
                rc = loop_rc;
        if (rc == 0)
                rc = lbomp__window_reserve(&lb->win, lb->tasks.nslots);
        if (rc == 0 && lb->tasks.dirty)
                rc = lbomp__workers_fill(&lb->ws, &lb->tasks, true);
        if (rc == 0) {
                /* New tasks are measured from their first step, in slots that may have held
                 * removed ones. */
                lbomp__window_forget(&lb->win, lb->tasks.added, lb->tasks.nadded);
                if (lb->tasks.renewed)
                        lbomp__window_forget_all(&lb->win, lb->tasks.nslots);
                renewed = lb->tasks.renewed;
                lbomp__tasks_placed(&lb->tasks);
                lb->refilled = false;
        }
        if (rc == 0 && !lb->started) {
                lb->started = true;
                lbomp__window_restart(&lb->win, &lb->ws, lb->tasks.nslots, lb->steps, true);
        }
        lb->prepare_rc = rc;
        lb->begun = true; /* lbomp__chunks_prepare began the time step, or nothing runs */
        if (rc < 0) {
                /* Nothing runs: end it here, loudly. */
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
        /* This run's time step is known now (lbomp__chunks_prepare began it); a loop that has not
         * measured its chunks yet wants their times at once. */
        bool timed =
                (lbomp__window_timed(lb->tset.t, lbomp__tsteps_end(&lb->tset, period_of(lb))) &&
                 needs_costs(lb)) ||
                lbomp__chunks_want_times(lb);
        if (gathering_unknown(lb, fresh, renewed))
                lb->steal_until = lb->steps + STEAL_HOLD;
        lb->gathered_version = lb->tasks.version;
        publish(lb, timed, false, false);
        lbomp__team_run(&lb->team, (uint32_t)team, lb->steps + 1);
}

/* The fast path's conditions: this team ran the last step and nothing changed since (no task
 * added, removed or placed outside a step), and the task set is not an LBOMP_FOR loop (each run of
 * a loop begins with its team's range and chunks, in the gathering: chunks.h). The same for every
 * thread of the team, since they are only written outside steps or in serial parts. */
static bool may_enter(const struct lbomp *lb, uint32_t team)
{
        return lb->started && !lb->tasks.dirty && !lb->tasks.nadded && !lb->refilled &&
               !lb->chunks && (int)team == lb->team_n && team == (uint32_t)lb->ws.n;
}

/* The owner's next batch from position pos on (deque.h, lbomp__deque_batch), at least half a µs of
 * its tasks at their mean time in its last step (lbomp__deque_batch_floor). */
static int64_t batch_len(const struct lbomp__worker *w, int64_t pos, int64_t left, int64_t team)
{
        int64_t k = lbomp__deque_batch(w->pcost_ok ? w->pcost : NULL, (int64_t)w->n, pos, left,
                                       team, w->blind);
        return lbomp__deque_batch_floor(k, w->n ? w->prev_span_s / (double)w->n : 0, left, team);
}

lbomp_iter_t lbomp_iter_begin(lbomp_t *lb)
{
        lbomp_iter_t it = {.lb = lb, .mode = M_DONE};
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
        /* The step barrier's word is stable here: its writer, the next serial part, waits for
         * this thread. A gathering republishes it. */
        uint64_t tag = (word_of(lb) >> W_SHIFT) + 1;
        uint64_t key = lbomp__team_key(level);
        bool gather = false;
        int rc = lbomp__team_enter(&lb->team, key, self, team, tag, &gather);
        /* The fast path's conditions are read once this thread is inside without gathering: then
         * no other team gathers (it would see this thread inside), so what they read was written
         * before the state this thread read. Read before, they could race with a second team's
         * gathering (a misuse, but a race all the same: TSan saw it). */
        if (rc == 0 && !gather && !may_enter(lb, team)) {
                lbomp__team_leave(&lb->team, self);
                gather = true;
                rc = lbomp__team_enter(&lb->team, key, self, team, tag, &gather);
        }
        if (rc < 0) {
                refused(lb, rc);
                return it;
        }
        if (gather) {
                uint32_t arrived = 0;
                rc = lbomp__barrier_wait(&lb->team.gather, team, lb->cfg.step_timeout,
                                         lb->ws.oversubscribed, prepare, lb, &arrived);
                if (rc == -ETIMEDOUT) {
                        int p = lbomp__team_poisoned(&lb->team);
                        if (!p)
                                p = lbomp__team_poison(
                                        &lb->team, -ETIMEDOUT,
                                        "lbomp: only %u of the %u threads of the team reached the "
                                        "start of step %llu within %g s (LBOMP_STEP_TIMEOUT): "
                                        "every thread of the team must run the loop "
                                        "(LBOMP_FOR_EACH_TASK, LBOMP_FOR), so it cannot be inside "
                                        "`#pragma omp single`, `master` or `masked`, or in a "
                                        "branch "
                                        "some threads skip. No task of the step ran, and the "
                                        "runtime refuses every later step",
                                        arrived, team, (unsigned long long)(tag - 1),
                                        lb->cfg.step_timeout);
                        refused(lb, p);
                        lbomp__team_leave(&lb->team, self);
                        return it;
                }
                if (lb->prepare_rc < 0) {
                        lbomp__team_leave(&lb->team, self);
                        return it;
                }
        }
        struct lbomp__worker *w = &lb->ws.w[self];
        lbomp__workers_bind(&lb->ws, (int)self, &lb->topo, lb->omp_binds);
        uint64_t word = word_of(lb);
        /* The last step's times, timed task by task, into the window: each worker its own, here,
         * so that no barrier waits for it (its time slots are the other parity's this step). */
        if (word & W_FOLD)
                lbomp__window_aggregate(&lb->win, &lb->ws, (int)self, (int)((tag - 2) & 1));
        it.w = w;
        it.active = 1;
        it.par = (int)(tag - 1) & 1;
        it.ids = w->ids;
        it.data = (void *const *)w->data;
        it.mode = (word & W_TIMED ? M_TIMED : 0) | (word & W_STEAL ? M_STEAL : 0);
        if (it.mode & M_STEAL) {
                /* The first batch is taken before the deque is armed with the rest (no fence
                 * for it), and a worker with nothing beyond it leaves its deque, empty, as it
                 * is: a thief looking there reads a line nobody wrote. */
                int64_t k = batch_len(w, 0, w->n, (int64_t)team);
                if (k < 1)
                        k = w->n;
                it.pos = 0;
                it.end = k;
                if (w->n > k)
                        lbomp__deque_arm_grain(&w->dq, k, w->n - k, lbomp__workers_front(w),
                                               lbomp__deque_grain(w->prev_span_s / (double)w->n,
                                                                  w->n - k, (int64_t)team));
                else
                        it.mode |= M_EMPTY;
                lbomp__deque_settle(&w->dq, tag);
        } else {
                it.pos = 0;
                it.end = w->n;
        }
        it.fast = !(it.mode & M_TIMED); /* untimed: the inline path takes the tasks */
        w->cpu0 = -1;
        if (!lb->cfg.time_wall && (lb->ws.oversubscribed || w->prev_span_s >= CPU_READ_MIN_S))
                w->cpu0 = lbomp__thread_cpu_s();
        w->stolen = 0;
        w->stolen_ticks = 0;
        w->nlog = 0;
        w->step_t0 = lbomp__ticks(lb->clock.tsc);
        it.t0 = w->step_t0;
        return it;
}

/* A thief's time in a victim's task, kept per victim until its step ends (then scaled). */
static void log_stolen(struct lbomp__worker *w, uint32_t victim, uint64_t dt)
{
        w->stolen_ticks += dt;
        if (w->nlog && w->log[w->nlog - 1].victim == victim) {
                w->log[w->nlog - 1].ticks += dt;
                return;
        }
        if (w->nlog == LBOMP__STEAL_LOG) /* rare: many victims in one step; charge them unscaled */
                return;
        w->log[w->nlog++] = (struct lbomp__steal_rec){.victim = victim, .ticks = dt};
}

/* Elapsed ticks since t0; a backwards reading (a thread moved to a core whose counter lags)
 * counts 0. */
static uint64_t since(struct lbomp__worker *w, uint64_t now, uint64_t t0)
{
        int64_t dt = (int64_t)(now - t0);
        if (dt < 0) {
                w->clock_back++;
                return 0;
        }
        return (uint64_t)dt;
}

/* Owner: the next batch of its own tasks. A batch is at most what would be its fair share if
 * every other worker came to steal: a thief can take the rest. */
static bool take_batch(lbomp_iter_t *it, struct lbomp__worker *w, int nworkers)
{
        if (it->mode & M_EMPTY)
                return false;
        int64_t first, next;
        int64_t left = lbomp__deque_next(&w->dq, &next);
        int64_t k = batch_len(w, next, left, nworkers);
        int64_t got = lbomp__deque_pop(&w->dq, k > 0 ? k : 1, &first);
        /* Items only ever leave a deque during a step: taking all that was left empties it (a
         * stale top only overestimates what is left). */
        if (got <= 0 || got >= left)
                it->mode |= M_EMPTY;
        if (got <= 0)
                return false;
        it->pos = first;
        it->end = first + got;
        return true;
}

/* The next task of the own batch, or of the stolen run, whose owner is o (its slots are o's: the
 * task's time stays the task's, and o scales it by the runner's factor). */
static void *serve(lbomp_iter_t *it, struct lbomp__worker *o, uint32_t self)
{
        int64_t p = it->pos;
        it->pos = p + 1;
        it->fast = !(it->mode & M_TIMED); /* an untimed batch or run goes inline */
        if (it->mode & M_TIMED) {
                it->slot = &o->ticks[(size_t)it->par * o->cap + p];
                if (it->mode & M_STEAL)
                        o->runner[(size_t)it->par * o->cap + p] = self;
        }
        it->id = o->ids[p];
        return o->data[p];
}

/* Everything but the inline path: timed steps, batches, stealing, the end. */
void *lbomp_iter_next(lbomp_iter_t *it)
{
        if (it->mode & M_DONE)
                return NULL;
        struct lbomp *lb = it->lb;
        struct lbomp__worker *w = it->w;
        uint32_t self = (uint32_t)(w - lb->ws.w);
        if (it->mode & (M_TIMED | M_STOLEN)) {
                uint64_t now = lbomp__ticks(lb->clock.tsc), dt = since(w, now, it->t0);
                if (it->slot) {
                        *it->slot = dt;
                        it->busy += dt;
                        it->slot = NULL;
                }
                if (it->mode & M_STOLEN) /* the last task or, untimed, the run inline since t0 */
                        log_stolen(w, it->victim, dt);
                it->t0 = now;
        }
        int64_t p = it->pos;
        if (p >= it->end && (it->mode & M_STOLEN)) {
                /* The stolen run is over: back to the own arrays (the own deque is empty). */
                it->mode &= ~M_STOLEN;
                it->ids = w->ids;
                it->data = (void *const *)w->data;
        }
        if (p >= it->end && (it->mode & M_STEAL) && take_batch(it, w, lb->team_n))
                p = it->pos;
        if (p < it->end)
                return serve(it, it->mode & M_STOLEN ? &lb->ws.w[it->victim] : w, self);
        /* Own deque empty: steal, nearest victims first, one run from each one's tail or front
         * (one task, or a run of tiny ones: deque.h); unless every other thread already arrived at
         * the step barrier (their deques are empty): the count shares a line with the arrival this
         * thread makes next anyway. A victim that has not settled its deque for this step yet (it
         * has not reached it, or is still binding or folding its last step's times) shows the last
         * step's, empty: the thief looks again until it has, for at most SETTLE_WAIT_S — it would
         * wait at the barrier for that victim all the same. A thief with a few µs of its own tasks
         * and a victim holding the step's load otherwise gave up on it at every step (test_config,
         * steal_setter: 0 tasks stolen in 6 runs of 8). Not with more threads than cores: there
         * the victim needs this core to get on. */
        uint64_t tag = (word_of(lb) >> W_SHIFT) + 1, until = 0; /* this step's, as iter_begin's */
        while ((it->mode & M_STEAL) &&
               atomic_load_explicit(&lb->team.bar.count, memory_order_relaxed) + 1 <
                       (uint32_t)lb->team_n) {
                bool early = false; /* a victim whose deque is still the last step's */
                for (uint32_t k = 0; k < w->nvictims; k++) {
                        struct lbomp__worker *v = &lb->ws.w[w->victims[k]];
                        enum lbomp__take r;
                        int64_t pos, count;
                        const double *pc = v->pcost_ok ? v->pcost : NULL;
                        double ratio = lbomp__steal_ratio(w, v);
                        while ((r = lbomp__deque_steal_paying(&v->dq, &pos, &count, pc,
                                                              (int64_t)v->n, ratio)) ==
                               LBOMP__LOST_RACE)
                                ;
                        if (r != LBOMP__TAKEN) {
                                early = early || !lbomp__deque_settled(&v->dq, tag);
                                continue;
                        }
                        /* A run of the victim's positions, [pos, pos + count): through the own
                         * batch's path, on the victim's arrays, each task timed into the
                         * victim's slot in a timed step, the whole run inline otherwise. */
                        w->stolen += (uint64_t)count;
                        it->victim = w->victims[k];
                        it->mode |= M_STOLEN;
                        it->ids = v->ids;
                        it->data = (void *const *)v->data;
                        it->pos = pos;
                        it->end = pos + count;
                        it->t0 = lbomp__ticks(lb->clock.tsc);
                        return serve(it, v, self);
                }
                if (!early || lb->ws.oversubscribed)
                        break;
                uint64_t now = lbomp__ticks(lb->clock.tsc);
                if (!until)
                        until = now + (uint64_t)(SETTLE_WAIT_S * lb->clock.ticks_per_s);
                else if (now >= until)
                        break;
                lbomp__cpu_relax();
        }
        it->fast = 0;
        it->mode |= M_DONE;
        return NULL;
}

/* The thief's time in each victim's tasks is charged to the victim as what they would have cost
 * the victim (lbomp__steal_charge). */
static void flush_stolen(struct lbomp *lb, struct lbomp__worker *w, uint64_t step)
{
        double scale = w->scale[step & 1];
        size_t slot = step % LBOMP__RING;
        uint64_t logged = 0;
        for (uint32_t i = 0; i < w->nlog; i++) {
                struct lbomp__worker *v = &lb->ws.w[w->log[i].victim];
                double f = lbomp__steal_charge(scale, w, v);
                logged += w->log[i].ticks;
                atomic_fetch_add_explicit(&v->ring[slot].given,
                                          (uint64_t)((double)w->log[i].ticks * f),
                                          memory_order_relaxed);
        }
        /* Beyond the log's victims: charged to the last one, unscaled (a rare spread). */
        if (w->stolen_ticks > logged && w->nlog)
                atomic_fetch_add_explicit(&lb->ws.w[w->log[w->nlog - 1].victim].ring[slot].given,
                                          w->stolen_ticks - logged, memory_order_relaxed);
}

/* Serial part of the step barrier: the step is over. It reads no worker's lines but at a window's
 * end or every LBOMP__RING steps, when the workers' loads are folded in. */
static void step_done(void *arg)
{
        struct lbomp *lb = arg;
        /* The run's place in the program's time steps: a gathering's serial part found it
         * (lbomp__chunks_prepare); a step entered without gathering begins its time step here,
         * once its whole team is through, so that a step refused at its end (a thread of the team
         * never came) is not counted as a step run, whichever of its threads came. */
        if (!lb->begun)
                lbomp__tsteps_begin(lb->ts, &lb->tset);
        if (lb->begun) /* a store would take the line the entering threads read */
                lb->begun = false;
        uint64_t skipped = lbomp__barrier_take(&lb->team.bar);
        uint64_t word = word_of(lb);
        lb->win.pending = false; /* every worker folded the step before this one as it entered */
        bool clean = skipped == 0, timed = word & W_TIMED;
        int par = (int)(lb->steps & 1);
        if (skipped)
                step_result(lb, -EINTR, lb->cfg.verbose > 0,
                            "lbomp: step %llu ended before %llu of its %u tasks ran (a break or "
                            "return out of LBOMP_FOR_EACH_TASK); the step's times are not used "
                            "for balancing",
                            (unsigned long long)lb->steps, (unsigned long long)skipped,
                            lb->tasks.nalive);
        else if (atomic_load_explicit(&lb->step_rc, memory_order_relaxed) &&
                 !atomic_load_explicit(&lb->team.poison, memory_order_acquire))
                atomic_store(&lb->step_rc, 0); /* a refusal during the step (a second team) stays */
        lbomp__window_step(&lb->win, skipped, clean, timed, word & W_STEAL, lb->ws.nfront > 0);
        steal_wanted(lb);
        lb->steps++;
        if (clean && lb->cfg.policy == &lbomp__policy_auto)
                auto_when(lb);
        bool fold = clean && timed;
        /* Every LBOMP_PERIOD time steps of the program, not runs of this task set (tsteps.h). */
        bool lb_due = clean && lbomp__tsteps_due(lb->ts, &lb->tset, lb->win.steps, period_of(lb));
        bool ring = lbomp__window_ring_full(&lb->win);
        if (lb_due || ring)
                lbomp__window_fold(&lb->win, &lb->ws, &lb->clock);
        if (ring && !lb_due && lb->lbs.quiet) /* a quiet window whose steps grew imbalanced */
                lbomp__lb_quiet_check(lb, lbomp__tsteps_end(&lb->tset, period_of(lb)));
        if (lb_due) {
                /* The centralized LB step runs here, while the team waits: the window's last step
                 * is folded in first, for every worker. */
                if (fold)
                        for (int i = 0; i < lb->ws.n; i++)
                                lbomp__window_aggregate(&lb->win, &lb->ws, i, par);
                lbomp__lb_begin(lb);
        }
        /* The next step's measurement, read by the team after this barrier; room for its record. */
        lb->win.pending = fold && !lb_due;
        lb->win.pending_step = lb->steps - 1;
        /* The next run is (most likely) in the next time step. */
        bool next_timed =
                lbomp__window_timed(lb->tset.t + 1, lbomp__tsteps_end(&lb->tset, period_of(lb))) &&
                needs_costs(lb);
        publish(lb, next_timed, lb->win.pending, lb_due);
        if (!lbomp__history_room(&lb->win.steprecs) &&
            lbomp__window_reserve(&lb->win, lb->tasks.nslots) < 0)
                lb->tasks.dirty = true; /* the next step gathers and says so */
        lbomp__window_energy_tick(&lb->win);
}

/* The end barrier's watchdog: a thread of the team never entered (the loop is inside `single` or
 * `master`, or the runtime was poisoned before it came). A thread still in its tasks is waited for.
 */
struct watch {
        struct lbomp *lb;
        uint32_t n;
        uint64_t tag;
};

static bool missing_team(void *arg, double waited_s)
{
        struct watch *wa = arg;
        struct lbomp *lb = wa->lb;
        bool late = lb->cfg.step_timeout > 0 && waited_s >= lb->cfg.step_timeout;
        bool poisoned = atomic_load_explicit(&lb->team.poison, memory_order_acquire) != 0;
        return (late || poisoned) && lbomp__team_entered(&lb->team, wa->n, wa->tag) < wa->n;
}

/* The step ended without part of its team: what ran and what did not. */
static void broken_step(struct lbomp *lb, uint32_t self, uint64_t tag)
{
        uint32_t n = (uint32_t)lb->team_n;
        uint64_t left = 0;
        for (uint32_t i = 0; i < n; i++)
                if (!lbomp__team_is_in(&lb->team, i, tag))
                        left += lb->ws.w[i].n;
        int p = lbomp__team_poisoned(&lb->team);
        if (p) {
                /* Refused by another team (a second team came) before the rest of ours did: the
                 * poison says why, this step's result what of it ran. */
                const char *why = lbomp_last_error();
                if (strncmp(why, "lbomp: ", 7) == 0)
                        why += 7;
                step_result(lb, p, true,
                            "lbomp: step %llu ended with only %u of its %u threads, the others "
                            "refused; the tasks of the threads that came ran once, %llu task(s) "
                            "of the others did not run. Why: %s",
                            (unsigned long long)(tag - 1), lbomp__team_entered(&lb->team, n, tag),
                            n, (unsigned long long)left, why);
                lbomp__team_leave(&lb->team, self);
                return;
        }
        p = lbomp__team_poison(
                &lb->team, -ETIMEDOUT,
                "lbomp: only %u of the %u threads of the team reached step %llu within "
                "%g s (LBOMP_STEP_TIMEOUT): every thread of the team must run "
                "LBOMP_FOR_EACH_TASK, so it cannot be inside `#pragma omp single`, "
                "`master` or `masked`, or in a branch some threads skip. The tasks of the "
                "threads that came ran once; %llu task(s) of the others did not run, and "
                "the runtime refuses every later step",
                lbomp__team_entered(&lb->team, n, tag), n, (unsigned long long)(tag - 1),
                lb->cfg.step_timeout, (unsigned long long)left);
        refused(lb, p);
        lbomp__team_leave(&lb->team, self);
}

/* This thread's part of the step is over: its loads into its ring, what it left undone into the
 * step barrier's sum. Returns the step's number. */
static uint64_t end_tasks(lbomp_iter_t *it)
{
        struct lbomp *lb = it->lb;
        struct lbomp__worker *w = it->w;
        uint64_t now = lbomp__ticks(lb->clock.tsc);
        if (it->mode & (M_TIMED | M_STOLEN)) { /* the loop was left with a task running (break) */
                uint64_t dt = since(w, now, it->t0);
                if (it->slot) {
                        *it->slot = dt;
                        it->busy += dt;
                        it->slot = NULL;
                }
                if (it->mode & M_STOLEN)
                        log_stolen(w, it->victim, dt);
        }
        /* What this thread leaves undone does not run in this step (the step is then not clean:
         * nothing of it goes into the window, so their time slots need no care). */
        uint64_t left = it->pos < it->end ? (uint64_t)(it->end - it->pos) : 0;
        if ((it->mode & M_STEAL) && !(it->mode & (M_DONE | M_EMPTY))) { /* else it is empty */
                int64_t first, got;
                while ((got = lbomp__deque_pop(&w->dq, INT32_MAX, &first)) > 0)
                        left += (uint64_t)got;
        }
        if (left) /* the step barrier's serial part reads the sum of every thread's */
                lbomp__barrier_add(&lb->team.bar, left);
        if (lb->cfg.steal != LBOMP__STEAL_OFF) /* steal_wanted reads it */
                lbomp__barrier_mark(&lb->team.bar, now, w->stolen ? w->stolen_ticks : 0);
        int64_t span = (int64_t)(now - w->step_t0);
        if (span < 0) {
                w->clock_back++;
                span = 0;
        }
        w->span = span;
        w->busy = (it->mode & M_TIMED) ? it->busy : (uint64_t)span;
        w->cpu_s = w->cpu0 >= 0 ? lbomp__thread_cpu_s() - w->cpu0 : -1;
        uint64_t step = (word_of(lb) >> W_SHIFT);
        lbomp__window_step_end(w, &lb->clock, step);
        if (w->nlog)
                flush_stolen(lb, w, step);
        w->steps++;
        it->active = 0;
        it->fast = 0;
        it->mode = M_DONE;
        return step;
}

/* After the serial part: the LB step's work for the team, if any. */
static void lb_team(struct lbomp *lb, uint32_t self)
{
        if (lbomp__lb_step(lb, (int)self) < 0 && self == 0)
                step_result(lb, -ENOMEM, true,
                            "lbomp: the LB step after step %llu ran out of memory; the mapping "
                            "was kept",
                            (unsigned long long)(lb->steps - 1));
}

void lbomp_iter_end(lbomp_iter_t *it)
{
        if (!it->active)
                return;
        struct lbomp *lb = it->lb;
        uint32_t self = (uint32_t)((struct lbomp__worker *)it->w - lb->ws.w);
        uint64_t step = end_tasks(it);
        struct watch wa = {.lb = lb, .n = (uint32_t)lb->team_n, .tag = step + 1};
        int rc = lbomp__barrier_wait_watched(&lb->team.bar, (uint32_t)lb->team_n,
                                             lb->ws.oversubscribed, step_done, lb, NULL,
                                             missing_team, &wa);
        if (rc == -ETIMEDOUT) {
                broken_step(lb, self, step + 1);
                return;
        }
        if (word_of(lb) & W_LB)
                lb_team(lb, self);
        lbomp__team_leave(&lb->team, self);
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
        /* The region's end is the step's barrier: its serial part runs here, after the join, and
         * the LB step's team work (rare) in a region of its own. */
        _Atomic int ended = 0;
#pragma omp parallel num_threads(lb->ws.n)
        {
                lbomp_iter_t it = lbomp_iter_begin(lb);
                if (it.active) {
                        void *d;
                        while ((d = lbomp_iter_next_fast(&it)) != NULL)
                                fn(d, it.id, arg);
                        end_tasks(&it);
                        atomic_fetch_add_explicit(&ended, 1, memory_order_relaxed);
                        lbomp__team_leave(&lb->team, (uint32_t)omp_get_thread_num());
                }
        }
        if (atomic_load(&ended) != lb->team_n || atomic_load(&ended) == 0)
                return lbomp_last_step(lb); /* refused or not started: nothing ended */
        step_done(lb);
        if ((word_of(lb) & W_LB) && lbomp__lb_team_work(lb)) {
#pragma omp parallel num_threads(lb->team_n)
                lb_team(lb, (uint32_t)omp_get_thread_num());
        } else if (word_of(lb) & W_LB) {
                lb_team(lb, 0); /* nothing for the team: only its result */
        }
        return lbomp_last_step(lb);
}
