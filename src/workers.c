/*
 * workers.c — the workers of the team (workers.h): how many, where they run, which tasks each
 * holds, and whom each steals from. Everything here runs on one thread with no step running,
 * except binding, which each thread does for itself the first time it runs.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "workers.h"

static void worker_free(struct lbomp__worker *w)
{
        free(w->tasks);
        free(w->ids);
        free(w->data);
        free(w->ticks);
        free(w->runner);
        free(w->pcost);
        free(w->victims);
}

/* Victims nearest first: own node, then by distance; within a distance, starting after self so
 * that thieves spread over victims. LBOMP_STEAL=node keeps only the own node. */
void lbomp__workers_victims(struct lbomp__workers *ws, const struct lbomp__topo *topo,
                            enum lbomp__steal steal)
{
        int P = ws->n, n = topo->nnodes;
        for (int i = 0; i < P; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->nvictims = 0;
                for (int k = 1; k < P; k++) {
                        int v = (i + k) % P;
                        if (steal == LBOMP__STEAL_NODE && ws->w[v].node != w->node)
                                continue;
                        w->victims[w->nvictims++] = (uint32_t)v;
                }
                /* insertion sort by distance, stable: keeps the rotation within a distance */
                for (uint32_t a = 1; a < w->nvictims; a++) {
                        uint32_t x = w->victims[a];
                        double dx = topo->dist[w->node * n + ws->w[x].node];
                        uint32_t b = a;
                        while (b > 0 &&
                               topo->dist[w->node * n + ws->w[w->victims[b - 1]].node] > dx) {
                                w->victims[b] = w->victims[b - 1];
                                b--;
                        }
                        w->victims[b] = x;
                }
        }
}

void lbomp__workers_place(struct lbomp__workers *ws, const struct lbomp__topo *topo,
                          enum lbomp__steal steal)
{
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->core = lbomp__topo_spread_core(topo, i, ws->n);
                w->node = topo->core_node[w->core];
                w->prior = topo->core_speed && ws->speeds != LBOMP__SPEEDS_OFF
                                   ? topo->core_speed[w->core]
                                   : 1.0;
                w->hw = w->prior * w->rel;
                w->speed = w->hw * w->share;
                w->bound_once = false;
        }
        ws->oversubscribed = ws->n > (topo->is_host ? topo->npus_allowed : topo->ncores);
        /* A profile's cores are not ours: the threads share the host's PUs. */
        if (!topo->is_host && ws->n > omp_get_num_procs())
                ws->oversubscribed = true;
        lbomp__workers_victims(ws, topo, steal);
}

int lbomp__workers_resize(struct lbomp__workers *ws, int n, struct lbomp__tasks *tasks,
                          const struct lbomp__topo *topo, enum lbomp__steal steal)
{
        /* Everything that can fail first: the old workers stay whole until the new ones exist. */
        struct lbomp__worker *w = NULL;
        if (posix_memalign((void **)&w, LBOMP__CACHELINE, (size_t)n * sizeof *w) != 0)
                return -ENOMEM;
        int keep = n < ws->n ? n : ws->n;
        memset(w, 0, (size_t)n * sizeof *w);
        for (int i = 0; i < n; i++) {
                w[i].victims = malloc((size_t)n * sizeof *w[i].victims);
                if (!w[i].victims) {
                        for (int j = 0; j < i; j++)
                                free(w[j].victims);
                        free(w);
                        return -ENOMEM;
                }
        }
        for (int i = 0; i < keep; i++) {
                uint32_t *victims = w[i].victims;
                free(ws->w[i].victims);
                memcpy(&w[i], &ws->w[i], sizeof w[i]);
                w[i].victims = victims;
        }
        for (int i = keep; i < n; i++) /* measured from scratch (lbomp__window_speeds) */
                w[i].rel = w[i].share = w[i].hw = w[i].speed = 1.0;
        for (int i = keep; i < ws->n; i++)
                worker_free(&ws->w[i]);
        free(ws->w);
        ws->w = w;
        /* Tasks of workers that are gone wait for a new home. */
        for (uint32_t t = 0; t < tasks->nslots && n < ws->n; t++)
                if (tasks->task[t].worker != LBOMP__REMOVED && tasks->task[t].worker >= (uint32_t)n)
                        tasks->task[t].worker = LBOMP__PENDING;
        ws->n = n;
        lbomp__workers_place(ws, topo, steal);
        lbomp__tasks_reshaped(tasks);
        return 0;
}

