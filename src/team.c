/*
 * team.c — who is in a step and the barrier they meet at (team.h).
 *
 * The barrier is a counter and a generation word: the last thread to arrive resets the counter,
 * runs the serial part and bumps the generation; the others spin on it for a while, then sleep on
 * it with futex(2). Breaking (the watchdog) and releasing both change the generation word with a
 * compare-and-swap from the same value, so exactly one of them happens for a generation.
 */
#include <errno.h>
#include <linux/futex.h>
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
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

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

int lbomp__barrier_wait(struct lbomp__barrier *b, uint32_t n, double timeout_s, bool oversubscribed,
                        void (*serial)(void *), void *arg, uint32_t *arrived)
{
        uint32_t ph = atomic_load_explicit(&b->phase, memory_order_acquire);
        if (ph & 1)
                return -ETIMEDOUT;
        /* acq_rel: the last arrival sees, through the chain of increments, every thread's writes
         * before its arrival. */
        uint32_t a = atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1;
        if (a >= n) {
                atomic_store_explicit(&b->count, 0, memory_order_relaxed);
                if (serial)
                        serial(arg);
                /* Release: waiters that see the new generation see the serial part's writes. A
                 * watchdog may have broken this generation in the meantime: then it stays
                 * broken, and the step is refused here too. */
                uint32_t expect = ph;
                bool ok = atomic_compare_exchange_strong_explicit(
                        &b->phase, &expect, ph + 2, memory_order_release, memory_order_acquire);
                futex_wake_all(&b->phase);
                if (arrived)
                        *arrived = a;
                return ok ? 0 : -ETIMEDOUT;
        }
        double t0 = timeout_s > 0 ? lbomp__mono_s() : 0;
        uint32_t polls = oversubscribed ? SPIN_POLLS_OVER : SPIN_POLLS;
        for (uint32_t i = 0;; i++) {
                uint32_t now = atomic_load_explicit(&b->phase, memory_order_acquire);
                if (now != ph) {
                        if (arrived)
                                *arrived = atomic_load_explicit(&b->count, memory_order_relaxed);
                        return now & 1 ? -ETIMEDOUT : 0;
                }
                if (i < polls) {
                        cpu_relax();
                        continue;
                }
                if (oversubscribed && i < polls + 50) {
                        sched_yield();
                        continue;
                }
                if (timeout_s > 0 && lbomp__mono_s() - t0 >= timeout_s) {
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
                        continue; /* released (or broken) just now: look again */
                }
                futex_wait(&b->phase, ph, timeout_s > 0 ? SLICE_S : 0);
        }
}

void lbomp__barrier_reset(struct lbomp__barrier *b)
{
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        uint32_t ph = atomic_load_explicit(&b->phase, memory_order_relaxed);
        atomic_store_explicit(&b->phase, (ph | 1) + 1, memory_order_release);
}

void lbomp__team_init(struct lbomp__team *t)
{
        memset(t, 0, sizeof *t);
        pthread_mutex_init(&t->lock, NULL);
}

void lbomp__team_destroy(struct lbomp__team *t)
{
        pthread_mutex_destroy(&t->lock);
}

uint64_t lbomp__team_key(void)
{
        int level = omp_get_level();
        uint64_t k = 0x9e3779b97f4a7c15ull * (uint64_t)(level + 1);
        for (int l = 1; l < level; l++) {
                k ^= (uint64_t)(omp_get_ancestor_thread_num(l) + 1) * 0xbf58476d1ce4e5b9ull;
                k = (k << 27) | (k >> 37);
        }
        k &= (UINT64_MAX >> 2);
        return k ? k : 1;
}

static const char *phase_name(uint64_t st)
{
        return (st & 3) == LBOMP__TEAM_RUNNING ? "runs" : "is gathering for";
}

int lbomp__team_enter(struct lbomp__team *t, uint64_t key, uint32_t self, uint32_t n)
{
        int p = lbomp__team_poisoned(t);
        if (p)
                return p;
        uint64_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        for (;;) {
                if (st == 0) {
                        uint64_t gather = key << 2 | LBOMP__TEAM_GATHERING;
                        if (atomic_compare_exchange_weak_explicit(&t->state, &st, gather,
                                                                  memory_order_acq_rel,
                                                                  memory_order_acquire))
                                break;
                        continue;
                }
                if (st == (key << 2 | LBOMP__TEAM_GATHERING))
                        break;
                if (st == (key << 2 | LBOMP__TEAM_RUNNING)) {
                        /* Our own team's last step: its other threads are on their way out. */
                        sched_yield();
                        st = atomic_load_explicit(&t->state, memory_order_acquire);
                        continue;
                }
                return lbomp__team_poison(
                        t, -EBUSY,
                        "lbomp: a second OpenMP team (nesting level %d, thread %u of %u) entered a "
                        "step while another team %s a step of the same runtime: one runtime runs "
                        "one step at a time. Nested parallel regions each running "
                        "LBOMP_FOR_EACH_TASK need a runtime each; the runtime refuses every later "
                        "step",
                        omp_get_level(), self, n, phase_name(st));
        }
        uint64_t bit = 1ull << (self % 64);
        uint64_t had = atomic_fetch_or_explicit(&t->seen[self / 64], bit, memory_order_relaxed);
        if (had & bit)
                return lbomp__team_poison(
                        t, -EBUSY,
                        "lbomp: two threads numbered %u (nesting level %d) entered the same step: "
                        "two teams of the same shape use one runtime at once (several threads "
                        "each opening a parallel region?); the runtime refuses every later step",
                        self, omp_get_level());
        return 0;
}

void lbomp__team_run(struct lbomp__team *t, uint32_t n)
{
        for (uint32_t i = 0; i < (n + 63) / 64; i++)
                atomic_store_explicit(&t->seen[i], 0, memory_order_relaxed);
        atomic_store_explicit(&t->inside, n, memory_order_relaxed);
        uint64_t st = atomic_load_explicit(&t->state, memory_order_relaxed);
        atomic_store_explicit(&t->state, (st & ~3ull) | LBOMP__TEAM_RUNNING, memory_order_release);
}

void lbomp__team_leave(struct lbomp__team *t)
{
        if (atomic_fetch_sub_explicit(&t->inside, 1, memory_order_acq_rel) == 1)
                atomic_store_explicit(&t->state, 0, memory_order_release);
}

void lbomp__team_abort(struct lbomp__team *t)
{
        for (uint32_t i = 0; i < LBOMP__MAX_WORKERS / 64; i++)
                atomic_store_explicit(&t->seen[i], 0, memory_order_relaxed);
        atomic_store_explicit(&t->state, 0, memory_order_release);
}

bool lbomp__team_busy(const struct lbomp__team *t)
{
        return atomic_load_explicit(&t->state, memory_order_acquire) != 0;
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
         * already runs is not disturbed, it ends as it began. */
        uint64_t st = atomic_load_explicit(&t->state, memory_order_acquire);
        if ((st & 3) == LBOMP__TEAM_GATHERING) {
                uint32_t ph = atomic_load_explicit(&t->bar.phase, memory_order_acquire);
                if (!(ph & 1) && atomic_compare_exchange_strong(&t->bar.phase, &ph, ph | 1))
                        futex_wake_all(&t->bar.phase);
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
