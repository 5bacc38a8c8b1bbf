/*
 * greedy.c — centralized greedy (Charm++ GreedyLB): heaviest task first onto the least loaded
 * worker, workers in a min-heap keyed by load starting from their background load. Among equally
 * loaded workers a task keeps its worker, then prefers its own node, then the nearest. Moves pay:
 * a mapping already within (1 + v) of the bound L* is kept (an O(T) check), a task that costs
 * nothing stays where it is, and a plan that would not lower the maximum is not made. O(T) for
 * the radix sort + O(T log P) for the heap, which a winner tree replaces wherever the heap's
 * layout cannot change the plan (assign_tree: one node, or no tie it cannot settle), the same
 * plan at about half the time for a million tasks, and LPT's rounds replace the tree where they
 * can (assign_zip: P tasks at a time in the order of the loads, one sort of P loads a round), the
 * same plan again at about half the tree's time. Loads are predicted times: a task of cost c adds
 * c / speed to its worker's key, so a worker twice as fast takes twice the work (the heap holds
 * the least loaded in time, not the earliest finish of each task: with many tasks per worker the
 * two agree within a task). The same pass makes greedy-refine (GreedyRefineLB: a
 * task stays on its worker while that worker stays under greedy's maximum) and greedy-comm
 * (GreedyCommLB: a worker's key adds the cost of the task's links to its neighbours on other
 * workers), whose policy files call lbomp__greedy_refine_plan / lbomp__greedy_comm_plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"

/* The heap of one greedy run: a 4-ary min-heap of entries (load, local worker index) in one
 * array aligned so that the four children of an entry share one cache line; ties go to the lower
 * index, i.e. the lower worker id (both callers list workers in ascending id). pos[i] is where
 * worker i sits. Four children per level halve the levels of a binary heap, and the smallest of
 * four is found without a branch that the processor would mispredict half of the time. When every
 * load is a double ≥ +0 (no -0, no NaN: background loads ≥ 0, speeds > 0, which every snapshot
 * has), the loads order as their bits do, and entries compare as integers. */
struct gent {
        union {
                double load;
                uint64_t key; /* its bits, when ikey */
        };
        uint32_t i, pad;
};

struct gheap {
        struct gent *h;
        uint32_t *pos;
        uint32_t n;
        bool deep; /* the heap outgrows the first-level cache: prefetch a level ahead */
        bool ikey; /* every load ≥ +0: compare keys, not doubles */
};

static inline bool lighter(const struct gent *a, const struct gent *b)
{
        return (a->load < b->load) | ((a->load == b->load) & (a->i < b->i));
}

static inline bool lighter_key(const struct gent *a, const struct gent *b)
{
        return (a->key < b->key) | ((a->key == b->key) & (a->i < b->i));
}

#define KIDS      4
#define PARENT(k) (((k)-1) / KIDS)
#define FIRST(k)  (KIDS * (k) + 1)

/* A hint, where the compiler has one: bring a line that will be read soon into the cache. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/*
 * The entry at k got heavier: down to its place. Bottom-up (Wegener): the lightest child moves up
 * all the way to a leaf without comparing the entry on the way, which then climbs back while it
 * is lighter than its parent. Entries are distinct (ties go by index), so it ends where the usual
 * sift ends, with the same array; a worker that just took a task usually belongs near the leaves,
 * and the way down saves a comparison and a mispredicted branch per level.
 */
#define SIFT_DOWN(name, LIGHTER)                                                                   \
        static void name(struct gheap *g, uint32_t k)                                              \
        {                                                                                          \
                struct gent *h = g->h, x = h[k];                                                   \
                uint32_t n = g->n, *pos = g->pos, top = k;                                         \
                for (;;) {                                                                         \
                        uint32_t l = FIRST(k), m = l;                                              \
                        if (l >= n)                                                                \
                                break;                                                             \
                        if (l + KIDS <= n) { /* all four: branch-free selection */                 \
                                if (g->deep) /* the grandchildren's lines, while four compare */   \
                                        for (uint32_t c = 0; c < KIDS; c++)                        \
                                                PREFETCH(&h[FIRST(l + c)]);                        \
                                uint32_t a = l + LIGHTER(&h[l + 1], &h[l]);                        \
                                uint32_t b = l + 2 + LIGHTER(&h[l + 3], &h[l + 2]);                \
                                m = LIGHTER(&h[b], &h[a]) ? b : a;                                 \
                        } else {                                                                   \
                                for (uint32_t c = l + 1; c < n; c++)                               \
                                        m = LIGHTER(&h[c], &h[m]) ? c : m;                         \
                        }                                                                          \
                        h[k] = h[m];                                                               \
                        pos[h[k].i] = k;                                                           \
                        k = m;                                                                     \
                }                                                                                  \
                while (k > top && LIGHTER(&x, &h[PARENT(k)])) {                                    \
                        h[k] = h[PARENT(k)];                                                       \
                        pos[h[k].i] = k;                                                           \
                        k = PARENT(k);                                                             \
                }                                                                                  \
                h[k] = x;                                                                          \
                pos[x.i] = k;                                                                      \
        }