/* ws->nfront, after pcost_ok or costless changed (no step running). */
static void count_front(struct lbomp__workers *ws)
{
        uint32_t n = 0;
        for (int i = 0; i < ws->n; i++)
                n += lbomp__workers_front(&ws->w[i]);
        ws->nfront = n;
}

static int by_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

/* Ascending; the few slots a gathering usually places by insertion (qsort's merge sort with its
 * allocation cost as much as the rest of the quick fill on bench/churn). */
static void sort_u32(uint32_t *a, uint32_t n)
{
        if (n > 64) {
                qsort(a, n, sizeof *a, by_u32);
                return;
        }
        for (uint32_t i = 1; i < n; i++) {
                uint32_t x = a[i], j = i;
                for (; j > 0 && a[j - 1] > x; j--)
                        a[j] = a[j - 1];
                a[j] = x;
        }
}

/* An entry of worker w's arrays: place p holds slot t. */
static void put(struct lbomp__workers *ws, struct lbomp__worker *w, uint32_t p, uint32_t t,
                const struct lbomp__task *task)
{
        w->tasks[p] = t;
        w->ids[p] = task[t].id;
        w->data[p] = task[t].data;
        ws->pos[t] = p;
}

/* Whether slot t is in worker w's arrays, at the place ws->pos records for it. */
static bool at_pos(const struct lbomp__workers *ws, const struct lbomp__worker *w, uint32_t t)
{
        uint32_t p = ws->pos[t];
        return p < w->n && w->tasks[p] == t;
}

/* Place p of worker w takes the entry at its last place, which goes. */
static void move_last(struct lbomp__workers *ws, struct lbomp__worker *w, uint32_t p)
{
        uint32_t last = --w->n;
        w->tasks[p] = w->tasks[last];
        w->ids[p] = w->ids[last];
        w->data[p] = w->data[last];
        ws->pos[w->tasks[p]] = p;
}

/*
 * lbomp__workers_fill with keep: each worker's entries that still hold one of its tasks stay where
 * they are; the tasks it gained (new, or moved to it) take the places of those that left, in slot
 * order, then go at the end; places still empty are filled from the end. Only the entries that
 * change are written: a gathering's serial part runs on whichever thread came last, and a full
 * rebuild there took every line of the other workers' arrays out of their cores' caches at every
 * gathering (bench/churn: 50 of 1,000 tasks replaced per step, yet half the entries written,
 * shifted by the removals; bench/README, *Worker arrays that stay where they are*). Each worker's
 * n is still its count before; `cur` scratch; false when the result does not add up to `count`
 * (arrays out of step with the table: the caller rebuilds them). ws->pos has room for every slot;
 * what it holds for a slot that is not found in place is never trusted.
 */
