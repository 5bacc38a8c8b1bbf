/*
 * deque.h — a worker's task deque for one step: Chase-Lev over the positions of its task array,
 * re-armed by its owner at every step (deque.c). Calls nothing else of the library.
 *
 * Indices only grow: a step's content is the indices [top, top + n) at the moment the owner arms
 * it, and index j stands for position last - j of the owner's array. So the owner, which takes
 * from the bottom (the highest indices), runs its positions in ascending order, and thieves, which
 * take from the top, take the owner's tail: the tasks it would have reached last, a contiguous
 * block next to the following worker's first tasks. Because a claim is a compare-and-swap of top
 * from the claimed index, and every index is consumed by moving top past it, a thief delayed from
 * an earlier step can never claim an index of a later one: the owner may re-arm its own deque
 * without a barrier.
 */
#ifndef LBOMP_DEQUE_H
#define LBOMP_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct lbomp__deque {
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t top;    /* thieves take here */
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t bottom; /* the owner takes here */
        _Atomic int64_t last; /* index + position of this step's content (written before bottom) */
};
enum lbomp__take { LBOMP__TAKEN, LBOMP__EMPTY, LBOMP__LOST_RACE };

/* Owner, with its deque empty (drained): positions first..first+n-1 become the content. */
void lbomp__deque_arm(struct lbomp__deque *d, int64_t first, int64_t n);
/*
 * Owner: takes up to k >= 1 items from the bottom with one fence. Returns how many it took, all
 * of positions [*first, *first + count), to be run in ascending order; 0 when the deque is empty.
 */
int64_t lbomp__deque_pop(struct lbomp__deque *d, int64_t k, int64_t *first);
/* Owner: items left (an estimate while thieves run). */
int64_t lbomp__deque_size(struct lbomp__deque *d);
/* Any thread: the item at the top (the owner's last position left). LOST_RACE means retry may
 * succeed. On TAKEN, *pos is its position. */
enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos);
/*
 * Any thread: the same, but only when the owner would still be busy while the thief runs the item
 * away from its data: with pc[0..n] the prefix sums of the predicted costs of the owner's n
 * positions and c the cost of the item at the top, it steals only when the items the owner has
 * left below that one cost at least kappa × c; otherwise it returns LBOMP__EMPTY and leaves the
 * deque as it was.
 */
enum lbomp__take lbomp__deque_steal_paying(struct lbomp__deque *d, int64_t *pos, const double *pc,
                                           int64_t n, double kappa);

/*
 * How many of an owner's n positions, from pos on (left of them not taken yet), its next batch
 * holds, a thief taking from the tail meanwhile. With pc[0..n] the prefix sums of their predicted
 * costs (or NULL): the longest run from pos whose cost is within a quarter of its fair share of
 * what is left if the other team - 1 workers came to steal the rest, at least one. Without costs,
 * a quarter of a fair share by count (none when less than one task per worker is left: the caller
 * then takes one). A team of one takes all that is left (no thief). 0 when nothing is left. Once
 * per batch, never per task.
 */
int64_t lbomp__deque_batch(const double *pc, int64_t n, int64_t pos, int64_t left, int64_t team);

/*
 * Whether a step's end asks for stealing in the next steps: the team's n threads ended their work
 * at ticks whose sum is `ends` and latest `last`, the step began at `t0`, and the thieves spent
 * `stolen` ticks in stolen tasks (ticks_per_s converts). True when the threads would have waited
 * for the last one, on average, more than LBOMP__STEAL_IDLE of the step and LBOMP__STEAL_IDLE_S:
 * what they waited, plus the stolen time over n (without the steals the thieves would have ended
 * that much earlier and their victims later). Pure arithmetic, for step.c's serial part.
 */
#define LBOMP__STEAL_IDLE   0.02
#define LBOMP__STEAL_IDLE_S 2e-6
bool lbomp__deque_wanted(uint64_t ends, uint64_t last, uint64_t stolen, uint32_t n, uint64_t t0,
                         double ticks_per_s);

#endif
