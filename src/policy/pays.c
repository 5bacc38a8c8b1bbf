/*
 * pays.c — "moves that pay", the rule every centralized policy follows (POLICIES.md): no plan
 * when the current mapping is already within (1 + v) of the bound L*, and no plan whose predicted
 * maximum is not below the current one. Loads come from lbomp__loads(), the one place a mapping's
 * loads are computed, so that the policies, the runtime's never-worse check and the simulator
 * agree on what a plan predicts.
 */
#include <string.h>

#include "../policy.h"

bool lbomp__within_tolerance_bound(const struct lbomp__snap *s, double *load, double *max,
                                   double *lstar)
{
        double avg;
        lbomp__loads(s, s->worker, load);
        lbomp__snap_lambda(s, load, max, &avg);
        double v = s->params ? s->params->tolerance : 0.05;
        *lstar = lbomp__bound(s, avg);
        return *max <= (1 + v) * *lstar;
}

bool lbomp__within_tolerance(const struct lbomp__snap *s, double *load, double *max)
{
        double lstar;
        return lbomp__within_tolerance_bound(s, load, max, &lstar);
}

bool lbomp__keep_unless_lower(const struct lbomp__snap *s, uint32_t *dest, double max, double *load)
{
        double max_new;
        lbomp__loads(s, dest, load);
        lbomp__snap_lambda(s, load, &max_new, NULL);
        if (lbomp__lowers_max(max_new, max))
                return false;
        memcpy(dest, s->worker, (size_t)s->ntasks * sizeof *dest);
        return true;
}
