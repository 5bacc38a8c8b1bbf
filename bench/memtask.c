/*
 * memtask.c — workloads whose tasks own real memory: every task owns an array (a `stream` kernel:
 * two vectors rotated in place) or a strip of a periodic 2-D grid (a `stencil` kernel: 5-point
 * Jacobi with one ghost row from each neighbouring strip), allocated at setup and first touched
 * in the first step by the thread that runs the task there. The total working set is chosen from
 * below one core's L2 to far above the last-level cache, so what a schedule does to cache (and
 * NUMA) locality shows in the time: a task that stays on its core finds its data in that core's
 * cache. Imbalance comes either from data (heavy tasks own more elements: particles per cell,
 * refined patches) or from passes (heavy tasks sweep their data more often per step: sub-cycles
 * near a moving front), in a persistent, slowly drifting or fast-moving pattern, or none.
 * Each task's arithmetic is fixed by the task and the step, and the checksum sums tasks in order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum kernel { STREAM, STENCIL };
enum heavy { DATA, PASSES };
enum pattern { BALANCED, CLUSTER, HOTSPOT, DRIFT, MOVING };

static const char *const patterns[] = {"balanced", "cluster", "hotspot", "drift", "moving"};

/* The rotation angle of the stream kernel and the diffusion number of the stencil (≤ 1/4). */
#define THETA 0.015625
#define KAPPA 0.2

struct mt;

struct mt_task {
        long i;
        struct mt *mt;
        long rows;  /* stream: elements of each vector; stencil: rows of the strip */
        double *m;  /* stream: x then y; stencil: two (rows + 2) × width buffers, a scratch row */
        size_t len; /* doubles in m */
};

struct mt {
        struct bench_opts c;
        enum kernel kernel;
        enum heavy heavy;
        enum pattern pattern;
        long tasks, passes, width, drift_steps;
        double ws_mib, factor;
        size_t ws_bytes; /* what the tasks own, all together */
        struct mt_task *task;
};

/* Ring distance between task i and a real position c on a ring of n tasks. */
static double ring_dist(double i, double c, double n)
{
        double d = fabs(fmod(i - c, n));
        return d > n / 2 ? n - d : d;
}

/* Weight of task i at step s: 1 for a light task. The centre of the hot region starts a quarter
 * into the ring, so a block split over 2 threads gives it to the first thread. */
static double weight(const struct mt *mt, long i, long s)
{
        double n = (double)mt->tasks, h = mt->factor;
        switch (mt->pattern) {
        case BALANCED:
                return 1;
        case CLUSTER: { /* a contiguous quarter of the tasks, starting at n/8 */
                long lo = mt->tasks / 8, hi = lo + (mt->tasks + 3) / 4;
                return i >= lo && i < hi ? h : 1;
        }
        case HOTSPOT:
        case DRIFT:
        case MOVING: {
                double sigma = fmax(1.0, n / 32), c = n / 4;
                if (mt->pattern != HOTSPOT)
                        c += n * (double)(s % mt->drift_steps) / (double)mt->drift_steps;
                double d = ring_dist((double)i, c, n) / sigma;
                return 1 + (h - 1) * exp(-d * d);
        }
        }
        return 1;
}

static long task_passes(const struct mt *mt, long i, long s)
{
        if (mt->heavy == DATA)
                return mt->passes;
        return mt->passes * lround(weight(mt, i, s));
}

/* Doubles a task owns for `rows` (stream: elements per vector). */
static size_t task_len(const struct mt *mt, long rows)
{
        /* stencil: two buffers with their ghost rows, and one scratch row */
        return mt->kernel == STREAM ? 2 * (size_t)rows
                                    : (2 * (size_t)(rows + 2) + 1) * (size_t)mt->width;
}

/* Sizes every task so that they own ws_mib MiB together (at least one row or 8 elements each),
 * light tasks alike and heavy ones `factor` times more under --heavy data, and allocates without
 * touching: the first step's thread touches first. */
