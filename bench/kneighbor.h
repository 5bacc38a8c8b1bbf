/*
 * kneighbor.h — the kNeighbor workload and the result record every lbomp benchmark prints.
 * The workload (kn_*) is shared with the other benchmarks and the tests; bench_json.c prints the
 * JSON contract that the runner and the issues read.
 */
#ifndef LBOMP_BENCH_KNEIGHBOR_H
#define LBOMP_BENCH_KNEIGHBOR_H

#include <stddef.h>
#include <stdio.h>

#include "lbomp.h"

/* Iterations of the kernel per microsecond of a reference core (about 600 on the development
 * machine): a constant, so that the checksum does not depend on the machine. */
#define WORK_PER_US 500.0

struct kn_opts {
        long tasks, k, msg_bytes, iters, period, work_us, threads, seed;
        const char *load;
        const char *policy;
        int json;
};

struct kn;

struct kn_task {
        long i;
        struct kn *kn;
        double *data;   /* msg_bytes / 8 doubles of state */
        double *out[2]; /* what the neighbours read: written at step s into out[s & 1] */
        double *in;     /* 2k received messages */
        long runs;      /* times the task ran (atomic): exactly once per step is checked */
};

struct kn {
        struct kn_opts o;
        size_t nd;
        struct kn_task *task;
};

struct kn_result {
        double total_s, step_s_median, checksum;
        double imbalance_first, imbalance_last, decision_s;
        double locality_first, locality_last;
        double move_cost;          /* Σ over LB steps of the move cost */
        unsigned long long stolen; /* tasks run by another worker than their owner */
        int exactly_once;          /* 1: every task ran exactly once in every step */
        unsigned long long lb_steps, migrations, messages;
        double energy_j;         /* packages over the run (RAPL), NAN when unavailable */
        const char *energy_note; /* the reason when unavailable, else the reader's note */
};

int kn_parse(struct kn_opts *o, int argc, char **argv);
double kn_load_factor(const char *load, long i, long n, long s);
int kn_setup(struct kn *kn, const struct kn_opts *o);
void kn_free(struct kn *kn);
void kn_task_step(struct kn_task *t, long step);
double kn_checksum(const struct kn *kn);
double kn_median(double *v, long n);

/* bench_json.c */
void kn_result_from_lbomp(struct kn_result *r, const lbomp_t *lb);
void kn_print_json(FILE *out, const char *bench, const struct kn_opts *o, const struct kn_result *r,
                   const lbomp_t *lb);

#endif
