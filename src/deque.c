/*
 * deque.c — a worker's task deque for one step: one index range over its positions, with
 * monotonic indices (deque.h says why), in one of two modes chosen by the owner when it arms it:
 * the thieves claim the owner's next positions (front) or its last ones (tail); deque.h says when
 * each.
 *
 * Claims of the top index are compare-and-swaps, the thieves' in both modes and the owner's in
 * front mode, so no two take one index. In tail mode the owner takes from the bottom with batch
 * pops as in Chase-Lev, with the memory orders of Lê, Pop, Cohen and Zappa Nardelli, "Correct and
 * efficient work-stealing for weak memory models" (PPoPP 2013); each fence names the one it pairs
 * with. A batch pop is the paper's pop with bottom lowered by k instead of 1: after the fence,
 * every index above the top it reads is the owner's, and the index equal to it, if in the batch,
 * is raced for with the thieves' compare-and-swap, exactly as the paper's last item. An index
 * stands for a run of `grain` positions (one unless the tasks are tiny: deque.h), so a claim of one
 * index, the thieves' unit, takes a whole run with one compare-and-swap, and the algorithm on the
 * indices is the same whatever the grain; only the positions an index stands for change.
 *
 * The content's fields (mode, base, grain, bounds) change only when the owner arms an empty deque;
 * a thief's acquire read of bottom pairs with that release store, so what it reads of them is that
 * content's or a later one's, and a later one means top moved past what it read: its claim fails
 * (and whatever mix of two contents it read, it reads the costs only within their bounds).
 */
#include "deque.h"

/* Positions of index j of the content: [*s, *e). Front: runs of g from lo, the last one cut at
 * hi; tail: runs of g down from hi, the last one cut at lo. Pure arithmetic on what was read: a
 * thief that read two contents' fields may get anything here, and its claim then fails. */
static void run_of(bool front, int64_t base, int64_t g, int64_t lo, int64_t hi, int64_t j,
                   int64_t *s, int64_t *e)
{
        if (front) {
                *s = base + j * g;
                *e = *s + g < hi ? *s + g : hi;
        } else {
                *e = base - j * g;
                *s = *e - g > lo ? *e - g : lo;
        }
}

void lbomp__deque_arm_grain(struct lbomp__deque *d, int64_t first, int64_t n, bool front,
                            int64_t grain)
{
        /* Empty: top == bottom, and no thief can move top (its CAS needs top < bottom). Index
         * t + i stands for the i-th run of grain positions in the order in which the thieves take
         * them: from first up (front), from first + n - 1 down (tail). */
        int64_t g = grain > 1 ? grain : 1;
        int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
        atomic_store_explicit(&d->base, front ? first - t * g : first + n + t * g,
                              memory_order_relaxed);
        atomic_store_explicit(&d->grain, g, memory_order_relaxed);
        atomic_store_explicit(&d->lo, first, memory_order_relaxed);
        atomic_store_explicit(&d->hi, first + n, memory_order_relaxed);
        atomic_store_explicit(&d->front, front, memory_order_relaxed);
        /* Release: a thief that reads this bottom (acquire in steal) sees the fields above. */
        atomic_store_explicit(&d->bottom, t + (n + g - 1) / g, memory_order_release);
}

void lbomp__deque_arm(struct lbomp__deque *d, int64_t first, int64_t n, bool front)
{
        lbomp__deque_arm_grain(d, first, n, front, 1);
}

int64_t lbomp__deque_grain(double task_s, int64_t n, int64_t team)
{
        if (!(task_s > 0) || team <= 1 || task_s >= LBOMP__STEAL_MIN_S)
                return 1;
        double want = LBOMP__STEAL_MIN_S / task_s;
        int64_t cap = n / (LBOMP__BATCH_PARTS * team);
        int64_t g = want < (double)cap ? (int64_t)(want + 0.999999) : cap;
        return g > 1 ? g : 1;
}

void lbomp__deque_settle(struct lbomp__deque *d, uint64_t step)
{
        /* Release: a thief that reads this step (acquire) sees the bottom of the arming. */
        atomic_store_explicit(&d->step, step, memory_order_release);
}

bool lbomp__deque_settled(struct lbomp__deque *d, uint64_t step)
{
        return atomic_load_explicit(&d->step, memory_order_acquire) >= step;
}

/* The owner's reads of its own content's fields (it wrote them). */
struct content {
        bool front;
        int64_t base, g, lo, hi;
};

