/*
 * refine.c — centralized refinement (Charm++ RefineLB): move few tasks, from the heaviest worker
 * to light ones, until no worker exceeds f × average. A worker that gives never receives, so its
 * tasks are sorted once. When an attempt gets stuck, the factor is loosened to the first that
 * trivially succeeds and then binary-searched down to the smallest that succeeds, every attempt
 * starting again from the original mapping (Charm++'s multirefine).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"

struct refine {
        const struct lbomp__snap *s;
        uint32_t *by_worker; /* task indices grouped by worker, each group heaviest first */
        uint32_t *group_off; /* [P + 1] */
        double *load0, *load;
        uint32_t *map;
        uint8_t *moved;
        uint8_t *light;
        uint32_t *heavy; /* max-heap of heavy workers by load */
        uint32_t nheavy;
        double avg;
};

static bool heavier(const struct refine *r, uint32_t a, uint32_t b)
{
        return r->load[a] > r->load[b] || (r->load[a] == r->load[b] && a < b);
}

static void heap_down(struct refine *r, uint32_t i)
{
        for (;;) {
                uint32_t l = 2 * i + 1, m = i;
                if (l < r->nheavy && heavier(r, r->heavy[l], r->heavy[m]))
                        m = l;
                if (l + 1 < r->nheavy && heavier(r, r->heavy[l + 1], r->heavy[m]))
                        m = l + 1;
                if (m == i)
                        return;
                uint32_t x = r->heavy[i];
                r->heavy[i] = r->heavy[m];
                r->heavy[m] = x;
                i = m;
        }
}

