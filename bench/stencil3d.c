/*
 * stencil3d.c — a 3-D Jacobi-like stencil in a block decomposition (after the PackDrop thesis's
 * Stencil 3D): the domain is BX×BY×BZ blocks of B³ cells; every step each block copies the faces
 * of its six neighbours into its ghost layers (real exchanges, from the previous step's buffer)
 * and applies the 7-point Jacobi update. Blocks near the domain's border carry extra physics
 * ("hot borders, cold centre"): cold + (hot − cold)·r² µs of a reference core, r the block's
 * normalised Chebyshev distance from the centre. Double buffering makes the result independent
 * of placement and order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kneighbor.h" /* WORK_PER_US */

struct st;

struct st_block {
        long i, x, y, z;
        struct st *st;
        double work_us;
        double *u[2]; /* (B+2)³ with ghost layers; step s writes u[s & 1] */
};

struct st {
        struct bench_opts c;
        long bx, by, bz, b, nblocks;
        double hot_us, cold_us;
        struct st_block *blk;
};

#define IDX(st, i, j, k)                                                                           \
        (((size_t)(i) * (size_t)((st)->b + 2) + (size_t)(j)) * (size_t)((st)->b + 2) + (size_t)(k))

static struct st_block *nb(struct st *st, long x, long y, long z)
{
        if (x < 0 || y < 0 || z < 0 || x >= st->bx || y >= st->by || z >= st->bz)
                return NULL;
        return &st->blk[(z * st->by + y) * st->bx + x];
}

/* Copies the neighbour's boundary plane into our ghost plane. axis 0..2, side -1/+1. */
static void ghost(struct st *st, struct st_block *me, double *g, int axis, int side, int prev)
{
        long B = st->b;
        struct st_block *o = nb(st, me->x + (axis == 0 ? side : 0), me->y + (axis == 1 ? side : 0),
                                me->z + (axis == 2 ? side : 0));
        if (!o)
                return; /* domain boundary: the ghost keeps its fixed value */
        const double *src = o->u[prev];
        long gi = side < 0 ? 0 : B + 1, si = side < 0 ? B : 1;
        for (long a = 1; a <= B; a++)
                for (long c = 1; c <= B; c++) {
                        size_t d = axis == 0   ? IDX(st, gi, a, c)
                                   : axis == 1 ? IDX(st, a, gi, c)
                                               : IDX(st, a, c, gi);
                        size_t s = axis == 0   ? IDX(st, si, a, c)
                                   : axis == 1 ? IDX(st, a, si, c)
                                               : IDX(st, a, c, si);
                        g[d] = src[s];
                }
}

static void st_step(void *task, long step)
{
        struct st_block *me = task;
        struct st *st = me->st;
        int prev = (int)((step + 1) & 1), cur = (int)(step & 1);
        double *p = me->u[prev], *q = me->u[cur];
        /* Our own previous buffer's ghosts are read by nobody else: safe to fill now. */
        for (int axis = 0; axis < 3; axis++)
                for (int side = -1; side <= 1; side += 2)
                        ghost(st, me, p, axis, side, prev);
        long B = st->b;
        for (long i = 1; i <= B; i++)
                for (long j = 1; j <= B; j++)
                        for (long k = 1; k <= B; k++)
                                q[IDX(st, i, j, k)] =
                                        (p[IDX(st, i - 1, j, k)] + p[IDX(st, i + 1, j, k)] +
                                         p[IDX(st, i, j - 1, k)] + p[IDX(st, i, j + 1, k)] +
                                         p[IDX(st, i, j, k - 1)] + p[IDX(st, i, j, k + 1)] +
                                         2.0 * p[IDX(st, i, j, k)]) /
                                        8.0;
        size_t c = IDX(st, 1, 1, 1);
        double acc = bench_burn(q + c, (size_t)B, (long)llround(me->work_us * WORK_PER_US));
        q[c] += 1e-9 * acc;
}

static int setup(struct st *st)
{
        st->nblocks = st->bx * st->by * st->bz;
        st->blk = calloc((size_t)st->nblocks, sizeof *st->blk);
        if (!st->blk)
                return -1;
        size_t n = IDX(st, st->b + 1, st->b + 1, st->b + 1) + 1;
        for (long z = 0; z < st->bz; z++)
                for (long y = 0; y < st->by; y++)
                        for (long x = 0; x < st->bx; x++) {
                                struct st_block *m = nb(st, x, y, z);
                                *m = (struct st_block){
                                        .i = m - st->blk, .x = x, .y = y, .z = z, .st = st};
                                double rx =
                                        st->bx > 1
                                                ? fabs(2.0 * (double)x / (double)(st->bx - 1) - 1)
                                                : 0;
                                double ry =
                                        st->by > 1
                                                ? fabs(2.0 * (double)y / (double)(st->by - 1) - 1)
                                                : 0;
                                double rz =
                                        st->bz > 1
                                                ? fabs(2.0 * (double)z / (double)(st->bz - 1) - 1)
                                                : 0;
                                double r = fmax(rx, fmax(ry, rz));
                                m->work_us = st->cold_us + (st->hot_us - st->cold_us) * r * r;
                                for (int b = 0; b < 2; b++) {
                                        m->u[b] = malloc(n * sizeof(double));
                                        if (!m->u[b])
                                                return -1;
                                        /* ghosts start at the fixed boundary value 1, cells at 0 */
                                        for (size_t e = 0; e < n; e++)
                                                m->u[b][e] = 1.0;
                                        for (long i = 1; i <= st->b; i++)
                                                for (long j = 1; j <= st->b; j++)
                                                        for (long k = 1; k <= st->b; k++)
                                                                m->u[b][IDX(st, i, j, k)] = 0.0;
                                }
                        }
        return 0;
}

