/*
 * mpitest.h — what the MPI test cases share (mpitest.c): the test task (a busy loop of a given cost
 * and a blob of state of varying size) with its pack/unpack callbacks, a runtime per rank with
 * tasks placed and linked, and the checks every case makes: one holder per task and a directory
 * that agrees, exactly-once steps, results equal to a one-rank run.
 */
#ifndef LBOMP_TEST_MPITEST_H
#define LBOMP_TEST_MPITEST_H

#include <mpi.h>
#include <stdint.h>

#include "lbomp_mpi.h"

extern int rank, nranks;

struct ttask {
        lbomp_gid_t gid;
        long runs;
        uint32_t work; /* iterations of the busy loop per step: the task's cost */
        uint32_t nblob;
        double acc;
        unsigned char *blob; /* state of varying size, moved with the task */
};

struct env {
        lbomp_t *lb;
        lbomp_mpi_t *m;
        long fail_pack, fail_unpack; /* a gid whose callback fails, -1: none, -2: all */
        long released;
        long step;
};

extern struct env E;
extern const lbomp_mpi_pup_t pup;

/* The task's result after a step: what a one-rank run computes. */
double burn(double acc, uint32_t work, lbomp_gid_t gid, long step);
void run_task(void *data, lbomp_id_t id, void *arg);
struct ttask *task_new(lbomp_gid_t gid, uint32_t work, uint32_t nblob);
void task_free(struct ttask *t);
size_t t_size(const void *data, lbomp_gid_t gid, void *arg);
int t_pack(const void *data, lbomp_gid_t gid, void *buf, size_t len, void *arg);
/* A runtime per rank (OMP_NUM_THREADS workers) with LB period `period`, attached to
 * MPI_COMM_WORLD; tasks gid in [0, n) placed by place(), costing work(gid); a ring of links. */
void setup(long n, int (*place)(long gid, long n), uint32_t (*work)(long gid, long n), int period);
void teardown(void);
int place_block(long g, long n);
int place_first(long g, long n);
uint32_t work_hot_quarter(long g, long n);
/* One holder per task, every rank's directory agrees; returns the tasks on this rank. */
size_t check_directory(long n);
/* Steps from..from+steps-1; after each, every task ran exactly once per step so far. */
void run_steps(long from, long steps, long n);
/* Every task's result is a one-rank run's. */
void check_results(long n, long steps, uint32_t (*work)(long, long));
/* The records summed; the number that balanced and the lowest λ one of them predicted (each
 * plans from the costs its window measured: with more ranks than cores, under the sanitizers, one
 * window's noise put the last plan at 1.103). */
lbomp_mpi_lb_stats_t totals(uint32_t *balanced, double *pred_best);
/* got == want on every rank. */
void expect_all(int got, int want, const char *what);

#endif
