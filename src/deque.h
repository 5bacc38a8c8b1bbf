/*
 * deque.h — a worker's task deque for one step: the positions of its task array, taken by its
 * owner in batches and by thieves one at a time, re-armed by its owner at every step (deque.c).
 * Calls nothing else of the library.
 *
 * Indices only grow: a step's content is the indices [top, top + n) at the moment the owner arms
 * it (one per run of `grain` positions, lbomp__deque_arm_grain), and thieves always take the lowest
 * index left. The owner runs its positions in ascending
 * order; the mode it arms with says which of them the thieves take:
 *
 * - tail: the owner's last positions (index j is position base - j; the owner takes from the
 *   bottom as in Chase-Lev). A thief takes the tasks the owner would have reached last, the same
 *   ones step after step while the load stays: their data moves to the thief's caches once and
 *   stays there. But owner and thieves meet in the middle, and the task whose run straddles that
 *   point runs alone while the others wait; the point falls in a task with a probability in
 *   proportion to its cost. With predicted costs the owner's batches and the paying rule keep
 *   that small.
 * - front: the owner's next positions (index j is position base + j; the owner claims from the
 *   top too). The step ends where the owner's tasks end, as with dynamic,1: what runs last is the
 *   owner's last tasks, heavy only when the load is there. The stolen tasks change from step to
 *   step, so their data crosses between caches each time.
 *
 * The owner arms front when it has gone several windows without predicted costs (a load that no
 * plan follows: it moves faster than plans, whose costs went stale, or nothing plans; workers.h,
 * lbomp__workers_front), tail otherwise: bench/README, *Stealing from the front, when no plan
 * follows the load*. Because a claim of the top is a compare-and-swap from the claimed index, and
 * every index is consumed by moving top past it, a thief delayed from an earlier step can never
 * claim an index of a later one: the owner may re-arm its own deque without a barrier.
 */
#ifndef LBOMP_DEQUE_H
#define LBOMP_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct lbomp__deque {
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t top;    /* thieves take here */
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t bottom; /* the owner takes here in tail mode */
        _Atomic int64_t base;  /* first position of index 0 (front), or its end + index (tail) */
        _Atomic int64_t grain; /* positions per index (lbomp__deque_grain) */
        _Atomic int64_t lo;    /* the content's first position */
        _Atomic int64_t hi;    /* one past its last position */
        _Atomic bool front;    /* this content's mode (all of these written before bottom) */
        _Atomic uint64_t step; /* the step its content is for (lbomp__deque_settle) */
};
enum lbomp__take { LBOMP__TAKEN, LBOMP__EMPTY, LBOMP__LOST_RACE };

/* Owner, with its deque empty (drained): positions first..first+n-1 become the content, the
 * thieves taking the owner's next ones (front) or its last ones (tail), one position per index. */
void lbomp__deque_arm(struct lbomp__deque *d, int64_t first, int64_t n, bool front);
/*
 * The same, `grain` >= 1 positions per index: every claim, the owner's and a thief's, takes whole
 * runs of grain positions (the last run of the content, in the order the thieves take them, may be
 * shorter). Tasks cheaper than what a steal costs are stolen in runs (lbomp__deque_grain).
 */
void lbomp__deque_arm_grain(struct lbomp__deque *d, int64_t first, int64_t n, bool front,
                            int64_t grain);
/*
 * Positions per index for tasks that take task_s each (0: unknown), n of them on a team of `team`:
 * enough that a thief's claim holds LBOMP__STEAL_MIN_S of tasks, since a steal costs about that
 * (a compare-and-swap on a line the owner also writes, and the lines of the tasks' data, when the
 * two cores share no cache: bench/README, *Stealing tiny tasks in runs*), but never more than a
 * quarter of a fair share (n / (LBOMP__BATCH_PARTS × team)), so that a step still has runs to
 * share. 1 for tasks of LBOMP__STEAL_MIN_S or more, unknown times, or a team of one.
 */
#define LBOMP__STEAL_MIN_S 0.25e-6
int64_t lbomp__deque_grain(double task_s, int64_t n, int64_t team);
/* Owner, once it armed its deque for step `step` or left it empty: thieves of that step that
 * found it empty know it stays so (lbomp__deque_settled). */
void lbomp__deque_settle(struct lbomp__deque *d, uint64_t step);
/* Any thread: whether the owner settled its deque for step `step` (or a later one). Before that a
 * thief that finds it empty sees the last step's drained content, not this one's. */
bool lbomp__deque_settled(struct lbomp__deque *d, uint64_t step);
/*
 * Owner: takes its next k >= 1 items, rounded up to whole runs of the grain (fewer when fewer are
 * left), with one compare-and-swap (front) or one fence (tail). Returns how many it took, all of
 * positions [*first, *first + count), to be run in ascending order; 0 when the deque is empty.
 */
