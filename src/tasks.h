/*
 * tasks.h — the task table: every task's user pointer, data size, home node, worker and
 * registered memory, and the links between tasks. A task id indexes the table. Below it: util.
 */
#ifndef LBOMP_TASKS_H
#define LBOMP_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LBOMP__PENDING (UINT32_MAX - 1) /* added, not yet on a worker */
#define LBOMP__REMOVED UINT32_MAX

struct lbomp__task {
        void *data;
        uint64_t bytes;
        int32_t home;
        uint32_t worker; /* LBOMP__PENDING, LBOMP__REMOVED, or a worker */
        void *mem;       /* registered memory that follows the task (migrate.c), or NULL */
        size_t mem_bytes;
};

struct lbomp__link {
        uint32_t a, b;
        double bytes;
};

struct lbomp__tasks {
        struct lbomp__task *task;
        uint32_t n;      /* ids handed out */
        uint32_t cap;    /* entries allocated */
        uint32_t nalive; /* tasks not removed */
        struct lbomp__link *link;
        size_t nlink, link_cap;
        bool dirty;       /* tasks added, removed or moved: the workers' arrays must be rebuilt */
        uint64_t version; /* counts additions and removals: a window measures one task set */
};

/* 0 and the new id, or -ENOMEM. `home` is checked by the caller. */
int lbomp__tasks_add(struct lbomp__tasks *t, void *data, size_t bytes, int home, uint32_t *id);
/* 0 or -ENOENT. */
int lbomp__tasks_remove(struct lbomp__tasks *t, uint32_t id);
/* 0, -ENOENT (either task missing), -EINVAL (a == b), -ENOMEM. */
int lbomp__tasks_link(struct lbomp__tasks *t, uint32_t a, uint32_t b, size_t bytes);
static inline bool lbomp__tasks_alive(const struct lbomp__tasks *t, uint32_t id)
{
        return id < t->n && t->task[id].worker != LBOMP__REMOVED;
}
void lbomp__tasks_free(struct lbomp__tasks *t);

#endif