SIFT_DOWN(sift_down_load, lighter)
SIFT_DOWN(sift_down_key, lighter_key)

static inline void sift_down(struct gheap *g, uint32_t k)
{
        if (g->ikey)
                sift_down_key(g, k);
        else
                sift_down_load(g, k);
}

/* Whether another entry has the root's load (it would be a child of the root). */
static bool root_tied(const struct gheap *g)
{
        bool tie = false;
        for (uint32_t c = 1; c <= KIDS && c < g->n; c++)
                tie |= g->h[c].load == g->h[0].load;
        return tie;
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

#define AHEAD 16 /* tasks fetched ahead */

/* What the task AHEAD places after the k-th reads and writes, fetched now. */
static inline void fetch_ahead(const struct lbomp__snap *s, const uint32_t *dest,
                               const uint32_t *tasks, uint32_t k, uint32_t ntasks, bool worker,
                               bool cost)
{
        if (k + AHEAD < ntasks) {
                uint32_t u = tasks[k + AHEAD];
                if (cost)
                        PREFETCH(&s->cost[u]);
                if (worker)
                        PREFETCH(&s->worker[u]);
                PREFETCH(&dest[u]);
        }
}

/*
 * A winner tree instead of the heap, where the plan does not depend on the heap's layout. Among
 * the workers tied for the least load a task keeps its worker, else on one node it goes to the
 * lowest id, the least by (load, index); on several nodes pick() walks the heap for the nearest
 * tied worker, and with at most 63 tied that walk sees them all (1 + 4 × 63 entries fit its
 * bound of 256), so the nearest, then lowest id, wins whatever the layout. Any structure that
 * finds these gives the same plan, and a winner tree finds them faster than the heap: updating a
 * leaf replays its path to the root (14 levels for 16,384 workers), each level one comparison
 * with the sibling, whose address does not depend on the comparisons before, so the loads of a
 * path overlap where a heap's wait for each other. Keys are the loads' bits + 1 (every load ≥ +0),
 * ties by the lower index; padding leaves never win. The tie bit: another leaf below has the
 * winner's key. More than 63 tied with the task's worker not among them: the tree gives up (1)
 * and the caller goes on with its heap, which the tree left as it was. A node is two words, the
 * key and index << 32 | tie bit. Leaves lie in index order, so between equal keys the left
 * subtree's winner is the lower index: a level of the replay compares keys alone, the sibling's
 * lowered by one when the sibling is on the left (the +1 keeps that a key), one 64-bit compare and
 * two conditional moves on the path from one task to the next. The root stays in registers from
 * task to task, and the load of the least loaded is its key: no load[] read waits between them. On
 * one node the tie bits are not kept up (the task's own worker is then checked directly, the one
 * tie that matters there; its leaf is fetched ahead): a level waits on the comparison alone.
 */
struct wnode {
        uint64_t key;
        uint64_t it; /* index << 32 | tie */
};

/* Either way half of the time: a conditional move, not a branch the processor would guess. */
#if defined(__clang__)
#define UNPREDICTABLE(x) __builtin_unpredictable(x)
#elif defined(__GNUC__) && __GNUC__ >= 9
#define UNPREDICTABLE(x) __builtin_expect_with_probability(x, 1, 0.5)
#else
#define UNPREDICTABLE(x) (x)
#endif

/* (*xk, *xi) = (sk, si) when b < *xk: a conditional move, which GCC 12 turns into a branch
 * mispredicted half of the time whatever the hints, so written out where the instruction set is
 * known. */
static inline void take_below(uint64_t b, uint64_t sk, uint64_t si, uint64_t *xk, uint64_t *xi)
{
#if defined(__GNUC__) && defined(__x86_64__)
        __asm__("cmpq %[x], %[b]\n\t"
                "cmovbq %[sk], %[x]\n\t"
                "cmovbq %[si], %[i]"
                : [x] "+r"(*xk), [i] "+r"(*xi)
                : [b] "r"(b), [sk] "r"(sk), [si] "r"(si)
                : "cc");
#else
        bool take = UNPREDICTABLE(b < *xk);
        *xk = take ? sk : *xk;
        *xi = take ? si : *xi;
#endif
}

#define WIDX(n) ((uint32_t)((n).it >> 32))

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide;
static inline bool wless(uint64_t ak, uint64_t ai, uint64_t bk, uint64_t bi)
{
        return ((wide)ak << 64 | ai) < ((wide)bk << 64 | bi);
}
#else
static inline bool wless(uint64_t ak, uint64_t ai, uint64_t bk, uint64_t bi)
{
        return (ak < bk) | ((ak == bk) & (ai < bi));
}
#endif

static inline bool wbetter(const struct wnode *a, const struct wnode *b)
{
        return wless(a->key, a->it, b->key, b->it);
}

/* A load's key: its bits + 1 (≥ 1, so that a key lowered by one stays a key), and back. */
static inline uint64_t key_of(double load)
{
        uint64_t u;
        memcpy(&u, &load, sizeof u);
        return u + 1;
}

static inline double load_of(uint64_t key)
{
        double d;
        key -= 1;
        memcpy(&d, &key, sizeof d);
        return d;
}

#define TIED_MAX 63 /* tied workers pick()'s bounded walk is sure to see */

/* The tied leaves below v (key `key`) into tied[], at most TIED_MAX + 1 of them. */
static uint32_t tied_leaves(const struct wnode *tree, uint32_t L, uint32_t v, uint64_t key,
                            uint32_t *tied, uint32_t n)
{
        if (n > TIED_MAX || tree[v].key != key)
                return n;
        if (v >= L) {
                tied[n++] = WIDX(tree[v]);
                return n;
        }
        n = tied_leaves(tree, L, 2 * v, key, tied, n);
        return tied_leaves(tree, L, 2 * v + 1, key, tied, n);
}

static int assign_tree(const struct lbomp__snap *s, const uint32_t *tasks, const double *sc,
                       uint32_t ntasks, const uint32_t *workers, const uint32_t *local, uint32_t P,
                       const double *load0, uint32_t *dest, struct mode *m, double *out)
{
        uint32_t L = 1;
        while (L < P)
                L *= 2;
        struct wnode *tree = malloc(2 * (size_t)L * sizeof *tree);
        if (!tree)
                return -ENOMEM;
        for (uint32_t i = 0; i < L; i++)
                /* a -0 becomes +0: the same load to every use */
                tree[L + i] =
                        i < P ? (struct wnode){.key = key_of(load0[i] + 0.0),
                                               .it = (uint64_t)i << 32}
                              : (struct wnode){.key = UINT64_MAX, .it = (uint64_t)UINT32_MAX << 32};
        for (uint32_t v = L; v-- > 1;) {
                const struct wnode *l = &tree[2 * v], *r = &tree[2 * v + 1];
                tree[v] = wbetter(l, r) ? *l : *r;
                tree[v].it |= l->key == r->key;
        }
        bool multi = s->nnodes >= 2;
        int32_t nn = (int32_t)s->nnodes;
        /* c / 1.0 is c, bit for bit: without the division on the path from one task to the next
         * when every speed is 1 (the usual snapshot). */
        const double *speed = s->speed;
        bool unit = true;
        for (uint32_t i = 0; speed && unit && i < P; i++)
                unit = speed[workers[i]] == 1.0;
        if (unit)
                speed = NULL;
        uint32_t tied[TIED_MAX + 1];
        uint64_t rk = tree[1].key, ri = tree[1].it; /* the root, in registers from task to task */
        bool stay = m && m->stay > 0;               /* greedy-refine */
        int rc = 0;
        for (uint32_t k = 0; k < ntasks; k++) {
                uint32_t t = tasks[k];
                fetch_ahead(s, dest, tasks, k, ntasks, stay || !multi, !sc);
                if (!multi && k + AHEAD / 2 < ntasks) {
                        /* the leaf of its worker, which the tie check below reads */
                        uint32_t cur = s->worker[tasks[k + AHEAD / 2]];
                        uint32_t ci = local ? local[cur] : cur;
                        if (ci < P)
                                PREFETCH(&tree[L + ci]);
                }
                double c = sc ? sc[k] : s->cost[t];
                if (!(c > 0))
                        continue; /* free tasks are no load: they stay (dest holds their worker) */
                uint32_t r = UINT32_MAX;
                if (stay) {
                        uint32_t cur = s->worker[t], ci = local ? local[cur] : cur;
                        if (ci < P && workers[ci] == cur &&
                            load_of(tree[L + ci].key) + lbomp__time_on(s, cur, c) <= m->stay)
                                r = ci; /* greedy-refine: stay while under the bound */
                }
                uint64_t lk = rk; /* r's key: the root's, unless r is another leaf */
                if (r == UINT32_MAX) {
                        r = (uint32_t)(ri >> 32); /* the least loaded, lowest index among tied */
                        /* Without a tie, the task's worker can have the least load only by being
                         * r: on several nodes its worker is read only when another leaf ties with
                         * r; on one, the tree keeps no tie bits (see below) and always reads it. */
                        if (!multi || (ri & 1)) {
                                uint32_t cur = s->worker[t], ci = local ? local[cur] : cur;
                                bool here = ci < P && workers[ci] == cur;
                                if (here && tree[L + ci].key == rk) {
                                        r = ci;     /* tied with it: the task keeps its worker */
                                } else if (multi) { /* the nearest of the tied */
                                        uint32_t n = tied_leaves(tree, L, 1, rk, tied, 0);
                                        if (n > TIED_MAX) {
                                                rc = 1; /* the heap's layout decides: give up */
                                                break;
                                        }
                                        int32_t tn = lbomp__task_node(s, t);
                                        double bestd = s->dist[tn * nn + s->wnode[workers[r]]];
                                        for (uint32_t j = 0; j < n; j++) {
                                                double d = s->dist[tn * nn +
                                                                   s->wnode[workers[tied[j]]]];
                                                if (d < bestd || (d == bestd && tied[j] < r))
                                                        r = tied[j], bestd = d;
                                        }
                                }
                        }
                } else {
                        lk = tree[L + r].key;
                }
                dest[t] = workers[r];
                double load = load_of(lk) + (speed ? c / speed[dest[t]] : c); /* lbomp__time_on */
                if (stay && load > m->stay)
                        m->stay = load;
                uint64_t xk = key_of(load), xi = (uint64_t)r << 32;
                uint32_t v = L + r;
                tree[v] = (struct wnode){.key = xk, .it = xi};
                if (!multi) { /* one node: no tie bits, a level waits on one comparison alone */
                        for (; v > 1; v /= 2) {
                                uint64_t sk = tree[v ^ 1].key, si = tree[v ^ 1].it;
                                take_below(sk - (v & 1), sk, si, &xk, &xi);
                                tree[v / 2] = (struct wnode){.key = xk, .it = xi};
                        }
                } else { /* without branches: either side wins half the time */
                        for (; v > 1; v /= 2) {
                                uint64_t sk = tree[v ^ 1].key, si = tree[v ^ 1].it;
                                uint64_t eq = sk == xk;
                                take_below(sk - (v & 1), sk, si, &xk, &xi);
                                xi |= eq;
                                tree[v / 2] = (struct wnode){.key = xk, .it = xi};
                        }
                }
                rk = xk, ri = xi;
        }
        for (uint32_t i = 0; out && i < P; i++) /* the loads at the end, for the caller */
                out[i] = load_of(tree[L + i].key);
        free(tree);
        return rc;
}

/*
 * Rounds instead of the tree, where greedy's pass has the structure of LPT (Graham's longest
 * processing time first). With the loads sorted by (load, index), the next P tasks go to the
 * workers in that order as long as each leaves its worker above the heaviest load of the round's
 * start: every load a task makes is then above every load still to be taken, so the least loaded
 * is always the next in the order, the tree's choice. With the costs heaviest first that is the
 * usual case once each worker has a task (a round's costs exceed the spread of the loads they
 * meet), and a task costs a comparison and a store, where the tree replays log2 P levels. A task
 * that leaves its worker below goes back into the order in its place (a worker a task behind the
 * others, as when a round starts off by one); loads tied for the least are settled by the tree's
 * rules (settle_tie). The round's new loads, sorted, are the next round's order: LPT makes them
 * fall about as the costs do, so they sort by a reversal, bucket passes and insertion (zsort), on
 * items packed as they come. Past TIED_MAX tied, a load too far above the round's to pack, or too
 * many moves back into the order, the tree takes a stretch of tasks (twice as long each time)
 * from the loads so far and gives the same plan; where it gives up on ties, so does this.
 */
/* The order of a round: each worker packed into one integer, (key - base) << ib | index, whose
 * order is the order by (load, index); a round's loads span a few dozen bits. */
struct zorder {
        uint64_t *p;
        uint64_t base, mask;
        unsigned ib;
};

#define ZBITS 12   /* bucket bits of the sort of a round, at most */
#define ZLSD  4096 /* more items: two passes of 11 bits */

static int by_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x > y) - (x < y);
}

