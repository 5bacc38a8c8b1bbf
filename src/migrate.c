/*
 * migrate.c — data with the task: NUMA allocation of task memory, registration of the user's own
 * memory, and what happens to it when a rebalance moves its task to another node (libnuma
 * move_pages under LBOMP_MOVE_PAGES=on, and the application's migrate callback).
 *
 * Nodes here are the topology's logical nodes. On the host they map to the kernel's node numbers
 * (hwloc os_index) and pages really move. With a profile (LBOMP_TOPOLOGY) the nodes are virtual:
 * the workers' threads run wherever the host lets them, so there is no real node to move pages to;
 * nothing is moved and the bytes that would have moved are counted, so the report shows what the
 * plan would cost on that machine. The per-task work runs on the thread of the task's new worker,
 * all workers at once, between two barriers of the LB step.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "migrate.h"
#include "runtime.h"

#define PAGE_BATCH 512 /* pages per move_pages call: the arrays live on the stack */

static int check_node(const struct lbomp *lb, const char *fn, int node)
{
        if (node == LBOMP_NODE_ANY || (node >= 0 && node < lb->topo.nnodes))
                return 0;
        lbomp__set_error("lbomp: %s: node %d does not exist (the topology has %d)", fn, node,
                         lb->topo.nnodes);
        return -EINVAL;
}

int lbomp_alloc_on_node(lbomp_t *lb, size_t bytes, int node, void **out)
{
        if (!lb || !out || bytes == 0)
                return -EINVAL;
        *out = NULL;
        int rc = check_node(lb, "lbomp_alloc_on_node", node);
        if (rc < 0)
                return rc;
        if (!lbomp__numa_ok())
                return -ENOTSUP;
        void *p;
        if (node == LBOMP_NODE_ANY || !lb->topo.is_host)
                p = numa_alloc_local(bytes); /* a profile's node is not a node of this host */
        else
                p = numa_alloc_onnode(bytes, lb->topo.node_os[node]);
        if (!p)
                return -ENOMEM;
        *out = p;
        return 0;
}

void lbomp_free(void *p, size_t bytes)
{
        if (p)
                numa_free(p, bytes);
}

int lbomp_task_set_memory(lbomp_t *lb, lbomp_id_t id, void *addr, size_t bytes, int node)
{
        if (!lb)
                return -EINVAL;
        if (lbomp__team_busy(&lb->team))
                return -EBUSY;
        int rc = lbomp__tasks_check(&lb->tasks, id);
        if (rc < 0)
                return rc;
        rc = check_node(lb, "lbomp_task_set_memory", node);
        if (rc < 0)
                return rc;
        struct lbomp__task *t = &lb->tasks.task[lbomp__tasks_slot(&lb->tasks, id)];
        if (!addr || bytes == 0) {
                t->mem = NULL;
                t->mem_bytes = 0;
                return 0;
        }
        t->mem = addr;
        t->mem_bytes = bytes;
        if (node != LBOMP_NODE_ANY)
                t->home = node;
        if (t->bytes == 0) /* the cost model needs a size; the registered one is the best known */
                t->bytes = bytes;
        return 0;
}

int lbomp_task_alloc(lbomp_t *lb, lbomp_id_t id, size_t bytes, void **out)
{
        if (!lb || !out || bytes == 0)
                return -EINVAL;
        *out = NULL;
        if (lbomp__team_busy(&lb->team))
                return -EBUSY;
        int rc = lbomp__tasks_check(&lb->tasks, id);
        if (rc < 0)
                return rc;
        if (lb->tasks.dirty) {
                /* The last step's times still refer to the arrays about to be rebuilt. */
                lbomp__window_aggregate_pending(&lb->win, &lb->ws);
                rc = lbomp__workers_fill(&lb->ws, &lb->tasks, false);
                lb->refilled = true;
        }
        if (rc < 0)
                return rc;
        int node = lb->ws.w[lb->tasks.task[lbomp__tasks_slot(&lb->tasks, id)].worker].node;
        void *p;
        if ((rc = lbomp_alloc_on_node(lb, bytes, node, &p)) < 0)
                return rc;
        rc = lbomp_task_set_memory(lb, id, p, bytes, node);
        if (rc < 0) {
                lbomp_free(p, bytes);
                return rc;
        }
        *out = p;
        return 0;
}

int lbomp_set_migrate_fn(lbomp_t *lb, lbomp_migrate_fn fn, void *arg)
{
        if (!lb)
                return -EINVAL;
        if (lbomp__team_busy(&lb->team))
                return -EBUSY;
        lb->data.fn = fn;
        lb->data.arg = fn ? arg : NULL;
        return 0;
}

int lbomp_set_move_pages(lbomp_t *lb, int on)
{
        if (!lb)
                return -EINVAL;
        if (lbomp__team_busy(&lb->team))
                return -EBUSY;
        return lbomp__config_set(&lb->cfg, "LBOMP_MOVE_PAGES", on ? "on" : "off",
                                 "lbomp_set_move_pages");
}

