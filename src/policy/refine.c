/*
 * refine.c — centralized refinement (after Charm++ RefineLB): move few tasks, only out of the
 * workers above the limit M = f × L* (f = 1 + v, L* the bound), until none is above it. Each
 * overloaded worker sheds the fewest tasks that bring it to M (the smallest task that covers its
 * excess, else its largest and again); the shed tasks, heaviest first, go to the least loaded
 * worker they fit on, own node first. A task that fits nowhere makes room on the least loaded
 * worker by moving off that worker's smaller tasks, which are placed in turn (RefineLB's moves
 * alone stop at λ 1.33 when every worker holds two tasks: a large task needs a worker that holds
 * little, and there are not enough). When an attempt still gets stuck, the factor is loosened
 * on a 0.01 grid to the first that needs no move and binary-searched down to the smallest that
 * succeeds, every attempt restarting from the original mapping (Charm++'s multirefine). Loads and
 * M are predicted times (a task of cost c takes c / speed on a worker), L* the capacity-weighted
 * bound (lbomp__bound); what a worker must shed is its excess time × its speed in cost units.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
#define AHEAD 16 /* pool tasks fetched ahead */

/* A 4-ary min-heap of one node's workers by load (ties: lower worker id); entries carry a copy
 * of the load so that a sift compares within the heap's own cache lines. */
struct went {
        double load;
        uint32_t w, pad;
};

struct wheap4 {
        struct went *e;
        uint32_t n;
};

struct refine {
        const struct lbomp__snap *s;
        uint32_t P, T, N;
        double *load0, *load; /* [P] */
        double lstar;
        uint32_t *map;                /* [T] worker during an attempt: the caller's dest */
        uint8_t *gone;                /* [T] left its original worker in this attempt */
        uint32_t *log, nlog;          /* tasks whose map changed in this attempt */
        uint32_t *sorted;             /* [T] each worker's tasks heaviest first, at woff[w] */
        uint8_t *ready;               /* [P] sorted[] of w is built */
        uint32_t *head, *tail;        /* [P] unmoved tasks of w: sorted[head[w] .. tail[w]) may hold
                                         moved ones, skipped */
        uint32_t *pool, npool;        /* shed tasks */
        uint32_t *heavy, nheavy;      /* tasks of the workers above M at f0, heaviest first */
        double *hcost, *pcost;        /* the costs of heavy[] and pool[], in their order */
        bool unit;                    /* every speed is 1: a task's time is its cost */
        bool ikey;                    /* every load in the heaps ≥ +0: entries compare as keys */
        uint32_t *ev, nev;            /* evicted tasks: a max-heap by cost */
        struct wheap4 *nh;            /* [N] */
        uint32_t *pos;                /* [P] position of w in its node's heap */
        uint32_t *near;               /* [N * N] nodes by distance from each node */
        const uint32_t *woff, *wtask; /* each worker's tasks (the snapshot's, or built here) */
        uint32_t *worder;             /* [P] workers node by node, ascending: the heaps' start */
        uint32_t *own_off, *own;
};

/* lbomp__time_on without the division when every speed is 1 (c / 1.0 is c, bit for bit). */
static inline double time_on(const struct refine *r, uint32_t w, double c)
{
        return r->unit ? c : c / r->s->speed[w];
}

/* ---------------------------------------------------------------------------------------------
 * Worker heaps, one per node
 */

static inline bool eless(const struct went *a, const struct went *b)
{
        return (a->load < b->load) | ((a->load == b->load) & (a->w < b->w));
}

/* While every load of a heap is ≥ +0 (no -0, no NaN), loads order as their bits, and an entry
 * (bits, w, pad 0) compares as one 128-bit integer where the compiler has one: a compare and a
 * subtract with borrow instead of two double comparisons. */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide;
