/*
 * mailbox.h — how decentralized policies run: every worker executes the policy's round function,
 * the framework delivers the messages sent in round r at round r + 1 and detects when no message
 * is in flight. The same code runs on the OpenMP team at the barrier (live) and on virtual workers
 * stepped in rounds by one thread (tests, simulator).
 *
 * This header is the framework-facing half (what the LB step and policy/offline.c call). The
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
 * Live: called by every thread of the team with its own worker id and the same barrier, which
 * must run serial(sarg) on one thread (the last to arrive) while the others wait, and make every
 * thread's writes before it visible to every thread after it: one barrier per round. Returns the
 * same value on every thread: 0, or the first error a round function returned.
 */
typedef void (*lbomp__serial_barrier_fn)(void *arg, void (*serial)(void *sarg), void *sarg);
int lbomp__dec_run_serial(struct lbomp__dec *d, uint32_t self, lbomp__serial_barrier_fn barrier,
                          void *arg);

/* Virtual workers: one thread steps every worker, round by round. Same return values. */
int lbomp__dec_run_virtual(struct lbomp__dec *d);

/* One thread, after a run: messages, rounds, span and the policy's counters. */
void lbomp__dec_stats(const struct lbomp__dec *d, struct lbomp__pstats *st);

/*
 * The same with a plain barrier (two per round: one thread closes the round between them), for
 * threads that have nothing better, such as the ThreadSanitizer stress test's pthread barrier.
 */
int lbomp__dec_run_threads(struct lbomp__dec *d, uint32_t self, void (*barrier)(void *arg),
                           void *arg);

/*
 * Workers in other processes (liblbomp-mpi). This process holds one worker, `self`, of the run's
 * nworkers; the others live elsewhere and are reached through a transport. A message to another
 * worker goes to t->send (during the round, from the thread running the local worker); after the
 * local worker's round, t->close must deliver, with lbomp__dec_deliver(), every message the other
 * workers sent to `self` in that round, and fill sum[0..nworkers) with every worker's summary of
 * the round (sum[self] arrives filled). Every process then closes the round with the same code and
 * the same summaries, so a run gives the plan the virtual run of the whole snapshot would. close
 * returns 0 or a negative errno, which must be the same in every process (it ends the run). `sum`
 * is the caller's, nworkers entries: a run allocates nothing that could fail in one process only.
 * Returns what lbomp__dec_run_virtual() returns.
 */
struct lbomp__dec_wsum {
        uint64_t sent;                /* messages of the round */
        uint32_t kind_mask, red_mask; /* kinds sent, collective slots contributed to */
        int32_t rc;                   /* the round function's return */
        uint32_t quiet_asked;         /* asked lbomp__dc_quiet() */
        double t_round;               /* seconds in the round */
        double red_v[8];              /* contributions (LBOMP__RED_SLOTS) */
        uint8_t red_op[8];            /* their operations */
};
struct lbomp__dec_transport {
        void *arg;
        int (*send)(void *arg, uint32_t to, uint32_t seq, uint32_t kind, const void *data,
                    size_t len);
        int (*close)(void *arg, struct lbomp__dec *d, struct lbomp__dec_wsum *sum);
};
int lbomp__dec_run_remote(struct lbomp__dec *d, uint32_t self, const struct lbomp__dec_transport *t,
                          struct lbomp__dec_wsum *sum);
/* From t->close: a message of this round from worker `from` to the local worker. 0, -EINVAL,
 * -ENOMEM. */
int lbomp__dec_deliver(struct lbomp__dec *d, uint32_t from, uint32_t seq, uint32_t kind,
                       const void *data, size_t len);

/* ---- policy-facing half: see mailbox.c ---- */

/*
 * Rules a round function lives by. It is called once per round for every worker, from any thread;
 * it may touch only its own state, the snapshot (read-only), dest[] of the tasks it holds, and the
 * calls below with its own `self`. Everything it decides must follow from the snapshot, its state,
 * its inbox, its random numbers and the collective results, so that live and virtual runs of the
 * same snapshot and seed give the same plan.
 */

#define LBOMP__RED_SLOTS  8        /* values one collective may combine */
#define LBOMP__MAX_ROUNDS 1000000u /* a run still going after this many rounds is a policy bug */

