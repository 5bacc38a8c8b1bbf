/*
 * ref.h — the reference policies of test_identity: frozen copies of sort.c, greedy.c and refine.c
 * from before the speed-ups (test/unit/ref), their symbols renamed so that they link next to the
 * library's. The new code must give exactly the plans these give, bit for bit.
 */
#ifndef LBOMP_TEST_REF_H
#define LBOMP_TEST_REF_H

#include "policy.h"

int ref__sort_tasks_desc(const double *cost, uint32_t *tasks, uint32_t n);
uint32_t *ref__tasks_by_cost_desc(const struct lbomp__snap *s);
int ref__greedy_assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                       const uint32_t *workers, uint32_t nworkers, const double *load0,
                       uint32_t *dest);
int ref__greedy_refine_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st);
int ref__greedy_comm_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st);
extern const struct lbomp__policy ref__policy_greedy, ref__policy_refine;

#endif
