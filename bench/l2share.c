/*
 * l2share.c — do two CPUs share their caches? One thread on each CPU (pinned); in each round the
 * first writes a buffer, reads it once (its own lines, hot), then the second writes the same
 * buffer and the first reads it again (lines the other CPU just wrote). Where the two CPUs share
 * their L1/L2 (SMT siblings of one core) the second read costs what the first does; where each
 * has its own L2, every line comes over from the other core (or the shared L3). It prints the
 * median of both reads over the rounds, per line, and their ratio (bench/README gives what each
 * face of this machine shows).
 *
 * Why: this development machine is a 2-vCPU virtual machine whose vCPUs the hypervisor places
 * either on two cores or on the two hardware threads of one core, and changes it over hours
 * (bench/README, "The two faces of this machine"). What persistence buys on a loop that streams
 * its own data depends on it: nothing to keep in a core's L2 that the other shares.
 * Usage: l2share [CPU_A CPU_B [KIB [ROUNDS]]]   (default 0 1 256 201)
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { LINE = 64 };

static volatile double *buf;
static size_t nlines;
static int rounds, cpu_b;
static atomic_int phase;
static volatile double sink;

static int pin(int cpu)
{
        cpu_set_t s;
        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void write_lines(void)
{
        for (size_t i = 0; i < nlines; i++)
                buf[i * (LINE / sizeof(double))] += 1.0;
}

/* One read of every line: its time in seconds. */
static double read_lines(void)
{
        double t = bench_now_s(), s = 0;
        for (size_t i = 0; i < nlines; i++)
                s += buf[i * (LINE / sizeof(double))];
        sink = s;
        return bench_now_s() - t;
}

static void *writer(void *arg)
{
        (void)arg;
        if (pin(cpu_b) != 0) {
                atomic_store(&phase, -1);
                return (void *)1;
        }
        for (int k = 0; k < rounds; k++) {
                while (atomic_load(&phase) != 2 * k + 1)
                        ;
                write_lines();
                atomic_store(&phase, 2 * k + 2);
        }
        return NULL;
}

int main(int argc, char **argv)
{
        int cpu_a = argc > 1 ? atoi(argv[1]) : 0;
        cpu_b = argc > 2 ? atoi(argv[2]) : 1;
        long kib = argc > 3 ? atol(argv[3]) : 256;
        rounds = argc > 4 ? atoi(argv[4]) : 201;
        if (argc > 5 || kib < 4 || rounds < 1 || cpu_a < 0 || cpu_b < 0 || cpu_a == cpu_b) {
                fprintf(stderr, "usage: l2share [CPU_A CPU_B [KIB [ROUNDS]]] (two distinct CPUs, "
                                "KIB >= 4)\n");
                return 2;
        }
        nlines = (size_t)kib * 1024 / LINE;
        buf = aligned_alloc(LINE, nlines * LINE);
        double *own = malloc(sizeof(double) * (size_t)rounds);
        double *cross = malloc(sizeof(double) * (size_t)rounds);
        if (!buf || !own || !cross) {
                fprintf(stderr, "l2share: out of memory\n");
                return 1;
        }
        memset((void *)buf, 0, nlines * LINE);
        if (pin(cpu_a) != 0) {
                fprintf(stderr, "l2share: cannot run on CPU %d\n", cpu_a);
                return 1;
        }
        pthread_t th;
        if (pthread_create(&th, NULL, writer, NULL) != 0) {
                fprintf(stderr, "l2share: no second thread\n");
                return 1;
        }
        for (int k = 0; k < rounds; k++) {
                write_lines();
                own[k] = read_lines();
                /* the writer leaves -1 when it cannot run on its CPU */
                int expect = 2 * k;
                if (!atomic_compare_exchange_strong(&phase, &expect, 2 * k + 1))
                        break;
                int p;
                while ((p = atomic_load(&phase)) != 2 * k + 2 && p >= 0)
                        ;
                if (p < 0)
                        break;
                cross[k] = read_lines();
        }
        void *bad;
        pthread_join(th, &bad);
        if (bad) {
                fprintf(stderr, "l2share: cannot run on CPU %d\n", cpu_b);
                return 1;
        }
        double o = bench_median(own, rounds), c = bench_median(cross, rounds);
        printf("l2share: CPUs %d and %d, %ld KiB, %d rounds, medians: own lines %.2f ns per line, "
               "lines the other CPU wrote %.2f ns per line: ratio %.2f\n",
               cpu_a, cpu_b, kib, rounds, o / (double)nlines * 1e9, c / (double)nlines * 1e9,
               c / o);
        free(own);
        free(cross);
        free((void *)buf);
        return 0;
}