static void *st_task(void *ctx, long i)
{
        return &((struct st *)ctx)->blk[i];
}

static size_t st_bytes(void *ctx, long i)
{
        (void)i;
        const struct st *st = ctx;
        return 2 * (size_t)(st->b + 2) * (size_t)(st->b + 2) * (size_t)(st->b + 2) * sizeof(double);
}

static int st_links(void *ctx, lbomp_t *lb)
{
        struct st *st = ctx;
        size_t face = (size_t)(st->b * st->b) * sizeof(double) * 2; /* both directions */
        int rc = 0;
        for (long i = 0; rc == 0 && i < st->nblocks; i++) {
                struct st_block *m = &st->blk[i], *o;
                if (rc == 0 && (o = nb(st, m->x + 1, m->y, m->z)))
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)o->i, face);
                if (rc == 0 && (o = nb(st, m->x, m->y + 1, m->z)))
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)o->i, face);
                if (rc == 0 && (o = nb(st, m->x, m->y, m->z + 1)))
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)o->i, face);
        }
        return rc;
}

static double st_checksum(void *ctx)
{
        const struct st *st = ctx;
        int last = (int)((st->c.iters - 1) & 1);
        double s = 0;
        for (long b = 0; b < st->nblocks; b++)
                for (long i = 1; i <= st->b; i++)
                        for (long j = 1; j <= st->b; j++)
                                for (long k = 1; k <= st->b; k++)
                                        s += st->blk[b].u[last][IDX(st, i, j, k)] *
                                             (double)(1 + (i + 2 * j + 3 * k) % 5);
        return s;
}

static void st_extra(void *ctx, FILE *out)
{
        const struct st *st = ctx;
        fprintf(out, ",\"blocks\":[%ld,%ld,%ld],\"block\":%ld,\"hot_us\":%g,\"cold_us\":%g", st->bx,
                st->by, st->bz, st->b, st->hot_us, st->cold_us);
}

static void usage(FILE *out)
{
        fprintf(out,
                "usage: stencil3d [--blocks X,Y,Z] [--block B] [--hot-us H] [--cold-us C]\n"
                "                 [common options]\n"
                "3-D Jacobi over X×Y×Z blocks of B³ cells with ghost exchanges; extra work per\n"
                "block C + (H − C)·r² µs, r its distance from the centre (1 on the border).\n");
        bench_usage_common(out);
}

int main(int argc, char **argv)
{
        struct st st = {.bx = -1, .b = -1, .hot_us = -1, .cold_us = -1};
        bench_opts_init(&st.c);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                int r = bench_opt(&st.c, "stencil3d", argc, argv, &i);
                if (r < 0)
                        return 2;
                if (r > 0)
                        continue;
                if (strcmp(a, "--blocks") == 0 && v) {
                        char tail;
                        if (sscanf(v, "%ld,%ld,%ld%c", &st.bx, &st.by, &st.bz, &tail) != 3 ||
                            st.bx < 1 || st.by < 1 || st.bz < 1 ||
                            st.bx * st.by * st.bz > 1000000) {
                                fprintf(stderr,
                                        "stencil3d: --blocks '%s' is not valid; expected "
                                        "X,Y,Z, each >= 1, at most 10^6 blocks\n",
                                        v);
                                return 2;
                        }
                } else if (strcmp(a, "--block") == 0) {
                        if (bench_parse_long("stencil3d", a, v, 1, 256, &st.b) < 0)
                                return 2;
                } else if (strcmp(a, "--hot-us") == 0) {
                        if (bench_parse_double("stencil3d", a, v, 0, 1e7, &st.hot_us) < 0)
                                return 2;
                } else if (strcmp(a, "--cold-us") == 0) {
                        if (bench_parse_double("stencil3d", a, v, 0, 1e7, &st.cold_us) < 0)
                                return 2;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else {
                        fprintf(stderr, "stencil3d: unknown or incomplete option '%s'\n", a);
                        usage(stderr);
                        return 2;
                }
                i++;
        }
        static const long sides[] = {4, 6, 8, 12}, bs[] = {4, 8, 10, 12},
                          iters[] = {12, 40, 60, 100};
        static const double hots[] = {5, 40, 80, 80}, colds[] = {1, 3, 5, 5};
        int z = bench_size_index(st.c.size);
        if (st.bx < 0)
                st.bx = st.by = st.bz = sides[z];
        if (st.b < 0)
                st.b = bs[z];
        if (st.c.iters < 0)
                st.c.iters = iters[z];
        if (st.hot_us < 0)
                st.hot_us = hots[z];
        if (st.cold_us < 0)
                st.cold_us = colds[z];
        if (setup(&st) < 0) {
                fprintf(stderr, "stencil3d: out of memory\n");
                return 2;
        }
        struct bench_kernel k = {.bench = "stencil3d",
                                 .load = "hot-border",
                                 .k = 6,
                                 .ntasks = st.nblocks,
                                 .ctx = &st,
                                 .task = st_task,
                                 .bytes = st_bytes,
                                 .links = st_links,
                                 .step = st_step,
                                 .checksum = st_checksum,
                                 .json_extra = st_extra};
        int rc = bench_run(&st.c, &k);
        for (long b = 0; b < st.nblocks; b++)
                free(st.blk[b].u[0]), free(st.blk[b].u[1]);
        free(st.blk);
        return rc;
}