static bool keep_fill(struct lbomp__workers *ws, const struct lbomp__tasks *tasks,
                      const uint32_t *count, uint32_t *cur)
{
        uint32_t P = (uint32_t)ws->n, ns = tasks->nslots;
        const struct lbomp__task *task = tasks->task;
        /* What stays, its place recorded (a second entry of a slot found in place already is
         * not); what left, a hole (LBOMP__REMOVED in tasks[]). */
        for (uint32_t i = 0; i < P; i++) {
                struct lbomp__worker *w = &ws->w[i];
                for (uint32_t p = 0; p < w->n; p++) {
                        uint32_t s = w->tasks[p];
                        if (s < ns && task[s].worker == i && task[s].id == w->ids[p] &&
                            task[s].data == w->data[p] && !(ws->pos[s] < p && at_pos(ws, w, s))) {
                                ws->pos[s] = p;
                        } else if (s != LBOMP__REMOVED) {
                                w->tasks[p] = LBOMP__REMOVED;
                        }
                }
                cur[i] = 0;
        }
        /* What came, into the first holes, then at the end. */
        for (uint32_t t = 0; t < ns; t++) {
                uint32_t wi = task[t].worker;
                if (wi >= P || at_pos(ws, &ws->w[wi], t))
                        continue;
                struct lbomp__worker *w = &ws->w[wi];
                uint32_t p = cur[wi];
                while (p < w->n && w->tasks[p] != LBOMP__REMOVED)
                        p++;
                if (p == w->n) {
                        if (w->n == w->cap)
                                return false;
                        w->n++;
                }
                cur[wi] = p + 1;
                put(ws, w, p, t, task);
        }
        /* The holes left (all after cur), filled from the end. */
        bool ok = true;
        for (uint32_t i = 0; i < P; i++) {
                struct lbomp__worker *w = &ws->w[i];
                uint32_t lo = cur[i];
                for (;;) {
                        while (lo < w->n && w->tasks[lo] != LBOMP__REMOVED)
                                lo++;
                        while (w->n > lo && w->tasks[w->n - 1] == LBOMP__REMOVED)
                                w->n--;
                        if (lo >= w->n)
                                break;
                        move_last(ws, w, lo);
                }
                ok &= w->n == count[i];
        }
        return ok;
}

/*
 * The quick keep fill, when only additions and removals happened since the last fill (tasks->gone,
 * tasks->added; !tasks->reshaped): the same arrays as keep_fill leaves, reading only the entries
 * those touched, not every slot and every worker's arrays (bench/churn, 1,000 tasks, 50 replaced
 * per step: bench/README, *A gathering that reads only what changed*).
 */

/* The place of removal g's task in its worker's arrays, or LBOMP__REMOVED when it is not there
 * (a task removed before it was placed, or arrays out of step with the table). */
static uint32_t gone_place(const struct lbomp__workers *ws, const struct lbomp__gone *g)
{
        if (g->worker >= (uint32_t)ws->n || g->slot >= ws->pos_cap)
                return LBOMP__REMOVED;
        const struct lbomp__worker *w = &ws->w[g->worker];
        uint32_t p = ws->pos[g->slot];
        return at_pos(ws, w, g->slot) && w->ids[p] == g->id ? p : LBOMP__REMOVED;
}

/* Each worker's count after the removals (its entries that tasks->gone names, still in place);
 * the pending slots among tasks->added, ascending and once each, into pend; each removal's place
 * (gone_place) into place. Reads only the table and the arrays. */
static uint32_t quick_count(const struct lbomp__workers *ws, const struct lbomp__tasks *tasks,
                            uint32_t *count, uint32_t *pend, uint32_t *place)
{
        uint32_t P = (uint32_t)ws->n;
        for (uint32_t i = 0; i < P; i++)
                count[i] = ws->w[i].n;
        for (uint32_t k = 0; k < tasks->ngone; k++)
                if ((place[k] = gone_place(ws, &tasks->gone[k])) != LBOMP__REMOVED)
                        count[tasks->gone[k].worker]--;
        uint32_t n = 0;
        for (uint32_t k = 0; k < tasks->nadded; k++) {
                uint32_t t = tasks->added[k];
                if (t < tasks->nslots && tasks->task[t].worker == LBOMP__PENDING)
                        pend[n++] = t;
        }
        sort_u32(pend, n);
        uint32_t m = 0;
        for (uint32_t k = 0; k < n; k++) /* a slot freed and given again is in `added` twice */
                if (m == 0 || pend[m - 1] != pend[k])
                        pend[m++] = pend[k];
        return m;
}

/* The removals' places become holes, the placed pending tasks fill them (each worker's in slot
 * order, into its holes in the order the tasks left), then the rest from the end (in any order:
 * each place below the final count gets the last entry). `hole`: tasks->ngone entries of scratch,
 * then the removals' places that quick_count found; `at` and `next` of one per worker. False when
 * the counts do not add up (the caller then reads every slot). */
