/*
 * snapshot.c — the one builder of the immutable snapshot a policy reads (snapshot.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "util.h"

struct blink {
        uint32_t a, b; /* snapshot indices */
        double bytes;
};

struct lbomp__snapbuf {
        struct lbomp__snap s;
        double *cost, *link_bytes, *bg, *speed;
        uint32_t *worker, *id, *link_off, *link_dst, *wtask_off, *wtask, *dest, *index;
        uint64_t *bytes;
        int32_t *home, *wnode;
        struct blink *links;
        size_t nlinks;
        size_t cap_t, cap_l, cap_w, cap_i, cap_bl;
};

struct lbomp__snapbuf *lbomp__snapbuf_create(void)
{
        return calloc(1, sizeof(struct lbomp__snapbuf));
}

void lbomp__snapbuf_destroy(struct lbomp__snapbuf *b)
{
        if (!b)
                return;
        free(b->cost);
        free(b->link_bytes);
        free(b->bg);
        free(b->speed);
        free(b->worker);
        free(b->id);
        free(b->link_off);
        free(b->link_dst);
        free(b->wtask_off);
        free(b->wtask);
        free(b->dest);
        free(b->index);
        free(b->bytes);
        free(b->home);
        free(b->wnode);
        free(b->links);
        free(b);
}

int lbomp__snap_begin(struct lbomp__snapbuf *b, uint32_t nworkers, uint32_t nnodes,
                      const double *dist, uint32_t ntasks, uint32_t id_space, size_t nlinks)
{
        size_t T = (size_t)ntasks + 1, P = (size_t)nworkers + 1, L = 2 * nlinks;
        if (T > b->cap_t) {
                if (LBOMP__GROW(b->cost, T) || LBOMP__GROW(b->worker, T) || LBOMP__GROW(b->id, T) ||
                    LBOMP__GROW(b->link_off, T) || LBOMP__GROW(b->wtask, T) ||
                    LBOMP__GROW(b->dest, T) || LBOMP__GROW(b->bytes, T) || LBOMP__GROW(b->home, T))
                        return -ENOMEM;
                b->cap_t = T;
        }
        if (L > b->cap_l || !b->link_dst) {
                if (LBOMP__GROW(b->link_dst, L) || LBOMP__GROW(b->link_bytes, L))
                        return -ENOMEM;
                b->cap_l = L;
        }
        if (nlinks > b->cap_bl || !b->links) {
                if (LBOMP__GROW(b->links, nlinks))
                        return -ENOMEM;
                b->cap_bl = nlinks;
        }
        if (P > b->cap_w) {
                if (LBOMP__GROW(b->bg, P) || LBOMP__GROW(b->speed, P) ||
                    LBOMP__GROW(b->wtask_off, P) || LBOMP__GROW(b->wnode, P))
                        return -ENOMEM;
                b->cap_w = P;
        }
        if (id_space > b->cap_i || !b->index) {
                if (LBOMP__GROW(b->index, id_space))
                        return -ENOMEM;
                b->cap_i = id_space;
        }
        memset(b->bg, 0, nworkers * sizeof *b->bg);
        memset(b->wnode, 0, nworkers * sizeof *b->wnode);
        for (uint32_t w = 0; w < nworkers; w++)
                b->speed[w] = 1.0;
        b->nlinks = 0;
        b->s = (struct lbomp__snap){.nworkers = nworkers, .nnodes = nnodes, .dist = dist};
        return 0;
}

void lbomp__snap_worker(struct lbomp__snapbuf *b, uint32_t w, double bg, int32_t node)
{
        b->bg[w] = bg;
        b->wnode[w] = node;
}

void lbomp__snap_speed(struct lbomp__snapbuf *b, uint32_t w, double speed)
{
        b->speed[w] = speed > 0 && speed < INFINITY ? speed : 1.0;
}

