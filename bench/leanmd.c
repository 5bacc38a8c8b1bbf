/*
 * leanmd.c — a particle-in-cells workload in the spirit of Charm++'s LeanMD: a periodic C×C×C box
 * of cells, each owning the particles inside it. Every step a cell computes short-range repulsion
 * between its particles and those of its 26 neighbours, moves them along a slow rotating flow, and
 * hands the ones that leave to the neighbouring cell. A dense blob of particles off the axis turns
 * with the flow, so which cells are expensive (cost ~ own × neighbourhood particles) changes step
 * by step. Every exchange reads the previous step's buffers in a fixed order, so the result does
 * not depend on placement, order or threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct part {
        double x, y, z;
};

struct md;

struct cell {
        long i, x, y, z;
        struct md *md;
        struct part *out[2]; /* step s writes out[s & 1], grouped by destination direction */
        long goff[2][28];    /* group g of out[b] is out[b][goff[b][g] .. goff[b][g+1]) */
        size_t cap[2];
        struct part *own; /* scratch: the particles gathered at the start of a step */
        size_t own_cap;
};

struct md {
        struct bench_opts c;
        long C, base, blob;
        double cutoff, repulsion, omega;
        struct cell *cell;
        long ncells;
};

/* Direction g in 0..26 is the offset (g%3−1, g/3%3−1, g/9−1); 13 is the cell itself. */
static long dir_cell(const struct md *md, const struct cell *c, int g, int sign)
{
        long C = md->C;
        long x = (c->x + sign * (g % 3 - 1) + C) % C, y = (c->y + sign * (g / 3 % 3 - 1) + C) % C,
             z = (c->z + sign * (g / 9 - 1) + C) % C;
        return (z * C + y) * C + x;
}

static int reserve(struct part **p, size_t *cap, size_t n)
{
        if (n <= *cap)
                return 0;
        size_t c = *cap ? *cap : 16;
        while (c < n)
                c *= 2;
        struct part *q = realloc(*p, c * sizeof *q);
        if (!q)
                return -1;
        *p = q, *cap = c;
        return 0;
}

static double wrap(double d, double C)
{
        return d - C * nearbyint(d / C);
}

static void md_step(void *task, long step)
{
        struct cell *c = task;
        struct md *md = c->md;
        int prev = (int)((step + 1) & 1), cur = (int)(step & 1);
        double C = (double)md->C, half = C / 2, rc2 = md->cutoff * md->cutoff;
        /* 1. gather: what neighbour c − δ(g) sent in direction g last step is ours now */
        size_t n = 0;
        for (int g = 0; g < 27; g++) {
                const struct cell *o = &md->cell[dir_cell(md, c, g, -1)];
                n += (size_t)(o->goff[prev][g + 1] - o->goff[prev][g]);
        }
        if (reserve(&c->own, &c->own_cap, n) < 0 || reserve(&c->out[cur], &c->cap[cur], n) < 0)
                abort(); /* a benchmark, not the library: out of memory ends the run */
        n = 0;
        for (int g = 0; g < 27; g++) {
                const struct cell *o = &md->cell[dir_cell(md, c, g, -1)];
                size_t k = (size_t)(o->goff[prev][g + 1] - o->goff[prev][g]);
                memcpy(c->own + n, o->out[prev] + o->goff[prev][g], k * sizeof *c->own);
                n += k;
        }
        /* 2. forces from every particle the neighbourhood held after the last step */
        struct part *np = malloc((n ? n : 1) * sizeof *np);
        int *dest = malloc((n ? n : 1) * sizeof *dest);
        if (!np || !dest)
                abort();
        for (size_t p = 0; p < n; p++) {
                struct part a = c->own[p];
                double fx = 0, fy = 0, fz = 0;
                for (int g = 0; g < 27; g++) {
                        const struct cell *o = &md->cell[dir_cell(md, c, g, +1)];
                        const struct part *q = o->out[prev];
                        for (long j = 0; j < o->goff[prev][27]; j++) {
                                double dx = wrap(a.x - q[j].x, C), dy = wrap(a.y - q[j].y, C),
                                       dz = wrap(a.z - q[j].z, C);
                                double r2 = dx * dx + dy * dy + dz * dz;
                                if (r2 >= rc2 || r2 == 0.0)
                                        continue;
                                double r = sqrt(r2), f = md->repulsion * (md->cutoff - r) / r;
                                fx += f * dx, fy += f * dy, fz += f * dz;
                        }
                }
                /* 3. move: rotating flow about the box's x axis plus the repulsion, at most 0.45
                 * of a cell per step so that a particle only ever moves to a neighbour */
                double vx = fx, vy = -md->omega * (a.z - half) + fy,
                       vz = md->omega * (a.y - half) + fz;
                vx = fmax(-0.45, fmin(0.45, vx)), vy = fmax(-0.45, fmin(0.45, vy));
                vz = fmax(-0.45, fmin(0.45, vz));
                struct part b = {fmod(a.x + vx + C, C), fmod(a.y + vy + C, C),
                                 fmod(a.z + vz + C, C)};
                long cx = (long)b.x, cy = (long)b.y, cz = (long)b.z;
                int dx = (int)((cx - c->x + md->C + 1) % md->C) - 1,
                    dy = (int)((cy - c->y + md->C + 1) % md->C) - 1,
                    dz = (int)((cz - c->z + md->C + 1) % md->C) - 1;
                if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || dz < -1 || dz > 1)
                        abort(); /* cannot happen: displacement < 1 cell */
                np[p] = b;
                dest[p] = (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
        }
        /* 4. publish, grouped by destination (stable: the order stays deterministic) */
        long cnt[28] = {0};
        for (size_t p = 0; p < n; p++)
                cnt[dest[p] + 1]++;
        for (int g = 0; g < 27; g++)
                cnt[g + 1] += cnt[g];
        memcpy(c->goff[cur], cnt, sizeof cnt);
        for (size_t p = 0; p < n; p++)
                c->out[cur][cnt[dest[p]]++] = np[p];
        free(np);
        free(dest);
}