static bool quick_fill(struct lbomp__workers *ws, const struct lbomp__tasks *tasks,
                       const uint32_t *count, const uint32_t *pend, uint32_t npend, uint32_t *hole,
                       uint32_t *at, uint32_t *next)
{
        uint32_t P = (uint32_t)ws->n, ng = tasks->ngone;
        const uint32_t *place = hole + ng;
        const struct lbomp__task *task = tasks->task;
        memset(at, 0, P * sizeof *at);
        for (uint32_t k = 0; k < ng; k++) {
                const struct lbomp__gone *g = &tasks->gone[k];
                if (place[k] != LBOMP__REMOVED) {
                        ws->w[g->worker].tasks[place[k]] = LBOMP__REMOVED;
                        at[g->worker]++;
                }
        }
        /* each worker's holes together: hole[next[i] .. at[i]) */
        for (uint32_t i = 0, s = 0; i < P; i++) {
                uint32_t c = at[i];
                at[i] = next[i] = s;
                s += c;
        }
        for (uint32_t k = 0; k < ng; k++)
                if (place[k] != LBOMP__REMOVED)
                        hole[at[tasks->gone[k].worker]++] = place[k];
        for (uint32_t k = 0; k < npend; k++) {
                uint32_t t = pend[k], wi = task[t].worker;
                struct lbomp__worker *w = &ws->w[wi];
                uint32_t p;
                if (next[wi] < at[wi]) {
                        p = hole[next[wi]++];
                } else {
                        if (w->n == w->cap)
                                return false;
                        p = w->n++;
                }
                put(ws, w, p, t, task);
        }
        bool ok = true;
        for (uint32_t i = 0; i < P; i++) {
                struct lbomp__worker *w = &ws->w[i];
                for (uint32_t k = next[i]; k < at[i]; k++) {
                        uint32_t p = hole[k];
                        while (w->n > p && w->tasks[w->n - 1] == LBOMP__REMOVED)
                                w->n--;
                        if (w->n > p)
                                move_last(ws, w, p);
                }
                ok &= w->n == count[i];
        }
        return ok;
}

/* Each worker's arrays in ascending slot order (room made for them). */
static void rebuild(struct lbomp__workers *ws, const struct lbomp__tasks *tasks)
{
        for (int i = 0; i < ws->n; i++)
                ws->w[i].n = 0;
        for (uint32_t t = 0; t < tasks->nslots; t++) {
                uint32_t wi = tasks->task[t].worker;
                if (wi < (uint32_t)ws->n)
                        put(ws, &ws->w[wi], ws->w[wi].n++, t, tasks->task);
        }
}

/* Room in each worker's arrays for count[i] tasks. */
static int grow_to(struct lbomp__workers *ws, const uint32_t *count)
{
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                if (count[i] <= w->cap && w->tasks)
                        continue;
                uint32_t cap = count[i] > 2 * w->cap ? count[i] : 2 * w->cap;
                if (cap < 16)
                        cap = 16;
                if (LBOMP__GROW(w->tasks, cap) || LBOMP__GROW(w->ids, cap) ||
                    LBOMP__GROW(w->data, cap) || LBOMP__GROW(w->ticks, 2 * (size_t)cap) ||
                    LBOMP__GROW(w->runner, 2 * (size_t)cap) ||
                    LBOMP__GROW(w->pcost, (size_t)cap + 1))
                        return -ENOMEM;
                w->cap = cap;
        }
        return 0;
}

/* Each worker's tasks in the table into count[]; returns the pending ones. */
static uint32_t count_table(const struct lbomp__workers *ws, const struct lbomp__tasks *tasks,
                            uint32_t *count)
{
        uint32_t npending = 0;
        memset(count, 0, (size_t)ws->n * sizeof *count);
        for (uint32_t t = 0; t < tasks->nslots; t++) {
                uint32_t wi = tasks->task[t].worker;
                if (wi == LBOMP__PENDING)
                        npending++;
                else if (wi < (uint32_t)ws->n)
                        count[wi]++;
        }
        return npending;
}

