/*
 * bench.h — what every lbomp benchmark shares: the common options (--policy, --baseline, --size,
 * --iters, --period, --threads, --seed, --json, --report-json), the driver that runs a workload's
 * kernel either through lbomp or through a plain OpenMP baseline, and the one-line JSON result.
 * A workload only describes its tasks (a user pointer, data bytes, links) and one step of a task;
 * the driver owns timing, λ, the report and the output, so every workload measures alike.
 */
#ifndef LBOMP_BENCH_BENCH_H
#define LBOMP_BENCH_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "lbomp.h"

/* Options every benchmark accepts. */
struct bench_opts {
        const char *policy;      /* NULL: LBOMP_POLICY or the library's default */
        const char *baseline;    /* NULL, or omp-static, omp-dynamic, omp-guided, omp-tasks */
        const char *size;        /* tiny, small, default, large: the workload's presets */
        const char *report_json; /* write lbomp_report_json (or the baseline's windows) here */
        long iters, period, threads, seed;
        int json;
};

/* A workload as the driver sees it. Task i is added to lbomp as id i, in order. */
struct bench_kernel {
        const char *bench; /* JSON "bench" */
        const char *load;  /* JSON "load": the workload's load pattern or shape */
        long k;            /* JSON "k": neighbours per task (the workload's meaning) */
        long ntasks;
        void *ctx;
        void *(*task)(void *ctx, long i);         /* the user pointer of task i */
        size_t (*bytes)(void *ctx, long i);       /* its data bytes (locality model) */
        int (*links)(void *ctx, lbomp_t *lb);     /* registers links with lbomp_link, or NULL */
        void (*step)(void *task, long step);      /* one step of one task */
        double (*checksum)(void *ctx);            /* after the run: independent of placement */
        void (*json_extra)(void *ctx, FILE *out); /* extra ",\"key\":value" pairs, or NULL */
};

struct bench_result {
        double total_s, step_s_median, checksum;
        double imbalance_first, imbalance_last, decision_s;
        double locality_first, locality_last;
        unsigned long long lb_steps, migrations, messages;
        double move_cost;                     /* Σ over LB steps of the move cost */
        unsigned long long stolen;            /* tasks run by another worker than their owner */
        unsigned long long steal_steps;       /* steps in which stealing was armed */
        unsigned long long steal_front_steps; /* of which some victim's front was taken */
        int exactly_once;                     /* 1: every task ran exactly once in every step */
        double energy_j;         /* packages over the run (RAPL), NAN when unavailable */
        const char *energy_note; /* the reason when unavailable, else the reader's note */
};

/* Sets the defaults (iters and period -1: the workload's preset and the library's default). */
void bench_opts_init(struct bench_opts *o);
/* Tries argv[*i] as a common option: 1 consumed (and *i advanced past its value), 0 not a common
 * option, -1 a bad value (message printed, naming the program, option and what is valid). */
int bench_opt(struct bench_opts *o, const char *prog, int argc, char **argv, int *i);
/* Whole-string integer in [lo, hi]; -1 with a message otherwise. */
int bench_parse_long(const char *prog, const char *opt, const char *s, long lo, long hi, long *out);
/* Whole-string number in [lo, hi]; -1 with a message otherwise. */
int bench_parse_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                       double *out);
/* Usage lines of the common options. */
void bench_usage_common(FILE *out);
/* Index of o->size in the presets tiny, small, default, large (0..3), -1 if unknown. */
int bench_size_index(const char *size);

/* Runs the kernel (o->iters steps) through lbomp or the chosen baseline, prints the result (the
 * JSON line with --json, a report otherwise) and writes --report-json. Returns the exit code. */
int bench_run(const struct bench_opts *o, const struct bench_kernel *k);

/* Deterministic helpers shared by the workloads. */
double bench_median(double *v, long n);
double bench_now_s(void);
/* Uniform [0, 1) from a 64-bit key (splitmix64): the same on every machine and placement. */
double bench_u01(unsigned long long key);
/* Charm++ lb_test cost factor: min + (max − min)·U⁴ for task i and the seed. */
double bench_lbtest_factor(unsigned long long seed, long i, double min, double max);
/* Burns `iters` iterations of the reference kernel over data[0..nd) and returns the
 * accumulator to fold back into the data (so the work cannot be optimised away). */
double bench_burn(const double *data, size_t nd, long iters);

#define BENCH_BASELINES "omp-static, omp-dynamic, omp-guided, omp-tasks"

#endif
