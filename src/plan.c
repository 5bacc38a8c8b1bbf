/*
 * plan.c — one LB step's plan as one object (plan.h): loads before and after, checked, evaluated,
 * refused when it would not lower the maximum load (never worse), and applied to the task table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

int lbomp__plan_begin(struct lbomp__plan *p, const struct lbomp__snap *s, uint32_t *dest)
{
        if (s->nworkers > p->cap_w || !p->load) {
                if (LBOMP__GROW(p->load, s->nworkers) || LBOMP__GROW(p->load_new, s->nworkers))
                        return -ENOMEM;
                p->cap_w = s->nworkers;
        }
        p->s = s;
        p->dest = dest;
        lbomp__loads(s, s->worker, p->load);
        p->lambda = lbomp__snap_lambda(s, p->load, &p->max, &p->avg);
        p->max_new = p->max;
        p->lambda_new = p->lambda;
        memset(&p->moves, 0, sizeof p->moves);
        p->rejected = false;
        p->max_planned = p->lambda_planned = 0;
        return 0;
}

int lbomp__plan_valid(const struct lbomp__plan *p, uint32_t *bad_task)
{
        return lbomp__plan_check(p->s, p->dest, bad_task);
}

void lbomp__plan_keep(struct lbomp__plan *p)
{
        memcpy(p->dest, p->s->worker, p->s->ntasks * sizeof *p->dest);
}

void lbomp__plan_evaluate(struct lbomp__plan *p)
{
        lbomp__loads(p->s, p->dest, p->load_new);
        p->lambda_new = lbomp__snap_lambda(p->s, p->load_new, &p->max_new, NULL);
        lbomp__moves(p->s, p->dest, &p->moves);
}

bool lbomp__plan_guard(struct lbomp__plan *p)
{
        if (p->moves.tasks == 0 || lbomp__lowers_max(p->max_new, p->max))
                return false;
        p->rejected = true;
        p->max_planned = p->max_new;
        p->lambda_planned = p->lambda_new;
        lbomp__plan_keep(p);
        lbomp__plan_evaluate(p);
        return true;
}

void lbomp__plan_apply(const struct lbomp__plan *p, struct lbomp__tasks *tasks)
{
        const struct lbomp__snap *s = p->s;
        bool moved = false;
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (p->dest[t] != s->worker[t]) {
                        tasks->task[s->id[t]].worker = p->dest[t];
                        moved = true;
                }
        if (moved)
                lbomp__tasks_reshaped(tasks);
}

void lbomp__plan_free(struct lbomp__plan *p)
{
        free(p->load);
        free(p->load_new);
        memset(p, 0, sizeof *p);
}