static int setup(struct mt *mt)
{
        long n = mt->tasks;
        mt->task = calloc((size_t)n, sizeof *mt->task);
        if (!mt->task)
                return -1;
        double wsum = 0;
        for (long i = 0; i < n; i++)
                wsum += mt->heavy == DATA ? weight(mt, i, 0) : 1;
        if (mt->kernel == STENCIL && mt->width <= 0) {
                /* 256 columns, fewer if a light strip would have less than 8 rows */
                double cells = mt->ws_mib * 1048576.0 / wsum / 16.0;
                mt->width = (long)fmax(16, fmin(256, floor(cells / 8 / 16) * 16));
        }
        /* bytes of one unit: a stream element is 2 doubles; a stencil row is 2 × width doubles
         * (the ghost rows and the scratch row come on top) */
        double unit = mt->kernel == STREAM ? 16.0 : 16.0 * (double)mt->width;
        double per_weight = mt->ws_mib * 1048576.0 / wsum / unit;
        mt->ws_bytes = 0;
        for (long i = 0; i < n; i++) {
                struct mt_task *t = &mt->task[i];
                double w = mt->heavy == DATA ? weight(mt, i, 0) : 1;
                long r = lround(per_weight * w);
                if (mt->kernel == STREAM)
                        r = r < 8 ? 8 : (r + 7) / 8 * 8; /* whole cache lines */
                *t = (struct mt_task){.i = i, .mt = mt, .rows = r < 1 ? 1 : r};
                t->len = task_len(mt, t->rows);
                size_t bytes = (t->len * sizeof(double) + 63) / 64 * 64;
                if (posix_memalign((void **)&t->m, 4096, bytes) != 0)
                        return -1;
                mt->ws_bytes += t->len * sizeof(double);
        }
        return 0;
}

/* First touch, by the thread that runs the task's first step. */
static void init_task(struct mt_task *t)
{
        double *m = t->m;
        for (size_t j = 0; j < t->len; j++)
                m[j] = 1.0 + (double)(((size_t)t->i * 7919 + j * 31) % 1000) * 1e-3;
}

static void stream_step(struct mt_task *t, long passes)
{
        double *restrict x = t->m, *restrict y = t->m + t->rows;
        long n = t->rows;
        for (long p = 0; p < passes; p++) {
#pragma omp simd
                for (long j = 0; j < n; j++) {
                        y[j] += THETA * x[j];
                        x[j] -= THETA * y[j];
                }
        }
}

static double *strip(const struct mt_task *t, int b)
{
        return t->m + (size_t)b * (size_t)(t->rows + 2) * (size_t)t->mt->width;
}

/* One sweep of rows 1..R of `src` into `dst`, periodic in the columns. When dst is src (the
 * extra passes) it runs in place, row after row: row r is computed from the new row r − 1, its own
 * old values (kept in `scratch`, one row) and the old row r + 1. Either way the columns
 * vectorise and every value depends only on the task's data, never on the order of tasks. */
static void sweep(double *dst, const double *src, double *scratch, long rows, long w)
{
        for (long r = 1; r <= rows; r++) {
                const double *up = src + (size_t)(r - 1) * (size_t)w,
                             *mid = src + (size_t)r * (size_t)w,
                             *dn = src + (size_t)(r + 1) * (size_t)w;
                double *o = dst + (size_t)r * (size_t)w;
                if (dst == src) {
                        memcpy(scratch, mid, (size_t)w * sizeof(double));
                        mid = scratch;
                }
                double first = mid[0] + KAPPA * (up[0] + dn[0] + mid[w - 1] + mid[1] - 4 * mid[0]);
                double last = mid[w - 1] + KAPPA * (up[w - 1] + dn[w - 1] + mid[w - 2] + mid[0] -
                                                    4 * mid[w - 1]);
#pragma omp simd
                for (long c = 1; c < w - 1; c++)
                        o[c] = mid[c] +
                               KAPPA * (up[c] + dn[c] + mid[c - 1] + mid[c + 1] - 4 * mid[c]);
                o[0] = first;
                o[w - 1] = last;
        }
}

/* Step s: the ghost rows of our previous buffer get the neighbours' edge rows of their previous
 * buffer (nobody else reads our ghosts), then one Jacobi sweep into the current buffer and, under
 * --heavy passes, extra sweeps of it in place against the same ghosts. */
static void stencil_step(struct mt_task *t, long step, long passes)
{
        struct mt *mt = t->mt;
        long n = mt->tasks, w = mt->width, R = t->rows;
        int prev = (int)((step + 1) & 1), cur = (int)(step & 1);
        const struct mt_task *up = &mt->task[(t->i + n - 1) % n], *dn = &mt->task[(t->i + 1) % n];
        double *p = strip(t, prev), *q = strip(t, cur);
        memcpy(p, strip(up, prev) + (size_t)up->rows * (size_t)w, (size_t)w * sizeof(double));
        memcpy(p + (size_t)(R + 1) * (size_t)w, strip(dn, prev) + (size_t)w,
               (size_t)w * sizeof(double));
        memcpy(q, p, (size_t)w * sizeof(double));
        memcpy(q + (size_t)(R + 1) * (size_t)w, p + (size_t)(R + 1) * (size_t)w,
               (size_t)w * sizeof(double));
        double *scratch = strip(t, 2);
        sweep(q, p, scratch, R, w);
        for (long k = 1; k < passes; k++)
                sweep(q, q, scratch, R, w);
}