/*
 * Sorts v[0..n), packed items; returns where the result is, v or tmp (as large). Mostly
 * falling, as LPT makes a round's loads, the items are taken from the end; unless then nearly
 * sorted, they are scattered by their top bits, into about two buckets an item, or for more than
 * ZLSD items by two passes of 11 bits (counters that stay in the first-level cache, where 32,768
 * buckets for 16,384 items did not), and insertion finishes, a place or two at most for most
 * items (past eight moves an item on average the library sort does).
 */
static uint64_t *zsort(uint64_t *v, uint64_t *tmp, uint32_t n, uint32_t *cnt)
{
        uint64_t lo = v[0], hi = v[0];
        uint32_t down = 0; /* items below the one before (all differ) */
        for (uint32_t i = 1; i < n; i++) {
                lo = v[i] < lo ? v[i] : lo;
                hi = v[i] > hi ? v[i] : hi;
                down += v[i] < v[i - 1];
        }
        uint32_t up = n - 1 - down;
        bool rev = down > up;
        if (rev)
                down = up;
        uint64_t *p = v;
        if (down > n / 8 && n > ZLSD) { /* two passes of 11 bits over the top 22 */
                unsigned kb = 0;
                while (kb < 64 && (hi - lo) >> kb)
                        kb++;
                unsigned sh = kb > 22 ? kb - 22 : 0;
                uint32_t *c0 = cnt, *c1 = cnt + 2048;
                memset(cnt, 0, 2 * 2048 * sizeof *cnt);
                for (uint32_t i = 0; i < n; i++) {
                        uint64_t d = (v[i] - lo) >> sh;
                        c0[d & 2047]++;
                        c1[(d >> 11) & 2047]++;
                }
                for (uint32_t d = 0, s0 = 0, s1 = 0; d < 2048; d++) {
                        uint32_t x0 = c0[d], x1 = c1[d];
                        c0[d] = s0, c1[d] = s1;
                        s0 += x0, s1 += x1;
                }
                if (rev)
                        for (uint32_t i = n; i-- > 0;)
                                tmp[c0[((v[i] - lo) >> sh) & 2047]++] = v[i];
                else
                        for (uint32_t i = 0; i < n; i++)
                                tmp[c0[((v[i] - lo) >> sh) & 2047]++] = v[i];
                for (uint32_t i = 0; i < n; i++)
                        v[c1[((tmp[i] - lo) >> sh >> 11) & 2047]++] = tmp[i];
        } else if (down > n / 8) { /* buckets by the top bits first */
                unsigned bits = 1, kb = 0;
                while (kb < 64 && (hi - lo) >> kb)
                        kb++;
                while (bits < ZBITS && (1u << bits) < 2 * n)
                        bits++;
                unsigned shift = kb > bits ? kb - bits : 0;
                memset(cnt, 0, ((1u << bits) + 1) * sizeof *cnt);
                for (uint32_t i = 0; i < n; i++)
                        cnt[((v[i] - lo) >> shift) + 1]++;
                for (uint32_t d = 1; d <= (1u << bits); d++)
                        cnt[d] += cnt[d - 1];
                if (rev)
                        for (uint32_t i = n; i-- > 0;)
                                tmp[cnt[(v[i] - lo) >> shift]++] = v[i];
                else
                        for (uint32_t i = 0; i < n; i++)
                                tmp[cnt[(v[i] - lo) >> shift]++] = v[i];
                p = tmp;
        } else if (rev) {
                for (uint32_t i = 0, j = n - 1; i < j; i++, j--) {
                        uint64_t x = v[i];
                        v[i] = v[j];
                        v[j] = x;
                }
        }
        if (!down)
                return p;
        /* Insertion: most items in place, the rest a place or two. */
        uint64_t moves = 0, budget = 8 * (uint64_t)n;
        for (uint32_t i = 1; i < n; i++) {
                uint64_t x = p[i];
                if (x >= p[i - 1])
                        continue;
                uint32_t j = i;
                do
                        p[j] = p[j - 1];
                while (--j > 0 && x < p[j - 1]);
                p[j] = x;
                if ((moves += i - j) > budget) {
                        qsort(p, n, sizeof *p, by_u64);
                        break;
                }
        }
        return p;
}