int lbomp__workers_fill(struct lbomp__workers *ws, struct lbomp__tasks *tasks, bool keep)
{
        uint32_t P = (uint32_t)ws->n, ns = tasks->nslots;
        bool quick = keep && ws->pos_ok && !tasks->reshaped;
        /* Room first, so that a failure leaves the mapping as it was. */
        uint32_t *count = calloc(P, sizeof *count);
        uint32_t *quota = calloc(P, sizeof *quota);
        double *speed = calloc((size_t)P + 1, sizeof *speed);
        uint32_t *cur = keep ? calloc(P, sizeof *cur) : NULL;
        uint32_t *pend = quick ? malloc(((size_t)tasks->nadded + 1) * sizeof *pend) : NULL;
        uint32_t *hole = quick ? malloc((2 * (size_t)tasks->ngone + 1) * sizeof *hole) : NULL;
        uint32_t *next = quick ? malloc(((size_t)P + 1) * sizeof *next) : NULL;
        int rc = -ENOMEM;
        if (!count || !quota || !speed || (keep && !cur) || (quick && (!pend || !hole || !next)))
                goto out;
        if (ns > ws->pos_cap) {
                if (LBOMP__GROW(ws->pos, ns))
                        goto out;
                memset(ws->pos + ws->pos_cap, 0, (size_t)(ns - ws->pos_cap) * sizeof *ws->pos);
                ws->pos_cap = ns;
        }
        uint32_t npending = 0, k = 0;
        if (quick) {
                npending = quick_count(ws, tasks, count, pend, hole + tasks->ngone);
                uint64_t sum = npending;
                for (uint32_t i = 0; i < P; i++)
                        sum += count[i];
                quick = sum == tasks->nalive; /* else out of step with the table: read it all */
        }
        if (!quick)
                npending = count_table(ws, tasks, count);
        /* New tasks by capacity (lbomp__place_counts): contiguous blocks in slot order, of
         * sizes that follow the workers' speeds and, when those differ, what each holds. */
        bool equal = true;
        for (uint32_t i = 0; i < P; i++) {
                speed[i] = ws->w[i].speed;
                equal &= speed[i] == speed[0];
        }
        if (npending && lbomp__place_counts(speed, equal ? NULL : count, P, npending, quota) < 0)
                goto out;
        for (uint32_t i = 0; i < P; i++)
                count[i] += quota[i];
        if (grow_to(ws, count) < 0)
                goto out;
        for (uint32_t i = 0; i < P; i++) {
                ws->w[i].pcost_ok = false; /* the costs come with the next LB step */
                ws->w[i].blind = true;
        }
        /* Nothing fails from here on, but making room for the table's counts when a quick fill's
         * did not add up (then the arrays are rebuilt at the next fill). */
        uint32_t at = 0; /* the worker whose block is being filled */
        for (uint32_t j = 0; j < (quick ? npending : ns) && npending; j++) {
                uint32_t t = quick ? pend[j] : j;
                if (tasks->task[t].worker == LBOMP__PENDING) {
                        while (at + 1 < P && k == quota[at]) {
                                at++;
                                k = 0;
                        }
                        tasks->task[t].worker = at;
                        k++;
                }
        }
        tasks->gen += npending > 0; /* tasks got a worker: the locality cost changed */
        ws->pos_ok = false;
        if (quick && quick_fill(ws, tasks, count, pend, npending, hole, cur, next)) {
                ws->quick_fills++;
        } else if (!(keep && keep_fill(ws, tasks, count, cur))) {
                /* counts from the table, but for a quick fill's that did not add up */
                if (quick) {
                        count_table(ws, tasks, count);
                        if ((rc = grow_to(ws, count)) < 0)
                                goto out;
                }
                rebuild(ws, tasks);
        }
        ws->pos_ok = true;
        tasks->ngone = 0;
        tasks->reshaped = false;
        /* The time slots of timed steps are written by whoever runs each task: only what was
         * measured is read, so they need no clearing here. */
        tasks->dirty = false;
        count_front(ws);
        rc = 0;
out:
        free(count);
        free(quota);
        free(speed);
        free(cur);
        free(pend);
        free(hole);
        free(next);
        return rc;
}