static inline bool eless_key(const struct went *a, const struct went *b)
{
        uint64_t ka, kb, wa, wb;
        memcpy(&ka, &a->load, 8);
        memcpy(&kb, &b->load, 8);
        memcpy(&wa, &a->w, 8); /* w, and the pad above it, 0 */
        memcpy(&wb, &b->w, 8);
        return ((wide)ka << 64 | wa) < ((wide)kb << 64 | wb);
}
#else
#define eless_key eless
#endif

static inline bool key_ok(double load)
{
        return load >= 0 && !signbit(load);
}

/* The entry at k got heavier: down to its place. Bottom-up, as greedy's heap: the lighter child
 * moves up to a leaf, then the entry climbs back while lighter than its parent; entries are
 * distinct (ties by worker id), so the array ends as the usual sift leaves it. */
#define WDOWN(name, LESS)                                                                          \
        static void name(struct refine *r, struct wheap4 *h, uint32_t k)                           \
        {                                                                                          \
                struct went *e = h->e, x = e[k];                                                   \
                uint32_t top = k, n = h->n;                                                        \
                for (;;) {                                                                         \
                        uint32_t l = 4 * k + 1, m = l;                                             \
                        if (l >= n)                                                                \
                                break;                                                             \
                        if (l + 4 <= n) {                                                          \
                                uint32_t a = l + LESS(&e[l + 1], &e[l]);                           \
                                uint32_t b = l + 2 + LESS(&e[l + 3], &e[l + 2]);                   \
                                m = LESS(&e[b], &e[a]) ? b : a;                                    \
                        } else {                                                                   \
                                for (uint32_t c = l + 1; c < n; c++)                               \
                                        m = LESS(&e[c], &e[m]) ? c : m;                            \
                        }                                                                          \
                        e[k] = e[m];                                                               \
                        r->pos[e[k].w] = k;                                                        \
                        k = m;                                                                     \
                }                                                                                  \
                while (k > top && LESS(&x, &e[(k - 1) / 4])) {                                     \
                        e[k] = e[(k - 1) / 4];                                                     \
                        r->pos[e[k].w] = k;                                                        \
                        k = (k - 1) / 4;                                                           \
                }                                                                                  \
                e[k] = x;                                                                          \
                r->pos[x.w] = k;                                                                   \
        }

WDOWN(wdown_load, eless)
WDOWN(wdown_key, eless_key)

static void wdown(struct refine *r, struct wheap4 *h, uint32_t k)
{
        if (r->ikey)
                wdown_key(r, h, k);
        else
                wdown_load(r, h, k);
}

/* The entry at k got lighter: up to its place. */
static void wup(struct refine *r, struct wheap4 *h, uint32_t k)
{
        struct went *e = h->e, x = e[k];
        while (k && eless(&x, &e[(k - 1) / 4])) {
                e[k] = e[(k - 1) / 4];
                r->pos[e[k].w] = k;
                k = (k - 1) / 4;
        }
        e[k] = x;
        r->pos[x.w] = k;
}

/* Worker w's load changed: its entry follows, up or down. */
static void wset(struct refine *r, uint32_t w)
{
        struct wheap4 *h = &r->nh[r->s->wnode[w]];
        struct went *x = &h->e[r->pos[w]];
        double old = x->load;
        x->load = r->load[w];
        r->ikey &= key_ok(x->load); /* the heap is in order either way; from now on, doubles */
        if (r->load[w] < old)
                wup(r, h, r->pos[w]);
        else
                wdown(r, h, r->pos[w]);
}

/* ---------------------------------------------------------------------------------------------
 * Tasks of a worker, heaviest first (built when first needed)
 */

