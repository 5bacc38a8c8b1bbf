/*
 * history.c — the last records of one kind (history.h).
 */
#include "history.h"

#include <errno.h>
#include <string.h>

#include "util.h"

void lbomp__history_init(struct lbomp__history *h, size_t size, uint64_t keep)
{
        memset(h, 0, sizeof *h);
        h->size = size;
        h->keep = keep ? keep : 1;
        uint64_t slots = 1;
        while (slots <= h->keep)
                slots *= 2;
        h->mask = slots - 1;
}

void lbomp__history_free(struct lbomp__history *h)
{
        free(h->rec);
        h->rec = NULL;
        h->cap = 0;
}

int lbomp__history_reserve(struct lbomp__history *h)
{
        uint64_t slots = h->mask + 1;
        while ((h->n & h->mask) >= h->cap) {
                uint64_t cap = h->cap ? 2 * h->cap : 16;
                cap = cap < slots ? cap : slots;
                if (lbomp__grow(&h->rec, cap, h->size) < 0)
                        return -ENOMEM;
                h->cap = cap;
        }
        return 0;
}

void *lbomp__history_slot(struct lbomp__history *h, void *gone, int *had_gone)
{
        if (lbomp__history_reserve(h) < 0)
                return NULL;
        uint64_t slots = h->mask + 1;
        char *r = (char *)h->rec + (h->n & h->mask) * h->size;
        if (had_gone)
                *had_gone = 0;
        if (h->n >= slots && h->dropped + slots <= h->n) { /* it holds record n - S */
                if (gone) {
                        memcpy(gone, r, h->size);
                        if (had_gone)
                                *had_gone = 1;
                }
                h->dropped = h->n - slots + 1;
        }
        memset(r, 0, h->size);
        return r;
}