/* One attempt with factor f; true when no worker is left above f × avg. */
static bool attempt(struct refine *r, double f, uint32_t *migrations)
{
        const struct lbomp__snap *s = r->s;
        uint32_t P = s->nworkers;
        double limit = f * r->avg;
        memcpy(r->load, r->load0, P * sizeof *r->load);
        memcpy(r->map, s->worker, s->ntasks * sizeof *r->map);
        memset(r->moved, 0, s->ntasks);
        r->nheavy = 0;
        for (uint32_t w = 0; w < P; w++) {
                r->light[w] = r->load[w] < r->avg;
                if (r->load[w] > limit)
                        r->heavy[r->nheavy++] = w;
        }
        for (uint32_t i = r->nheavy / 2; i-- > 0;)
                heap_down(r, i);
        *migrations = 0;
        while (r->nheavy) {
                uint32_t h = r->heavy[0];
                double minlight = INFINITY;
                for (uint32_t w = 0; w < P; w++)
                        if (r->light[w] && r->load[w] < minlight)
                                minlight = r->load[w];
                if (minlight == INFINITY)
                        return false;
                /* Largest unmoved task of h that fits on the least loaded light worker. */
                double room = limit - minlight;
                uint32_t lo = r->group_off[h], hi = r->group_off[h + 1];
                while (lo < hi) { /* first task with cost <= room (group is heaviest first) */
                        uint32_t mid = lo + (hi - lo) / 2;
                        if (s->cost[r->by_worker[mid]] > room)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                uint32_t t = UINT32_MAX;
                for (uint32_t i = lo; i < r->group_off[h + 1]; i++) {
                        uint32_t c = r->by_worker[i];
                        if (!r->moved[c] && s->cost[c] > 0) {
                                t = c;
                                break;
                        }
                }
                if (t == UINT32_MAX)
                        return false;
                /* Among the light workers it fits on: nearest to the task's node, then least
                 * loaded. */
                int32_t tn = lbomp__task_node(s, t);
                uint32_t p = UINT32_MAX;
                double pd = 0;
                for (uint32_t w = 0; w < P; w++) {
                        if (!r->light[w] || r->load[w] + s->cost[t] > limit)
                                continue;
                        double d = s->dist[tn * (int32_t)s->nnodes + s->wnode[w]];
                        if (p == UINT32_MAX || d < pd || (d == pd && r->load[w] < r->load[p]))
                                p = w, pd = d;
                }
                if (p == UINT32_MAX)
                        return false;
                r->load[h] -= s->cost[t];
                r->load[p] += s->cost[t];
                r->map[t] = p;
                r->moved[t] = 1;
                (*migrations)++;
                if (r->load[p] >= r->avg)
                        r->light[p] = 0;
                if (r->load[h] <= limit) {
                        r->heavy[0] = r->heavy[--r->nheavy];
                        if (r->load[h] < r->avg)
                                r->light[h] = 1;
                }
                heap_down(r, 0);
        }
        return true;
}

static int refine_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        uint32_t P = s->nworkers, T = s->ntasks;
        struct refine r = {.s = s};
        int rc = 0;
        uint32_t *order = lbomp__tasks_by_cost_desc(s);
        r.by_worker = malloc((size_t)T * sizeof *r.by_worker + 1);
        r.group_off = calloc(P + 1, sizeof *r.group_off);
        r.load0 = malloc(P * sizeof *r.load0);
        r.load = malloc(P * sizeof *r.load);
        r.map = malloc((size_t)T * sizeof *r.map + 1);
        r.moved = malloc((size_t)T + 1);
        r.light = malloc(P);
        r.heavy = malloc(P * sizeof *r.heavy);
        if (!order || !r.by_worker || !r.group_off || !r.load0 || !r.load || !r.map || !r.moved ||
            !r.light || !r.heavy) {
                rc = -ENOMEM;
                goto out;
        }
        /* Counting sort of the cost-ordered tasks by worker keeps each group heaviest first. */
        for (uint32_t t = 0; t < T; t++)
                r.group_off[s->worker[t] + 1]++;
        for (uint32_t w = 0; w < P; w++)
                r.group_off[w + 1] += r.group_off[w];
        memcpy(r.heavy, r.group_off, P * sizeof *r.heavy); /* fill cursors */
        for (uint32_t k = 0; k < T; k++) {
                uint32_t t = order[k];
                r.by_worker[r.heavy[s->worker[t]]++] = t;
        }
        lbomp__loads(s, s->worker, r.load0);
        double max;
        lbomp__imbalance(r.load0, P, &max, &r.avg);
        double f0 = s->params ? s->params->refine_factor : 1.05;
        uint32_t moves = 0;
        st->attempts = 1;
        st->factor = f0;
        if (!attempt(&r, f0, &moves) && r.avg > 0) {
                /* Loosen: the first factor above max/avg succeeds without a move; then search. */
                long kmax = (long)floor((max / r.avg - f0) / 0.01) + 1;
                /* Rounding: when max/avg sits on the 0.01 grid (equal loads: 1.5, 1.25, ...),
                 * f0 + kmax * 0.01 can come out an ulp below it and still leave max above the
                 * limit. Step up until it does not, so the last attempt cannot fail. */
                if (kmax < 1)
                        kmax = 1;
                while ((f0 + (double)kmax * 0.01) * r.avg < max)
                        kmax++;
                long lo = 0, hi = kmax;
                while (hi - lo > 1) {
                        long mid = lo + (hi - lo) / 2;
                        st->attempts++;
                        if (attempt(&r, f0 + mid * 0.01, &moves))
                                hi = mid;
                        else
                                lo = mid;
                }
                st->attempts++;
                st->factor = f0 + hi * 0.01;
                if (!attempt(&r, st->factor, &moves)) {
                        rc = -EAGAIN; /* cannot happen: f > max/avg leaves no heavy worker */
                        goto out;
                }
        }
        memcpy(dest, r.map, (size_t)T * sizeof *dest);
out:
        free(order);
        free(r.by_worker);
        free(r.group_off);
        free(r.load0);
        free(r.load);
        free(r.map);
        free(r.moved);
        free(r.light);
        free(r.heavy);
        return rc;
}

const struct lbomp__policy lbomp__policy_refine = {
        .name = "refine",
        .help = "centralized: move few tasks from overloaded to light workers (Charm++ RefineLB)",
        .kind = LBOMP__CENTRAL,
        .plan = refine_plan,
};
