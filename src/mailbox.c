/*
 * mailbox.c — runs policies outside the live team (tests, simulator) and, for decentralized
 * policies, the round engine. The round engine for decentralized policies is built by the packdrop
 * work (issue 3); until it lands, no decentralized policy is registered and these entry points
 * answer -ENOTSUP.
 */
#include <errno.h>
#include <stdlib.h>

#include "mailbox.h"

struct lbomp__dec {
        uint32_t nworkers;
};

struct lbomp__dec *lbomp__dec_create(uint32_t nworkers)
{
        struct lbomp__dec *d = calloc(1, sizeof *d);
        if (d)
                d->nworkers = nworkers;
        return d;
}

void lbomp__dec_destroy(struct lbomp__dec *d)
{
        free(d);
}

int lbomp__dec_prepare(struct lbomp__dec *d, const struct lbomp__policy *p,
                       const struct lbomp__snap *s, uint32_t *dest)
{
        (void)d, (void)p, (void)s, (void)dest;
        return -ENOTSUP;
}

int lbomp__dec_run_team(struct lbomp__dec *d, uint32_t self)
{
        (void)d, (void)self;
        return -ENOTSUP;
}

int lbomp__dec_run_virtual(struct lbomp__dec *d)
{
        (void)d;
        return -ENOTSUP;
}

void lbomp__dec_stats(const struct lbomp__dec *d, struct lbomp__pstats *st)
{
        (void)d, (void)st;
}

int lbomp__policy_run_offline(const struct lbomp__policy *p, const struct lbomp__snap *s,
                              uint32_t *dest, struct lbomp__pstats *st)
{
        for (uint32_t t = 0; t < s->ntasks; t++)
                dest[t] = s->worker[t];
        if (p->kind == LBOMP__CENTRAL)
                return p->plan(s, dest, st);
        return -ENOTSUP;
}
