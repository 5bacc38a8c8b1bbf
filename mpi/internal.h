/*
 * internal.h — what the files of liblbomp-mpi share: the handle, the sparse MPI exchange
 * (xport.c), the rank-level plan (rankplan.c), moving tasks between ranks (move.c), the rank level
 * of each LB step (ranklevel.c), errors (error.c) and the one reader of the runtime's measured
 * costs (rtcost.c). The public entry points are in lbomp_mpi.c, directory.c and ranklevel.c.
 */
#ifndef LBOMP_MPI_INTERNAL_H
#define LBOMP_MPI_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lbomp_mpi.h"
#include "policy.h"

#define NOLOCAL UINT32_MAX /* local_of[gid]: not on this rank */
#define NOGID   UINT32_MAX /* task[id].gid: a local-only task */

/* ---------------------------------------------------------------------------------------------
 * xport.c: point-to-point messages of one phase, and the counters of everything lbomp sends
 */

struct lbomp__xport {
        MPI_Comm comm;
        int rank, size;
        struct xout *out; /* sends of the phase in flight */
        size_t nout, outcap;
        unsigned char *rbuf;
        size_t rcap;
        uint64_t msgs, bytes, colls; /* totals of this rank */
};

/* Copies hdr[0 .. hlen) + data[0 .. len) into one message to `to` with `tag`, sent now (synchronous
 * mode: it completes once matched). 0 or -ENOMEM. */
int lbomp__xp_send(struct lbomp__xport *x, int to, int tag, const void *hdr, size_t hlen,
                   const void *data, size_t len);
/* The same with a message the caller built: buf (malloc'ed, len bytes) is the xport's now, freed
 * on failure too. 0, -EINVAL (over 2 GiB), -ENOMEM. */
int lbomp__xp_send_owned(struct lbomp__xport *x, int to, int tag, void *buf, size_t len);
/* Ends the phase (collective): every message sent in it by any rank with `tag` is received and
 * handed to on_recv(arg, from, buf, len); returns once all are, everywhere (the NBX algorithm of
 * Hoefler et al.: synchronous sends, then a non-blocking barrier once ours are matched). Returns 0
 * or the first error of on_recv (the others are still received). */
int lbomp__xp_exchange(struct lbomp__xport *x, int tag,
                       int (*on_recv)(void *arg, int from, const void *buf, size_t len), void *arg);
/* Counted collectives. */
void lbomp__xp_coll(struct lbomp__xport *x);
void lbomp__xp_free(struct lbomp__xport *x);

/* ---------------------------------------------------------------------------------------------
 * rankplan.c: the rank-level snapshot and its plan
 */

/* This rank's movable tasks, by position i (ascending gid), as the plan sees them. */
struct lbomp__rtasks {
        uint32_t n;
        const lbomp_gid_t *gid;
        const double *cost;     /* seconds per step, divided by the rank's workers */
        const uint64_t *bytes;  /* the runtime's data bytes (locality model) */
        const uint32_t *lk_off; /* [n + 1] links of task i: lk_gid[lk_off[i] .. lk_off[i+1]) */
        const lbomp_gid_t *lk_gid;
        const double *lk_bytes;
        double bg; /* load of the rank's tasks that cannot move */
};

struct lbomp__rplan_in {
        const struct lbomp__policy *policy;
        const struct lbomp__rtasks *own;
        const int32_t *owner; /* directory [ngid] */
        uint32_t ngid;
        uint64_t seed, lb_step;
        const struct lbomp__params *params;
};

/*
 * Collective: the plan of the rank level, dest[i] = the rank own->gid[i] goes to. A decentralized
 * policy runs on the ranks through the round engine (mailbox.h) with MPI as its transport; a
 * centralized one on rank 0 over the gathered tasks. st gets the policy's figures summed over
 * ranks (messages, packs, ...) and the run's rounds and span. Returns 0 or the same negative errno
 * on every rank (then dest keeps every task home).
 */
int lbomp__rank_plan(struct lbomp__xport *x, const struct lbomp__rplan_in *in, int32_t *dest,
                     struct lbomp__pstats *st);
/*
 * Collective: the whole rank-level snapshot on rank 0 (tasks in gid order, links in (min, max)
 * order: the snapshot every rank's local view is a part of), with `where[k]` the position of task
 * k in its rank's own list and `from[k]` that rank. On other ranks *out is NULL. Used by the
 * centralized plan and by the tests that compare a decentralized run with the virtual one.
 * 0 or -ENOMEM (the same on every rank).
 */