/*
 * Workers tied for the least load, a[0] and those after it with its key (n entries from a[0]):
 * the one task t goes to first, by the tree's rules, the task's worker, else on several nodes the
 * nearest, then the lowest index. False when more than TIED_MAX tie: the tree takes over (it
 * keeps the task's worker if tied, else on several nodes gives up there, to the heap).
 */
static bool settle_tie(const struct lbomp__snap *s, uint32_t t, const uint32_t *workers,
                       const uint32_t *local, uint32_t P, const struct zorder *o, uint64_t *a,
                       uint32_t n)
{
        uint32_t e = 1;
        while (e < n && a[e] >> o->ib == a[0] >> o->ib)
                if (++e > TIED_MAX) /* as many as the tree gives up on */
                        return false;
        uint32_t cur = s->worker[t], ci = local ? local[cur] : cur, q = 0;
        bool here = ci < P && workers[ci] == cur, found = false;
        for (uint32_t i = 0; here && i < e && !found; i++)
                if ((a[i] & o->mask) == ci)
                        q = i, found = true;
        if (!found && s->nnodes >= 2) {
                int32_t tn = lbomp__task_node(s, t), nn = (int32_t)s->nnodes;
                double bestd = s->dist[tn * nn + s->wnode[workers[a[0] & o->mask]]];
                for (uint32_t i = 1; i < e; i++) { /* in index order: the first nearest */
                        double d = s->dist[tn * nn + s->wnode[workers[a[i] & o->mask]]];
                        if (d < bestd)
                                q = i, bestd = d;
                }
        }
        uint64_t x = a[q]; /* to the front, the others in their order after it */
        memmove(&a[1], &a[0], q * sizeof *a);
        a[0] = x;
        return true;
}

