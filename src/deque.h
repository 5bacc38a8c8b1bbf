/*
 * deque.h — a worker's task deque for one step: Chase-Lev over a fixed array, refilled at every
 * step (deque.c). Calls nothing else of the library.
 */
#ifndef LBOMP_DEQUE_H
#define LBOMP_DEQUE_H

#include <stdatomic.h>
#include <stdint.h>

#include "util.h"

struct lbomp__deque {
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t top;    /* thieves take here */
        _Alignas(LBOMP__CACHELINE) _Atomic int64_t bottom; /* the owner pops here */
        _Alignas(LBOMP__CACHELINE) const uint32_t *items;  /* not written while stealing */
};
enum lbomp__take { LBOMP__TAKEN, LBOMP__EMPTY, LBOMP__LOST_RACE };
/* Owner, while no thief runs: items[0..n) become the deque's content. */
void lbomp__deque_reset(struct lbomp__deque *d, const uint32_t *items, int64_t n);
/* Owner: the last item (LIFO end). On TAKEN, *pos is its index in items. */
enum lbomp__take lbomp__deque_pop(struct lbomp__deque *d, int64_t *pos);
/* Any thread: the first item (FIFO end). LOST_RACE means retry may succeed. */
enum lbomp__take lbomp__deque_steal(struct lbomp__deque *d, int64_t *pos);

#endif
