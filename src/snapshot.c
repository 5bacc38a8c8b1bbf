/*
 * snapshot.c — turns the runtime's measurement window into the immutable snapshot a policy reads.
 *
 * Removed tasks are left out (the snapshot is compact), costs become seconds per step over the
 * window (each task's median step, scaled so that each worker's tasks add up to its mean: robust to
 * a thread being descheduled in the middle of a task), links become a symmetric CSR, and each
 * worker's tasks a CSR too. The buffers are kept between LB steps so that a rebalance allocates
 * nothing once the sizes are stable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct lbomp__snapbuf {
        struct lbomp__snap s;
        double *cost, *link_bytes, *bg;
        uint32_t *worker, *id, *link_off, *link_dst, *wtask_off, *wtask, *dest, *index;
        uint64_t *bytes;
        int32_t *home, *wnode;
        size_t cap_t, cap_l, cap_w, cap_i;
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
        free(b);
}

/* Median of n <= LBOMP__HIST values (the mean of the two middle ones when n is even). */
static double median(const float *v, uint32_t n)
{
        float a[LBOMP__HIST];
        for (uint32_t i = 0; i < n; i++) { /* insertion sort: n is at most 8 */
                uint32_t j = i;
                while (j > 0 && a[j - 1] > v[i]) {
                        a[j] = a[j - 1];
                        j--;
                }
                a[j] = v[i];
        }
        return n % 2 ? a[n / 2] : 0.5 * ((double)a[n / 2 - 1] + a[n / 2]);
}

uint32_t *lbomp__snap_dest(struct lbomp__snapbuf *b)
{
        return b->dest;
}