static void mt_step(void *task, long step)
{
        struct mt_task *t = task;
        if (step == 0) { /* first touch; a stencil's neighbours may read our rows from step 1 */
                init_task(t);
                return;
        }
        long passes = task_passes(t->mt, t->i, step);
        if (t->mt->kernel == STREAM)
                stream_step(t, passes);
        else
                stencil_step(t, step, passes);
}

static double mt_checksum(void *ctx)
{
        const struct mt *mt = ctx;
        double s = 0;
        for (long i = 0; i < mt->tasks; i++) {
                const struct mt_task *t = &mt->task[i];
                double ts = 0;
                if (mt->kernel == STREAM) {
                        for (long j = 0; j < 2 * t->rows; j++)
                                ts += t->m[j] * (double)(1 + j % 7);
                } else {
                        const double *q = strip(t, (int)((mt->c.iters - 1) & 1));
                        for (long j = mt->width; j < (t->rows + 1) * mt->width; j++)
                                ts += q[j] * (double)(1 + j % 7);
                }
                s += ts;
        }
        return s;
}

static void *mt_task_ptr(void *ctx, long i)
{
        return &((struct mt *)ctx)->task[i];
}

static size_t mt_bytes(void *ctx, long i)
{
        return ((struct mt *)ctx)->task[i].len * sizeof(double);
}

/* Strips exchange one row each way per step with the next strip on the ring. */
static int mt_links(void *ctx, lbomp_t *lb)
{
        const struct mt *mt = ctx;
        int rc = 0;
        if (mt->tasks < 2)
                return 0;
        for (long i = 0; rc == 0 && i < (mt->tasks == 2 ? 1 : mt->tasks); i++)
                rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)((i + 1) % mt->tasks),
                                2 * (size_t)mt->width * sizeof(double));
        return rc;
}

static void mt_extra(void *ctx, FILE *out)
{
        const struct mt *mt = ctx;
        fprintf(out,
                ",\"kernel\":\"%s\",\"heavy\":\"%s\",\"factor\":%g,\"passes\":%ld,\"ws_mib\":%g,"
                "\"ws_bytes\":%zu",
                mt->kernel == STREAM ? "stream" : "stencil", mt->heavy == DATA ? "data" : "passes",
                mt->factor, mt->passes, mt->ws_mib, mt->ws_bytes);
        if (mt->kernel == STENCIL)
                fprintf(out, ",\"width\":%ld", mt->width);
        if (mt->pattern == DRIFT || mt->pattern == MOVING)
                fprintf(out, ",\"drift_steps\":%ld", mt->drift_steps);
}

static void usage(FILE *out)
{
        fprintf(out,
                "usage: memtask [--kernel stream|stencil] "
                "[--load balanced|cluster|hotspot|drift|moving]\n"
                "               [--heavy data|passes] [--ws-mib M] [--tasks N] [--factor H]\n"
                "               [--passes P] [--drift-steps D] [--width W] [common options]\n"
                "Tasks own M MiB of memory together, first touched by the thread that runs them\n"
                "first; every step each task streams over its own data P times (stream: two\n"
                "vectors rotated in place; stencil: a strip of W columns of a periodic 2-D grid,\n"
                "one Jacobi sweep with a ghost row from each neighbouring strip). Heavy tasks\n"
                "weigh up to H: they own H times the data (--heavy data, for loads that stay)\n"
                "or sweep it H times as often (--heavy passes, the default for moving loads):\n"
                "  balanced  every task weighs 1\n"
                "  cluster   a contiguous quarter of the tasks weighs H (default 4)\n"
                "  hotspot   1 + (H−1)·exp(−(d/σ)²), d the ring distance from N/4, σ = N/32\n"
                "            (H default 16)\n"
                "  drift     the hotspot, going once round the ring every D steps (default 400)\n"
                "  moving    the same, fast: once round every D steps (default 5, shorter than\n"
                "            the LB period)\n"
                "--size sets M and the steps: tiny 0.25 MiB, 12 steps; small 1 MiB (half of it\n"
                "per thread: in one core's L2), 5000; default 8 MiB (in the L3), 1500; large\n"
                "64 MiB (above the L3), 200.\n");
        bench_usage_common(out);
}

