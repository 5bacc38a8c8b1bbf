/*
 * heap.c — a min-heap of workers keyed by load, with each worker's position so that a load can
 * change in either direction (policy.h). Shared by greedy, hierarchical and smart.
 */
#include <errno.h>
#include <stdlib.h>

#include "../policy.h"

int lbomp__wheap_init(struct lbomp__wheap *h, uint32_t n, const uint32_t *id)
{
        *h = (struct lbomp__wheap){.n = n, .id = id};
        h->w = malloc((size_t)n * sizeof *h->w + 1);
        h->pos = malloc((size_t)n * sizeof *h->pos + 1);
        h->load = malloc((size_t)n * sizeof *h->load + 1);
        return h->w && h->pos && h->load ? 0 : -ENOMEM;
}

void lbomp__wheap_free(struct lbomp__wheap *h)
{
        free(h->w);
        free(h->pos);
        free(h->load);
}

static bool wheap_before(const struct lbomp__wheap *h, uint32_t a, uint32_t b)
{
        if (h->load[a] != h->load[b])
                return h->load[a] < h->load[b];
        return h->id ? h->id[a] < h->id[b] : a < b;
}

static void wheap_put(struct lbomp__wheap *h, uint32_t i, uint32_t w)
{
        h->w[i] = w;
        h->pos[w] = i;
}

void lbomp__wheap_up(struct lbomp__wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        while (i && wheap_before(h, w, h->w[(i - 1) / 2])) {
                wheap_put(h, i, h->w[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
        wheap_put(h, i, w);
}

void lbomp__wheap_down(struct lbomp__wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        for (;;) {
                uint32_t l = 2 * i + 1, m = l;
                if (l >= h->n)
                        break;
                if (l + 1 < h->n && wheap_before(h, h->w[l + 1], h->w[l]))
                        m = l + 1;
                if (!wheap_before(h, h->w[m], w))
                        break;
                wheap_put(h, i, h->w[m]);
                i = m;
        }
        wheap_put(h, i, w);
}

void lbomp__wheap_build(struct lbomp__wheap *h)
{
        for (uint32_t i = 0; i < h->n; i++)
                wheap_put(h, i, i);
        for (uint32_t i = h->n / 2; i-- > 0;)
                lbomp__wheap_down(h, i);
}