uint32_t lbomp__snap_task(struct lbomp__snapbuf *b, uint32_t worker, uint32_t id, double cost,
                          uint64_t bytes, int32_t home)
{
        uint32_t k = b->s.ntasks++;
        b->index[id] = k;
        b->id[k] = id;
        b->worker[k] = worker;
        b->cost[k] = cost;
        b->bytes[k] = bytes;
        b->home[k] = home;
        return k;
}

void lbomp__snap_link(struct lbomp__snapbuf *b, uint32_t id_a, uint32_t id_b, double bytes)
{
        b->links[b->nlinks++] = (struct blink){b->index[id_a], b->index[id_b], bytes};
}

void lbomp__snap_rebuild(struct lbomp__snapbuf *b)
{
        uint32_t T = b->s.ntasks, P = b->s.nworkers;
        uint32_t *off = b->wtask_off;
        memset(off, 0, ((size_t)P + 1) * sizeof *off);
        for (uint32_t t = 0; t < T; t++)
                off[b->worker[t] + 1]++;
        for (uint32_t w = 0; w < P; w++)
                off[w + 1] += off[w];
        /* Fill with the starts as cursors, then shift them back. */
        for (uint32_t t = 0; t < T; t++)
                b->wtask[off[b->worker[t]]++] = t;
        memmove(off + 1, off, (size_t)P * sizeof *off);
        off[0] = 0;
}

const struct lbomp__snap *lbomp__snap_end(struct lbomp__snapbuf *b, uint64_t seed, uint64_t lb_step,
                                          const struct lbomp__params *params)
{
        uint32_t T = b->s.ntasks;
        lbomp__snap_rebuild(b);
        /* Symmetric CSR of the links, each appended at both ends in declaration order. */
        memset(b->link_off, 0, ((size_t)T + 1) * sizeof *b->link_off);
        for (size_t i = 0; i < b->nlinks; i++) {
                b->link_off[b->links[i].a + 1]++;
                b->link_off[b->links[i].b + 1]++;
        }
        for (uint32_t t = 0; t < T; t++)
                b->link_off[t + 1] += b->link_off[t];
        uint32_t *fill = b->dest; /* borrowed as cursors; filled with the mapping below */
        memcpy(fill, b->link_off, T * sizeof *fill);
        for (size_t i = 0; i < b->nlinks; i++) {
                const struct blink *l = &b->links[i];
                b->link_dst[fill[l->a]] = l->b;
                b->link_bytes[fill[l->a]++] = l->bytes;
                b->link_dst[fill[l->b]] = l->a;
                b->link_bytes[fill[l->b]++] = l->bytes;
        }
        memcpy(b->dest, b->worker, T * sizeof *b->dest);
        b->s.cost = b->cost;
        b->s.worker = b->worker;
        b->s.bytes = b->bytes;
        b->s.home = b->home;
        b->s.id = b->id;
        b->s.link_off = b->link_off;
        b->s.link_dst = b->link_dst;
        b->s.link_bytes = b->link_bytes;
        b->s.wtask_off = b->wtask_off;
        b->s.wtask = b->wtask;
        b->s.bg = b->bg;
        b->s.speed = b->speed;
        lbomp__snap_speeds(&b->s);
        b->s.wnode = b->wnode;
        b->s.seed = seed;
        b->s.lb_step = lb_step;
        b->s.params = params;
        return &b->s;
}

void lbomp__snap_set_hist(struct lbomp__snapbuf *b, struct lbomp__auto_hist *h)
{
        b->s.hist = h;
}

uint32_t *lbomp__snap_dest(struct lbomp__snapbuf *b)
{
        return b->dest;
}

struct lbomp__snap_arrays lbomp__snap_arrays(struct lbomp__snapbuf *b)
{
        return (struct lbomp__snap_arrays){.cost = b->cost,
                                           .worker = b->worker,
                                           .bytes = b->bytes,
                                           .home = b->home,
                                           .id = b->id,
                                           .bg = b->bg,
                                           .speed = b->speed,
                                           .wnode = b->wnode};
}
