/*
 * lbtest.c — Charm++'s lb_test as an lbomp benchmark: tasks on a ring, a 2-D mesh, a 3-D mesh
 * (both periodic) or a random graph send a fixed-size message to each neighbour every step and
 * compute for min + (max − min)·U⁴ µs of a reference core, U uniform per task and seeded (most
 * tasks light, a few very heavy). Messages are double-buffered: a task reads what its neighbours
 * published in the previous step, so the checksum does not depend on placement or order.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kneighbor.h" /* WORK_PER_US */

struct lt;

struct lt_task {
        long i;
        struct lt *lt;
        double factor;  /* µs of work per step */
        double *data;   /* nd doubles */
        double *out[2]; /* published at step s into out[s & 1] */
        double *in;     /* deg(i) received messages */
};

struct lt {
        struct bench_opts c;
        const char *topo;
        long tasks, msg_bytes, degree;
        double min_us, max_us;
        size_t nd;
        long *off, *adj; /* CSR adjacency, symmetric, no self loops, no duplicates */
        long dims[3];
        struct lt_task *task;
};

static void usage(FILE *out)
{
        fprintf(out,
                "usage: lbtest [--topology ring|mesh2d|mesh3d|random] [--tasks N] [--degree D]\n"
                "              [--msg-bytes B] [--min-us A] [--max-us Z] [common options]\n"
                "Charm++ lb_test: every step each task sends B bytes to each neighbour and "
                "computes\n"
                "A + (Z − A)·U⁴ µs (U uniform per task, seeded). random: each task draws D/2 "
                "random\n"
                "partners (mean degree D). Meshes are periodic; N is factored into near-equal "
                "sides.\n");
        bench_usage_common(out);
}

/* Sides of a near-cubic (or square) factorisation of n: d[0] ≤ d[1] ≤ d[2], product n. */
static void factor(long n, int ndim, long d[3])
{
        d[0] = d[1] = d[2] = 1;
        if (ndim == 2) {
                long a = (long)sqrt((double)n);
                while (n % a)
                        a--;
                d[0] = a, d[1] = n / a;
                return;
        }
        long a = (long)cbrt((double)n) + 1;
        while (a > 1 && n % a)
                a--;
        long m = n / a, b = (long)sqrt((double)m);
        while (m % b)
                b--;
        d[0] = a, d[1] = b, d[2] = m / b;
}

static int add_edge(long *cnt, long **lists, long cap, long a, long b)
{
        if (a == b)
                return 0;
        for (long j = 0; j < cnt[a]; j++)
                if (lists[a][j] == b)
                        return 0;
        if (cnt[a] >= cap || cnt[b] >= cap)
                return 0; /* random graph: a full list keeps its partners */
        lists[a][cnt[a]++] = b;
        lists[b][cnt[b]++] = a;
        return 1;
}

static int build_graph(struct lt *lt)
{
        long n = lt->tasks, cap = 6;
        if (strcmp(lt->topo, "random") == 0)
                cap = 2 * lt->degree + 2;
        long *cnt = calloc((size_t)n, sizeof *cnt),
             *pool = malloc((size_t)(n * cap) * sizeof *pool);
        long **lists = malloc((size_t)n * sizeof *lists);
        if (!cnt || !pool || !lists)
                return -1;
        for (long i = 0; i < n; i++)
                lists[i] = pool + i * cap;
        if (strcmp(lt->topo, "ring") == 0) {
                for (long i = 0; i < n; i++)
                        add_edge(cnt, lists, cap, i, (i + 1) % n);
        } else if (strcmp(lt->topo, "mesh2d") == 0 || strcmp(lt->topo, "mesh3d") == 0) {
                int nd = strcmp(lt->topo, "mesh2d") == 0 ? 2 : 3;
                factor(n, nd, lt->dims);
                long X = lt->dims[0], Y = lt->dims[1], Z = lt->dims[2];
                for (long i = 0; i < n; i++) {
                        long x = i % X, y = (i / X) % Y, z = i / (X * Y);
                        add_edge(cnt, lists, cap, i, (x + 1) % X + X * (y + Y * z));
                        add_edge(cnt, lists, cap, i, x + X * ((y + 1) % Y + Y * z));
                        if (nd == 3)
                                add_edge(cnt, lists, cap, i, x + X * (y + Y * ((z + 1) % Z)));
                }
        } else {
                for (long i = 0; i < n; i++)
                        for (long j = 0; j < (lt->degree + 1) / 2; j++) {
                                double u = bench_u01((unsigned long long)lt->c.seed * 7919u +
                                                     (unsigned long long)(i * 1000 + j));
                                add_edge(cnt, lists, cap, i, (long)(u * (double)n) % n);
                        }
        }
        lt->off = malloc((size_t)(n + 1) * sizeof *lt->off);
        if (!lt->off)
                return -1;
        lt->off[0] = 0;
        for (long i = 0; i < n; i++)
                lt->off[i + 1] = lt->off[i] + cnt[i];
        lt->adj = malloc((size_t)(lt->off[n] ? lt->off[n] : 1) * sizeof *lt->adj);
        if (!lt->adj)
                return -1;
        for (long i = 0; i < n; i++)
                memcpy(lt->adj + lt->off[i], lists[i], (size_t)cnt[i] * sizeof *lt->adj);
        free(cnt), free(pool), free(lists);
        return 0;
}

