/*
 * greedy_comm.c — centralized greedy-comm (Charm++ GreedyCommLB): greedy, heaviest task first,
 * where a worker's key for a task is its load plus the cost of the task's links to neighbours
 * already placed on other workers, bytes × NUMA distance × β (β = 0.1 ns per byte: greedy.c,
 * doc/policies.md), so that tasks that talk stay together. The pass is greedy.c's.
 */
#include "../policy.h"

const struct lbomp__policy lbomp__policy_greedy_comm = {
        .name = "greedy-comm",
        .help = "centralized: greedy where a worker's load counts the task's link bytes to "
                "other workers, by NUMA distance (Charm++ GreedyCommLB)",
        .kind = LBOMP__CENTRAL,
        .plan = lbomp__greedy_comm_plan,
};