int64_t lbomp__deque_pop(struct lbomp__deque *d, int64_t k, int64_t *first);
/* Owner: items left and, in *pos, the position of the next one (an estimate while thieves run). */
int64_t lbomp__deque_next(struct lbomp__deque *d, int64_t *pos);
/* Any thread: the run of items at the top (the owner's next positions in front mode, its last in
 * tail mode; one item with a grain of 1). LOST_RACE means retry may succeed. On TAKEN, the run is
 * positions [*pos, *pos + *count), run in ascending order. */
enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos, int64_t *count);
/*
 * Any thread: the same, but only when the run pays away from its data: with pc[0..n] the prefix
 * sums of the predicted costs of the owner's n positions and c the cost of the run at the top, it
 * steals only when the other items the owner has left (after the run in front mode, before it in
 * tail mode) cost at least ratio × c (workers.h, lbomp__steal_ratio); otherwise it returns
 * LBOMP__EMPTY and leaves the deque as it was.
 */
enum lbomp__take lbomp__deque_steal_paying(struct lbomp__deque *d, int64_t *pos, int64_t *count,
                                           const double *pc, int64_t n, double ratio);

/*
 * How many of an owner's n positions, from pos on (left of them not taken yet), its next batch
 * holds, thieves taking what follows it or the tail meanwhile. With pc[0..n] the prefix sums of
 * their predicted costs (or NULL): the longest run from pos whose cost is within a quarter of its
 * fair share of what is left if the other team - 1 workers came to steal the rest, at least one.
 * Without costs, a quarter of a fair share by count, or a sixteenth when the owner is `blind` (its
 * tasks were never timed where they are: the first window after they were placed); none when
 * less than one task per worker is left: the caller then takes one. A team of one takes all that
 * is left (no thief). 0 when nothing is left. Once per batch, never per task.
 */
#define LBOMP__BATCH_PARTS       4
#define LBOMP__BATCH_PARTS_BLIND 16
int64_t lbomp__deque_batch(const double *pc, int64_t n, int64_t pos, int64_t left, int64_t team,
                           bool blind);
/*
 * Batch k (lbomp__deque_batch's), raised to hold at least LBOMP__BATCH_MIN_S of tasks that take
 * task_s each (the owner's mean over its last step; 0: unknown, k stays), but never beyond a fair
 * share of the `left` tasks over the team, so that thieves keep theirs. A pop costs a fence and,
 * once thieves came, the line they wrote (0.1-0.3 µs when the two cores share no cache): with
 * tasks of tens of ns the batches of a quarter of a share, shrinking to one task at the end, made
 * some forty pops a step, and bench/churn (1,000 tasks of ≈ 50 ns, 2 threads) took 1.2-1.9 × the
 * time of `none` under every balancing policy in that face; with this, 1.03-1.08 (bench/README,
 * *Batches of tiny tasks*). Tasks of half a µs or more: k unchanged (with a µs, the light tasks
 * of the 1 MiB memtask, ≈ 0.45 µs, were held back two at a time at the step's end).
 */
#define LBOMP__BATCH_MIN_S 0.5e-6
int64_t lbomp__deque_batch_floor(int64_t k, double task_s, int64_t left, int64_t team);

/*
 * Whether a step's end asks for stealing in the next steps: the team's n threads ended their work
 * at ticks whose sum is `ends` and latest `last`, the step began at `t0`, and the thieves spent
 * `stolen` ticks in stolen tasks (ticks_per_s converts). True when the threads would have waited
 * for the last one, on average, more than LBOMP__STEAL_IDLE of the step (but never more than
 * LBOMP__STEAL_IDLE_MAX_S) and LBOMP__STEAL_IDLE_S: what they waited, plus the stolen time over n
 * (without the steals the thieves would have ended that much earlier and their victims later).
 * The cap: an armed step costs about a µs (the pops' fences, the thieves' looks), while 2 % of a
 * 13 ms step is 260 µs lost at every step left unarmed (kneighbor-lbtest, whose refine plan stays
 * within the tolerance: armed in 13 of 60 steps, 60 with the cap; bench/README, *Arming on long
 * steps*). Pure arithmetic, for step.c's serial part.
 */
#define LBOMP__STEAL_IDLE       0.02
#define LBOMP__STEAL_IDLE_S     2e-6
#define LBOMP__STEAL_IDLE_MAX_S 20e-6
bool lbomp__deque_wanted(uint64_t ends, uint64_t last, uint64_t stolen, uint32_t n, uint64_t t0,
                         double ticks_per_s);

#endif