static int assign_zip(const struct lbomp__snap *s, const uint32_t *tasks, const double *sc,
                      uint32_t ntasks, const uint32_t *workers, const uint32_t *local, uint32_t P,
                      const double *load0, uint32_t *dest, struct mode *m)
{
        if (m && m->stay > 0) /* greedy-refine: tasks stay off the order */
                return assign_tree(s, tasks, sc, ntasks, workers, local, P, load0, dest, m, NULL);
        double *load = malloc((size_t)P * sizeof *load);
        uint64_t *mem = malloc(3 * (size_t)P * sizeof *mem);       /* order, new loads, scratch */
        uint32_t *cnt = malloc(((1u << ZBITS) + 1) * sizeof *cnt); /* the sort's buckets */
        if (!load || !mem || !cnt) {
                free(load);
                free(mem);
                free(cnt);
                return -ENOMEM;
        }
        unsigned ib = 1;
        while (ib < 32 && (uint64_t)(P - 1) >> ib)
                ib++;
        uint64_t mask = (UINT64_C(1) << ib) - 1;
        struct zorder o = {.p = mem, .mask = mask, .ib = ib};
        uint64_t *b = mem + P, *tmp = mem + 2 * P;
        for (uint32_t i = 0; i < P; i++)
                load[i] = load0[i] + 0.0; /* a -0 becomes +0: the same to every use */
        const double *speed = s->speed;   /* NULL when every speed is 1, as in assign_tree */
        bool unit = true;
        for (uint32_t i = 0; speed && unit && i < P; i++)
                unit = speed[workers[i]] == 1.0;
        if (unit)
                speed = NULL;
        double smax = 0; /* the fastest: a cost takes the least time there */
        for (uint32_t i = 0; speed && i < P; i++)
                smax = speed[workers[i]] > smax ? speed[workers[i]] : smax;
        uint32_t k = 0, stretch = P;
        bool sorted = false; /* o holds the order of the loads */
        int rc = 0;
        while (k < ntasks) {
                uint32_t j = 0, nb = 0;
                uint64_t bbase = 0; /* the base of b's items */
                if (!sorted) {      /* the order from load[] */
                        uint64_t lo = UINT64_MAX, hi = 0;
                        for (uint32_t i = 0; i < P; i++) {
                                uint64_t key = key_of(load[i]);
                                lo = key < lo ? key : lo;
                                hi = key > hi ? key : hi;
                        }
                        if (((hi - lo) >> (64 - ib)) == 0) {
                                for (uint32_t i = 0; i < P; i++)
                                        b[i] = (key_of(load[i]) - lo) << ib | i;
                                uint64_t *r = zsort(b, tmp, P, cnt);
                                uint64_t *x = o.p;
                                o.p = r, o.base = lo;
                                if (r == b)
                                        b = x;
                                else
                                        tmp = x;
                                sorted = true;
                        }
                }
                if (sorted) {
                        uint64_t *a = o.p, base = o.base;
                        uint64_t top = base + (a[P - 1] >> ib);
                        uint64_t moved = 0; /* entries moved down this round */
                        /* The base of the round's new loads: every one is above top, and at
                         * least the least load plus the cost 2P tasks on (the costs fall), which
                         * keeps them packable from the second round on, where top + 1 alone
                         * would not (a load of the second round is twice one of the first). A
                         * load below the base (costs in another order) goes to the tree. */
                        uint32_t far = ntasks - k > 2 * P ? k + 2 * P : ntasks - 1;
                        double cf = sc ? sc[far] : s->cost[tasks[far]];
                        double least = load_of(base + (a[0] >> ib));
                        uint64_t lk = key_of(least + (cf > 0 ? (speed ? cf / smax : cf) : 0.0));
                        bbase = lk > top + 1 ? lk : top + 1;
                        for (; k < ntasks && j < P; k++) {
                                uint32_t t = tasks[k];
                                fetch_ahead(s, dest, tasks, k, ntasks, false, !sc);
                                double c = sc ? sc[k] : s->cost[t];
                                if (!(c > 0))
                                        continue; /* free tasks stay (dest holds their worker) */
                                if (j + 1 < P && a[j + 1] >> ib == a[j] >> ib &&
                                    !settle_tie(s, t, workers, local, P, &o, a + j, P - j))
                                        break; /* a long tie: the tree decides */
                                uint32_t w = (uint32_t)(a[j] & mask);
                                double x = load_of(base + (a[j] >> ib)) +
                                           (speed ? c / speed[workers[w]] : c); /* time_on */
                                uint64_t key = key_of(x);
                                if (key > top) {
                                        if (key < bbase || (key - bbase) >> (64 - ib))
                                                break; /* not to be packed: the tree */
                                        dest[t] = workers[w];
                                        b[nb++] = (key - bbase) << ib | w;
                                        j++;
                                        continue;
                                }
                                /* Not above the round's loads (a worker a task behind the others,
                                 * as where a round starts off by one): back among them, in its
                                 * place, the ones below it moved down one into the slot it left. */
                                uint64_t pe = (key - base) << ib | w; /* key ≤ top: it fits */
                                uint32_t l = j + 1, h = P;            /* the first above it */
                                while (l < h) {
                                        uint32_t mid = l + (h - l) / 2;
                                        if (a[mid] < pe)
                                                l = mid + 1;
                                        else
                                                h = mid;
                                }
                                if ((moved += l - j) > 2 * (uint64_t)P)
                                        break; /* too many moves: the tree decides */
                                dest[t] = workers[w];
                                memmove(&a[j], &a[j + 1], (l - j - 1) * sizeof *a);
                                a[l - 1] = pe;
                        }
                        if (j == P) { /* the round done: its new loads are the next order */
                                uint64_t *r = zsort(b, tmp, P, cnt);
                                o.p = r, o.base = bbase;
                                if (r == b)
                                        b = a;
                                else
                                        tmp = a;
                                continue;
                        }
                        for (uint32_t i = j; i < P; i++)
                                load[a[i] & mask] = load_of(base + (a[i] >> ib));
                }
                if (k == ntasks)
                        break;
                /* Ties, or a task the order cannot place: the tree takes a stretch of tasks. */
                for (uint32_t i = 0; i < nb; i++)
                        load[b[i] & mask] = load_of(bbase + (b[i] >> ib));
                uint32_t n = ntasks - k < stretch ? ntasks - k : stretch;
                rc = assign_tree(s, tasks + k, sc ? sc + k : NULL, n, workers, local, P, load, dest,
                                 m, load);
                if (rc != 0)
                        break;
                k += n;
                stretch = stretch > UINT32_MAX / 2 ? stretch : 2 * stretch;
                sorted = false;
        }
        free(load);
        free(mem);
        free(cnt);
        return rc;
}