/* A delivered message: sent in the previous round, valid until the receiver's round returns. */
struct lbomp__msg {
        uint32_t from;    /* sender */
        uint32_t seq;     /* position among the sender's sends of its round */
        uint32_t kind;    /* index into the policy's msg_kinds */
        uint32_t len;     /* bytes of data */
        const void *data; /* aligned for any scalar type */
};

/* The snapshot and the plan of this run; the policy writes dest[t] only for its own tasks. */
const struct lbomp__snap *lbomp__dc_snap(const struct lbomp__dctx *dc);
uint32_t *lbomp__dc_dest(struct lbomp__dctx *dc);
/* Round number of the call in progress (0 for the first). */
uint32_t lbomp__dc_round(const struct lbomp__dctx *dc);
/* True in lbomp__dec_run_remote: the other workers are other processes, each with a snapshot of
 * its own, so a task index means nothing beyond this worker and a task can only leave the worker
 * whose snapshot holds it. */
bool lbomp__dc_remote(const struct lbomp__dctx *dc);

/*
 * Sends `len` bytes to worker `to` (itself allowed), delivered at the next round. `kind` <
 * LBOMP__MSG_KINDS counts the message under the policy's name for it. 0, -EINVAL (bad worker or
 * kind), -ENOMEM.
 */
int lbomp__dc_send(struct lbomp__dctx *dc, uint32_t self, uint32_t to, uint32_t kind,
                   const void *data, size_t len);
/* The messages delivered to `self` this round, sorted by (from, seq); returns their count. */
size_t lbomp__dc_inbox(struct lbomp__dctx *dc, uint32_t self, const struct lbomp__msg **msgs);

/* The worker's own random numbers, seeded at prepare from the snapshot seed ^ (self spread over
 * 64 bits), so that every worker has its own stream and every seed its own set of streams. */
struct lbomp__rng *lbomp__dc_rng(struct lbomp__dctx *dc, uint32_t self);

/*
 * Zeroed memory private to `self`, aligned for any type, valid until the run ends (the framework
 * frees or reuses it at the next prepare, so a policy never frees it). NULL when out of memory.
 */
void *lbomp__dc_alloc(struct lbomp__dctx *dc, uint32_t self, size_t bytes);

/*
 * Collectives. A worker contributes `v` to `slot` in round r; the framework combines the
 * contributions of every worker that contributed to that slot in round r, in worker order (so
 * the result is the same live and virtual), and every worker reads it from round r + 1 on. Every
 * contributor of a slot must use the same op. A round with contributions counts as one collective,
 * charged ceil(log2 P) rounds (a reduction tree) in the rounds and the span.
 */
enum lbomp__red_op { LBOMP__RED_SUM, LBOMP__RED_MAX, LBOMP__RED_MIN };
void lbomp__dc_reduce(struct lbomp__dctx *dc, uint32_t self, unsigned slot, enum lbomp__red_op op,
                      double v);
/* Result of the last collective on `slot` (0 before any). */
double lbomp__dc_reduced(const struct lbomp__dctx *dc, unsigned slot);

/*
 * Quiescence detection: true when no message at all was sent in the previous round (false in
 * round 0). Every worker sees the same answer in a round. The first round in which it answers
 * true to anyone is charged as one collective, as the last wave of an asynchronous detector.
 */
bool lbomp__dc_quiet(struct lbomp__dctx *dc, uint32_t self);

/* The policy's own counters, summed over workers into the run's lbomp__pstats. */
enum lbomp__dc_counter {
        LBOMP__DC_REJECTED,  /* offers refused */
        LBOMP__DC_FORCED,    /* packs sent forced */
        LBOMP__DC_WITHDRAWN, /* packs that stayed home */
        LBOMP__DC_NCOUNT
};
void lbomp__dc_count(struct lbomp__dctx *dc, uint32_t self, enum lbomp__dc_counter c, uint32_t n);
/* One pack formed, of this cost (packs and pack_max of the run's lbomp__pstats). */
void lbomp__dc_count_pack(struct lbomp__dctx *dc, uint32_t self, double cost);

#endif