int lbomp__data_plan(struct lbomp__data *d, struct lbomp__workers *ws,
                     const struct lbomp__tasks *tasks, const struct lbomp__snap *s,
                     const uint32_t *dest, bool move_pages)
{
        uint32_t P = (uint32_t)ws->n, n = 0;
        d->pending = false;
        for (uint32_t i = 0; i < P; i++) {
                ws->w[i].data_moves = 0;
                ws->w[i].data_bytes = 0;
                ws->w[i].data_error = 0;
        }
        if (!d->fn && !move_pages)
                return 0;
        if (d->arrived_cap < s->ntasks || !d->arrived_off) {
                size_t cap = s->ntasks ? s->ntasks : 1;
                uint32_t *a = realloc(d->arrived, cap * sizeof *a);
                if (a)
                        d->arrived = a;
                int32_t *f = realloc(d->arrived_from, cap * sizeof *f);
                if (f)
                        d->arrived_from = f;
                uint32_t *o = realloc(d->arrived_off, (P + 1) * sizeof *o);
                if (o)
                        d->arrived_off = o;
                if (!a || !f || !o)
                        return -ENOMEM;
                d->arrived_cap = cap;
        }
        uint32_t *off = d->arrived_off;
        memset(off, 0, (P + 1) * sizeof *off);
        /* Which tasks need work: a node change with a callback, or registered pages to move
         * (also within a node when nobody knows where the pages are). */
        for (int pass = 0; pass < 2; pass++) {
                for (uint32_t t = 0; t < s->ntasks; t++) {
                        if (dest[t] == s->worker[t])
                                continue;
                        const struct lbomp__task *tk = &tasks->task[s->id[t]];
                        int32_t from = lbomp__task_node(s, t), to = s->wnode[dest[t]];
                        bool cb = d->fn && from != to;
                        bool pages = move_pages && tk->mem && (s->home[t] < 0 || from != to);
                        if (!cb && !pages)
                                continue;
                        if (pass == 0) {
                                off[dest[t] + 1]++;
                        } else {
                                uint32_t k = off[dest[t]]++;
                                d->arrived[k] = s->id[t];
                                d->arrived_from[k] = from;
                                n++;
                        }
                }
                if (pass == 0) {
                        for (uint32_t i = 0; i < P; i++)
                                off[i + 1] += off[i];
                } else {
                        /* the fill moved every start to the next one's: shift back */
                        memmove(off + 1, off, P * sizeof *off);
                        off[0] = 0;
                }
        }
        d->pending = n > 0;
        return (int)n;
}

/* Moves the pages of [addr, addr + bytes) to kernel node `os_node`. Returns the bytes of the
 * pages now on that node, and the first error in *err (pages never touched do not count). */
static uint64_t move_range(void *addr, size_t bytes, int os_node, int *err)
{
        long ps = sysconf(_SC_PAGESIZE);
        uintptr_t first = (uintptr_t)addr & ~(uintptr_t)(ps - 1);
        uintptr_t last = ((uintptr_t)addr + bytes - 1) & ~(uintptr_t)(ps - 1);
        unsigned long npages = (unsigned long)((last - first) / (uintptr_t)ps) + 1;
        void *pages[PAGE_BATCH];
        int nodes[PAGE_BATCH], status[PAGE_BATCH];
        uint64_t moved = 0;
        for (unsigned long done = 0; done < npages;) {
                unsigned long k = npages - done < PAGE_BATCH ? npages - done : PAGE_BATCH;
                for (unsigned long i = 0; i < k; i++) {
                        pages[i] = (void *)(first + (done + i) * (uintptr_t)ps);
                        nodes[i] = os_node;
                        status[i] = -1;
                }
                long r = move_pages(0, k, pages, nodes, status, MPOL_MF_MOVE);
                if (r < 0) {
                        if (!*err)
                                *err = -errno;
                        return moved;
                }
                for (unsigned long i = 0; i < k; i++) {
                        if (status[i] == os_node)
                                moved += (uint64_t)ps;
                        else if (status[i] < 0 && status[i] != -ENOENT && !*err)
                                *err = status[i];
                }
                done += k;
        }
        return moved;
}

void lbomp__data_run(struct lbomp__data *d, struct lbomp__workers *ws, struct lbomp__tasks *tasks,
                     const struct lbomp__topo *topo, bool move_pages, int self)
{
        struct lbomp__worker *w = &ws->w[self];
        int to = w->node;
        for (uint32_t k = d->arrived_off[self]; k < d->arrived_off[self + 1]; k++) {
                struct lbomp__task *tk = &tasks->task[d->arrived[k]];
                int from = d->arrived_from[k];
                bool unknown = tk->home < 0; /* nobody said where the pages are */
                bool followed = false;
                if (move_pages && tk->mem && (unknown || from != to)) {
                        if (topo->is_host) {
                                int err = 0;
                                uint64_t b =
                                        move_range(tk->mem, tk->mem_bytes, topo->node_os[to], &err);
                                w->data_bytes += b;
                                if (err && !w->data_error)
                                        w->data_error = err;
                                followed = b > 0 || err == 0;
                        } else {
                                /* a profile's nodes are not this host's: count, do not move */
                                w->data_bytes += tk->mem_bytes;
                                followed = true;
                        }
                }
                if (d->fn && from != to) {
                        d->fn(tk->data, tk->id, from, to, d->arg);
                        followed = true;
                }
                if (followed) {
                        tk->home = to;
                        w->data_moves++;
                }
        }
}

void lbomp__data_free(struct lbomp__data *d)
{
        free(d->arrived);
        free(d->arrived_off);
        free(d->arrived_from);
        memset(d, 0, sizeof *d);
}
