/*
 * smart.c — the centralized threshold balancer SmartLB (dos Santos et al., WSCAD 2018), as
 * POLICIES.md restates it: nothing moves while 1 − min/max is within the threshold; otherwise the
 * tasks are walked in order and a task of a worker at or above the average goes to the currently
 * least loaded worker if that worker stays at or below the average. Loads are predicted times
 * (cost / speed), the average the capacity-weighted one (lbomp__snap_lambda). Few migrations by
 * design, and none when they would not lower the maximum load (moves must pay, doc/policies.md).
 * (The paper's listing compares min/max the wrong way round; its text states the rule used here.)
 */
#include <errno.h>
#include <stdlib.h>

#include "../policy.h"

static int smart_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        uint32_t P = s->nworkers;
        double thr = s->params ? s->params->smart_threshold : 0.05;
        struct lbomp__wheap h;
        int rc = lbomp__wheap_init(&h, P, NULL);
        if (rc < 0)
                goto out;
        lbomp__loads(s, s->worker, h.load);
        double max, avg, min = h.load[0];
        lbomp__snap_lambda(s, h.load, &max, &avg);
        for (uint32_t w = 1; w < P; w++)
                min = h.load[w] < min ? h.load[w] : min;
        if (!(max > 0) || 1.0 - min / max <= thr)
                goto out; /* within the threshold: nothing moves */
        lbomp__wheap_build(&h);
        for (uint32_t t = 0; t < s->ntasks; t++) {
                uint32_t from = dest[t], to = h.w[0];
                double c = s->cost[t];
                if (to == from || !(c > 0) || h.load[from] < avg ||
                    h.load[to] + lbomp__time_on(s, to, c) > avg)
                        continue;
                dest[t] = to;
                h.load[to] += lbomp__time_on(s, to, c);
                h.load[from] -= lbomp__time_on(s, from, c);
                lbomp__wheap_down(&h, h.pos[to]);
                lbomp__wheap_up(&h, h.pos[from]);
        }
        /* Moves must pay: when the rule could not bring the maximum down (a worker at the maximum
         * whose tasks fit nowhere under the average), nothing moves. */
        lbomp__keep_unless_lower(s, dest, max, h.load);
out:
        lbomp__wheap_free(&h);
        return rc;
}

const struct lbomp__policy lbomp__policy_smart = {
        .name = "smart",
        .help = "centralized: move tasks from workers above the average to the least loaded one "
                "while it stays at the average (SmartLB)",
        .kind = LBOMP__CENTRAL,
        .plan = smart_plan,
};
