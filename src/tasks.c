/*
 * tasks.c — the task table (tasks.h): adding, removing and linking tasks. Placement on workers is
 * the workers' part (workers.c); measurement the window's (window.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "tasks.h"
#include "util.h"

int lbomp__tasks_add(struct lbomp__tasks *t, void *data, size_t bytes, int home, uint32_t *id)
{
        if (t->n == UINT32_MAX - 2)
                return -ENOMEM;
        if (t->n == t->cap) {
                uint32_t cap = t->cap ? 2 * t->cap : 64;
                if (LBOMP__GROW(t->task, cap))
                        return -ENOMEM;
                t->cap = cap;
        }
        uint32_t i = t->n++;
        t->task[i] = (struct lbomp__task){
                .data = data, .bytes = bytes, .home = home, .worker = LBOMP__PENDING};
        t->nalive++;
        t->dirty = true;
        t->version++;
        if (id)
                *id = i;
        return 0;
}

int lbomp__tasks_remove(struct lbomp__tasks *t, uint32_t id)
{
        if (!lbomp__tasks_alive(t, id))
                return -ENOENT;
        t->task[id].worker = LBOMP__REMOVED;
        t->nalive--;
        t->dirty = true;
        t->version++;
        return 0;
}

int lbomp__tasks_link(struct lbomp__tasks *t, uint32_t a, uint32_t b, size_t bytes)
{
        if (!lbomp__tasks_alive(t, a) || !lbomp__tasks_alive(t, b))
                return -ENOENT;
        if (a == b)
                return -EINVAL;
        if (t->nlink == t->link_cap) {
                size_t cap = t->link_cap ? 2 * t->link_cap : 64;
                if (LBOMP__GROW(t->link, cap))
                        return -ENOMEM;
                t->link_cap = cap;
        }
        t->link[t->nlink++] = (struct lbomp__link){.a = a, .b = b, .bytes = (double)bytes};
        return 0;
}

void lbomp__tasks_free(struct lbomp__tasks *t)
{
        free(t->task);
        free(t->link);
        t->task = NULL;
        t->link = NULL;
        t->n = t->cap = t->nalive = 0;
        t->nlink = t->link_cap = 0;
}