static struct content content_of(struct lbomp__deque *d)
{
        return (struct content){
                .front = atomic_load_explicit(&d->front, memory_order_relaxed),
                .base = atomic_load_explicit(&d->base, memory_order_relaxed),
                .g = atomic_load_explicit(&d->grain, memory_order_relaxed),
                .lo = atomic_load_explicit(&d->lo, memory_order_relaxed),
                .hi = atomic_load_explicit(&d->hi, memory_order_relaxed),
        };
}

/* Positions of indices [a, b) (a < b), a contiguous range in both modes: [*s, *e). */
static void runs_of(const struct content *c, int64_t a, int64_t b, int64_t *s, int64_t *e)
{
        int64_t s0, e0, s1, e1;
        run_of(c->front, c->base, c->g, c->lo, c->hi, a, &s0, &e0);
        run_of(c->front, c->base, c->g, c->lo, c->hi, b - 1, &s1, &e1);
        *s = c->front ? s0 : s1;
        *e = c->front ? e1 : e0;
}

int64_t lbomp__deque_next(struct lbomp__deque *d, int64_t *pos)
{
        int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
        struct content c = content_of(d);
        if (b <= t) {
                *pos = c.hi;
                return 0;
        }
        int64_t s, e;
        runs_of(&c, t, b, &s, &e);
        *pos = s;
        return e - s;
}

/* Indices to claim for at least k positions (whole runs). */
static int64_t runs_for(int64_t k, int64_t g)
{
        return k >= INT64_MAX - g ? INT64_MAX / 2 : (k + g - 1) / g;
}

/* Front mode: the owner claims from the top like a thief, k positions at a time. */
static int64_t pop_front(struct lbomp__deque *d, int64_t k, int64_t *first)
{
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
        struct content c = content_of(d);
        int64_t want = runs_for(k, c.g);
        int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
        for (;;) {
                if (t >= b)
                        return 0;
                int64_t got = b - t < want ? b - t : want;
                /* On failure t is the new top, a thief's claim: retry from there. */
                if (atomic_compare_exchange_weak_explicit(
                            &d->top, &t, t + got, memory_order_relaxed, memory_order_relaxed)) {
                        int64_t s, e;
                        runs_of(&c, t, t + got, &s, &e);
                        *first = s;
                        return e - s;
                }
        }
}

int64_t lbomp__deque_pop(struct lbomp__deque *d, int64_t k, int64_t *first)
{
        if (atomic_load_explicit(&d->front, memory_order_relaxed))
                return pop_front(d, k, first);
        struct content c = content_of(d);
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
        int64_t want = runs_for(k, c.g);
        int64_t nb = b - want;
        atomic_store_explicit(&d->bottom, nb, memory_order_relaxed);
        /* Pairs with the seq_cst fence in steal: either the thief sees the lower bottom, or we
         * see its higher top. */
        atomic_thread_fence(memory_order_seq_cst);
        int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
        int64_t lo;
        if (t < nb) { /* the whole batch [nb, b) is ours */
                lo = nb;
        } else if (t >= b) { /* empty */
                atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
                return 0;
        } else {
                /* [t + 1, b) is ours; t is the last index: race the thieves for it with their
                 * CAS. */
                int64_t expect = t;
                lo = t + 1;
                if (atomic_compare_exchange_strong_explicit(
                            &d->top, &expect, t + 1, memory_order_seq_cst, memory_order_relaxed))
                        lo = t;
                atomic_store_explicit(&d->bottom, t + 1, memory_order_relaxed);
                if (lo == b)
                        return 0;
        }
        int64_t s, e;
        runs_of(&c, lo, b, &s, &e);
        *first = s;
        return e - s;
}

enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos, int64_t *count)
{
        return lbomp__deque_steal_paying(d, pos, count, NULL, 0, 0);
}

