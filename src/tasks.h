/*
 * tasks.h — the task table: every live task's user pointer, data size, home node, worker and
 * registered memory, and the links between tasks. A task lives in a slot; a removed task's slot
 * is recycled by a later addition, so the table, and everything indexed by slot (the workers'
 * arrays, the window, the snapshot), is as large as the most tasks ever alive at once, not as
 * the number of ids ever handed out. Public ids are never reused: they are issued in increasing
 * order and mapped to slots by a hash table, so a removed id is refused (-ESTALE) for the rest of
 * the run. Below it: util.
 */
#ifndef LBOMP_TASKS_H
#define LBOMP_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LBOMP__PENDING (UINT32_MAX - 1) /* added, not yet on a worker */
#define LBOMP__REMOVED UINT32_MAX       /* a free slot */
#define LBOMP__NOSLOT  UINT32_MAX       /* lbomp__tasks_slot(): no live task has that id */
#define LBOMP__MAX_ID  (UINT32_MAX - 2) /* ids are 0 .. LBOMP__MAX_ID - 1 */

struct lbomp__task {
        void *data;
        uint64_t bytes;
        int32_t home;
        uint32_t worker; /* LBOMP__PENDING, LBOMP__REMOVED (free slot), or a worker */
        uint32_t id;     /* the public id of the task in this slot */
        uint32_t nlinks; /* links declared with this task, while it lives */
        void *mem;       /* registered memory that follows the task (migrate.c), or NULL */
        size_t mem_bytes;
};

/* A link names both ends by slot and by id: it is alive while both slots still hold those ids
 * (a slot recycled for a new task does not inherit the links of the removed one). */
struct lbomp__link {
        uint32_t a, b;     /* slots */
        uint32_t ida, idb; /* ids */
        double bytes;
};

/* A removal since the workers' arrays were last filled: the task's slot, id and worker then. */
struct lbomp__gone {
        uint32_t slot, id, worker;
};

struct lbomp__tasks {
        struct lbomp__task *task; /* [cap] by slot */
        uint32_t nslots;          /* slots ever used (free ones included): the index space */
        uint32_t cap;             /* slots allocated */
        uint32_t nalive;          /* live tasks */
        uint32_t *free;           /* [cap] free slots, reused last-freed first */
        uint32_t nfree;
        uint32_t *added; /* slots given to new tasks since the last lbomp__tasks_placed() */
        uint32_t nadded, added_cap;
        uint32_t next_id; /* ids handed out */
        /* id -> slot, open addressing with linear probing; key UINT32_MAX is empty */
        uint32_t *map_id, *map_slot;
        uint32_t map_cap; /* a power of two, at least twice the live tasks */
        struct lbomp__link *link;
        size_t nlink, link_cap;
        size_t dead_links; /* links with a removed end not yet compacted away (an upper bound) */
        bool dirty;        /* tasks added, removed or moved: the workers' arrays must be rebuilt */
        bool renewed;      /* the table was rebuilt as a whole (a loop's chunks, chunks.c): every
                              slot holds a new task, which the window measures afresh */
        uint64_t version;  /* counts additions and removals */
        /* Counts every change of what the locality cost reads (lbstep.c, table_locality): a
         * task's worker, a link, the tasks themselves; a value computed at one count holds while
         * it stays. */
        uint64_t gen;
        /* The removals since the workers' arrays were last filled, so that a gathering after a
         * few tasks came and went touches only them and the added ones (workers.c, quick_fill);
         * `reshaped`: a task changed worker otherwise since (a plan, a resize, a loop's new
         * chunks) or the list was full, and the fill reads every slot. Both reset by the fill. */
        struct lbomp__gone *gone;
        uint32_t ngone, gone_cap;
        bool reshaped;
};

/* Tasks changed worker other than by a gathering (a plan, a resize, a loop's new chunks): the
 * workers' arrays are filled again reading every slot, and the locality cost is computed anew. */
static inline void lbomp__tasks_reshaped(struct lbomp__tasks *t)
{
        t->dirty = t->reshaped = true;
        t->gen++;
}

/* 0 and the new id, or -ENOMEM (also when every id was handed out: LBOMP__MAX_ID of them).
 * `home` is checked by the caller. */
int lbomp__tasks_add(struct lbomp__tasks *t, void *data, size_t bytes, int home, uint32_t *id);
/* The slot of live task `id`, or LBOMP__NOSLOT. */
uint32_t lbomp__tasks_slot(const struct lbomp__tasks *t, uint32_t id);
/* -ENOENT for an id never handed out, -ESTALE for one that was removed; 0 otherwise. */
int lbomp__tasks_check(const struct lbomp__tasks *t, uint32_t id);
/* 0, -ENOENT, -ESTALE (as lbomp__tasks_check). The slot is free for a later addition. */
int lbomp__tasks_remove(struct lbomp__tasks *t, uint32_t id);
/* 0, -ENOENT/-ESTALE (either task), -EINVAL (a == b), -ENOMEM. */
int lbomp__tasks_link(struct lbomp__tasks *t, uint32_t a, uint32_t b, size_t bytes);
/* Whether link k still joins two live tasks. */
static inline bool lbomp__link_alive(const struct lbomp__tasks *t, const struct lbomp__link *k)
{
        return t->task[k->a].worker != LBOMP__REMOVED && t->task[k->a].id == k->ida &&
               t->task[k->b].worker != LBOMP__REMOVED && t->task[k->b].id == k->idb;
}
/* The slots added since the last call: the window forgets what their slots measured before. */
void lbomp__tasks_placed(struct lbomp__tasks *t);
void lbomp__tasks_free(struct lbomp__tasks *t);

#endif
