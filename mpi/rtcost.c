/*
 * rtcost.c — the one place liblbomp-mpi reads the runtime's internals: the per-task costs its last
 * LB step measured (the snapshot the runtime's policy read, kept until its next LB step), and the
 * policy parameters and seed of its configuration. Both libraries are built from the same tree
 * (pkg-config pins the version), so the structures agree. Everything else goes through lbomp.h.
 */
#include <string.h>

#include "internal.h"
#include "runtime.h"

void lbomp__rt_costs(lbomp_t *lb, size_t *seen, struct lbomp__rtcost *c)
{
        memset(c, 0, sizeof *c);
        c->workers = lb->ws.n;
        size_t n = (size_t)lb->lbs.recs.n;
        const struct lbomp__snap *s = lb->lbs.snap;
        bool new_step = n != *seen;
        *seen = n;
        if (!new_step || !s || n == 0)
                return;
        /* Tasks added or removed since that LB step: its costs no longer describe this rank. */
        if (s->ntasks != lb->tasks.nalive)
                return;
        /* The snapshot names tasks by slot; a slot may hold another task since (slots are
         * reused, ids never are). */
        for (uint32_t k = 0; k < s->ntasks; k++) {
                uint32_t slot = s->id[k];
                if (slot >= lb->tasks.nslots || lb->tasks.task[slot].worker == LBOMP__REMOVED ||
                    lb->tasks.task[slot].id != lb->lbs.snap_ids[k])
                        return;
        }
        c->fresh = true;
        c->step = lbomp__lbs_at(&lb->lbs, n - 1)->pub.step;
        c->n = s->ntasks;
        c->id = lb->lbs.snap_ids;
        c->cost = s->cost;
}

void lbomp__rt_want_costs(lbomp_t *lb)
{
        lb->lbs.keep_costs = true;
}

const struct lbomp__params *lbomp__rt_params(const lbomp_t *lb)
{
        return &lb->cfg.params;
}

uint64_t lbomp__rt_seed(const lbomp_t *lb)
{
        return lb->cfg.seed;
}