static int parse(struct mt *mt, int argc, char **argv)
{
        const char *P = "memtask", *heavy = NULL;
        *mt = (struct mt){.kernel = STREAM,
                          .pattern = BALANCED,
                          .tasks = 64,
                          .passes = 1,
                          .width = -1,
                          .drift_steps = -1,
                          .ws_mib = -1,
                          .factor = -1};
        bench_opts_init(&mt->c);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                int r = bench_opt(&mt->c, P, argc, argv, &i);
                if (r < 0)
                        return -1;
                if (r > 0)
                        continue;
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        exit(0);
                }
                if (!v) {
                        fprintf(stderr, "%s: unknown or incomplete option '%s'\n", P, a);
                        usage(stderr);
                        return -1;
                }
                if (strcmp(a, "--kernel") == 0) {
                        if (strcmp(v, "stream") && strcmp(v, "stencil")) {
                                fprintf(stderr,
                                        "%s: --kernel '%s' is not valid; valid: stream, stencil\n",
                                        P, v);
                                return -1;
                        }
                        mt->kernel = strcmp(v, "stream") == 0 ? STREAM : STENCIL;
                } else if (strcmp(a, "--load") == 0) {
                        int k = -1;
                        for (int p = 0; p < 5; p++)
                                if (strcmp(v, patterns[p]) == 0)
                                        k = p;
                        if (k < 0) {
                                fprintf(stderr,
                                        "%s: --load '%s' is not valid; valid: balanced, cluster, "
                                        "hotspot, drift, moving\n",
                                        P, v);
                                return -1;
                        }
                        mt->pattern = (enum pattern)k;
                } else if (strcmp(a, "--heavy") == 0) {
                        if (strcmp(v, "data") && strcmp(v, "passes")) {
                                fprintf(stderr,
                                        "%s: --heavy '%s' is not valid; valid: data, passes\n", P,
                                        v);
                                return -1;
                        }
                        heavy = v;
                } else if (strcmp(a, "--ws-mib") == 0) {
                        if (bench_parse_double(P, a, v, 1.0 / 64, 65536, &mt->ws_mib) < 0)
                                return -1;
                } else if (strcmp(a, "--factor") == 0) {
                        if (bench_parse_double(P, a, v, 1, 1000, &mt->factor) < 0)
                                return -1;
                } else {
                        long x, lo = 1, hi = 1000000;
                        long *f = strcmp(a, "--tasks") == 0         ? &mt->tasks
                                  : strcmp(a, "--passes") == 0      ? &mt->passes
                                  : strcmp(a, "--drift-steps") == 0 ? &mt->drift_steps
                                  : strcmp(a, "--width") == 0       ? &mt->width
                                                                    : NULL;
                        if (!f) {
                                fprintf(stderr, "%s: unknown option '%s'\n", P, a);
                                usage(stderr);
                                return -1;
                        }
                        if (f == &mt->passes)
                                hi = 1000;
                        if (f == &mt->width)
                                lo = 8, hi = 1 << 20;
                        if (bench_parse_long(P, a, v, lo, hi, &x) < 0)
                                return -1;
                        *f = x;
                }
                i++;
        }
        int moves = mt->pattern == DRIFT || mt->pattern == MOVING;
        if (heavy && strcmp(heavy, "data") == 0 && moves) {
                fprintf(stderr,
                        "%s: --heavy data needs a load that stays (balanced, cluster, hotspot): "
                        "a task's data cannot follow a moving load\n",
                        P);
                return -1;
        }
        mt->heavy = heavy ? (strcmp(heavy, "data") == 0 ? DATA : PASSES) : moves ? PASSES : DATA;
        if (mt->factor < 0)
                mt->factor = mt->pattern == CLUSTER ? 4 : 16;
        if (mt->drift_steps < 0)
                mt->drift_steps = mt->pattern == MOVING ? 5 : 400;
        /* presets: tiny, small, default, large */
        static const double ws[] = {0.25, 1, 8, 64};
        static const long iters[] = {12, 5000, 1500, 200};
        int z = bench_size_index(mt->c.size);
        if (mt->ws_mib < 0)
                mt->ws_mib = ws[z];
        if (mt->c.iters < 0)
                mt->c.iters = iters[z];
        return 0;
}

int main(int argc, char **argv)
{
        struct mt mt;
        if (parse(&mt, argc, argv) < 0)
                return 2;
        if (setup(&mt) < 0) {
                fprintf(stderr, "memtask: out of memory (%g MiB over %ld tasks)\n", mt.ws_mib,
                        mt.tasks);
                return 2;
        }
        char load[64];
        snprintf(load, sizeof load, "%s", patterns[mt.pattern]);
        struct bench_kernel k = {.bench = "memtask",
                                 .load = load,
                                 .k = mt.kernel == STENCIL ? 1 : 0,
                                 .ntasks = mt.tasks,
                                 .ctx = &mt,
                                 .task = mt_task_ptr,
                                 .bytes = mt_bytes,
                                 .links = mt.kernel == STENCIL ? mt_links : NULL,
                                 .step = mt_step,
                                 .checksum = mt_checksum,
                                 .json_extra = mt_extra};
        int rc = bench_run(&mt.c, &k);
        for (long i = 0; i < mt.tasks; i++)
                free(mt.task[i].m);
        free(mt.task);
        return rc;
}