enum lbomp__take lbomp__deque_steal_paying(struct lbomp__deque *d, int64_t *pos, int64_t *count,
                                           const double *pc, int64_t n, double ratio)
{
        int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
        /* Pairs with the seq_cst fence in pop (tail mode). */
        atomic_thread_fence(memory_order_seq_cst);
        /* Acquire pairs with the release store of bottom in arm: the content's fields are that
         * content's. */
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
        if (t >= b)
                return LBOMP__EMPTY;
        struct content c = content_of(d);
        /* The run at the top is positions [s, e); the owner's other positions left are [lo, hi):
         * after the run in front mode, below it in tail mode. A bottom the owner is lowering reads
         * as less left: then it keeps its run. A top read in an earlier content than the fields
         * may point anywhere (its claim would fail): pass. */
        int64_t s, e;
        run_of(c.front, c.base, c.g, c.lo, c.hi, t, &s, &e);
        if (pc) {
                int64_t ls, le;
                runs_of(&c, t, b, &ls, &le); /* everything left, the run included */
                int64_t lo = c.front ? e : ls, hi = c.front ? le : s;
                if (s < 0 || e > n || s >= e || lo < 0 || lo > hi || hi > n)
                        return LBOMP__EMPTY;
                if (pc[hi] - pc[lo] < ratio * (pc[e] - pc[s]))
                        return LBOMP__EMPTY;
        }
        /* The index is the claim: whoever moves top from t owns index t. A thief that read t in
         * an earlier step fails here, since that index was consumed by moving top past it. */
        if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                     memory_order_relaxed))
                return LBOMP__LOST_RACE;
        *pos = s;
        *count = e - s;
        return LBOMP__TAKEN;
}

/*
 * Why a quarter of the share. A share by count would keep a hotspot at the head of the owner's
 * tasks, and half the rest, from the thieves (λ 1.2 with a hot tenth of the tasks on 2 threads):
 * hence by predicted cost. But the costs are the last window's, and a hotspot that moved since onto
 * the owner's tasks hides in a batch cut to their old cost: the thief, out of work, cannot take
 * what the owner holds (kneighbor-drift's windows after a move ran at λ 1.16–1.26 with a full
 * share, 1.01–1.02 with a quarter). Four times more batches cost one deque pop each, ≈ 40 per
 * step for 256 tasks, nothing against the tasks. Without costs (the first window, `none` with
 * stealing, auto's windows that time nothing, a changed task set) by count, a quarter as fine
 * too: a full share by count kept a hotspot from the thieves the same way. In the first window
 * after the tasks were placed (blind) a sixteenth: kneighbor's hot tenth sits at the head of the
 * first worker's tasks, and a quarter's batches of it (32 hot tasks, 6.4 ms) ended those steps at
 * λ 1.04 of what the threads ran; a sixteenth's at 1.002 (the quick kneighbor-hotspot 0.985 × the
 * time, kneighbor-drift 0.994 ×). Not beyond that window: there, finer batches by count let
 * thieves take more tasks away from their data, and when the two CPUs share no cache (bench/README,
 * "The two faces") the 1 MiB memtasks ran 1.14-1.16 × slower with a sixteenth throughout.
 */
int64_t lbomp__deque_batch(const double *pc, int64_t n, int64_t pos, int64_t left, int64_t team,
                           bool blind)
{
        if (pos + left > n)
                left = n - pos; /* a stale top overestimates what is left */
        if (left <= 0)
                return 0;
        if (team <= 1)
                return left; /* no thief */
        if (pc) {
                double base = pc[pos],
                       share = (pc[pos + left] - base) / (double)(LBOMP__BATCH_PARTS * team);
                if (share > 0) {
                        /* The longest prefix of what is left within the share, at least one. */
                        int64_t lo = 1, hi = left;
                        while (lo < hi) {
                                int64_t mid = lo + (hi - lo + 1) / 2;
                                if (pc[pos + mid] - base <= share)
                                        lo = mid;
                                else
                                        hi = mid - 1;
                        }
                        return lo;
                }
        }
        int64_t k = left / ((blind ? LBOMP__BATCH_PARTS_BLIND : LBOMP__BATCH_PARTS) * team);
        return k < 1 && left >= team ? 1 : k;
}

int64_t lbomp__deque_batch_floor(int64_t k, double task_s, int64_t left, int64_t team)
{
        if (!(task_s > 0) || team < 1)
                return k;
        double want = LBOMP__BATCH_MIN_S / task_s;
        int64_t share = left / team;
        int64_t least = want < (double)share ? (int64_t)want : share;
        return k < least ? least : k;
}

bool lbomp__deque_wanted(uint64_t ends, uint64_t last, uint64_t stolen, uint32_t n, uint64_t t0,
                         double ticks_per_s)
{
        if (n < 2)
                return false;
        double idle = (double)last - (double)ends / n + (double)stolen / n;
        double len = (double)last - (double)t0;
        double share = LBOMP__STEAL_IDLE * len, most = LBOMP__STEAL_IDLE_MAX_S * ticks_per_s;
        return idle > (share < most ? share : most) && idle > LBOMP__STEAL_IDLE_S * ticks_per_s;
}