void lbomp__workers_costs(struct lbomp__workers *ws, const double *slot_cost)
{
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                if (!w->pcost)
                        continue;
                double c = 0;
                w->pcost[0] = 0;
                for (uint32_t k = 0; k < w->n; k++) {
                        c += slot_cost[w->tasks[k]];
                        w->pcost[k + 1] = c;
                }
                w->pcost_ok = true;
        }
        ws->costs_off = 0;
        count_front(ws);
}

/* Whether the costs were dropped; *steps_off: whether the window's steps were imbalanced beyond
 * what the costs predict (they were there, and did not say where each step's load was). */
static bool costs_check(struct lbomp__workers *ws, double err, double step_lambda, bool *steps_off)
{
        *steps_off = false;
        double pred = 0, meas = 0, top = 0;
        int n = 0;
        for (int i = 0; i < ws->n; i++) {
                const struct lbomp__worker *w = &ws->w[i];
                if (!w->pcost_ok)
                        continue;
                pred += w->pcost[w->n];
                meas += w->win_owned_s;
                top = w->pcost[w->n] > top ? w->pcost[w->n] : top;
                n++;
        }
        if (n < 2 || !(pred > 0) || !(meas > 0)) {
                ws->costs_off = 0;
                return false;
        }
        /* Or the steps: their owned λ, on average, LBOMP__FRONT_LAMBDA times what the costs
         * predict. The costs then say where the load was over a window, not where it is at each
         * step: a hotspot that goes round faster than a window spreads evenly over the window's
         * sums, and batches cut to the costs hide it step after step (the moving l3 memtask under
         * auto, whose one plan left costs that no later one renewed: what the threads ran at λ
         * 1.14-1.16 for 300 steps, 1.00-1.01 under every fixed policy, which had none). */
        bool off = *steps_off = step_lambda > top / (pred / n) * LBOMP__FRONT_LAMBDA;
        for (int i = 0; i < ws->n && !off; i++) {
                const struct lbomp__worker *w = &ws->w[i];
                if (w->pcost_ok)
                        off = fabs(w->pcost[w->n] / pred - w->win_owned_s / meas) * n > err;
        }
        ws->costs_off = off ? ws->costs_off + 1 : 0;
        if (ws->costs_off < 2)
                return false;
        for (int i = 0; i < ws->n; i++)
                ws->w[i].pcost_ok = false;
        ws->costs_off = 0;
        return true;
}

bool lbomp__workers_costs_check(struct lbomp__workers *ws, double err, double step_lambda)
{
        bool steps_off, dropped = costs_check(ws, err, step_lambda, &steps_off);
        for (int i = 0; i < ws->n; i++) {
                struct lbomp__worker *w = &ws->w[i];
                w->blind = false; /* a window ran on these tasks */
                /* costs that did not say where each step's load was count as none: a plan now and
                 * then on a load that moves faster than a window does not start the count again */
                if ((w->pcost_ok && !steps_off) || step_lambda < LBOMP__FRONT_LAMBDA)
                        w->costless = 0;
                else if (w->costless < UINT32_MAX)
                        w->costless++;
        }
        count_front(ws);
        return dropped;
}

void lbomp__workers_bind(struct lbomp__workers *ws, int wi, const struct lbomp__topo *topo,
                         bool omp_binds)
{
        struct lbomp__worker *w = &ws->w[wi];
        if (w->bound_once)
                return;
        w->bound_once = true;
        if (omp_binds || !topo->is_host || topo->flat) {
                w->bind_rc = 1;
                return;
        }
        w->bind_rc = lbomp__topo_bind(topo, w->core);
}

void lbomp__workers_free(struct lbomp__workers *ws)
{
        for (int i = 0; i < ws->n; i++)
                worker_free(&ws->w[i]);
        free(ws->w);
        ws->w = NULL;
        ws->n = 0;
        free(ws->pos);
        ws->pos = NULL;
        ws->pos_cap = 0;
        ws->pos_ok = false;
}
