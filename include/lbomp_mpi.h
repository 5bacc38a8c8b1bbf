/*
 * lbomp_mpi.h — balancing tasks across the MPI ranks of a hybrid MPI+OpenMP program
 * (liblbomp-mpi, a library of its own so that liblbomp needs no MPI).
 *
 * Every rank keeps its own lbomp runtime (lbomp.h): its own OpenMP team, bound within the CPU set
 * the rank was given (mpirun's binding, taskset), balanced at every LB step as without MPI.
 * Attached to a communicator, the runtimes form a second level: tasks carry global ids, and after
 * the LB steps the ranks' loads are reduced and, when they differ, tasks move between ranks — each
 * as one MPI message of its state, packed and unpacked by the application's callbacks (as Charm++'s
 * PUP does). The rank-level policy is any lbomp policy: a decentralized one (packdrop, the default,
 * or distributed) runs on the ranks themselves, its gossip, offers and replies being MPI messages;
 * a centralized one (refine, greedy, ...) runs on rank 0 over the gathered loads. After a move,
 * every rank knows where every task lives (lbomp_mpi_task_rank), for the application's halo
 * exchanges.
 *
 * Error convention: as lbomp.h (0 or a negative errno; lbomp_strerror() names it); the full
 * message of the last failure on the calling thread is lbomp_mpi_last_error(). Messages that must
 * be seen unasked (a task that could not be packed) are also written to stderr, prefixed with
 * "lbomp-mpi: rank N:".
 *
 * Collective calls: lbomp_mpi_attach, lbomp_mpi_detach, lbomp_mpi_commit, lbomp_mpi_step,
 * lbomp_mpi_sync and lbomp_mpi_move must be called by every rank of the communicator, in the same
 * order, from the thread that initialized MPI, outside parallel regions (MPI_THREAD_FUNNELED is
 * enough: no OpenMP thread calls MPI). The other calls are local. A handle is used by one thread.
 *
 * Environment (read at lbomp_mpi_attach; the setters override it):
 *   LBOMP_MPI_POLICY   rank-level policy (default packdrop); any name of LBOMP_POLICY=help
 *   LBOMP_MPI_PERIOD   auto (default): reduce the loads at every LB step and balance the ranks
 *                      when λ of the ranks exceeds 1 + LBOMP_TOLERANCE; N >= 1: balance every N
 *                      LB steps whatever λ is
 * The rank level also follows the runtime's LBOMP_PERIOD, LBOMP_SEED, LBOMP_TOLERANCE,
 * LBOMP_FANOUT and LBOMP_RETRIES.
 */
#ifndef LBOMP_MPI_H
#define LBOMP_MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <lbomp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle: one runtime attached to a communicator. */
typedef struct lbomp_mpi lbomp_mpi_t;

/** Global task id, the same on every rank. Ids should be dense: every rank keeps a directory of
 * (largest id + 1) entries of 4 bytes. */
typedef uint32_t lbomp_gid_t;
#define LBOMP_GID_MAX 0x7fffffffu

/**
 * How a task's state moves (Charm++'s PUP). All run on the thread calling the collective, between
 * steps. `data` is the task's user pointer on the sending rank.
 */
typedef struct lbomp_mpi_pup {
        /** Bytes pack() writes for this task (may be 0). */
        size_t (*size)(const void *data, lbomp_gid_t gid, void *arg);
        /** Writes the task's state into buf[0 .. len), len being what size() said. Returns 0, or
         * a negative errno: then the task stays on its rank, the move goes on for the other tasks
         * and the error is reported (lbomp_mpi_lb_stats_t.pack_failures, .error, stderr). */
        int (*pack)(const void *data, lbomp_gid_t gid, void *buf, size_t len, void *arg);
        /** On the receiving rank: rebuilds the task from buf[0 .. len) and returns its new user
         * pointer, or NULL on failure (the task then stays on the sending rank). */
        void *(*unpack)(lbomp_gid_t gid, const void *buf, size_t len, void *arg);
        /** On the sending rank, once the receiver rebuilt the task: the old copy may be freed
         * (also for a duplicate dropped by lbomp_mpi_commit). May be NULL. */
        void (*release)(void *data, lbomp_gid_t gid, void *arg);
        void *arg;
} lbomp_mpi_pup_t;

/* ---------------------------------------------------------------------------------------------
 * Life cycle
 */

/**
 * Collective over `comm`: attaches the runtime `lb` of this rank (lbomp_create) to the
 * communicator (duplicated: lbomp's messages never meet the application's). `pup` gives the
 * callbacks (copied; size, pack and unpack must be set). The runtime's LBOMP_PERIOD must be the
 * same on every rank. Returns 0 and the handle in *out, -EINVAL (NULL argument, missing callback,
 * MPI not initialized or below MPI_THREAD_FUNNELED, periods that differ between ranks, a bad
 * LBOMP_MPI_* value: the message names it), -ENOENT (LBOMP_MPI_POLICY names no policy),
 * -ENOMEM. On error no rank keeps a handle.
 */