static int setup(struct md *md)
{
        long C = md->C;
        md->ncells = C * C * C;
        md->cell = calloc((size_t)md->ncells, sizeof *md->cell);
        if (!md->cell)
                return -1;
        /* the blob: a ball of radius 0.3·C centred well off the rotation axis (the x axis through
         * the centre), so it turns through the z halves that a static split gives two threads */
        double bx = 0.5 * (double)C, by = 0.5 * (double)C, bz = 0.78 * (double)C,
               br = 0.3 * (double)C;
        for (long i = 0; i < md->ncells; i++) {
                struct cell *c = &md->cell[i];
                c->i = i, c->x = i % C, c->y = i / C % C, c->z = i / (C * C), c->md = md;
                double dx = (double)c->x + 0.5 - bx, dy = (double)c->y + 0.5 - by,
                       dz = (double)c->z + 0.5 - bz;
                long np = md->base + (dx * dx + dy * dy + dz * dz <= br * br ? md->blob : 0);
                /* The initial particles sit in "last step's" buffer (index 1, read at step 0),
                 * all in group 13: sent to the cell itself. */
                if (reserve(&c->out[1], &c->cap[1], (size_t)np) < 0)
                        return -1;
                for (long p = 0; p < np; p++) {
                        unsigned long long key =
                                (unsigned long long)(md->c.seed * 1000003 + i * 4096 + p) * 3;
                        c->out[1][p] = (struct part){(double)c->x + bench_u01(key),
                                                     (double)c->y + bench_u01(key + 1),
                                                     (double)c->z + bench_u01(key + 2)};
                }
                for (int g = 0; g <= 27; g++)
                        c->goff[1][g] = g <= 13 ? 0 : np;
        }
        return 0;
}

static void *md_task(void *ctx, long i)
{
        return &((struct md *)ctx)->cell[i];
}

static size_t md_bytes(void *ctx, long i)
{
        const struct md *md = ctx;
        return (size_t)md->cell[i].goff[1][27] * sizeof(struct part);
}

