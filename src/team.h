/*
 * team.h — who is in a step, and the barriers they meet at.
 *
 * A step belongs to one OpenMP team at a time. The team that ran the last step may enter the next
 * one at once (no gathering): each thread marks its number as inside the step, and checks that
 * the runtime still belongs to its team. A team that is new (or finds the runtime changed: first
 * step, tasks added or removed, another team size) gathers first: its threads meet at a barrier
 * whose last arrival prepares the step. A team arriving while another one gathers or has threads
 * inside a step is refused, and so is a thread whose number is already inside (a second team of
 * the same shape). The barriers are the library's own, not `#pragma omp barrier`, so that a team
 * that never arrives — LBOMP_FOR_EACH_TASK inside `single` or `master`, where the other threads
 * wait elsewhere — is detected by a watchdog and refused instead of hanging: at the gathering,
 * and at the end of a step entered without gathering, where the watchdog breaks the barrier only
 * while some thread of the team has not entered the step (a thread still running its tasks is
 * waited for however long it takes). Once refused that way the runtime is poisoned: every later
 * step is refused at once with the same message. Below it: error and clock only.
 */
#ifndef LBOMP_TEAM_H
#define LBOMP_TEAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct lbomp__barrier {
        _Alignas(LBOMP__CACHELINE) _Atomic uint32_t count;
        _Atomic uint64_t sum; /* added to by arriving threads, read by the serial part: it comes
                                 with the line every arrival touches anyway */
        _Atomic uint32_t sleepers; /* waiters in futex_wait (or about to be): the release makes
                                      its system call only when there are any */
        /* marks of the arriving threads (lbomp__barrier_mark), on the same line: */
        _Atomic uint64_t ends;     /* Σ of their ends, ticks */
        _Atomic uint64_t last_end; /* the latest of them */
        _Atomic uint64_t stolen;   /* Σ of their time in stolen tasks, ticks */
        _Alignas(LBOMP__CACHELINE) _Atomic uint32_t phase; /* futex word: 4 * generation (+1:
                                                               broken, +2: its serial part
                                                               runs) */
        _Atomic uint64_t word; /* written by the serial part, read by the waiters after the
                                  release (relaxed: the release orders it): it comes with the
                                  line every waiter reads anyway */
};

/*
 * Every one of n threads calls it. The last to arrive runs serial(arg), if given, before anyone
 * leaves, so the serial part sees every thread's writes and every thread sees its writes. With
 * timeout_s > 0 a thread that has waited that long without the team arriving breaks the barrier:
 * every waiter, and every thread arriving later, returns -ETIMEDOUT (*arrived, when not NULL,
 * says how many had arrived). Once all n arrived it no longer breaks: a serial part that began
 * completes its generation, and one the break came before does not run. A waiter spins briefly (a
 * few polls when `oversubscribed`: its spin would take the core from the thread it waits for),
 * then sleeps. Returns 0 or -ETIMEDOUT.
 */
int lbomp__barrier_wait(struct lbomp__barrier *b, uint32_t n, double timeout_s, bool oversubscribed,
                        void (*serial)(void *), void *arg, uint32_t *arrived);
/*
 * The same with a watchdog of the caller's: a waiter that sleeps calls stuck(warg, seconds
 * waited) every 50 ms; when it returns true, the barrier breaks as at a timeout.
 */
int lbomp__barrier_wait_watched(struct lbomp__barrier *b, uint32_t n, bool oversubscribed,
                                void (*serial)(void *), void *arg, uint32_t *arrived,
                                bool (*stuck)(void *warg, double waited_s), void *warg);
/* Before arriving: adds v to the sum the serial part of this generation reads. */
static inline void lbomp__barrier_add(struct lbomp__barrier *b, uint64_t v)
{
        /* Relaxed: the arrival (acq_rel) that follows carries it to the last thread. */
        atomic_fetch_add_explicit(&b->sum, v, memory_order_relaxed);
}
/* In the serial part: the sum of this generation (the next one starts from 0). */
static inline uint64_t lbomp__barrier_take(struct lbomp__barrier *b)
{
        uint64_t v = atomic_load_explicit(&b->sum, memory_order_relaxed);
        if (v)
                atomic_store_explicit(&b->sum, 0, memory_order_relaxed);
        return v;
}
/* Before arriving: when this thread's work ended and its time in stolen tasks (ticks), for the
 * serial part of this generation (lbomp__barrier_take_marks). The line is the one the arrival
 * takes anyway; the maximum is a compare-and-swap only while this end is the latest so far. */