const struct lbomp__snap *lbomp__snapshot(struct lbomp *lb, struct lbomp__snapbuf *b, int *rc)
{
        uint32_t T = lb->nalive, P = (uint32_t)lb->nworkers;
        size_t L = 2 * lb->nlink;
        *rc = 0;
        if (T + 1 > b->cap_t) {
                size_t n = T + 1;
                if (LBOMP__GROW(b->cost, n) || LBOMP__GROW(b->worker, n) || LBOMP__GROW(b->id, n) ||
                    LBOMP__GROW(b->link_off, n) || LBOMP__GROW(b->wtask, n) ||
                    LBOMP__GROW(b->dest, n) || LBOMP__GROW(b->bytes, n) || LBOMP__GROW(b->home, n))
                        goto nomem;
                b->cap_t = n;
        }
        if (L > b->cap_l || !b->link_dst) {
                if (LBOMP__GROW(b->link_dst, L) || LBOMP__GROW(b->link_bytes, L))
                        goto nomem;
                b->cap_l = L;
        }
        if (P + 1 > b->cap_w) {
                if (LBOMP__GROW(b->bg, P + 1) || LBOMP__GROW(b->wtask_off, P + 1) ||
                    LBOMP__GROW(b->wnode, P + 1))
                        goto nomem;
                b->cap_w = P + 1;
        }
        if (lb->ntask > b->cap_i || !b->index) {
                if (LBOMP__GROW(b->index, lb->ntask))
                        goto nomem;
                b->cap_i = lb->ntask;
        }
        uint64_t steps = lb->steps - lb->win_first;
        double per = 1.0 / ((steps ? (double)steps : 1.0) * lb->clock.ticks_per_s);
        double tick_s = 1.0 / lb->clock.ticks_per_s;
        /* Robust: a task's cost is the median of its last steps (up to LBOMP__HIST), since a
         * thread that is descheduled (oversubscription, other processes) charges the whole pause
         * to the one task it was running; a mean would make that task look heavy. */
        uint32_t nh = steps >= 3 ? (uint32_t)(steps < LBOMP__HIST ? steps : LBOMP__HIST) : 0;
        /* Tasks in worker order, so that each worker's tasks are contiguous. */
        uint32_t k = 0;
        memset(b->wtask_off, 0, (P + 1) * sizeof *b->wtask_off);
        for (uint32_t w = 0; w < P; w++) {
                const struct lbomp__worker *wk = &lb->w[w];
                b->wtask_off[w] = k;
                for (uint32_t i = 0; i < wk->n; i++) {
                        uint32_t id = wk->tasks[i];
                        const struct lbomp__task *tk = &lb->task[id];
                        b->index[id] = k;
                        b->id[k] = id;
                        b->worker[k] = w;
                        b->cost[k] = lb->win_ticks[id] * per;
                        b->bytes[k] = tk->bytes;
                        b->home[k] = tk->home;
                        b->wtask[k] = k;
                        k++;
                }
                /* The medians are rescaled so that the worker's tasks still add up to the time
                 * it measured: the pauses are spread over its tasks instead of being lost. */
                double raw = 0, robust = 0;
                for (uint32_t i = b->wtask_off[w]; i < k && nh; i++) {
                        double m =
                                median(lb->win_hist + (size_t)b->id[i] * LBOMP__HIST, nh) * tick_s;
                        raw += b->cost[i];
                        robust += m;
                        b->cost[i] = m;
                }
                for (uint32_t i = b->wtask_off[w]; i < k && nh; i++)
                        b->cost[i] = robust > 0 ? b->cost[i] * (raw / robust)
                                                : lb->win_ticks[b->id[i]] * per;
                b->bg[w] = wk->win_bg_s / (steps ? (double)steps : 1.0);
                b->wnode[w] = wk->node;
        }
        b->wtask_off[P] = k;
        if (k != T) {
                *rc = -EFAULT; /* deques and task table disagree: a framework bug */
                return NULL;
        }
        /* Symmetric CSR of the links between live tasks. */
        memset(b->link_off, 0, (T + 1) * sizeof *b->link_off);
        for (size_t i = 0; i < lb->nlink; i++) {
                const struct lbomp__link *l = &lb->link[i];
                if (lb->task[l->a].worker == UINT32_MAX || lb->task[l->b].worker == UINT32_MAX)
                        continue;
                b->link_off[b->index[l->a] + 1]++;
                b->link_off[b->index[l->b] + 1]++;
        }
        for (uint32_t t = 0; t < T; t++)
                b->link_off[t + 1] += b->link_off[t];
        uint32_t *fill = b->dest; /* borrowed as cursors; the plan overwrites it */
        memcpy(fill, b->link_off, T * sizeof *fill);
        for (size_t i = 0; i < lb->nlink; i++) {
                const struct lbomp__link *l = &lb->link[i];
                if (lb->task[l->a].worker == UINT32_MAX || lb->task[l->b].worker == UINT32_MAX)
                        continue;
                uint32_t a = b->index[l->a], c = b->index[l->b];
                b->link_dst[fill[a]] = c;
                b->link_bytes[fill[a]++] = l->bytes;
                b->link_dst[fill[c]] = a;
                b->link_bytes[fill[c]++] = l->bytes;
        }
        memcpy(b->dest, b->worker, T * sizeof *b->dest);
        b->s = (struct lbomp__snap){
                .ntasks = T,
                .nworkers = P,
                .nnodes = (uint32_t)lb->topo.nnodes,
                .cost = b->cost,
                .worker = b->worker,
                .bytes = b->bytes,
                .home = b->home,
                .id = b->id,
                .link_off = b->link_off,
                .link_dst = b->link_dst,
                .link_bytes = b->link_bytes,
                .wtask_off = b->wtask_off,
                .wtask = b->wtask,
                .bg = b->bg,
                .wnode = b->wnode,
                .dist = lb->topo.dist,
                .seed = lb->cfg.seed ^ (0x9e3779b97f4a7c15ull * (lb->nlb + 1)),
                .lb_step = lb->nlb,
                .params = &lb->cfg.params,
        };
        return &b->s;
nomem:
        *rc = -ENOMEM;
        return NULL;
}
