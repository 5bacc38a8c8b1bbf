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

#include "kneighbor.h"

static void usage(FILE *out)
{
        fprintf(out,
                "usage: kneighbor [--tasks N] [--k K] [--msg-bytes B] [--work-us W]\n"
                "                 [--load uniform|linear|hotspot|lbtest|drift] [--drift-every D]\n"
                "                 [common options]\n"
                "Tasks on a ring exchange B bytes with K neighbours on each side every step, then\n"
                "compute for W µs (reference core) times the load pattern's factor:\n"
                "  uniform 1; linear 2(i+1)/n; hotspot 10 on the first tenth of the ring, else 1;\n"
                "  lbtest 0.2 + 4·U⁴ per task (Charm++ lb_test, seeded; mean 1);\n"
                "  drift  the hotspot, moved by a tenth of the ring every D steps (default 20).\n");
        bench_usage_common(out);
}

static const char *const loads[] = {"uniform", "linear", "hotspot", "lbtest", "drift"};

int kn_parse(struct kn_opts *o, int argc, char **argv)
{
        *o = (struct kn_opts){.tasks = -1,
                              .k = 3,
                              .msg_bytes = 1024,
                              .work_us = -1,
                              .drift_every = 20,
                              .load = "linear"};
        bench_opts_init(&o->c);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                int r = bench_opt(&o->c, "kneighbor", argc, argv, &i);
                if (r < 0)
                        return -1;
                if (r > 0)
                        continue;
                long x;
#define NUM(name, lo, hi, field)                                                                   \
        if (strcmp(a, name) == 0) {                                                                \
                if (bench_parse_long("kneighbor", name, v, lo, hi, &x) < 0)                        \
                        return -1;                                                                 \
                o->field = x;                                                                      \
                i++;                                                                               \
                continue;                                                                          \
        }
                NUM("--tasks", 1, 10000000, tasks);
                NUM("--k", 0, 1000, k);
                NUM("--msg-bytes", 8, 1 << 24, msg_bytes);
                NUM("--work-us", 0, 10000000, work_us);
                NUM("--drift-every", 1, 1000000000, drift_every);
#undef NUM
                if (strcmp(a, "--load") == 0 && v) {
                        int ok = 0;
                        for (size_t l = 0; l < sizeof loads / sizeof *loads; l++)
                                ok |= strcmp(v, loads[l]) == 0;
                        if (!ok) {
                                fprintf(stderr,
                                        "kneighbor: --load '%s' is not valid; valid: uniform, "
                                        "linear, hotspot, lbtest, drift\n",
                                        v);
                                return -1;
                        }
                        o->load = v;
                        i++;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        exit(0);
                } else {
                        fprintf(stderr, "kneighbor: unknown or incomplete option '%s'\n", a);
                        usage(stderr);
                        return -1;
                }
        }
        /* presets: tiny, small, default, large */
        static const long tasks[] = {64, 256, 512, 2048}, iters[] = {12, 40, 100, 200},
                          work[] = {5, 20, 50, 50};
        int z = bench_size_index(o->c.size);
        if (o->tasks < 0)
                o->tasks = tasks[z];
        if (o->c.iters < 0)
                o->c.iters = iters[z];
        if (o->work_us < 0)
                o->work_us = work[z];
        if (o->k * 2 >= o->tasks && o->k > 0) {
                fprintf(stderr, "kneighbor: --k %ld needs more than %ld tasks\n", o->k, 2 * o->k);
                return -1;
        }
        return 0;
}

double kn_load_factor(const struct kn_opts *o, long i, long s)
{
        long n = o->tasks, tenth = (n + 9) / 10;
        const char *load = o->load;
        if (strcmp(load, "uniform") == 0)
                return 1.0;
        if (strcmp(load, "linear") == 0)
                return 2.0 * (double)(i + 1) / (double)n; /* mean ≈ 1 */
        if (strcmp(load, "hotspot") == 0)
                return i < tenth ? 10.0 : 1.0; /* a contiguous tenth costs 10× */
        if (strcmp(load, "lbtest") == 0)
                return bench_lbtest_factor((unsigned long long)o->c.seed, i, 0.2, 4.2);
        if (strcmp(load, "drift") == 0) {
                long shift = (s / o->drift_every) * tenth % n;
                return (i - shift + n) % n < tenth ? 10.0 : 1.0;
        }
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
                uint64_t x = (uint64_t)o->c.seed * 0x9e3779b97f4a7c15ull + i;
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
        double f = kn_load_factor(&kn->o, t->i, step);
        double acc =
                bench_burn(t->data, nd, (long)llround(f * (double)kn->o.work_us * WORK_PER_US));
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

static void *kn_task(void *ctx, long i)
{
        return &((struct kn *)ctx)->task[i];
}

static size_t kn_bytes(void *ctx, long i)
{
        (void)i;
        const struct kn *kn = ctx;
        return (3 + 2 * (size_t)kn->o.k) * (size_t)kn->o.msg_bytes;
}

static int kn_links(void *ctx, lbomp_t *lb)
{
        const struct kn *kn = ctx;
        long n = kn->o.tasks;
        int rc = 0;
        for (long i = 0; rc == 0 && i < n; i++)
                for (long j = 1; j <= kn->o.k && rc == 0; j++)
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)((i + j) % n),
                                        (size_t)kn->o.msg_bytes);
        return rc;
}

static void kn_step(void *task, long step)
{
        kn_task_step(task, step);
}

static double kn_sum(void *ctx)
{
        return kn_checksum(ctx);
}

static void kn_extra(void *ctx, FILE *out)
{
        const struct kn *kn = ctx;
        fprintf(out, ",\"msg_bytes\":%ld,\"work_us\":%ld", kn->o.msg_bytes, kn->o.work_us);
        if (strcmp(kn->o.load, "drift") == 0)
                fprintf(out, ",\"drift_every\":%ld", kn->o.drift_every);
}

struct bench_kernel kn_kernel(struct kn *kn)
{
        return (struct bench_kernel){.bench = "kneighbor",
                                     .load = kn->o.load,
                                     .k = kn->o.k,
                                     .ntasks = kn->o.tasks,
                                     .ctx = kn,
                                     .task = kn_task,
                                     .bytes = kn_bytes,
                                     .links = kn_links,
                                     .step = kn_step,
                                     .checksum = kn_sum,
                                     .json_extra = kn_extra};
}

int main(int argc, char **argv)
{
        struct kn_opts o;
        if (kn_parse(&o, argc, argv) < 0)
                return 2;
        struct kn kn;
        if (kn_setup(&kn, &o) < 0) {
                fprintf(stderr, "kneighbor: out of memory\n");
                return 2;
        }
        struct bench_kernel k = kn_kernel(&kn);
        int rc = bench_run(&kn.o.c, &k);
        kn_free(&kn);
        return rc;
}