static int ensure_sorted(struct refine *r, uint32_t w)
{
        const struct lbomp__snap *s = r->s;
        if (r->ready[w])
                return 0;
        uint32_t lo = r->woff[w], n = r->woff[w + 1] - lo;
        memcpy(r->sorted + lo, r->wtask + lo, (size_t)n * sizeof *r->sorted);
        int rc = lbomp__sort_tasks_desc(s->cost, r->sorted + lo, n);
        if (rc < 0)
                return rc;
        /* Free tasks are no load: they never move. They sort last; cut them off. */
        while (n && !(s->cost[r->sorted[lo + n - 1]] > 0))
                n--;
        r->head[w] = lo;
        r->tail[w] = lo + n;
        r->ready[w] = 1;
        return 0;
}

/* Each worker's tasks: the snapshot's lists, or (a snapshot built by hand without them) the same
 * made here by a counting sort. */
static int worker_lists(struct refine *r)
{
        const struct lbomp__snap *s = r->s;
        if (s->wtask_off && s->wtask) {
                r->woff = s->wtask_off;
                r->wtask = s->wtask;
                return 0;
        }
        r->own_off = calloc((size_t)r->P + 1, sizeof *r->own_off);
        r->own = malloc((size_t)r->T * sizeof *r->own + 1);
        if (!r->own_off || !r->own)
                return -ENOMEM;
        for (uint32_t t = 0; t < r->T; t++)
                r->own_off[s->worker[t] + 1]++;
        for (uint32_t w = 0; w < r->P; w++)
                r->own_off[w + 1] += r->own_off[w];
        for (uint32_t t = 0; t < r->T; t++)
                r->own[r->own_off[s->worker[t]]++] = t;
        for (uint32_t w = r->P; w > 0; w--)
                r->own_off[w] = r->own_off[w - 1];
        r->own_off[0] = 0;
        r->woff = r->own_off;
        r->wtask = r->own;
        return 0;
}

/* The lists of every worker above M (those of any looser attempt too) in one radix sort of
 * their tasks, scattered back per worker in that order: the only tasks refine sorts up front. */
static int sort_heavy(struct refine *r, double M)
{
        const struct lbomp__snap *s = r->s;
        uint32_t n = 0;
        for (uint32_t w = 0; w < r->P; w++)
                if (r->load0[w] > M)
                        for (uint32_t i = r->woff[w]; i < r->woff[w + 1]; i++)
                                r->heavy[n++] = r->wtask[i];
        int rc = lbomp__sort_tasks_desc_costs(s->cost, r->heavy, n, &r->hcost);
        if (rc < 0)
                return rc;
        r->nheavy = n;
        for (uint32_t w = 0; w < r->P; w++)
                if (r->load0[w] > M)
                        r->head[w] = r->tail[w] = r->woff[w];
        for (uint32_t i = 0; i < n; i++) {
                uint32_t t = r->heavy[i], w = s->worker[t];
                if (r->hcost[i] > 0)
                        r->sorted[r->tail[w]++] = t;
        }
        for (uint32_t w = 0; w < r->P; w++)
                r->ready[w] |= r->load0[w] > M;
        return 0;
}

/* The task of w to move off to lower its load by `need` while taking off less than `cap` per
 * task (cap: INFINITY for shedding), both in reference cost units (time × w's speed): the smallest
 * unmoved task with need ≤ cost < cap, else the largest unmoved task below cap; UINT32_MAX when w
 * has none below cap. */
static uint32_t choose(struct refine *r, uint32_t w, double need, double cap)
{
        const double *cost = r->s->cost;
        uint32_t best = UINT32_MAX;
        for (uint32_t i = r->head[w]; i < r->tail[w]; i++) {
                uint32_t t = r->sorted[i];
                if (r->gone[t] || !(cost[t] < cap))
                        continue;
                if (best == UINT32_MAX)
                        best = t; /* the largest below cap */
                if (cost[t] >= need)
                        best = t; /* a smaller one still covers the need */
                else
                        break;
        }
        return best;
}

static void take_off(struct refine *r, uint32_t t, uint32_t w)
{
        r->gone[t] = 1;
        r->load[w] -= time_on(r, w, r->s->cost[t]);
        r->log[r->nlog++] = t;
        /* Moved tasks at the head of the list are skipped from now on. */
        while (r->head[w] < r->tail[w] && r->gone[r->sorted[r->head[w]]])
                r->head[w]++;
}

