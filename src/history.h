/*
 * history.h — the last records of one kind (LB steps, windows, steps), so that a run of hours
 * holds a bounded history (LBOMP_HISTORY) and a new record reuses memory that is already there
 * instead of touching fresh pages.
 *
 * Record i of the run (0, 1, ...) lives in slot i mod S, S the power of two above `keep`: the last
 * `keep` are readable, and the slot of the record being written never holds one of them, so that
 * a record begun and then abandoned (lbomp__history_slot without lbomp__history_push) loses
 * nothing readable. The array grows by doubling up to S slots. When a slot is reused, the record
 * it held is handed to the caller once (`gone`) so that totals over the whole run stay exact.
 */
#ifndef LBOMP_HISTORY_H
#define LBOMP_HISTORY_H

#include <stddef.h>
#include <stdint.h>

struct lbomp__history {
        void *rec;
        size_t size;      /* bytes of a record */
        uint64_t keep;    /* records readable */
        uint64_t mask;    /* S - 1 */
        uint64_t n;       /* records pushed over the run */
        uint64_t dropped; /* records 0 .. dropped-1 were handed back as `gone` */
        uint64_t cap;     /* slots allocated (at most S) */
};

/* An empty history of records of `size` bytes keeping the last `keep` (≥ 1). Allocates nothing. */
void lbomp__history_init(struct lbomp__history *h, size_t size, uint64_t keep);
void lbomp__history_free(struct lbomp__history *h);

/* Whether the slot of record h->n (the next) is allocated. */
static inline int lbomp__history_room(const struct lbomp__history *h)
{
        return (h->n & h->mask) < h->cap;
}
/* Allocates the slot of record h->n: 0 or -ENOMEM. */
int lbomp__history_reserve(struct lbomp__history *h);

/*
 * The slot of record h->n (the next), zeroed; NULL when out of memory. When the slot held a
 * record not handed back yet, it is copied to `gone` first (which must hold `size` bytes) and
 * *had_gone is set (NULL `gone`: the caller keeps no totals). Not counted until
 * lbomp__history_push.
 */
void *lbomp__history_slot(struct lbomp__history *h, void *gone, int *had_gone);
/* The record of the last lbomp__history_slot is complete: it counts. */
static inline void lbomp__history_push(struct lbomp__history *h)
{
        h->n++;
}

/* The first readable record (records before it are gone). */
static inline uint64_t lbomp__history_first(const struct lbomp__history *h)
{
        return h->n > h->keep ? h->n - h->keep : 0;
}

/* Record i, or NULL when it is not readable (not pushed yet, or older than the last `keep`). */
static inline void *lbomp__history_at(const struct lbomp__history *h, uint64_t i)
{
        if (i >= h->n || i < lbomp__history_first(h))
                return NULL;
        return (char *)h->rec + (i & h->mask) * h->size;
}

/* The last record pushed, or NULL. */
static inline void *lbomp__history_last(const struct lbomp__history *h)
{
        return h->n ? lbomp__history_at(h, h->n - 1) : NULL;
}

/* Record i for totals: also a record no longer readable whose slot was not reused yet (i from
 * h->dropped to h->n - 1); NULL otherwise. */
static inline void *lbomp__history_held(const struct lbomp__history *h, uint64_t i)
{
        if (i >= h->n || i < h->dropped)
                return NULL;
        return (char *)h->rec + (i & h->mask) * h->size;
}

#endif