/* sc: the tasks' costs in their order, or NULL (read from the snapshot). */
static int assign(const struct lbomp__snap *s, const uint32_t *tasks, const double *sc,
                  uint32_t ntasks, const uint32_t *workers, uint32_t nworkers, const double *load0,
                  uint32_t *dest, struct mode *m)
{
        uint32_t P = nworkers;
        if (!P)
                return 0;
        bool identity = P == s->nworkers;
        for (uint32_t i = 0; identity && i < P; i++)
                identity = workers[i] == i;
        struct gheap g = {.n = P, .deep = P > 1024};
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
        g.ikey = true;
        for (uint32_t i = 0; i < P; i++)
                g.ikey &= load0[i] >= 0 && (!s->speed || s->speed[workers[i]] > 0);
        for (uint32_t i = 0; i < P; i++) {
                /* + 0.0 turns a -0 into +0, the same load to every comparison and sum */
                g.h[i] = (struct gent){.load = g.ikey ? load0[i] + 0.0 : load0[i], .i = i};
                g.pos[i] = i;
        }
        for (uint32_t i = P / KIDS + 1; i-- > 0;)
                sift_down(&g, i);
        bool comm = m && m->beta > 0 && s->link_off;
        /* The rounds and the tree (assign_zip) when the plan cannot depend on the heap's layout:
         * from the start on one node; on several, from the first task that finds no worker tied
         * with the least loaded (all tie at the start), and back to the heap from there if they
         * meet a tie they cannot settle (the heap has not moved meanwhile). */
        bool tree = g.ikey && !comm;
        double *hload = tree && s->nnodes >= 2 ? malloc((size_t)P * sizeof *hload) : NULL;
        if (tree && s->nnodes >= 2 && !hload) {
                rc = -ENOMEM;
                goto out;
        }
        for (uint32_t k = 0; k < ntasks; k++) {
                uint32_t t = tasks[k];
                if (tree && (s->nnodes < 2 || !root_tied(&g))) {
                        struct mode saved = m ? *m : (struct mode){0};
                        const double *l0 = load0;
                        if (s->nnodes >= 2) {
                                for (uint32_t i = 0; i < P; i++)
                                        hload[i] = g.h[g.pos[i]].load;
                                l0 = hload;
                        }
                        rc = assign_zip(s, tasks + k, sc ? sc + k : NULL, ntasks - k, workers,
                                        local, P, l0, dest, m);
                        if (rc <= 0)
                                break; /* done, or out of memory */
                        rc = 0;
                        tree = false;
                        if (m)
                                *m = saved;
                }
                /* The tasks come heaviest first, scattered over the arrays: fetch ahead what
                 * the next ones read and write, which the heap's chain of loads would wait for. */
                fetch_ahead(s, dest, tasks, k, ntasks, true, !sc);
                double c = sc ? sc[k] : s->cost[t];
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
                        if (m->stay > 0 && g.h[r].load > m->stay)
                                m->stay = g.h[r].load;
                        if (comm)
                                m->placed[t] = 1;
                }
                sift_down(&g, r);
        }
        free(hload);
