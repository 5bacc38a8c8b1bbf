/* The reference for test_identity: src/policy/greedy.c as it was at 2570a0b, before the speed-ups
 * of issue 12 point 5, its symbols renamed ref__* (ref.h). Not to be edited: the new code must give
 * the plans this code gives. */
/*
 * greedy.c — centralized greedy (Charm++ GreedyLB): heaviest task first onto the least loaded
 * worker, workers in a min-heap keyed by load starting from their background load. Among equally
 * loaded workers a task keeps its worker, then prefers its own node, then the nearest. Moves pay:
 * a mapping already within (1 + v) of the bound L* is kept (an O(T) check), a task that costs
 * nothing stays where it is, and a plan that would not lower the maximum is not made. O(T) for
 * the radix sort + O(T log P) for the heap. Loads are predicted times: a task of cost c adds
 * c / speed to its worker's key, so a worker twice as fast takes twice the work (the heap holds
 * the least loaded in time, not the earliest finish of each task: with many tasks per worker the
 * two agree within a task). The same pass makes greedy-refine (GreedyRefineLB: a
 * task stays on its worker while that worker stays under greedy's maximum) and greedy-comm
 * (GreedyCommLB: a worker's key adds the cost of the task's links to its neighbours on other
 * workers), whose policy files call ref__greedy_refine_plan / ref__greedy_comm_plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "ref.h"

/* The heap of one greedy run: a 4-ary min-heap of entries (load, local worker index) in one
 * array aligned so that the four children of an entry share one cache line; ties go to the lower
 * index, i.e. the lower worker id (both callers list workers in ascending id). pos[i] is where
 * worker i sits. Four children per level halve the levels of a binary heap, and the smallest of
 * four is found without a branch that the processor would mispredict half of the time. */
struct gent {
        double load;
        uint32_t i, pad;
};

struct gheap {
        struct gent *h;
        uint32_t *pos;
        uint32_t n;
};

static inline bool lighter(const struct gent *a, const struct gent *b)
{
        return (a->load < b->load) | ((a->load == b->load) & (a->i < b->i));
}

#define KIDS      4
#define PARENT(k) (((k)-1) / KIDS)
#define FIRST(k)  (KIDS * (k) + 1)

/* The entry at k got heavier: down to its place. */
static void sift_down(struct gheap *g, uint32_t k)
{
        struct gent *h = g->h, x = h[k];
        uint32_t n = g->n;
        for (;;) {
                uint32_t l = FIRST(k), m = l;
                if (l >= n)
                        break;
                if (l + KIDS <= n) { /* all four: branch-free selection */
                        uint32_t a = l + lighter(&h[l + 1], &h[l]);
                        uint32_t b = l + 2 + lighter(&h[l + 3], &h[l + 2]);
                        m = lighter(&h[b], &h[a]) ? b : a;
                } else {
                        for (uint32_t c = l + 1; c < n; c++)
                                m = lighter(&h[c], &h[m]) ? c : m;
                }
                if (!lighter(&h[m], &x))
                        break;
                h[k] = h[m];
                g->pos[h[k].i] = k;
                k = m;
        }
        h[k] = x;
        g->pos[x.i] = k;
}

/*
 * The heap entry task t goes to: the least loaded worker, and among workers exactly as loaded
 * (equal background loads, or nothing placed yet), its current worker, else the nearest node,
 * else the lowest id (at most 256 tied entries looked at).
 * `local` maps a worker id to its local index, or is NULL when every worker is in the heap with
 * its id as index.
 */
static uint32_t pick(const struct gheap *g, const uint32_t *workers, const uint32_t *local,
                     const struct lbomp__snap *s, uint32_t t)
{
        const struct gent *h = g->h;
        uint32_t n = g->n;
        double m = h[0].load;
        bool tie = false;
        for (uint32_t c = 1; c <= KIDS && c < n; c++)
                tie |= h[c].load == m;
        if (!tie)
                return 0; /* the usual case: one least loaded worker */
        uint32_t cur = s->worker[t];
        uint32_t ci = local ? local[cur] : cur;
        if (ci < n && workers[ci] == cur && h[g->pos[ci]].load == m)
                return g->pos[ci];
        if (s->nnodes < 2)
                return 0; /* the lowest id among the tied */
        int32_t tn = lbomp__task_node(s, t), nn = (int32_t)s->nnodes;
        uint32_t best = 0;
        double bestd = s->dist[tn * nn + s->wnode[workers[h[0].i]]];
        uint32_t stack[256], sp = 0, budget = 256;
        stack[sp++] = 0;
        while (sp && budget--) {
                uint32_t k = stack[--sp];
                if (h[k].load != m)
                        continue;
                double d = s->dist[tn * nn + s->wnode[workers[h[k].i]]];
                if (d < bestd || (d == bestd && h[k].i < h[best].i))
                        best = k, bestd = d;
                for (uint32_t c = FIRST(k) + KIDS; c-- > FIRST(k);)
                        if (c < n && sp < 256)
                                stack[sp++] = c;
        }
        return best;
}

