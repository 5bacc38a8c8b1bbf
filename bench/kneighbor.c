/*
 * kneighbor.c — the kNeighbor benchmark (after Charm++'s): tasks on a ring, each exchanging a
 * message of --msg-bytes with --k neighbours on each side every step through real memory copies,
 * then computing for a time drawn from a load pattern. The checksum depends only on the computed
 * data, so it is the same for every policy and thread count.
 *
 * Work is expressed in microseconds of a reference core: 1 µs is WORK_PER_US iterations of the
 * kernel, a fixed number so that the checksum never depends on the machine's speed.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kneighbor.h"
#include "lbomp.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *out)
{
        fprintf(out,
                "usage: kneighbor [--tasks N] [--k K] [--msg-bytes B] [--iters I] [--period P]\n"
                "                 [--load uniform|linear|hotspot] [--work-us W] [--policy NAME]\n"
                "                 [--threads T] [--seed S] [--json]\n"
                "Tasks on a ring exchange B bytes with K neighbours on each side every step, then\n"
                "compute for W µs (reference core) times the load pattern's factor.\n");
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
        char *end;
        errno = 0;
        long v = s ? strtol(s, &end, 10) : 0;
        if (!s || !*s || *end || errno || v < lo || v > hi) {
                fprintf(stderr,
                        "kneighbor: %s '%s' is not valid; expected a whole number from %ld to "
                        "%ld\n",
                        opt, s ? s : "", lo, hi);
                return -1;
        }
        *out = v;
        return 0;
}

int kn_parse(struct kn_opts *o, int argc, char **argv)
{
        *o = (struct kn_opts){.tasks = 512,
                              .k = 3,
                              .msg_bytes = 1024,
                              .iters = 100,
                              .period = -1,
                              .load = "linear",
                              .work_us = 50,
                              .threads = 0,
                              .seed = 1};
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                long x;
#define NUM(name, lo, hi, field)                                                                   \
        if (strcmp(a, name) == 0) {                                                                \
                if (parse_long(name, v, lo, hi, &x) < 0)                                           \
                        return -1;                                                                 \
                o->field = x;                                                                      \
                i++;                                                                               \
                continue;                                                                          \
        }
                NUM("--tasks", 1, 10000000, tasks);
                NUM("--k", 0, 1000, k);
                NUM("--msg-bytes", 8, 1 << 24, msg_bytes);
                NUM("--iters", 1, 100000000, iters);
                NUM("--period", 1, 1000000000, period);
                NUM("--work-us", 0, 10000000, work_us);
                NUM("--threads", 1, 4096, threads);
                NUM("--seed", 0, INT64_MAX, seed);
#undef NUM
                if (strcmp(a, "--load") == 0 && v) {
                        if (kn_load_factor(v, 0, 1, 0) < 0) {
                                fprintf(stderr,
                                        "kneighbor: --load '%s' is not valid; valid: uniform, "
                                        "linear, hotspot\n",
                                        v);
                                return -1;
                        }
                        o->load = v;
                        i++;
                } else if (strcmp(a, "--policy") == 0 && v) {
                        o->policy = v;
                        i++;
                } else if (strcmp(a, "--json") == 0) {
                        o->json = 1;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        exit(0);
                } else {
                        fprintf(stderr, "kneighbor: unknown or incomplete option '%s'\n", a);
                        usage(stderr);
                        return -1;
                }
        }
        if (o->k * 2 >= o->tasks && o->k > 0) {
                fprintf(stderr, "kneighbor: --k %ld needs more than %ld tasks\n", o->k, 2 * o->k);
                return -1;
        }
        return 0;
}

/* Cost factor of task i of n at step s: the load pattern. -1 for an unknown pattern. */
double kn_load_factor(const char *load, long i, long n, long s)
{
        (void)s;
        if (strcmp(load, "uniform") == 0)
                return 1.0;
        if (strcmp(load, "linear") == 0)
                return 2.0 * (double)(i + 1) / (double)n; /* mean ≈ 1 */
        if (strcmp(load, "hotspot") == 0)
                return i < (n + 9) / 10 ? 10.0 : 1.0; /* a contiguous tenth costs 10× */
        return -1;
}

int kn_setup(struct kn *kn, const struct kn_opts *o)
{
        memset(kn, 0, sizeof *kn);
        kn->o = *o;
        kn->nd = (size_t)o->msg_bytes / sizeof(double);
        size_t n = (size_t)o->tasks;
        kn->task = calloc(n, sizeof *kn->task);
        if (!kn->task)
                return -1;
        for (size_t i = 0; i < n; i++) {
                struct kn_task *t = &kn->task[i];
                t->i = (long)i;
                t->kn = kn;
                /* data, 2 outboxes, 2k inbox slots: one allocation per task, near its data */
                t->data = malloc((3 + 2 * (size_t)o->k) * kn->nd * sizeof(double));
                if (!t->data)
                        return -1;
                t->out[0] = t->data + kn->nd;
                t->out[1] = t->out[0] + kn->nd;
                t->in = t->out[1] + kn->nd;
                uint64_t x = (uint64_t)o->seed * 0x9e3779b97f4a7c15ull + i;
                for (size_t d = 0; d < kn->nd; d++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        t->data[d] = (double)(x >> 11) * 0x1.0p-53;
                        t->out[0][d] = t->out[1][d] = t->data[d];
                }
        }
        return 0;
}

void kn_free(struct kn *kn)
{
        for (long i = 0; kn->task && i < kn->o.tasks; i++)
                free(kn->task[i].data);
        free(kn->task);
}

/* One step of task t: receive from the 2k neighbours (their outbox of the previous step), compute,
 * publish. Reads only what the previous step wrote, so any order or placement gives the same data.
 */