int lbomp_mpi_attach(lbomp_t *lb, MPI_Comm comm, const lbomp_mpi_pup_t *pup, lbomp_mpi_t **out);

/** Collective, before MPI_Finalize: frees the handle (not the runtime, nor the tasks' data).
 * Accepts NULL (then it is not collective). */
void lbomp_mpi_detach(lbomp_mpi_t *m);

/** Same as LBOMP_MPI_POLICY: the rank-level policy. Must be the same on every rank. -ENOENT if
 * unknown (the message lists the valid names). */
int lbomp_mpi_set_policy(lbomp_mpi_t *m, const char *name);
/** Same as LBOMP_MPI_PERIOD: 0 for auto, else balance the ranks every `lb_steps` LB steps
 * (1 to 10^9). Must be the same on every rank. -EINVAL otherwise. */
int lbomp_mpi_set_period(lbomp_mpi_t *m, int lb_steps);
/** The rank-level policy's name; the period (0: auto). */
const char *lbomp_mpi_get_policy(const lbomp_mpi_t *m);
int lbomp_mpi_get_period(const lbomp_mpi_t *m);

/* ---------------------------------------------------------------------------------------------
 * Tasks. Local calls, not allowed while a step of the runtime runs. The other ranks learn of
 * additions and removals at the next lbomp_mpi_commit (also made by the first lbomp_mpi_step or
 * sync, by lbomp_mpi_move, and by the rank level after every LB step).
 */

/**
 * Adds a task with global id `gid` (<= LBOMP_GID_MAX) to this rank's runtime (lbomp_task_add with
 * LBOMP_NODE_ANY); its local id goes to *id (may be NULL). A task added with lbomp_task_add()
 * directly has no global id: it counts in the rank's load but never leaves the rank.
 * Returns 0, -EINVAL (data NULL, gid too large), -EEXIST (gid already on this rank; a gid used on
 * two ranks is refused at the commit), -ENOMEM, and the errors of lbomp_task_add().
 */
int lbomp_mpi_task_add(lbomp_mpi_t *m, lbomp_gid_t gid, void *data, size_t bytes, lbomp_id_t *id);

/** Removes a task of this rank (lbomp_task_remove); its data is the application's. -ENOENT if
 * gid is not on this rank. */
int lbomp_mpi_task_remove(lbomp_mpi_t *m, lbomp_gid_t gid);

/**
 * Tasks a and b exchange `bytes` per step. Each rank keeps the halves of the links of its own
 * tasks and ignores the rest: declare a link on the ranks of both its ends (declaring every link
 * on every rank does that; a link declared where only one end lives is known to that end only).
 * Links move with their tasks. Returns 0, -EINVAL (a == b), -ENOMEM.
 */
int lbomp_mpi_link(lbomp_mpi_t *m, lbomp_gid_t a, lbomp_gid_t b, size_t bytes);

/* ---------------------------------------------------------------------------------------------
 * Steps
 */

/** Collective: announces the tasks added and removed since the last commit, so that every rank's
 * directory knows them. -EEXIST when a gid was added on two ranks: the higher rank drops its copy
 * (removes it from its runtime and calls release on its data) and every rank returns -EEXIST;
 * -ENOMEM. */
int lbomp_mpi_commit(lbomp_mpi_t *m);

/**
 * Collective: one step of the runtime (lbomp_step(lb, fn, arg), then lbomp_mpi_sync()). Returns
 * 0, the error of lbomp_step(), or that of lbomp_mpi_sync().
 */
int lbomp_mpi_step(lbomp_mpi_t *m, lbomp_task_fn fn, void *arg);

/**
 * Collective, after every step run in the application's own region (LBOMP_FOR_EACH_TASK): counts
 * the step and, after each LB step of the runtime (every LBOMP_PERIOD steps), reduces the ranks'
 * loads and balances the ranks when due. Every rank must call it after every step. Returns 0,
 * -EEXIST (see commit) or -ENOMEM, the same on every rank. A rank-level policy that fails is not
 * an error of the call (as in the runtime's LB step): nothing moves, the record's `error` says
 * why and rank 0 prints it. Nor is a task that could not be packed or unpacked: it stays where it
 * was and the record says so.
 */
int lbomp_mpi_sync(lbomp_mpi_t *m);

/**
 * Collective: moves tasks now, whatever the loads: this rank's tasks gid[i] to rank to[i] (n may
 * be 0; a task sent to its own rank stays). A task whose pack or unpack fails stays where it was;
 * *failed (when not NULL) receives how many did, over all ranks. Returns 0 on every rank, or the
 * same error on every rank: -EINVAL (on some rank, a task not on it or a rank out of range:
 * nothing moved), -ENOMEM.
 */