/* ---------------------------------------------------------------------------------------------
 * Evicted tasks: a max-heap by cost (ties: lower index), merged with the sorted pool
 */

static bool heavier(const double *cost, uint32_t a, uint32_t b)
{
        return cost[a] > cost[b] || (cost[a] == cost[b] && a < b);
}

static void ev_push(struct refine *r, uint32_t t)
{
        const double *cost = r->s->cost;
        uint32_t k = r->nev++;
        while (k && heavier(cost, t, r->ev[(k - 1) / 2])) {
                r->ev[k] = r->ev[(k - 1) / 2];
                k = (k - 1) / 2;
        }
        r->ev[k] = t;
}

static uint32_t ev_pop(struct refine *r)
{
        const double *cost = r->s->cost;
        uint32_t top = r->ev[0], x = r->ev[--r->nev], k = 0;
        for (;;) {
                uint32_t l = 2 * k + 1, m = l;
                if (l >= r->nev)
                        break;
                if (l + 1 < r->nev && heavier(cost, r->ev[l + 1], r->ev[l]))
                        m = l + 1;
                if (!heavier(cost, r->ev[m], x))
                        break;
                r->ev[k] = r->ev[m];
                k = m;
        }
        if (r->nev)
                r->ev[k] = x;
        return top;
}

/* ---------------------------------------------------------------------------------------------
 * One attempt
 */

static void restore(struct refine *r)
{
        const struct lbomp__snap *s = r->s;
        for (uint32_t i = 0; i < r->nlog; i++) {
                uint32_t t = r->log[i];
                r->map[t] = s->worker[t];
                r->gone[t] = 0;
        }
        r->nlog = 0;
        memcpy(r->load, r->load0, (size_t)r->P * sizeof *r->load);
        /* The heaps start from the same order every attempt, so that an attempt at a factor
         * gives the same result whatever attempts ran before it. */
        for (uint32_t n = 0, at = 0; n < r->N; n++)
                for (uint32_t i = 0; i < r->nh[n].n; i++, at++) {
                        r->nh[n].e[i].w = r->worder[at];
                        r->pos[r->worder[at]] = i;
                }
        for (uint32_t w = 0; w < r->P; w++)
                if (r->ready[w]) {
                        uint32_t lo = r->woff[w];
                        r->head[w] = lo; /* tail stays: the free tasks cut off */
                }
}

/* Places task t (cost c) on p. */
static void place(struct refine *r, uint32_t t, double c, uint32_t p)
{
        r->map[t] = p;
        r->load[p] += time_on(r, p, c);
        wset(r, p);
}

/* Whether w's unmoved tasks cheaper than c add up to what must leave for c to fit under M. */
static int room_for(struct refine *r, uint32_t w, double c, double M)
{
        int rc = ensure_sorted(r, w);
        if (rc < 0)
                return rc;
        const double *cost = r->s->cost;
        const struct lbomp__snap *s = r->s;
        double need = r->load[w] + lbomp__time_on(s, w, c) - M, have = 0;
        for (uint32_t i = r->tail[w]; i-- > r->head[w] && have < need;) {
                uint32_t t = r->sorted[i];
                if (!r->gone[t] && cost[t] < c)
                        have += lbomp__time_on(s, w, cost[t]);
        }
        return have >= need;
}

/*
 * Makes room for a task of cost c that fits on no worker: among the least loaded workers (the
 * first ROOM_LOOK of each node's heap in heap order, own node first), the first whose tasks
 * cheaper than c can leave to let c fit, which then leave (the one smallest that covers the need,
 * else the largest, and again) into the evicted heap. 1 with the worker in *p, 0 when no worker
 * looked at can make room, or a negative errno.
 */