out:
        free(mem);
        free(g.pos);
        free(local);
        return rc;
}

int lbomp__greedy_assign(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                         const uint32_t *workers, uint32_t nworkers, const double *load0,
                         uint32_t *dest)
{
        return assign(s, tasks, NULL, ntasks, workers, nworkers, load0, dest, NULL);
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
        double *sc = NULL; /* the costs in order */
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
        if ((rc = lbomp__sort_tasks_desc_costs(s->cost, order, n, &sc)) < 0)
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
                if ((rc = assign(s, order, sc, n, workers, P, load, scratch, NULL)) < 0)
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
        if ((rc = assign(s, order, sc, n, workers, P, load, dest, &m)) < 0)
                goto out;
        lbomp__keep_unless_lower(s, dest, max, load);
out:
        free(order);
        free(workers);
        free(load);
        free(scratch);
        free(sc);
        free(m.placed);
        return rc;
}

static int greedy_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, PLAIN);
}

int lbomp__greedy_refine_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, REFINE);
}

int lbomp__greedy_comm_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return plan(s, dest, st, COMM);
}

const struct lbomp__policy lbomp__policy_greedy = {
        .name = "greedy",
        .help = "centralized: heaviest task to the least loaded worker (Charm++ GreedyLB)",
        .kind = LBOMP__CENTRAL,
        .plan = greedy_plan,
};