void kn_task_step(struct kn_task *t, long step)
{
        struct kn *kn = t->kn;
        long n = kn->o.tasks, k = kn->o.k;
        size_t nd = kn->nd;
        int prev = (int)((step + 1) & 1), cur = (int)(step & 1);
        for (long j = 1, slot = 0; j <= k; j++) {
                memcpy(t->in + nd * (size_t)slot++, kn->task[(t->i + j) % n].out[prev],
                       nd * sizeof(double));
                memcpy(t->in + nd * (size_t)slot++, kn->task[(t->i - j + n) % n].out[prev],
                       nd * sizeof(double));
        }
        double f = kn_load_factor(kn->o.load, t->i, n, step);
        long iters = (long)llround(f * (double)kn->o.work_us * WORK_PER_US);
        double acc = t->data[0];
        for (long it = 0; it < iters; it++)
                acc = acc * 0.9999999 + t->data[(size_t)it % nd] * 1e-7;
        /* fold the neighbours' messages in */
        for (size_t d = 0; d < nd; d++) {
                double s = 0;
                for (long j = 0; j < 2 * k; j++)
                        s += t->in[nd * (size_t)j + d];
                t->data[d] =
                        0.5 * t->data[d] + 0.5 * (k > 0 ? s / (double)(2 * k) : 0.0) + 1e-9 * acc;
        }
        memcpy(t->out[cur], t->data, nd * sizeof(double));
}

double kn_checksum(const struct kn *kn)
{
        double s = 0;
        for (long i = 0; i < kn->o.tasks; i++)
                for (size_t d = 0; d < kn->nd; d++)
                        s += kn->task[i].data[d] * (double)((d % 7) + 1);
        return s;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

double kn_median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

static void run_task(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        struct kn_task *t = data;
        __atomic_fetch_add(&t->runs, 1, __ATOMIC_RELAXED);
        kn_task_step(t, *(long *)arg);
}

/* Every task ran exactly once in each of the `steps` steps so far (stealing must not lose or
 * repeat a task). */
static int check_runs(const struct kn *kn, long steps)
{
        for (long i = 0; i < kn->o.tasks; i++) {
                long r = __atomic_load_n(&kn->task[i].runs, __ATOMIC_RELAXED);
                if (r != steps) {
                        fprintf(stderr,
                                "kneighbor: task %ld ran %ld times in %ld steps: exactly-once "
                                "violated\n",
                                i, r, steps);
                        return -1;
                }
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct kn_opts o;
        if (kn_parse(&o, argc, argv) < 0)
                return 2;
        lbomp_t *lb;
        int rc = lbomp_create(&lb);
        if (rc == -ECANCELED)
                return 0; /* LBOMP_POLICY=help: the list was printed */
        if (rc < 0) {
                fprintf(stderr, "kneighbor: lbomp_create failed: %s\n", lbomp_strerror(rc));
                return 2;
        }
        if ((o.policy && (rc = lbomp_set_policy(lb, o.policy)) < 0) ||
            (o.period > 0 && (rc = lbomp_set_period(lb, (int)o.period)) < 0) ||
            (o.threads > 0 && (rc = lbomp_set_workers(lb, (int)o.threads)) < 0)) {
                fprintf(stderr, "kneighbor: %s\n",
                        *lbomp_last_error() ? lbomp_last_error() : lbomp_strerror(rc));
                lbomp_destroy(lb);
                return 2;
        }
        struct kn kn;
        if (kn_setup(&kn, &o) < 0) {
                fprintf(stderr, "kneighbor: out of memory\n");
                return 2;
        }
        for (long i = 0; i < o.tasks; i++) {
                lbomp_id_t id;
                if ((rc = lbomp_task_add(lb, &kn.task[i],
                                         (3 + 2 * (size_t)o.k) * (size_t)o.msg_bytes,
                                         LBOMP_NODE_ANY, &id)) < 0)
                        break;
        }
        for (long i = 0; rc == 0 && i < o.tasks; i++)
                for (long j = 1; j <= o.k && rc == 0; j++)
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)((i + j) % o.tasks),
                                        (size_t)o.msg_bytes);
        if (rc < 0) {
                fprintf(stderr, "kneighbor: setting up tasks failed: %s\n", lbomp_strerror(rc));
                return 2;
        }
        double *step_s = malloc((size_t)o.iters * sizeof *step_s);
        int once = 1;
        double t0 = now_s();
        for (long s = 0; s < o.iters; s++) {
                double ts = now_s();
                if ((rc = lbomp_step(lb, run_task, &s)) < 0) {
                        fprintf(stderr, "kneighbor: step %ld failed: %s\n", s, lbomp_strerror(rc));
                        return 1;
                }
                step_s[s] = now_s() - ts;
                if (once && check_runs(&kn, s + 1) < 0)
                        once = 0;
        }
        double total = now_s() - t0;
        double checksum = kn_checksum(&kn);
        struct kn_result r = {.total_s = total,
                              .step_s_median = kn_median(step_s, o.iters),
                              .checksum = checksum,
                              .exactly_once = once};
        kn_result_from_lbomp(&r, lb);
        if (o.json) {
                kn_print_json(stdout, "kneighbor", &o, &r, lb);
        } else {
                lbomp_report(lb, stdout);
                printf("kneighbor: %ld tasks, k %ld, %ld iters, load %s: total %.3f s, median step "
                       "%.3g s, checksum %.17g\n",
                       o.tasks, o.k, o.iters, o.load, total, r.step_s_median, checksum);
                printf("kneighbor: exactly-once %s, %llu tasks stolen\n",
                       once ? "held" : "VIOLATED", r.stolen);
        }
        free(step_s);
        kn_free(&kn);
        lbomp_destroy(lb);
        return once ? 0 : 1;
}
