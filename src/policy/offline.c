/*
 * offline.c — a policy run on a snapshot outside the runtime: centralized on this thread,
 * decentralized on virtual workers stepped by this thread through the round engine (mailbox.h),
 * with the same code the runtime runs live. The simulator and the tests call it.
 */
#include <errno.h>

#include "../mailbox.h"
#include "../policy.h"

int lbomp__policy_run_offline_in(const struct lbomp__policy *p, const struct lbomp__snap *s,
                                 uint32_t *dest, struct lbomp__pstats *st, struct lbomp__dec *dec)
{
        for (uint32_t t = 0; t < s->ntasks; t++)
                dest[t] = s->worker[t];
        if (p->kind == LBOMP__CENTRAL)
                return p->plan(s, dest, st);
        struct lbomp__dec *d = dec ? dec : lbomp__dec_create(s->nworkers);
        if (!d)
                return -ENOMEM;
        int rc = lbomp__dec_prepare(d, p, s, dest);
        if (rc == 0)
                rc = lbomp__dec_run_virtual(d);
        lbomp__dec_stats(d, st);
        if (!dec)
                lbomp__dec_destroy(d);
        if (rc != 0)
                for (uint32_t t = 0; t < s->ntasks; t++)
                        dest[t] = s->worker[t];
        return rc;
}

int lbomp__policy_run_offline(const struct lbomp__policy *p, const struct lbomp__snap *s,
                              uint32_t *dest, struct lbomp__pstats *st)
{
        return lbomp__policy_run_offline_in(p, s, dest, st, NULL);
}
