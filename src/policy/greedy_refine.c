/*
 * greedy_refine.c — centralized greedy-refine (Charm++ GreedyRefineLB): greedy, but sticky. Greedy
 * on a scratch copy gives its maximum load M (Charm++'s tolerance 1.0); then, heaviest task first,
 * a task stays on its worker while that worker's load so far plus the task stays ≤ M, otherwise it
 * goes to the least loaded worker, and M rises to any load placed above it. Greedy's balance with a
 * fraction of its moves. The pass is greedy.c's.
 */
#include "../policy.h"

const struct lbomp__policy lbomp__policy_greedy_refine = {
        .name = "greedy-refine",
        .help = "centralized: greedy, but a task stays on its worker while that worker stays "
                "under greedy's maximum (Charm++ GreedyRefineLB)",
        .kind = LBOMP__CENTRAL,
        .plan = lbomp__greedy_refine_plan,
};
