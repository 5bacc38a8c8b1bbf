/*
 * tasks.c — the task table (tasks.h): adding, removing and linking tasks, recycling the slots of
 * removed tasks, and the map from public ids to slots. Placement on workers is the workers' part
 * (workers.c); measurement the window's (window.c).
 *
 * Links of removed tasks are dropped lazily: a link is alive while both of its slots still hold
 * the ids it was declared with, and the array is compacted once the links that may be dead are
 * half of it, so its size follows the live links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"
#include "util.h"

#define MAP_EMPTY UINT32_MAX

static uint32_t hash(uint32_t id, uint32_t cap)
{
        return (id * 0x9e3779b1u) & (cap - 1);
}

static void map_put(uint32_t *ids, uint32_t *slots, uint32_t cap, uint32_t id, uint32_t slot)
{
        uint32_t h = hash(id, cap);
        while (ids[h] != MAP_EMPTY)
                h = (h + 1) & (cap - 1);
        ids[h] = id;
        slots[h] = slot;
}

/* Room for one more live task (the map stays at most half full). 0 or -ENOMEM, nothing changed. */
static int map_reserve(struct lbomp__tasks *t)
{
        if ((uint64_t)(t->nalive + 1) * 2 <= t->map_cap)
                return 0;
        uint32_t cap = t->map_cap ? 2 * t->map_cap : 128;
        uint32_t *ids = malloc((size_t)cap * sizeof *ids);
        uint32_t *slots = malloc((size_t)cap * sizeof *slots);
        if (!ids || !slots) {
                free(ids);
                free(slots);
                return -ENOMEM;
        }
        memset(ids, 0xff, (size_t)cap * sizeof *ids);
        for (uint32_t i = 0; i < t->map_cap; i++)
                if (t->map_id[i] != MAP_EMPTY)
                        map_put(ids, slots, cap, t->map_id[i], t->map_slot[i]);
        free(t->map_id);
        free(t->map_slot);
        t->map_id = ids;
        t->map_slot = slots;
        t->map_cap = cap;
        return 0;
}

/* Where id sits in the map, or UINT32_MAX. */
static uint32_t map_find(const struct lbomp__tasks *t, uint32_t id)
{
        if (!t->map_cap)
                return UINT32_MAX;
        for (uint32_t h = hash(id, t->map_cap);; h = (h + 1) & (t->map_cap - 1)) {
                if (t->map_id[h] == id)
                        return h;
                if (t->map_id[h] == MAP_EMPTY)
                        return UINT32_MAX;
        }
}

/* Backward-shift deletion: no tombstones, so lookups stay short however long the churn. */
static void map_del(struct lbomp__tasks *t, uint32_t h)
{
        uint32_t m = t->map_cap - 1;
        for (uint32_t j = (h + 1) & m;; j = (j + 1) & m) {
                if (t->map_id[j] == MAP_EMPTY)
                        break;
                uint32_t home = hash(t->map_id[j], t->map_cap);
                /* j's entry may fill the hole at h when its home is not in (h, j] cyclically */
                if (((j - home) & m) >= ((j - h) & m)) {
                        t->map_id[h] = t->map_id[j];
                        t->map_slot[h] = t->map_slot[j];
                        h = j;
                }
        }
        t->map_id[h] = MAP_EMPTY;
}

int lbomp__tasks_add(struct lbomp__tasks *t, void *data, size_t bytes, int home, uint32_t *id)
{
        if (t->next_id >= LBOMP__MAX_ID)
                return -ENOMEM;
        /* Everything that can fail first. */
        if (map_reserve(t) < 0)
                return -ENOMEM;
        if (t->nadded == t->added_cap) {
                uint32_t cap = t->added_cap ? 2 * t->added_cap : 64;
                if (LBOMP__GROW(t->added, cap))
                        return -ENOMEM;
                t->added_cap = cap;
        }
        if (!t->nfree && t->nslots == t->cap) {
                uint32_t cap = t->cap ? 2 * t->cap : 64;
                if (cap > LBOMP__MAX_ID)
                        cap = LBOMP__MAX_ID;
                /* The free list grows with the slots, so that removing never allocates. */
                if (LBOMP__GROW(t->task, cap) || LBOMP__GROW(t->free, cap) ||
                    LBOMP__GROW(t->gone, cap))
                        return -ENOMEM;
                t->cap = t->gone_cap = cap;
        }
        uint32_t slot = t->nfree ? t->free[--t->nfree] : t->nslots++;
        uint32_t i = t->next_id++;
        t->task[slot] = (struct lbomp__task){
                .data = data, .bytes = bytes, .home = home, .worker = LBOMP__PENDING, .id = i};
        map_put(t->map_id, t->map_slot, t->map_cap, i, slot);
        t->added[t->nadded++] = slot;
        t->nalive++;
        t->dirty = true;
        t->version++;
        t->gen++;
        if (id)
                *id = i;
        return 0;
}

