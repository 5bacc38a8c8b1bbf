/*
 * team.h — who is in a step, and the barrier they meet at.
 *
 * A step belongs to one OpenMP team at a time. A thread entering a step says which team it is in
 * (nesting level, ancestors, its number); a team arriving while another one gathers or runs a step
 * of the same runtime is refused, and so is a thread whose number is already there (a second team
 * with the same shape). The barrier is the library's own, not `#pragma omp barrier`, so that a
 * team that never arrives — LBOMP_FOR_EACH_TASK inside `single` or `master`, where the other
 * threads wait elsewhere — is detected by a watchdog and refused instead of hanging. Once refused
 * that way the runtime is poisoned: every later step is refused at once with the same message.
 * Below it: error and clock only.
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
        _Alignas(LBOMP__CACHELINE) _Atomic uint32_t phase; /* futex word: 2 * generation (+1:
                                                               broken) */
};

/*
 * Every one of n threads calls it. The last to arrive runs serial(arg), if given, before anyone
 * leaves, so the serial part sees every thread's writes and every thread sees its writes. With
 * timeout_s > 0 a thread that has waited that long without the team arriving breaks the barrier:
 * every waiter, and every thread arriving later, returns -ETIMEDOUT (*arrived, when not NULL,
 * says how many had arrived). A waiter spins briefly (a few polls when `oversubscribed`: its spin
 * would take the core from the thread it waits for), then sleeps. Returns 0 or -ETIMEDOUT.
 */
int lbomp__barrier_wait(struct lbomp__barrier *b, uint32_t n, double timeout_s, bool oversubscribed,
                        void (*serial)(void *), void *arg, uint32_t *arrived);
/* Makes a broken or unused barrier whole again. Only while no thread is in it. */
void lbomp__barrier_reset(struct lbomp__barrier *b);

enum { LBOMP__TEAM_IDLE = 0, LBOMP__TEAM_GATHERING = 1, LBOMP__TEAM_RUNNING = 2 };

struct lbomp__team {
        struct lbomp__barrier bar;
        _Atomic uint64_t state;  /* team key << 2 | IDLE, GATHERING or RUNNING */
        _Atomic uint32_t inside; /* threads of the running step not yet out of it */
        _Atomic uint64_t seen[LBOMP__MAX_WORKERS / 64]; /* thread numbers at the gathering step */
        _Atomic int poison;   /* 0, or the error every later step is refused with */
        pthread_mutex_t lock; /* the poisoning (cold) */
        char poison_msg[640];
};

/* Ready for a first step. */
void lbomp__team_init(struct lbomp__team *t);
void lbomp__team_destroy(struct lbomp__team *t);

/* This thread's team: nesting level and ancestor thread numbers, never 0. */
uint64_t lbomp__team_key(void);

/*
 * A thread of team `key`, number `self` of a team of n, enters a step: 0, or -EBUSY when another
 * team gathers or runs a step (or this thread number is already there: a second team of the same
 * shape), with the runtime poisoned and the message set; or the poison of an earlier refusal.
 */
int lbomp__team_enter(struct lbomp__team *t, uint64_t key, uint32_t self, uint32_t n);
/* The gathering is over (in the serial part of the first barrier): the step runs with n threads.
 */
void lbomp__team_run(struct lbomp__team *t, uint32_t n);
/* A thread is out of the running step; the last one out ends it. */
void lbomp__team_leave(struct lbomp__team *t);
/* Ends a gathering that will not run (its serial part failed): nobody will call leave. */
void lbomp__team_abort(struct lbomp__team *t);
/* Whether a step gathers or runs now (what setters and task calls refuse to run under). */
bool lbomp__team_busy(const struct lbomp__team *t);

/* Poisons the runtime with err and a message (the first one wins, printed once); returns err. */
int lbomp__team_poison(struct lbomp__team *t, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* 0, or the poison; sets the calling thread's last error to its message. */
int lbomp__team_poisoned(struct lbomp__team *t);

#endif
