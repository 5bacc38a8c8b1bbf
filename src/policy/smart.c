/*
 * smart.c — the centralized threshold balancer SmartLB (dos Santos et al., WSCAD 2018), as
 * POLICIES.md restates it: nothing moves while 1 − min/max is within the threshold; otherwise the
 * tasks are walked in order and a task of a worker at or above the average goes to the currently
 * least loaded worker if that worker stays at or below the average. Few migrations by design.
 * (The paper's listing compares min/max the wrong way round; its text states the rule used here.)
 */
#include <errno.h>
#include <stdlib.h>

#include "../policy.h"

/* Min-heap of workers by load, ties by id, with positions for updates in both directions. */
struct wheap {
        uint32_t *w, *pos;
        double *load;
        uint32_t n;
};

static bool before(const struct wheap *h, uint32_t a, uint32_t b)
{
        return h->load[a] < h->load[b] || (h->load[a] == h->load[b] && a < b);
}

static void put(struct wheap *h, uint32_t i, uint32_t w)
{
        h->w[i] = w;
        h->pos[w] = i;
}

static void up(struct wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        while (i && before(h, w, h->w[(i - 1) / 2])) {
                put(h, i, h->w[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
        put(h, i, w);
}

static void down(struct wheap *h, uint32_t i)
{
        uint32_t w = h->w[i];
        for (;;) {
                uint32_t l = 2 * i + 1, m = l;
                if (l >= h->n)
                        break;
                if (l + 1 < h->n && before(h, h->w[l + 1], h->w[l]))
                        m = l + 1;
                if (!before(h, h->w[m], w))
                        break;
                put(h, i, h->w[m]);
                i = m;
        }
        put(h, i, w);
}

static int smart_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        uint32_t P = s->nworkers;
        double thr = s->params ? s->params->smart_threshold : 0.05;
        struct wheap h = {.n = P};
        h.w = malloc(P * sizeof *h.w);
        h.pos = malloc(P * sizeof *h.pos);
        h.load = malloc(P * sizeof *h.load);
        int rc = 0;
        if (!h.w || !h.pos || !h.load) {
                rc = -ENOMEM;
                goto out;
        }
        lbomp__loads(s, s->worker, h.load);
        double max, avg, min = h.load[0];
        lbomp__imbalance(h.load, P, &max, &avg);
        for (uint32_t w = 1; w < P; w++)
                min = h.load[w] < min ? h.load[w] : min;
        if (!(max > 0) || 1.0 - min / max <= thr)
                goto out; /* within the threshold: nothing moves */
        for (uint32_t w = 0; w < P; w++)
                put(&h, w, w);
        for (uint32_t i = P / 2; i-- > 0;)
                down(&h, i);
        for (uint32_t t = 0; t < s->ntasks; t++) {
                uint32_t from = dest[t], to = h.w[0];
                double c = s->cost[t];
                if (to == from || !(c > 0) || h.load[from] < avg || h.load[to] + c > avg)
                        continue;
                dest[t] = to;
                h.load[to] += c;
                h.load[from] -= c;
                down(&h, h.pos[to]);
                up(&h, h.pos[from]);
        }
out:
        free(h.w);
        free(h.pos);
        free(h.load);
        return rc;
}

const struct lbomp__policy lbomp__policy_smart = {
        .name = "smart",
        .help = "centralized: move tasks from workers above the average to the least loaded one "
                "while it stays at the average (SmartLB)",
        .kind = LBOMP__CENTRAL,
        .plan = smart_plan,
};
