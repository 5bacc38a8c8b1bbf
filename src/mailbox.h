/*
 * mailbox.h — how decentralized policies run: every worker executes the policy's round function,
 * the framework delivers the messages sent in round r at round r + 1 and detects when no message
 * is in flight. The same code runs on the OpenMP team at the barrier (live) and on virtual workers
 * stepped in rounds by one thread (tests, simulator).
 *
 * This header is the framework-facing half (what lbomp.c and the simulator call). The
 * policy-facing half (send, receive, reductions, per-worker random numbers) is declared below the
 * marker and implemented with it in mailbox.c.
 */
#ifndef LBOMP_MAILBOX_H
#define LBOMP_MAILBOX_H

#include "policy.h"

struct lbomp__dec; /* reusable across LB steps */

/* Returns NULL on allocation failure. */
struct lbomp__dec *lbomp__dec_create(uint32_t nworkers);
void lbomp__dec_destroy(struct lbomp__dec *d); /* accepts NULL */

/* One thread, before a run: binds the policy, snapshot and plan; resets every mailbox. */
int lbomp__dec_prepare(struct lbomp__dec *d, const struct lbomp__policy *p,
                       const struct lbomp__snap *s, uint32_t *dest);

/*
 * Live: called by every thread of the current OpenMP team (team size == nworkers) with its own
 * worker id; synchronizes with `#pragma omp barrier` between rounds. Returns the same value on
 * every thread: 0, or the first error a round function returned.
 */
int lbomp__dec_run_team(struct lbomp__dec *d, uint32_t self);

/* Virtual workers: one thread steps every worker, round by round. Same return values. */
int lbomp__dec_run_virtual(struct lbomp__dec *d);

/* One thread, after a run: messages, rounds, span and the policy's counters. */
void lbomp__dec_stats(const struct lbomp__dec *d, struct lbomp__pstats *st);

/* Centralized or decentralized, on virtual workers: the simulator's and the tests' entry point. */
int lbomp__policy_run_offline(const struct lbomp__policy *p, const struct lbomp__snap *s,
                              uint32_t *dest, struct lbomp__pstats *st);

/* ---- policy-facing half: see mailbox.c ---- */

#endif