#define ROOM_LOOK 64
static int make_room(struct refine *r, double c, double M, uint32_t tn, uint32_t *p)
{
        for (uint32_t k = 0; k < r->N; k++) {
                const struct wheap4 *h = &r->nh[r->near[tn * r->N + k]];
                for (uint32_t i = 0; i < h->n && i < ROOM_LOOK; i++) {
                        uint32_t w = h->e[i].w;
                        int rc = room_for(r, w, c, M);
                        if (rc < 0)
                                return rc;
                        if (!rc)
                                continue;
                        double cw = lbomp__time_on(r->s, w, c);
                        while (r->load[w] + cw > M) {
                                uint32_t u = choose(
                                        r, w, (r->load[w] + cw - M) * lbomp__speed(r->s, w), c);
                                /* room_for summed the same times in another order: what is
                                 * left over when no task below c remains is rounding */
                                if (u == UINT32_MAX)
                                        break;
                                take_off(r, u, w);
                                ev_push(r, u);
                        }
                        wset(r, w);
                        *p = w;
                        return 1;
                }
        }
        return 0;
}

/* 1 when no worker is left above M, 0 when stuck, or a negative errno. */
static int attempt(struct refine *r, double M)
{
        const struct lbomp__snap *s = r->s;
        const double *cost = s->cost;
        int rc;
        restore(r);
        /* Shed: every worker above M gives the fewest tasks that bring it to M, among those that
         * fit on the least loaded worker when it has any (a task that fits nowhere costs moves of
         * others to make room). */
        double least = INFINITY, least_speed = 1.0;
        for (uint32_t w = 0; w < r->P; w++)
                if (r->load0[w] < least) {
                        least = r->load0[w];
                        least_speed = lbomp__speed(s, w);
                }
        double fit = (M - least) * least_speed; /* reference units: what fits there */
        r->npool = 0;
        for (uint32_t w = 0; w < r->P; w++) {
                if (!(r->load[w] > M))
                        continue;
                if ((rc = ensure_sorted(r, w)) < 0)
                        return rc;
                while (r->load[w] > M) {
                        double need = (r->load[w] - M) * lbomp__speed(s, w);
                        uint32_t t = choose(r, w, need, fit * (1 + 1e-12));
                        if (t == UINT32_MAX)
                                t = choose(r, w, need, INFINITY);
                        if (t == UINT32_MAX)
                                return 0; /* nothing left to give: background above M */
                        take_off(r, t, w);
                        r->pool[r->npool++] = t;
                }
        }
        if (!r->npool)
                return 1;
        /* The pool heaviest first. Every shed task comes from a worker above M, whose tasks
         * sort_heavy listed in that order: picking the shed ones out of that list gives the
         * sorted pool in one pass, unless the pool is a small part of the list. */
        if ((uint64_t)r->npool * 16 >= r->nheavy) {
                r->npool = 0;
                for (uint32_t i = 0; i < r->nheavy; i++)
                        if (r->gone[r->heavy[i]]) {
                                r->pcost[r->npool] = r->hcost[i];
                                r->pool[r->npool++] = r->heavy[i];
                        }
        } else {
                if ((rc = lbomp__sort_tasks_desc(cost, r->pool, r->npool)) < 0)
                        return rc;
                for (uint32_t i = 0; i < r->npool; i++)
                        r->pcost[i] = cost[r->pool[i]];
        }
        r->ikey = true;
        for (uint32_t n = 0; n < r->N; n++) {
                struct wheap4 *h = &r->nh[n];
                for (uint32_t i = 0; i < h->n; i++) {
                        h->e[i].load = r->load[h->e[i].w];
                        r->ikey &= key_ok(h->e[i].load);
                }
                for (uint32_t i = h->n / 4 + 1; i-- > 0;)
                        if (i < h->n)
                                wdown(r, h, i);
        }
        /* Place, heaviest first: the pool in order, merged with the evicted tasks. */
        r->nev = 0;
        uint32_t next = 0;
        while (next < r->npool || r->nev) {
                uint32_t t;
                double c;
                if (next + AHEAD < r->npool) { /* the pool's tasks are scattered: fetch ahead */
                        uint32_t u = r->pool[next + AHEAD];
                        PREFETCH(&r->map[u]);
                        if (r->N > 1) {
                                PREFETCH(&s->worker[u]);
                                if (s->home)
                                        PREFETCH(&s->home[u]);
                        }
                }
                if (r->nev && (next == r->npool || cost[r->ev[0]] > r->pcost[next] ||
                               (cost[r->ev[0]] == r->pcost[next] && r->ev[0] < r->pool[next]))) {
                        t = ev_pop(r); /* heavier than the pool's next (ties: lower index) */
                        c = cost[t];
                } else {
                        t = r->pool[next];
                        c = r->pcost[next++];
                }
                /* One node: every task's is node 0. */
                uint32_t tn = r->N > 1 ? (uint32_t)lbomp__task_node(s, t) : 0, p = UINT32_MAX;
                /* The least loaded worker it fits on, own node first, then by distance (the
                 * entry's copy of the load is the worker's load). */
                for (uint32_t k = 0; k < r->N; k++) {
                        uint32_t d = r->near[tn * r->N + k];
                        if (!r->nh[d].n)
                                continue;
                        uint32_t w = r->nh[d].e[0].w;
                        if (r->nh[d].e[0].load + time_on(r, w, c) <= M) {
                                p = w;
                                break;
                        }
                }
                if (p == UINT32_MAX) {
                        /* Fits nowhere: make room on a light worker by moving off its smaller
                         * tasks, which are placed in turn (each task moves off once). */
                        if ((rc = make_room(r, c, M, tn, &p)) <= 0)
                                return rc;
                }
                place(r, t, c, p);
        }
        return 1;
}

