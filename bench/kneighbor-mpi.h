/*
 * kneighbor-mpi.h — what the two files of kneighbor-mpi share: the run's state (options, this
 * rank's tasks, the ghost lists) and the results (kneighbor-mpi-result.c: checksum, JSON).
 */
#ifndef LBOMP_BENCH_KNEIGHBOR_MPI_H
#define LBOMP_BENCH_KNEIGHBOR_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench.h"
#include "kneighbor.h"
#include "lbomp_mpi.h"

#define TAG_HALO 0x4b4e

struct mopts {
        struct kn_opts kn;
        const char *rank_policy; /* NULL: LBOMP_MPI_POLICY or the default */
        long rank_period;        /* -1: LBOMP_MPI_PERIOD or auto; 0: auto */
        int place_first;         /* every task starts on rank 0 */
        long fail_pack;          /* -1, or a task whose pack callback fails (tests) */
};

struct ktask;

struct nbsrc { /* where neighbour slot j reads from in this epoch */
        struct ktask *local;
        const double *ghost;
};

struct ktask {
        long i;
        long runs; /* steps it ran: moves with it, so exactly-once holds across ranks */
        double *data, *out[2], *in;
        struct nbsrc *nb; /* [2k] */
};

struct peer { /* another rank this one exchanges ghosts with */
        int rank;
        struct ktask **send; /* our tasks whose outbox it needs, in gid order */
        lbomp_gid_t *recv;   /* its tasks whose outbox we need, in gid order */
        uint32_t nsend, nrecv;
        double *sbuf, *rbuf;
};

struct app {
        struct mopts o;
        int rank, size;
        long n, k, step;
        size_t nd;
        lbomp_t *lb;
        lbomp_mpi_t *m;
        uint64_t epoch;
        bool built;
        lbomp_gid_t *gids;
        struct ktask **local;
        size_t nlocal;
        struct peer *peer;
        int npeer;
        int *peer_of;     /* [size]: index into peer, or -1 */
        MPI_Request *req; /* [2 size] */
        uint64_t ghost_msgs, ghost_bytes;
};

/* kneighbor-mpi-result.c. On rank 0: kneighbor's checksum over every task's data, in task order,
 * and whether every task is on exactly one rank and ran `steps` times. Collective. */
int kmpi_checksum(struct app *a, long steps, double *sum, int *once);
/* Collective: the figures of every rank; rank 0 prints the report or the JSON line. */
void kmpi_report(struct app *a, double total_s, double step_med, double sum, int once);
/* Prints what failed (with lbomp's message) and aborts the job. */
int kmpi_fail(const struct app *a, const char *what, int rc);

#endif
