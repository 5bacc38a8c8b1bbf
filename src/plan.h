/*
 * plan.h — one LB step's plan as one object: the snapshot it was made from, a destination per
 * task, the workers' loads before (computed once, for the window record and the policy's report)
 * and after, what it moves, and applying it to the task table. The policy never touches the task
 * table; this does. Below it: the task table and the metrics of policy.h.
 */
#ifndef LBOMP_PLAN_H
#define LBOMP_PLAN_H

#include <stdint.h>

#include "policy.h"
#include "tasks.h"

struct lbomp__plan {
        const struct lbomp__snap *s;
        uint32_t *dest;   /* [ntasks], owned by the snapshot builder */
        double *load;     /* [nworkers] under the current mapping */
        double *load_new; /* [nworkers] under dest */
        uint32_t cap_w;
        double max, avg, lambda;    /* before */
        double max_new, lambda_new; /* after (lbomp__plan_evaluate) */
        struct lbomp__moves moves;
        /* lbomp__plan_guard: the policy's plan did not lower the maximum and was replaced by the
         * current mapping; what that plan predicted. */
        bool rejected;
        double max_planned, lambda_planned;
};

/* Binds the plan to a snapshot and its destination array (filled with the current workers) and
 * computes the loads before. 0 or -ENOMEM. */
int lbomp__plan_begin(struct lbomp__plan *p, const struct lbomp__snap *s, uint32_t *dest);
/* 0 if every task has exactly one valid destination, else -EINVAL with the first bad task. */
int lbomp__plan_valid(const struct lbomp__plan *p, uint32_t *bad_task);
/* Forgets the policy's destinations: the plan keeps every task where it is. */
void lbomp__plan_keep(struct lbomp__plan *p);
/* After the policy: loads, λ and moves of dest. */
void lbomp__plan_evaluate(struct lbomp__plan *p);
/*
 * Never worse (after lbomp__plan_evaluate): a plan that moves tasks must lower the predicted
 * maximum worker load (lbomp__lowers_max); one that does not is replaced by the current mapping,
 * re-evaluated, and true is returned with what it predicted in max_planned / lambda_planned. The
 * prediction is lbomp__loads() of the snapshot's costs, the one place loads are computed.
 */
bool lbomp__plan_guard(struct lbomp__plan *p);
/* Writes the destinations into the task table (tasks->dirty when a task moved). */
void lbomp__plan_apply(const struct lbomp__plan *p, struct lbomp__tasks *tasks);
void lbomp__plan_free(struct lbomp__plan *p);

#endif