int lbomp_mpi_move(lbomp_mpi_t *m, size_t n, const lbomp_gid_t *gid, const int *to,
                   uint32_t *failed);

/* ---------------------------------------------------------------------------------------------
 * Where tasks live. Local calls; valid from the first commit on, until the next collective call.
 */

/** Rank of task gid, -ENOENT if no rank has it. */
int lbomp_mpi_task_rank(const lbomp_mpi_t *m, lbomp_gid_t gid);
/** User pointer of task gid when it is on this rank, else NULL. */
void *lbomp_mpi_task_data(const lbomp_mpi_t *m, lbomp_gid_t gid);
/** Global id of the local task `id` into *gid: 0, -ENOENT (no such task, or no global id). */
int lbomp_mpi_task_gid(const lbomp_mpi_t *m, lbomp_id_t id, lbomp_gid_t *gid);
/** The global ids of this rank's tasks, ascending, into gids[0 .. cap); returns how many there
 * are (which may exceed cap). */
size_t lbomp_mpi_local_tasks(const lbomp_mpi_t *m, lbomp_gid_t *gids, size_t cap);
/** Counts the collective calls that moved at least one task anywhere: when it changes, the
 * application rebuilds what depends on where tasks live (its halo lists). */
uint64_t lbomp_mpi_epoch(const lbomp_mpi_t *m);

/* ---------------------------------------------------------------------------------------------
 * Statistics: one record per LB step of the runtime (the same on every rank: global figures)
 */

typedef struct lbomp_mpi_lb_stats {
        uint64_t step;      /* the step after which the runtime's LB step ran (0-based) */
        const char *policy; /* rank-level policy, static string */
        int balanced;       /* 1: the policy ran; 0: the loads were only reduced */
        /* Loads: a rank's load is the CPU seconds per step of its tasks over the window (the
         * runtime's measurement) divided by its workers, so λ compares the ranks' step times. */
        double imbalance;       /* λ of the ranks: max load / average load */
        double imbalance_after; /* λ the plan predicts with the same costs */
        double max_load, avg_load;
        uint32_t migrations;      /* tasks that changed rank */
        uint64_t migrated_bytes;  /* their packed state */
        uint64_t messages;        /* the policy's messages (gossip, offers, replies) */
        uint32_t rounds;          /* the decentralized policy's rounds, collectives included */
        uint64_t mpi_messages;    /* point-to-point MPI messages: the policy's and the tasks' */
        uint64_t mpi_bytes;       /* their bytes */
        uint32_t collectives;     /* MPI collective calls (reductions, barriers, gathers) */
        double reduce_s;          /* this rank's time in the load reduction: on the last rank
                                     to arrive, what the collective costs; on the others, also
                                     the wait for that rank (the imbalance itself) */
        double decision_s;        /* plan, on the slowest rank */
        double migrate_s;         /* packing, sending, unpacking, directory: slowest rank */
        double total_s;           /* balanced: from the end of the reduction to the end of the
                                     moves, slowest rank; 0 otherwise */
        double span_s;            /* decentralized: Σ over rounds of the slowest rank's round */
        uint32_t pack_failures;   /* tasks whose pack (or size) callback failed: they stayed */
        uint32_t unpack_failures; /* tasks whose unpack failed on the receiver: they stayed */
        int error;                /* 0, or the first error (policy, pack, unpack) on any rank */
        int stale;                /* 1: some rank had no fresh costs (a broken step): skipped */
        uint64_t kind_messages[LBOMP_MSG_KINDS]; /* the policy's messages by kind */
        const char *kind_name[LBOMP_MSG_KINDS];  /* their names, static; NULL after the last */
} lbomp_mpi_lb_stats_t;

/** Number of records. */
size_t lbomp_mpi_lb_count(const lbomp_mpi_t *m);
/** Copies record i into *out (`size` = sizeof *out; fields are only added at the end). -ENOENT
 * if i is out of range, -EINVAL for NULL or size 0. */
int lbomp_mpi_lb_get(const lbomp_mpi_t *m, size_t i, lbomp_mpi_lb_stats_t *out, size_t size);
/** Totals of this rank since attach: point-to-point MPI messages and bytes sent by lbomp, and
 * collective calls (any pointer may be NULL). */
void lbomp_mpi_counters(const lbomp_mpi_t *m, uint64_t *messages, uint64_t *bytes,
                        uint64_t *collectives);
/** One line per record, then totals. Local call (the figures are global). */
int lbomp_mpi_report(const lbomp_mpi_t *m, FILE *out);
/** Full text of the last error of a lbomp_mpi call on the calling thread ("" when none). */
const char *lbomp_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LBOMP_MPI_H */
