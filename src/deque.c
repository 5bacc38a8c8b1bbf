/*
 * deque.c — a worker's task deque for one step: Chase-Lev over a fixed array.
 *
 * The owner refills it at the start of a step (no thief runs then) and pops from the bottom;
 * thieves steal from the top. Memory orders follow Lê, Pop, Cohen and Zappa Nardelli, "Correct and
 * efficient work-stealing for weak memory models" (PPoPP 2013); each fence names the one it pairs
 * with. The array never grows during a step, so no buffer is ever swapped under a thief.
 */
#include "deque.h"

void lbomp__deque_reset(struct lbomp__deque *d, const uint32_t *items, int64_t n)
{
        d->items = items;
        atomic_store_explicit(&d->top, 0, memory_order_relaxed);
        /* Release: a thief that reads this bottom (acquire in steal) sees items and top. */
        atomic_store_explicit(&d->bottom, n, memory_order_release);
}

enum lbomp__take lbomp__deque_pop(struct lbomp__deque *d, int64_t *pos)
{
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
        atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
        /* Pairs with the seq_cst fence in steal: either the thief sees the smaller bottom, or we
         * see its larger top. */
        atomic_thread_fence(memory_order_seq_cst);
        int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
        if (t > b) {
                atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
                return LBOMP__EMPTY;
        }
        if (t < b) {
                *pos = b;
                return LBOMP__TAKEN;
        }
        /* Last item: race the thieves for it with the same CAS they use. */
        enum lbomp__take r = LBOMP__TAKEN;
        if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                     memory_order_relaxed))
                r = LBOMP__EMPTY;
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        *pos = b;
        return r;
}

enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos)
{
        int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
        /* Pairs with the seq_cst fence in pop. */
        atomic_thread_fence(memory_order_seq_cst);
        /* Acquire pairs with the release store of bottom in reset. */
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
        if (t >= b)
                return LBOMP__EMPTY;
        /* The slot index is the claim: whoever wins top = t owns items[t]. */
        if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                     memory_order_relaxed))
                return LBOMP__LOST_RACE;
        *pos = t;
        return LBOMP__TAKEN;
}
