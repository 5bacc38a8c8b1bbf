/*
 * kneighbor.h — the kNeighbor workload (tasks on a ring exchanging messages with k neighbours on
 * each side), shared by the kneighbor benchmark and the overhead runs of bench/run. The driver
 * that runs it through lbomp or an OpenMP baseline and prints the JSON contract is in bench.h.
 */
#ifndef LBOMP_BENCH_KNEIGHBOR_H
#define LBOMP_BENCH_KNEIGHBOR_H

#include <stddef.h>
#include <stdio.h>

#include "bench.h"

/* Iterations of the kernel per microsecond of a reference core (about 600 on the development
 * machine): a constant, so that the checksum does not depend on the machine. */
#define WORK_PER_US 500.0

struct kn_opts {
        struct bench_opts c;
        long tasks, k, msg_bytes, work_us, drift_every;
        const char *load;
};

struct kn;

struct kn_task {
        long i;
        struct kn *kn;
        double *data;   /* msg_bytes / 8 doubles of state */
        double *out[2]; /* what the neighbours read: written at step s into out[s & 1] */
        double *in;     /* 2k received messages */
};

struct kn {
        struct kn_opts o;
        size_t nd;
        struct kn_task *task;
};

/* Parses argv (common options included) and fills the size's presets. -1 on a bad option. */
int kn_parse(struct kn_opts *o, int argc, char **argv);
/* Cost factor of task i at step s under o->load; -1 for an unknown pattern. */
double kn_load_factor(const struct kn_opts *o, long i, long s);
int kn_setup(struct kn *kn, const struct kn_opts *o);
void kn_free(struct kn *kn);
void kn_task_step(struct kn_task *t, long step);
double kn_checksum(const struct kn *kn);
/* The workload as the driver sees it (ids 0..tasks-1, links to the k next tasks). */
struct bench_kernel kn_kernel(struct kn *kn);

#endif