static int setup(struct lt *lt)
{
        if (build_graph(lt) < 0)
                return -1;
        lt->nd = (size_t)lt->msg_bytes / sizeof(double);
        lt->task = calloc((size_t)lt->tasks, sizeof *lt->task);
        if (!lt->task)
                return -1;
        for (long i = 0; i < lt->tasks; i++) {
                struct lt_task *t = &lt->task[i];
                long deg = lt->off[i + 1] - lt->off[i];
                t->i = i;
                t->lt = lt;
                t->factor = lt->min_us + (lt->max_us - lt->min_us) *
                                                 bench_lbtest_factor((unsigned long long)lt->c.seed,
                                                                     i, 0.0, 1.0);
                t->data = malloc((3 + (size_t)deg) * lt->nd * sizeof(double));
                if (!t->data)
                        return -1;
                t->out[0] = t->data + lt->nd;
                t->out[1] = t->out[0] + lt->nd;
                t->in = t->out[1] + lt->nd;
                for (size_t d = 0; d < lt->nd; d++)
                        t->data[d] = t->out[0][d] = t->out[1][d] =
                                bench_u01((unsigned long long)(i * 131071 + (long)d));
        }
        return 0;
}

static void lt_step(void *task, long step)
{
        struct lt_task *t = task;
        struct lt *lt = t->lt;
        size_t nd = lt->nd;
        int prev = (int)((step + 1) & 1), cur = (int)(step & 1);
        long deg = lt->off[t->i + 1] - lt->off[t->i];
        for (long j = 0; j < deg; j++)
                memcpy(t->in + nd * (size_t)j, lt->task[lt->adj[lt->off[t->i] + j]].out[prev],
                       nd * sizeof(double));
        double acc = bench_burn(t->data, nd, (long)llround(t->factor * WORK_PER_US));
        for (size_t d = 0; d < nd; d++) {
                double s = 0;
                for (long j = 0; j < deg; j++)
                        s += t->in[nd * (size_t)j + d];
                t->data[d] = 0.5 * t->data[d] + 0.5 * (deg ? s / (double)deg : 0.0) + 1e-9 * acc;
        }
        memcpy(t->out[cur], t->data, nd * sizeof(double));
}

static void *lt_task(void *ctx, long i)
{
        return &((struct lt *)ctx)->task[i];
}

static size_t lt_bytes(void *ctx, long i)
{
        const struct lt *lt = ctx;
        return (3 + (size_t)(lt->off[i + 1] - lt->off[i])) * (size_t)lt->msg_bytes;
}

static int lt_links(void *ctx, lbomp_t *lb)
{
        const struct lt *lt = ctx;
        int rc = 0;
        for (long i = 0; rc == 0 && i < lt->tasks; i++)
                for (long j = lt->off[i]; rc == 0 && j < lt->off[i + 1]; j++)
                        if (lt->adj[j] > i) /* undirected: once per pair, both directions' bytes */
                                rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)lt->adj[j],
                                                2 * (size_t)lt->msg_bytes);
        return rc;
}

