/*
 * team.c — who is in a step and the barrier they meet at (team.h).
 *
 * The barrier is a counter and a generation word: the last thread to arrive resets the counter,
 * claims the generation, runs the serial part and bumps the generation; the others spin on it for
 * a while, then sleep on it with futex(2); the release wakes sleepers with a system call only
 * when a waiter said it sleeps (a step of a few µs would otherwise pay that call every time: the
 * waiter's count and the release's look at it order each other, as in a Dekker pair, so that
 * either the release sees the sleeper or the sleeper's futex_wait sees the new generation).
 * Breaking (the watchdog, a poison) and claiming both
 * change the generation word with a compare-and-swap from the same value, so exactly one of them
 * happens for a generation, and a serial part that began always completes its generation: broken
 * there, its work would be done (a gathering's time step begun) for a step that never runs.
 */
#include <errno.h>
#include <linux/futex.h>
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "team.h"

#define SPIN_POLLS      20000 /* about 50-100 µs of polling before sleeping */
#define SPIN_POLLS_OVER 20    /* threads share cores: yield almost at once */
#define SLICE_S         0.05  /* a sleeping waiter with a watchdog looks at the clock this often */

static void futex_wait(_Atomic uint32_t *w, uint32_t val, double timeout_s)
{
        struct timespec ts, *tp = NULL;
        if (timeout_s > 0) {
                ts.tv_sec = (time_t)timeout_s;
                ts.tv_nsec = (long)((timeout_s - (double)ts.tv_sec) * 1e9);
                tp = &ts;
        }
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, tp, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *w)
{
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* The default watchdog: a plain timeout. */
static bool timed_out(void *arg, double waited_s)
{
        return waited_s >= *(const double *)arg;
}

int lbomp__barrier_wait(struct lbomp__barrier *b, uint32_t n, double timeout_s, bool oversubscribed,
                        void (*serial)(void *), void *arg, uint32_t *arrived)
{
        return lbomp__barrier_wait_watched(b, n, oversubscribed, serial, arg, arrived,
                                           timeout_s > 0 ? timed_out : NULL, &timeout_s);
}

int lbomp__barrier_wait_watched(struct lbomp__barrier *b, uint32_t n, bool oversubscribed,
                                void (*serial)(void *), void *arg, uint32_t *arrived,
                                bool (*stuck)(void *warg, double waited_s), void *warg)
{
        uint32_t ph = atomic_load_explicit(&b->phase, memory_order_acquire);
        if (ph & 1)
                return -ETIMEDOUT;
        ph &= ~3u; /* an arrival while a serial part runs (more than n threads: a misuse) waits
                      for that generation's release, as it always did */
        /* acq_rel: the last arrival sees, through the chain of increments, every thread's writes
         * before its arrival. */
        uint32_t a = atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1;
        if (a >= n) {
                atomic_store_explicit(&b->count, 0, memory_order_relaxed);
                /* The claim: from now on nobody breaks this generation. A watchdog or a poison
                 * may have broken it before: then it stays broken, the serial part does not run,
                 * and the step is refused here too. */
                uint32_t expect = ph;
                bool ok = atomic_compare_exchange_strong_explicit(
                        &b->phase, &expect, ph + 2, memory_order_acquire, memory_order_acquire);
                if (ok && serial)
                        serial(arg);
                /* Release: waiters that see the new generation see the serial part's writes.
                 * seq_cst, with the load of `sleepers` below (see the top of the file). */
                if (ok)
                        atomic_store_explicit(&b->phase, ph + 4, memory_order_seq_cst);
                if (!ok || atomic_load_explicit(&b->sleepers, memory_order_seq_cst))
                        futex_wake_all(&b->phase);
                if (arrived)
                        *arrived = a;
                return ok ? 0 : -ETIMEDOUT;
        }
        double t0 = stuck ? lbomp__mono_s() : 0;
        uint32_t polls = oversubscribed ? SPIN_POLLS_OVER : SPIN_POLLS;
        for (uint32_t i = 0;; i++) {
                uint32_t now = atomic_load_explicit(&b->phase, memory_order_acquire);
                /* ph + 2: the serial part runs, wait on; only ph + 1 is this generation broken;
                 * from ph + 4 on it was released (a later break is a later generation's, seen by a
                 * waiter that was slow to look). */
                if (now != ph && now != ph + 2) {
                        if (arrived)
                                *arrived = atomic_load_explicit(&b->count, memory_order_relaxed);
                        return now == ph + 1 ? -ETIMEDOUT : 0;
                }
                if (i < polls) {
                        lbomp__cpu_relax();
                        continue;
                }
                if (oversubscribed && i < polls + 50) {
                        sched_yield();
                        continue;
                }
                if (now == ph && stuck && stuck(warg, lbomp__mono_s() - t0)) {
                        uint32_t seen = atomic_load_explicit(&b->count, memory_order_relaxed);
                        uint32_t expect = ph;
                        if (atomic_compare_exchange_strong_explicit(&b->phase, &expect, ph | 1,
                                                                    memory_order_acq_rel,
                                                                    memory_order_acquire)) {
                                futex_wake_all(&b->phase);
                                if (arrived)
                                        *arrived = seen;
                                return -ETIMEDOUT;
                        }
                        continue; /* claimed or broken just now: look again */
                }
                atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
                futex_wait(&b->phase, now, stuck ? SLICE_S : 0);
                atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
        }
}

void lbomp__barrier_reset(struct lbomp__barrier *b)
{
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store_explicit(&b->ends, 0, memory_order_relaxed);
        atomic_store_explicit(&b->last_end, 0, memory_order_relaxed);
        atomic_store_explicit(&b->stolen, 0, memory_order_relaxed);
        uint32_t ph = atomic_load_explicit(&b->phase, memory_order_relaxed);
        atomic_store_explicit(&b->phase, (ph | 3) + 1, memory_order_release);
}

int lbomp__team_init(struct lbomp__team *t)
{
        memset(t, 0, sizeof *t);
        pthread_mutex_init(&t->lock, NULL);
        /* Untouched entries cost no memory: only the thread numbers that run steps are written. */
        t->in = calloc(LBOMP__MAX_WORKERS, sizeof *t->in);
        return t->in ? 0 : -ENOMEM;
}

void lbomp__team_destroy(struct lbomp__team *t)
{
        pthread_mutex_destroy(&t->lock);
        free(t->in);
        t->in = NULL;
}

uint64_t lbomp__team_key(int level)
{
        uint64_t k = 0x9e3779b97f4a7c15ull * (uint64_t)(level + 1);
        for (int l = 1; l < level; l++) {
                k ^= (uint64_t)(omp_get_ancestor_thread_num(l) + 1) * 0xbf58476d1ce4e5b9ull;
                k = (k << 27) | (k >> 37);
        }
        k &= (UINT64_MAX >> 2);
        return k ? k : 1;
}

/* A thread that joined a gathering marks itself with this bit: its mark is not a step running. */
#define GATHERED (1ull << 63)

static void mark_hi(struct lbomp__team *t, uint32_t self)
{
        uint32_t hi = atomic_load_explicit(&t->hi, memory_order_relaxed);
        while (hi <= self &&
               !atomic_compare_exchange_weak_explicit(&t->hi, &hi, self + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                ;
}

/* Marks `self` inside with `mark`, or poisons: another thread with that number is inside. */
static int mark(struct lbomp__team *t, uint32_t self, uint64_t m)
{
        uint64_t zero = 0;
        mark_hi(t, self);
        /* seq_cst: with the state read that follows, the handshake with a team taking the
         * runtime over (either it sees this mark, or this thread sees its state). */
        if (atomic_compare_exchange_strong(&t->in[self].step, &zero, m))
                return 0;
        return lbomp__team_poison(
                t, -EBUSY,
                "lbomp: two threads numbered %u (nesting level %d) entered the same step: "
                "two teams of the same shape use one runtime at once (several threads "
                "each opening a parallel region?); the runtime refuses every later step",
                self, omp_get_level());
}

/* Whether a thread runs a step now (a mark without GATHERED). */
static bool running_inside(const struct lbomp__team *t)
{
        uint32_t hi = atomic_load_explicit(&t->hi, memory_order_relaxed);
        for (uint32_t i = 0; i < hi; i++) {
                uint64_t m = atomic_load(&t->in[i].step);
                if (m && !(m & GATHERED))
                        return true;
        }
        return false;
}

static int second_team(struct lbomp__team *t, uint32_t self, uint32_t n, const char *what)
{
        return lbomp__team_poison(
                t, -EBUSY,
                "lbomp: a second OpenMP team (nesting level %d, thread %u of %u) entered a "
                "step while another team %s a step of the same runtime: one runtime runs "
                "one step at a time. Nested parallel regions each running "
                "LBOMP_FOR_EACH_TASK need a runtime each; the runtime refuses every later "
                "step",
                omp_get_level(), self, n, what);
}

int lbomp__team_enter(struct lbomp__team *t, uint64_t key, uint32_t self, uint32_t n, uint64_t tag,
                      bool *gather)
{
        int p = lbomp__team_poisoned(t);
        if (p)
                return p;
        uint64_t run = key << 2 | LBOMP__TEAM_RUNNING, gathering = key << 2 | LBOMP__TEAM_GATHERING;
        if (!*gather && atomic_load_explicit(&t->state, memory_order_acquire) == run) {
                int rc = mark(t, self, tag);
                if (rc < 0)
                        return rc;
                if (atomic_load(&t->state) == run)
                        return 0;
                /* A new team took the runtime over meanwhile: go the way of a new team. */
                atomic_store_explicit(&t->in[self].step, 0, memory_order_release);
        }
        uint64_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        for (;;) {
                if (st == gathering)
                        break;
                if ((st & 3) == LBOMP__TEAM_GATHERING)
                        return second_team(t, self, n, "is gathering for");
                /* Idle, or the runtime of the team that ran the last step: make it ours, then
                 * see whether a thread still runs a step (seq_cst: the other half of the
                 * handshake in mark()). */
                if (!atomic_compare_exchange_strong(&t->state, &st, gathering))
                        continue;
                if ((st & 3) == LBOMP__TEAM_RUNNING && st >> 2 != key) {
                        if (running_inside(t))
                                return second_team(t, self, n, "runs");
                } else {
                        /* Our own team's last step: its other threads are on their way out. */
                        while (running_inside(t))
                                sched_yield();
                }
                break;
        }
        int rc = mark(t, self, tag | GATHERED);
        if (rc < 0)
                return rc;
        *gather = true;
        return 0;
}

void lbomp__team_run(struct lbomp__team *t, uint32_t n, uint64_t tag)
{
        /* The gathered threads now run a step: plain marks, published before the state, so that
         * a team taking the runtime over after this sees them. */
        for (uint32_t i = 0; i < n; i++)
                atomic_store_explicit(&t->in[i].step, tag, memory_order_relaxed);
        uint64_t st = atomic_load_explicit(&t->state, memory_order_relaxed);
        atomic_store_explicit(&t->state, (st & ~3ull) | LBOMP__TEAM_RUNNING, memory_order_release);
}

void lbomp__team_leave(struct lbomp__team *t, uint32_t self)
{
        atomic_store_explicit(&t->in[self].step, 0, memory_order_release);
}

void lbomp__team_abort(struct lbomp__team *t)
{
        atomic_store_explicit(&t->state, LBOMP__TEAM_IDLE, memory_order_release);
}

bool lbomp__team_busy(const struct lbomp__team *t)
{
        if ((atomic_load_explicit(&t->state, memory_order_acquire) & 3) == LBOMP__TEAM_GATHERING)
                return true;
        uint32_t hi = atomic_load_explicit(&t->hi, memory_order_acquire);
        for (uint32_t i = 0; i < hi; i++)
                if (atomic_load_explicit(&t->in[i].step, memory_order_acquire))
                        return true;
        return false;
}

bool lbomp__team_is_in(const struct lbomp__team *t, uint32_t self, uint64_t tag)
{
        return (atomic_load_explicit(&t->in[self].step, memory_order_acquire) & ~GATHERED) == tag;
}

uint32_t lbomp__team_entered(const struct lbomp__team *t, uint32_t n, uint64_t tag)
{
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
                k += lbomp__team_is_in(t, i, tag);
        return k;
}

int lbomp__team_poison(struct lbomp__team *t, int err, const char *fmt, ...)
{
        pthread_mutex_lock(&t->lock);
        if (!atomic_load_explicit(&t->poison, memory_order_relaxed)) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(t->poison_msg, sizeof t->poison_msg, fmt, ap);
                va_end(ap);
                atomic_store_explicit(&t->poison, err, memory_order_release);
                lbomp__fail("%s", t->poison_msg);
        } else {
                lbomp__set_error("%s", t->poison_msg);
        }
        /* Whoever waits at a gathering must hear it now, not at its watchdog; a step that
         * already runs is not disturbed: its end barrier's watchdog looks at the poison while
         * some thread of its team has not entered. Nor is a gathering whose team all arrived
         * (its serial part runs): its step runs whole. */
        uint64_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        if ((st & 3) == LBOMP__TEAM_GATHERING) {
                uint32_t ph = atomic_load_explicit(&t->gather.phase, memory_order_acquire);
                if (!(ph & 3) && atomic_compare_exchange_strong(&t->gather.phase, &ph, ph | 1))
                        futex_wake_all(&t->gather.phase);
                atomic_store_explicit(&t->state, 0, memory_order_release);
        }
        pthread_mutex_unlock(&t->lock);
        return atomic_load_explicit(&t->poison, memory_order_relaxed);
}

int lbomp__team_poisoned(struct lbomp__team *t)
{
        int p = atomic_load_explicit(&t->poison, memory_order_acquire);
        if (p) {
                pthread_mutex_lock(&t->lock);
                lbomp__set_error("%s", t->poison_msg);
                pthread_mutex_unlock(&t->lock);
        }
        return p;
}