struct lbomp__rglobal {
        struct lbomp__snapbuf *sb;
        const struct lbomp__snap *s;
        uint32_t *where;
        double dist;
};
int lbomp__rank_gather(struct lbomp__xport *x, const struct lbomp__rplan_in *in,
                       struct lbomp__rglobal **out);
void lbomp__rank_global_free(struct lbomp__rglobal *g);

/* ---------------------------------------------------------------------------------------------
 * The handle
 */

struct lbomp__mlink {
        lbomp_gid_t gid;
        double bytes;
};

struct lbomp__mtask {    /* by local id */
        lbomp_gid_t gid; /* NOGID: local-only, or removed */
        void *data;
        uint64_t bytes;
        struct lbomp__mlink *lk;
        uint32_t nlk, lkcap;
};

struct lbomp_mpi {
        lbomp_t *lb;
        struct lbomp__xport x;
        lbomp_mpi_pup_t pup;
        const struct lbomp__policy *policy;
        int period; /* 0: auto */
        /* tasks of this rank */
        struct lbomp__mtask *t;
        uint32_t tcap;
        uint32_t *local_of; /* [gcap] by gid */
        uint32_t gcap;
        uint32_t nlocal; /* tasks with a gid here */
        /* the directory: owner[gid] (-1: none) for gid < ngid, the same on every rank */
        int32_t *owner;
        uint32_t ngid;
        /* changes not announced yet */
        lbomp_gid_t *added, *removed;
        uint32_t nadded, nremoved, addcap, remcap;
        bool committed;
        /* schedule */
        uint64_t steps;  /* collective steps counted by sync */
        uint64_t checks; /* LB steps seen */
        size_t lb_seen;  /* the runtime's LB records when last looked */
        uint64_t epoch;
        /* records */
        lbomp_mpi_lb_stats_t *rec;
        size_t nrec, reccap;
};

/* move.c */
/* Collective: moves task at local id ids[i] to rank to[i] (i < n). `failed` gets the global count
 * of tasks that stayed because pack or unpack failed; `moved`/`bytes` the global moves and packed
 * bytes; `err` the first error on any rank (0 if none). 0 or -ENOMEM (everywhere). */
struct lbomp__move_result {
        uint32_t moved, pack_failures, unpack_failures;
        uint64_t bytes;
        int err;
};
int lbomp__mpi_move(struct lbomp_mpi *m, uint32_t n, const uint32_t *ids, const int32_t *to,
                    struct lbomp__move_result *res);
/* Local: a task with a gid gets a local id (the task table grows). 0 or -ENOMEM. */
int lbomp__mpi_track(struct lbomp_mpi *m, lbomp_id_t id, lbomp_gid_t gid, void *data,
                     uint64_t bytes);
/* Local: forgets local id id (its gid mapping and links). */
void lbomp__mpi_forget(struct lbomp_mpi *m, lbomp_id_t id);
/* Local: room for gid in local_of / owner. 0 or -ENOMEM. */
int lbomp__mpi_gid_room(struct lbomp_mpi *m, lbomp_gid_t gid);
/* Local: appends a link half to local task id (repeated pairs add up). 0 or -ENOMEM. */
int lbomp__mpi_add_link(struct lbomp_mpi *m, lbomp_id_t id, lbomp_gid_t other, double bytes);

/* ranklevel.c: after the runtime's LB step (collective): reduce, and balance when due. 0 or the
 * same negative errno on every rank. init/fini around the life of every handle. */
int lbomp__rank_level(struct lbomp_mpi *m);
void lbomp__rank_level_init(void);
void lbomp__rank_level_fini(void);

/* error.c: the calling thread's last message, also on stderr with print. */
void lbomp__mpi_error(const struct lbomp_mpi *m, bool print, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* rtcost.c: the costs the runtime measured over the window its last LB step closed. */
struct lbomp__rtcost {
        bool fresh;         /* an LB step ran since *seen and the task set is unchanged since */
        uint64_t step;      /* the step after which it ran */
        int workers;        /* the runtime's workers */
        uint32_t n;         /* tasks in it */
        const uint32_t *id; /* [n] local ids */
        const double *cost; /* [n] seconds per step */
};
void lbomp__rt_costs(lbomp_t *lb, size_t *seen, struct lbomp__rtcost *c);
/* From now on every LB step of the runtime measures its tasks and builds its snapshot, also under
 * its policy none or when it is balanced (the rank level reads the costs). */
void lbomp__rt_want_costs(lbomp_t *lb);
/* The runtime's parameters of the policies (tolerance, fanout, retries) and seed. */
const struct lbomp__params *lbomp__rt_params(const lbomp_t *lb);
uint64_t lbomp__rt_seed(const lbomp_t *lb);

#endif