static double lt_checksum(void *ctx)
{
        const struct lt *lt = ctx;
        double s = 0;
        for (long i = 0; i < lt->tasks; i++)
                for (size_t d = 0; d < lt->nd; d++)
                        s += lt->task[i].data[d] * (double)((d % 7) + 1);
        return s;
}

static void lt_extra(void *ctx, FILE *out)
{
        const struct lt *lt = ctx;
        fprintf(out, ",\"msg_bytes\":%ld,\"min_us\":%g,\"max_us\":%g,\"edges\":%ld", lt->msg_bytes,
                lt->min_us, lt->max_us, lt->off[lt->tasks] / 2);
}

int main(int argc, char **argv)
{
        struct lt lt = {.topo = "mesh2d",
                        .tasks = -1,
                        .msg_bytes = 1024,
                        .degree = 4,
                        .min_us = -1,
                        .max_us = -1};
        bench_opts_init(&lt.c);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                int r = bench_opt(&lt.c, "lbtest", argc, argv, &i);
                if (r < 0)
                        return 2;
                if (r > 0)
                        continue;
                if (strcmp(a, "--tasks") == 0) {
                        if (bench_parse_long("lbtest", a, v, 8, 10000000, &lt.tasks) < 0)
                                return 2;
                } else if (strcmp(a, "--degree") == 0) {
                        if (bench_parse_long("lbtest", a, v, 1, 64, &lt.degree) < 0)
                                return 2;
                } else if (strcmp(a, "--msg-bytes") == 0) {
                        if (bench_parse_long("lbtest", a, v, 8, 1 << 24, &lt.msg_bytes) < 0)
                                return 2;
                } else if (strcmp(a, "--min-us") == 0) {
                        if (bench_parse_double("lbtest", a, v, 0, 1e7, &lt.min_us) < 0)
                                return 2;
                } else if (strcmp(a, "--max-us") == 0) {
                        if (bench_parse_double("lbtest", a, v, 0, 1e7, &lt.max_us) < 0)
                                return 2;
                } else if (strcmp(a, "--topology") == 0 && v) {
                        if (strcmp(v, "ring") && strcmp(v, "mesh2d") && strcmp(v, "mesh3d") &&
                            strcmp(v, "random")) {
                                fprintf(stderr,
                                        "lbtest: --topology '%s' is not valid; valid: "
                                        "ring, mesh2d, mesh3d, random\n",
                                        v);
                                return 2;
                        }
                        lt.topo = v;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else {
                        fprintf(stderr, "lbtest: unknown or incomplete option '%s'\n", a);
                        usage(stderr);
                        return 2;
                }
                i++;
        }
        static const long tasks[] = {64, 256, 512, 2048}, iters[] = {12, 40, 100, 200};
        static const double mins[] = {1, 5, 10, 10}, maxs[] = {25, 100, 250, 250};
        int z = bench_size_index(lt.c.size);
        if (lt.tasks < 0)
                lt.tasks = tasks[z];
        if (lt.c.iters < 0)
                lt.c.iters = iters[z];
        if (lt.min_us < 0)
                lt.min_us = mins[z];
        if (lt.max_us < 0)
                lt.max_us = maxs[z];
        if (lt.max_us < lt.min_us) {
                fprintf(stderr, "lbtest: --max-us %g is below --min-us %g\n", lt.max_us, lt.min_us);
                return 2;
        }
        if (setup(&lt) < 0) {
                fprintf(stderr, "lbtest: out of memory\n");
                return 2;
        }
        struct bench_kernel k = {.bench = "lbtest",
                                 .load = lt.topo,
                                 .k = lt.tasks ? (lt.off[lt.tasks] + lt.tasks - 1) / lt.tasks : 0,
                                 .ntasks = lt.tasks,
                                 .ctx = &lt,
                                 .task = lt_task,
                                 .bytes = lt_bytes,
                                 .links = lt_links,
                                 .step = lt_step,
                                 .checksum = lt_checksum,
                                 .json_extra = lt_extra};
        int rc = bench_run(&lt.c, &k);
        for (long i = 0; i < lt.tasks; i++)
                free(lt.task[i].data);
        free(lt.task), free(lt.off), free(lt.adj);
        return rc;
}
