/*
 * none.c — measures and reports, moves nothing (Charm++ DummyLB): the baseline every other policy
 * is compared to.
 */
#include "../policy.h"

static int none_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        for (uint32_t t = 0; t < s->ntasks; t++)
                dest[t] = s->worker[t];
        return 0;
}

const struct lbomp__policy lbomp__policy_none = {
        .name = "none",
        .help = "measure and report, move nothing (the baseline)",
        .kind = LBOMP__CENTRAL,
        .plan = none_plan,
};