static int refine_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        uint32_t P = s->nworkers, T = s->ntasks, N = s->nnodes ? s->nnodes : 1;
        struct refine r = {.s = s, .P = P, .T = T, .N = N};
        int rc = -ENOMEM;
        r.load0 = malloc(P * sizeof *r.load0 + 1);
        r.load = malloc(P * sizeof *r.load + 1);
        if (!r.load0 || !r.load)
                goto out;
        rc = 0;
        double max;
        st->attempts = 0;
        if (lbomp__within_tolerance_bound(s, r.load0, &max, &r.lstar))
                goto out; /* moves must pay: nothing to do */
        rc = -ENOMEM;
        r.map = dest; /* attempts work in dest itself: no copy of a million entries each way */
        r.gone = calloc((size_t)T + 1, 1);
        r.log = malloc((size_t)T * sizeof *r.log + 1);
        r.sorted = malloc((size_t)T * sizeof *r.sorted + 1);
        r.ready = calloc(P, 1);
        r.head = malloc(P * sizeof *r.head + 1);
        r.tail = malloc(P * sizeof *r.tail + 1);
        r.pool = malloc((size_t)T * sizeof *r.pool + 1);
        r.heavy = malloc((size_t)T * sizeof *r.heavy + 1);
        r.pcost = malloc((size_t)T * sizeof *r.pcost + 1);
        r.ev = malloc((size_t)T * sizeof *r.ev + 1);
        r.nh = calloc(N, sizeof *r.nh);
        r.pos = malloc(P * sizeof *r.pos + 1);
        r.near = malloc((size_t)N * N * sizeof *r.near);
        struct went *wmem = malloc(P * sizeof *wmem + 1);
        r.worder = malloc(P * sizeof *r.worder + 1);
        if (!r.map || !r.gone || !r.log || !r.sorted || !r.ready || !r.head || !r.tail || !r.pool ||
            !r.heavy || !r.pcost || !r.ev || !r.nh || !r.pos || !r.near || !wmem || !r.worder)
                goto free_all;
        memcpy(dest, s->worker, (size_t)T * sizeof *dest);
        r.unit = true;
        for (uint32_t w = 0; s->speed && r.unit && w < P; w++)
                r.unit = s->speed[w] == 1.0;
        if ((rc = worker_lists(&r)) < 0)
                goto free_all;
        /* Node heaps share one array, each node's workers in ascending id. */
        uint32_t at = 0;
        for (uint32_t n = 0; n < N; n++) {
                r.nh[n].e = wmem + at;
                for (uint32_t w = 0; w < P; w++)
                        if ((uint32_t)s->wnode[w] == n) {
                                r.worder[at + r.nh[n].n] = w;
                                r.nh[n].e[r.nh[n].n].w = w;
                                r.nh[n].e[r.nh[n].n].pad = 0; /* compared with w */
                                r.pos[w] = r.nh[n].n++;
                        }
                at += r.nh[n].n;
        }
        /* Nodes by distance from each node (ties: lower node), own node first. */
        for (uint32_t a = 0; a < N; a++) {
                uint32_t *o = r.near + (size_t)a * N;
                for (uint32_t b = 0; b < N; b++) {
                        uint32_t k = b;
                        double d = b == a ? -1 : s->dist[a * N + b];
                        while (k > 0) {
                                uint32_t x = o[k - 1];
                                double dx = x == a ? -1 : s->dist[a * N + x];
                                if (dx <= d)
                                        break;
                                o[k] = x;
                                k--;
                        }
                        o[k] = b;
                }
        }
        double f0 = 1 + (s->params ? s->params->tolerance : 0.05);
        if ((rc = sort_heavy(&r, f0 * r.lstar)) < 0)
                goto free_all;
        st->attempts = 1;
        st->factor = f0;
        if ((rc = attempt(&r, f0 * r.lstar)) == 0 && r.lstar > 0) {
                /* Loosen: the first factor at or above max / L* moves nothing; then search. */
                long kmax = (long)ceil((max / r.lstar - f0) / 0.01);
                if (kmax < 1)
                        kmax = 1;
                while ((f0 + (double)kmax * 0.01) * r.lstar < max)
                        kmax++;
                long lo = 0, hi = kmax;
                while (hi - lo > 1) {
                        long mid = lo + (hi - lo) / 2;
                        st->attempts++;
                        if ((rc = attempt(&r, (f0 + (double)mid * 0.01) * r.lstar)) < 0)
                                goto free_all;
                        if (rc)
                                hi = mid;
                        else
                                lo = mid;
                }
                st->attempts++;
                st->factor = f0 + (double)hi * 0.01;
                rc = attempt(&r, st->factor * r.lstar);
                if (rc == 0) { /* cannot happen: at max / L* nobody is above M; if it did, the
                                  mapping stays */
                        memcpy(r.map, s->worker, (size_t)T * sizeof *r.map);
                        rc = 1;
                }
        }
        if (rc < 0)
                goto free_all;
        rc = 0;
        lbomp__keep_unless_lower(s, dest, max, r.load);
free_all:
        if (rc < 0) /* the current mapping, as it came */
                memcpy(dest, s->worker, (size_t)T * sizeof *dest);
        free(r.gone);
        free(r.log);
        free(r.sorted);
        free(r.ready);
        free(r.head);
        free(r.tail);
        free(r.pool);
        free(r.heavy);
        free(r.hcost);
        free(r.pcost);
        free(r.ev);
        free(r.nh);
        free(r.pos);
        free(r.near);
        free(wmem);
        free(r.worder);
        free(r.own_off);
        free(r.own);
out:
        free(r.load0);
        free(r.load);
        return rc;
}

const struct lbomp__policy lbomp__policy_refine = {
        .name = "refine",
        .help = "centralized: move few tasks from overloaded to light workers (Charm++ RefineLB)",
        .kind = LBOMP__CENTRAL,
        .plan = refine_plan,
};