static int md_links(void *ctx, lbomp_t *lb)
{
        struct md *md = ctx;
        int rc = 0;
        /* each cell reads the whole neighbourhood every step: half the 26 directions per cell
         * declares every pair once */
        for (long i = 0; rc == 0 && i < md->ncells; i++)
                for (int g = 14; rc == 0 && g < 27; g++) {
                        long j = dir_cell(md, &md->cell[i], g, +1);
                        if (j == i)
                                continue;
                        size_t b = (size_t)(md->cell[i].goff[1][27] + md->cell[j].goff[1][27]) *
                                   sizeof(struct part);
                        rc = lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)j, b ? b : 1);
                }
        return rc;
}

static double md_checksum(void *ctx)
{
        const struct md *md = ctx;
        int last = (int)((md->c.iters - 1) & 1);
        double s = 0;
        for (long i = 0; i < md->ncells; i++) {
                const struct cell *c = &md->cell[i];
                for (long p = 0; p < c->goff[last][27]; p++)
                        s += c->out[last][p].x + 2 * c->out[last][p].y + 3 * c->out[last][p].z;
                s += 1000.0 * (double)c->goff[last][27] * (double)(i % 13 + 1);
        }
        return s;
}

static void md_extra(void *ctx, FILE *out)
{
        const struct md *md = ctx;
        long total = 0;
        for (long i = 0; i < md->ncells; i++)
                total += md->cell[i].goff[1][27];
        fprintf(out, ",\"cells\":%ld,\"particles\":%ld", md->C, total);
}

static void usage(FILE *out)
{
        fprintf(out, "usage: leanmd [--cells C] [--base N] [--blob M] [common options]\n"
                     "C×C×C periodic cells, N particles per cell plus M more in a rotating blob;\n"
                     "cost per cell ~ its particles × its neighbourhood's particles.\n");
        bench_usage_common(out);
}

int main(int argc, char **argv)
{
        struct md md = {.C = -1, .base = -1, .blob = -1, .cutoff = 1.0, .repulsion = 0.002};
        bench_opts_init(&md.c);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                int r = bench_opt(&md.c, "leanmd", argc, argv, &i);
                if (r < 0)
                        return 2;
                if (r > 0)
                        continue;
                if (strcmp(a, "--cells") == 0) {
                        if (bench_parse_long("leanmd", a, v, 3, 100, &md.C) < 0)
                                return 2;
                } else if (strcmp(a, "--base") == 0) {
                        if (bench_parse_long("leanmd", a, v, 0, 4096, &md.base) < 0)
                                return 2;
                } else if (strcmp(a, "--blob") == 0) {
                        if (bench_parse_long("leanmd", a, v, 0, 4096, &md.blob) < 0)
                                return 2;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else {
                        fprintf(stderr, "leanmd: unknown or incomplete option '%s'\n", a);
                        usage(stderr);
                        return 2;
                }
                i++;
        }
        static const long cs[] = {3, 5, 6, 8}, bases[] = {2, 2, 2, 2}, blobs[] = {10, 60, 80, 80},
                          iters[] = {12, 40, 60, 100};
        int z = bench_size_index(md.c.size);
        if (md.C < 0)
                md.C = cs[z];
        if (md.base < 0)
                md.base = bases[z];
        if (md.blob < 0)
                md.blob = blobs[z];
        if (md.c.iters < 0)
                md.c.iters = iters[z];
        /* one turn of the flow in about 1.5 runs of the default size, at most 0.3 cell/step */
        md.omega = 0.3 / (0.71 * (double)md.C);
        if (setup(&md) < 0) {
                fprintf(stderr, "leanmd: out of memory\n");
                return 2;
        }
        struct bench_kernel k = {.bench = "leanmd",
                                 .load = "rotating-blob",
                                 .k = 26,
                                 .ntasks = md.ncells,
                                 .ctx = &md,
                                 .task = md_task,
                                 .bytes = md_bytes,
                                 .links = md_links,
                                 .step = md_step,
                                 .checksum = md_checksum,
                                 .json_extra = md_extra};
        int rc = bench_run(&md.c, &k);
        for (long i = 0; i < md.ncells; i++)
                free(md.cell[i].out[0]), free(md.cell[i].out[1]), free(md.cell[i].own);
        free(md.cell);
        return rc;
}