uint32_t lbomp__tasks_slot(const struct lbomp__tasks *t, uint32_t id)
{
        uint32_t h = map_find(t, id);
        return h == UINT32_MAX ? LBOMP__NOSLOT : t->map_slot[h];
}

int lbomp__tasks_check(const struct lbomp__tasks *t, uint32_t id)
{
        if (lbomp__tasks_slot(t, id) != LBOMP__NOSLOT)
                return 0;
        return id < t->next_id ? -ESTALE : -ENOENT;
}

/* Drops the links whose tasks are gone and recounts each live task's links. */
static void compact_links(struct lbomp__tasks *t)
{
        size_t k = 0;
        for (uint32_t s = 0; s < t->nslots; s++)
                t->task[s].nlinks = 0;
        for (size_t i = 0; i < t->nlink; i++) {
                const struct lbomp__link *l = &t->link[i];
                if (!lbomp__link_alive(t, l))
                        continue;
                t->task[l->a].nlinks++;
                t->task[l->b].nlinks++;
                t->link[k++] = *l;
        }
        t->nlink = k;
        t->dead_links = 0;
}

int lbomp__tasks_remove(struct lbomp__tasks *t, uint32_t id)
{
        uint32_t h = map_find(t, id);
        if (h == UINT32_MAX)
                return id < t->next_id ? -ESTALE : -ENOENT;
        uint32_t slot = t->map_slot[h];
        map_del(t, h);
        struct lbomp__task *k = &t->task[slot];
        t->dead_links += k->nlinks;
        if (t->ngone < t->gone_cap)
                t->gone[t->ngone++] = (struct lbomp__gone){slot, k->id, k->worker};
        else
                t->reshaped = true;
        k->worker = LBOMP__REMOVED;
        k->data = NULL;
        k->mem = NULL;
        k->mem_bytes = 0;
        k->nlinks = 0;
        t->free[t->nfree++] = slot;
        /* A task added and removed before it was placed leaves its slot in `added`: harmless,
         * the window then clears a free slot. */
        t->nalive--;
        t->dirty = true;
        t->version++;
        t->gen++;
        if (t->dead_links > 64 && 2 * t->dead_links > t->nlink)
                compact_links(t);
        return 0;
}

int lbomp__tasks_link(struct lbomp__tasks *t, uint32_t a, uint32_t b, size_t bytes)
{
        int rc = lbomp__tasks_check(t, a);
        if (rc == 0)
                rc = lbomp__tasks_check(t, b);
        if (rc < 0)
                return rc;
        if (a == b)
                return -EINVAL;
        if (t->nlink == t->link_cap) {
                size_t cap = t->link_cap ? 2 * t->link_cap : 64;
                if (LBOMP__GROW(t->link, cap))
                        return -ENOMEM;
                t->link_cap = cap;
        }
        uint32_t sa = lbomp__tasks_slot(t, a), sb = lbomp__tasks_slot(t, b);
        t->link[t->nlink++] =
                (struct lbomp__link){.a = sa, .b = sb, .ida = a, .idb = b, .bytes = (double)bytes};
        t->task[sa].nlinks++;
        t->task[sb].nlinks++;
        t->gen++;
        return 0;
}

void lbomp__tasks_placed(struct lbomp__tasks *t)
{
        t->nadded = 0;
        t->renewed = false;
}

void lbomp__tasks_free(struct lbomp__tasks *t)
{
        free(t->task);
        free(t->free);
        free(t->added);
        free(t->map_id);
        free(t->map_slot);
        free(t->link);
        free(t->gone);
        memset(t, 0, sizeof *t);
}