static inline void lbomp__barrier_mark(struct lbomp__barrier *b, uint64_t end, uint64_t stolen)
{
        atomic_fetch_add_explicit(&b->ends, end, memory_order_relaxed);
        uint64_t m = atomic_load_explicit(&b->last_end, memory_order_relaxed);
        while (end > m &&
               !atomic_compare_exchange_weak_explicit(&b->last_end, &m, end, memory_order_relaxed,
                                                      memory_order_relaxed))
                ;
        if (stolen)
                atomic_fetch_add_explicit(&b->stolen, stolen, memory_order_relaxed);
}
/* In the serial part: this generation's marks (the next one starts from none). */
static inline void lbomp__barrier_take_marks(struct lbomp__barrier *b, uint64_t *ends,
                                             uint64_t *last_end, uint64_t *stolen)
{
        *ends = atomic_load_explicit(&b->ends, memory_order_relaxed);
        *last_end = atomic_load_explicit(&b->last_end, memory_order_relaxed);
        *stolen = atomic_load_explicit(&b->stolen, memory_order_relaxed);
        atomic_store_explicit(&b->ends, 0, memory_order_relaxed);
        atomic_store_explicit(&b->last_end, 0, memory_order_relaxed);
        if (*stolen)
                atomic_store_explicit(&b->stolen, 0, memory_order_relaxed);
}
/* Makes a broken or unused barrier whole again. Only while no thread is in it. */
void lbomp__barrier_reset(struct lbomp__barrier *b);

enum { LBOMP__TEAM_IDLE = 0, LBOMP__TEAM_GATHERING = 1, LBOMP__TEAM_RUNNING = 2 };

/* One per thread number: the step that thread is inside (step number + 1), 0 when out. */
struct lbomp__inside {
        _Alignas(LBOMP__CACHELINE) _Atomic uint64_t step;
};

struct lbomp__team {
        struct lbomp__barrier gather; /* the gathering of a new team */
        struct lbomp__barrier bar;    /* the end of a step, and the LB step's rounds */
        /* team key << 2 | IDLE, GATHERING or RUNNING: the team that may enter without gathering
         * (RUNNING stays between steps; a new team takes it over by gathering) */
        _Atomic uint64_t state;
        struct lbomp__inside *in; /* [LBOMP__MAX_WORKERS] by thread number */
        _Atomic uint32_t hi;      /* 1 + the highest thread number that ever entered */
        _Atomic int poison;       /* 0, or the error every later step is refused with */
        pthread_mutex_t lock;     /* the poisoning (cold) */
        char poison_msg[640];
};

/* Ready for a first step. 0 or -ENOMEM. */
int lbomp__team_init(struct lbomp__team *t);
void lbomp__team_destroy(struct lbomp__team *t);

/* This thread's team, at nesting level `level` (omp_get_level()): the level and the ancestor
 * thread numbers, never 0. */
uint64_t lbomp__team_key(int level);

/*
 * Thread `self` of team `key` (n threads) enters the step whose tag is `tag` (step number + 1).
 * With *gather false it first tries to enter at once: it may when its team ran the last step.
 * Returns 0 with *gather telling whether it must gather (lbomp__barrier_wait on t->gather, whose
 * serial part calls lbomp__team_run) — it then marked itself inside; or -EBUSY (another team
 * gathers or runs a step, or this thread number is already inside: a second team of the same
 * shape), with the runtime poisoned and the message set; or the poison of an earlier refusal. On
 * a refusal the thread is not inside.
 */
int lbomp__team_enter(struct lbomp__team *t, uint64_t key, uint32_t self, uint32_t n, uint64_t tag,
                      bool *gather);
/* The gathering of n threads for the step tagged `tag` is over (in the serial part of its
 * barrier): they run the step, and the team may enter later steps without gathering. */
void lbomp__team_run(struct lbomp__team *t, uint32_t n, uint64_t tag);
/* Thread `self` is out of its step (also after a refusal at a barrier). */
void lbomp__team_leave(struct lbomp__team *t, uint32_t self);
/* Ends a gathering that will not run (its serial part failed): the next step gathers again. */
void lbomp__team_abort(struct lbomp__team *t);
/* Whether a step gathers or has threads inside now (what setters and task calls refuse to run
 * under). */
bool lbomp__team_busy(const struct lbomp__team *t);
/* Whether thread number `self` is inside the step tagged `tag`. */
bool lbomp__team_is_in(const struct lbomp__team *t, uint32_t self, uint64_t tag);
/* How many of thread numbers 0..n-1 are inside the step tagged `tag`. */
uint32_t lbomp__team_entered(const struct lbomp__team *t, uint32_t n, uint64_t tag);

/* Poisons the runtime with err and a message (the first one wins, printed once); returns err. */
int lbomp__team_poison(struct lbomp__team *t, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* 0, or the poison; sets the calling thread's last error to its message. */
int lbomp__team_poisoned(struct lbomp__team *t);

#endif
