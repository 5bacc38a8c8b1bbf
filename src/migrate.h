/*
 * migrate.h — data with the task: after an LB step, the tasks whose data must follow them (pages
 * moved with move_pages under LBOMP_MOVE_PAGES=on, or the application's migrate callback), and
 * the move itself on the thread of each task's new worker. The public calls (lbomp_alloc_on_node,
 * lbomp_task_alloc, lbomp_task_set_memory, ...) live in migrate.c too. Below it: workers, tasks,
 * topology.
 */
#ifndef LBOMP_MIGRATE_H
#define LBOMP_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbomp.h"
#include "policy.h"
#include "tasks.h"
#include "topology.h"
#include "workers.h"

struct lbomp__data {
        lbomp_migrate_fn fn;
        void *arg;
        uint32_t *arrived;     /* [ntask] slots of tasks that changed node, by new worker */
        uint32_t *arrived_off; /* [nworkers + 1] */
        int32_t *arrived_from; /* [ntask] the node each one's data was on */
        size_t arrived_cap;
        bool pending; /* the team has page moves or callbacks to run */
};

/* After the plan is applied: lists the tasks whose data must follow them (the snapshot still
 * holds their old workers and homes). Returns the count, or -ENOMEM. */
int lbomp__data_plan(struct lbomp__data *d, struct lbomp__workers *ws,
                     const struct lbomp__tasks *tasks, const struct lbomp__snap *s,
                     const uint32_t *dest, bool move_pages);
/* Worker `self` of the team: moves the pages / calls the callback of the tasks that arrived to it.
 */
void lbomp__data_run(struct lbomp__data *d, struct lbomp__workers *ws, struct lbomp__tasks *tasks,
                     const struct lbomp__topo *topo, bool move_pages, int self);
void lbomp__data_free(struct lbomp__data *d);

#endif