/* What a greedy pass does beyond GreedyLB (greedy-refine, greedy-comm). */
struct mode {
        double stay;     /* > 0: a task stays on its worker while that stays ≤ stay (raised to
                            every load placed, GreedyRefineLB) */
        double beta;     /* > 0: a worker's key for a task adds beta × Σ link bytes × distance to
                            the task's neighbours placed on other workers (GreedyCommLB) */
        uint8_t *placed; /* [T] greedy-comm: neighbours already placed */
        uint32_t moved;  /* tasks given another worker */
};

/* Link cost of task t on worker w (global id): beta × Σ over its placed neighbours on other
 * workers of bytes × distance between the nodes. */
static double comm_cost(const struct lbomp__snap *s, const struct mode *m, const uint32_t *dest,
                        uint32_t t, uint32_t w)
{
        double c = 0;
        int32_t nn = (int32_t)s->nnodes, wn = s->wnode[w];
        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++) {
                uint32_t b = s->link_dst[k];
                if (!m->placed[b] || dest[b] == w)
                        continue;
                c += s->link_bytes[k] * s->dist[wn * nn + s->wnode[dest[b]]];
        }
        return m->beta * c;
}

/* Greedy-comm: among the least loaded worker (heap index r) and the workers holding the task's
 * placed neighbours, the one of lowest load + link cost (ties: lower load, then the root).
 * GreedyCommLB scans every worker; with link costs ≥ 0 the best is the least loaded one or one
 * that holds a neighbour, unless a nearer node's worker is barely more loaded. */
static uint32_t pick_comm(const struct gheap *g, const uint32_t *workers, const uint32_t *local,
                          const struct lbomp__snap *s, const struct mode *m, const uint32_t *dest,
                          uint32_t t, uint32_t r)
{
        uint32_t best = r;
        double bk = g->h[r].load + comm_cost(s, m, dest, t, workers[g->h[r].i]);
        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++) {
                uint32_t b = s->link_dst[k];
                if (!m->placed[b])
                        continue;
                uint32_t li = local ? local[dest[b]] : dest[b];
                if (li >= g->n || workers[li] != dest[b])
                        continue; /* not among these workers */
                uint32_t hk = g->pos[li];
                double key = g->h[hk].load + comm_cost(s, m, dest, t, dest[b]);
                if (key < bk || (key == bk && g->h[hk].load < g->h[best].load))
                        best = hk, bk = key;
        }
        return best;
}

static int assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                  const uint32_t *workers, uint32_t nworkers, const double *load0, uint32_t *dest,
                  struct mode *m)
{
        uint32_t P = nworkers;
        if (!P)
                return 0;
        bool identity = P == s->nworkers;
        for (uint32_t i = 0; identity && i < P; i++)
                identity = workers[i] == i;
        struct gheap g = {.n = P};
        /* The children of k start at 4k + 1: with the array 16 bytes short of a cache line's
         * start, every group of four children is one line. */
        size_t bytes = ((size_t)P + 4) * sizeof(struct gent);
        struct gent *mem = aligned_alloc(64, (bytes + 63) / 64 * 64); /* C11: a multiple of 64 */
        g.h = mem ? mem + 3 : NULL;
        g.pos = malloc((size_t)P * sizeof *g.pos);
        uint32_t *local = identity ? NULL : malloc((size_t)s->nworkers * sizeof *local);
        int rc = -ENOMEM;
        if (!g.h || !g.pos || (!identity && !local))
                goto out;
        rc = 0;
        if (local) {
                memset(local, 0xff, (size_t)s->nworkers * sizeof *local);
                for (uint32_t i = 0; i < P; i++)
                        local[workers[i]] = i;
        }
        for (uint32_t i = 0; i < P; i++) {
                g.h[i] = (struct gent){.load = load0[i], .i = i};
                g.pos[i] = i;
        }
        for (uint32_t i = P / KIDS + 1; i-- > 0;)
                sift_down(&g, i);
        bool comm = m && m->beta > 0 && s->link_off;
        for (uint32_t k = 0; k < ntasks; k++) {
                uint32_t t = tasks[k];
                double c = s->cost[t];
                if (!(c > 0))
                        continue; /* free tasks are no load: they stay (dest holds their worker) */
                uint32_t cur = s->worker[t], r = UINT32_MAX;
                if (m && m->stay > 0) { /* greedy-refine: stay while under the bound */
                        uint32_t ci = local ? local[cur] : cur;
                        if (ci < P && workers[ci] == cur &&
                            g.h[g.pos[ci]].load + lbomp__time_on(s, cur, c) <= m->stay)
                                r = g.pos[ci];
                }
                if (r == UINT32_MAX) {
                        /* The root, or a worker tied with it; its load only grows. */
                        r = pick(&g, workers, local, s, t);
                        if (comm)
                                r = pick_comm(&g, workers, local, s, m, dest, t, r);
                }
                dest[t] = workers[g.h[r].i];
                g.h[r].load += lbomp__time_on(s, dest[t], c);
                if (m) {
                        m->moved += dest[t] != cur;
                        if (m->stay > 0 && g.h[r].load > m->stay)
                                m->stay = g.h[r].load;
                        if (comm)
                                m->placed[t] = 1;
                }
                sift_down(&g, r);
        }
out:
        free(mem);
        free(g.pos);
        free(local);
        return rc;
}

int ref__greedy_assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                       const uint32_t *workers, uint32_t nworkers, const double *load0,
                       uint32_t *dest)
{
        return assign(s, tasks, ntasks, workers, nworkers, load0, dest, NULL);
}

enum variant { PLAIN, REFINE, COMM };

/* Link costs of greedy-comm in seconds per byte and unit of normalised distance: 0.1 ns, a
 * 10 GB/s local link (remote links cost their SLIT distance times more). A constant rather than a
 * setting, so that a recorded trace replays to the same plan; doc/policies.md says why this value.
 */
#define COMM_BETA 1e-10

static int plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st,
                enum variant v)
{
        (void)st;
        uint32_t P = s->nworkers, T = s->ntasks;
        uint32_t *order = malloc((size_t)T * sizeof *order + 1);
        uint32_t *workers = malloc(P * sizeof *workers + 1);
        double *load = malloc(P * sizeof *load + 1);
        uint32_t *scratch = v == REFINE ? malloc((size_t)T * sizeof *scratch + 1) : NULL;
        struct mode m = {0};
        if (v == COMM && s->link_off)
                m.placed = calloc((size_t)T + 1, 1);
        int rc = -ENOMEM;
        if (!order || !workers || !load || (v == REFINE && !scratch) ||
            (v == COMM && s->link_off && !m.placed))
                goto out;
        rc = 0;
        double max;
        if (lbomp__within_tolerance(s, load, &max))
                goto out; /* keep: dest holds the current mapping */
        uint32_t n = 0;
        for (uint32_t t = 0; t < T; t++)
                if (s->cost[t] > 0)
                        order[n++] = t;
        if ((rc = ref__sort_tasks_desc(s->cost, order, n)) < 0)
                goto out;
        for (uint32_t w = 0; w < P; w++) {
                workers[w] = w;
                load[w] = s->bg ? s->bg[w] : 0;
        }
        for (uint32_t t = 0; t < T; t++) /* free tasks stay: their (zero) load is already there */
                dest[t] = s->worker[t];
        if (v == REFINE) {
                /* GreedyRefineLB: greedy on a scratch copy gives the bound M ... */
                memcpy(scratch, dest, (size_t)T * sizeof *scratch);
                if ((rc = assign(s, order, n, workers, P, load, scratch, NULL)) < 0)
                        goto out;
                double mg;
                lbomp__loads(s, scratch, load);
                lbomp__snap_lambda(s, load, &mg, NULL);
                /* ... M = greedy's maximum, Charm++'s tolerance 1.0 (refine is the policy that
                 * trades balance within LBOMP_TOLERANCE for fewer moves): a task stays wherever
                 * its worker stays under M. */
                m.stay = mg;
                for (uint32_t w = 0; w < P; w++)
                        load[w] = s->bg ? s->bg[w] : 0;
        } else if (v == COMM) {
                m.beta = COMM_BETA;
        }
        if ((rc = assign(s, order, n, workers, P, load, dest, &m)) < 0)
                goto out;
        lbomp__keep_unless_lower(s, dest, max, load);
out:
        free(order);
        free(workers);
        free(load);
        free(scratch);
        free(m.placed);
        return rc;
}

static int greedy_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, PLAIN);
}

int ref__greedy_refine_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, REFINE);
}

int ref__greedy_comm_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, COMM);
}

const struct lbomp__policy ref__policy_greedy = {
        .name = "greedy",
        .help = "centralized: heaviest task to the least loaded worker (Charm++ GreedyLB)",
        .kind = LBOMP__CENTRAL,
        .plan = greedy_plan,
};
