/*
 * test_locality.c — the locality cost model and the locality-aware decisions, on the hand-checked
 * profile test/data/tiny-4n.xml (2 packages × 2 NUMA nodes × 2 cores, SLIT 10 / 15 / 30, so the
 * normalised distances are 1.0 / 1.5 / 3.0) and on the 8-node numa-profiles:
 * - link cost and move cost of a small mapping, computed by hand;
 * - the same link cost from the live runtime's LB record;
 * - tie-breaks: with equal loads greedy and refine keep a task on its node, then take the nearest;
 * - hierarchical moves less load across nodes than greedy on a linked workload, leaves a lower
 *   link cost, balances as well, and moves across nodes no more than must move.
 * Usage: test_locality TINY_XML PROFILES_DIR
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "policy.h"
#include "topology.h"
#include "mailbox.h"
#include "synth.h"
#include "test.h"

static const char *tiny, *profiles;

#define ASSERT_NEAR(a, b)                                                                          \
        do {                                                                                       \
                double x_ = (a), y_ = (b);                                                         \
                if (fabs(x_ - y_) > 1e-9 * (fabs(y_) + 1))                                         \
                        FAIL("%s = %.17g, expected %s = %.17g", #a, x_, #b, y_);                   \
        } while (0)

static uint32_t *run(const char *name, const struct lbomp__snap *s)
{
        const struct lbomp__policy *p = lbomp__policy_find(name);
        if (!p)
                FAIL("policy %s not registered", name);
        uint32_t *dest = calloc(s->ntasks + 1, sizeof *dest);
        struct lbomp__pstats st;
        memset(&st, 0, sizeof st);
        int rc = lbomp__policy_run_offline(p, s, dest, &st);
        if (rc != 0)
                FAIL("policy %s failed: %d", name, rc);
        uint32_t bad = 0;
        if (lbomp__plan_check(s, dest, &bad) != 0)
                FAIL("policy %s: task %u has no valid worker (%u)", name, bad, dest[bad]);
        return dest;
}

/* The tiny profile: counts, core → node, normalised distances, spread placement. */
static void tiny_topology(struct lbomp__topo *t)
{
        ASSERT_EQ(lbomp__topo_load(t, tiny), 0);
        ASSERT_EQ(t->nnodes, 4);
        ASSERT_EQ(t->ncores, 8);
        ASSERT(t->dist_measured);
        static const double d[16] = {1.0, 1.5, 3.0, 3.0, 1.5, 1.0, 3.0, 3.0,
                                     3.0, 3.0, 1.0, 1.5, 3.0, 3.0, 1.5, 1.0};
        for (int i = 0; i < 16; i++)
                ASSERT_NEAR(t->dist[i], d[i]);
        for (int c = 0; c < 8; c++)
                ASSERT_EQ(t->core_node[c], c / 2);
        for (int w = 0; w < 4; w++) /* 4 workers: one per node */
                ASSERT_EQ(t->core_node[lbomp__topo_spread_core(t, w, 4)], w);
}

/*
 * Eight workers, one per core of the tiny profile (nodes 0 0 1 1 2 2 3 3), six tasks:
 *   task   worker  node  bytes  home      dest   new node
 *   t0     w0      0     100    -         w0     0
 *   t1     w1      0     200    -         w5     2
 *   t2     w2      1     300    -         w1     0
 *   t3     w4      2     400    -         w4     2
 *   t4     w6      3     500    2         w4     2
 *   t5     w0      0      50    -         w1     0
 * Links (bytes per step): t0-t1 10, t0-t2 20, t1-t3 30, t3-t4 40, t2-t4 50, and t1-t0 5 again
 * (repeated links add up).
 * Link cost before: t0-t1 (10+5)×1.0 + t0-t2 20×1.5 + t1-t3 30×3.0 + t3-t4 40×1.5 + t2-t4 50×3.0
 *                 = 15 + 30 + 90 + 60 + 150 = 345.
 * After:           t0-t1 15×3.0 + t0-t2 20×1.0 + t1-t3 30×1.0 + t3-t4 40×1.0 + t2-t4 50×3.0
 *                 = 45 + 20 + 30 + 40 + 150 = 285.
 * Move cost: t1 200×d(0,2) + t2 300×d(1,0) + t4 500×d(home 2, 2) + t5 50×d(0,0)
 *          = 600 + 450 + 500 + 50 = 1600 (t4's data is on its home node 2, not on node 3).
 * Migrations 4 (1050 bytes), across nodes 3 (t1, t2, t4: 1000 bytes, cost 2 + 3 + 5 = 10).
 */
static void cost_model(const struct lbomp__topo *t)
{
        enum { T = 6, P = 8 };
        uint32_t worker[T] = {0, 1, 2, 4, 6, 0}, dest[T] = {0, 5, 1, 4, 4, 1};
        uint64_t bytes[T] = {100, 200, 300, 400, 500, 50};
        int32_t home[T] = {-1, -1, -1, -1, 2, -1};
        double cost[T] = {1, 2, 3, 4, 5, 6};
        uint32_t id[T] = {0, 1, 2, 3, 4, 5};
        int32_t wnode[P];
        double bg[P] = {0};
        for (int w = 0; w < P; w++)
                wnode[w] = t->core_node[lbomp__topo_spread_core(t, w, P)];
        /* links as the runtime stores them: a list of (a, b, bytes), then the symmetric CSR */
        static const struct {
                uint32_t a, b;
                double bytes;
        } links[] = {{0, 1, 10}, {0, 2, 20}, {1, 3, 30}, {3, 4, 40}, {2, 4, 50}, {1, 0, 5}};
        enum { L = sizeof links / sizeof links[0] };
        uint32_t off[T + 1] = {0}, dst[2 * L], fill[T];
        double lbytes[2 * L];
        for (int i = 0; i < L; i++)
                off[links[i].a + 1]++, off[links[i].b + 1]++;
        for (int i = 0; i < T; i++)
                off[i + 1] += off[i];
        memcpy(fill, off, sizeof fill);
        for (int i = 0; i < L; i++) {
                dst[fill[links[i].a]] = links[i].b;
                lbytes[fill[links[i].a]++] = links[i].bytes;
                dst[fill[links[i].b]] = links[i].a;
                lbytes[fill[links[i].b]++] = links[i].bytes;
        }
        struct lbomp__snap s = {.ntasks = T,
                                .nworkers = P,
                                .nnodes = 4,
                                .cost = cost,
                                .worker = worker,
                                .bytes = bytes,
                                .home = home,
                                .id = id,
                                .link_off = off,
                                .link_dst = dst,
                                .link_bytes = lbytes,
                                .bg = bg,
                                .wnode = wnode,
                                .dist = t->dist};
        ASSERT_NEAR(lbomp__locality_cost(&s, worker), 345.0);
        ASSERT_NEAR(lbomp__locality_cost(&s, dest), 285.0);
        struct lbomp__moves m;
        lbomp__moves(&s, dest, &m);
        ASSERT_EQ(m.tasks, 4);
        ASSERT_EQ(m.bytes, 1050);
        ASSERT_EQ(m.node_tasks, 3);
        ASSERT_EQ(m.node_bytes, 1000);
        ASSERT_NEAR(m.node_load, 10.0);
        ASSERT_NEAR(m.cost, 1600.0);
        lbomp__moves(&s, worker, &m); /* the identity plan moves nothing */
        ASSERT_EQ(m.tasks, 0);
        ASSERT_NEAR(m.cost, 0.0);
        printf("cost model: link cost 345 -> 285, move cost 1600, as computed by hand\n");
}

/*
 * The live runtime on the tiny profile: 8 workers, 8 tasks (task i on worker i, the block mapping
 * of schedule(static)), ring links of 100 bytes. Task nodes 0 0 1 1 2 2 3 3, so the links cost
 * 100×(1 + 1.5 + 1 + 3 + 1 + 1.5 + 1 + 3) = 1300, and with policy none nothing moves.
 */
static void nop(void *data, lbomp_id_t id, void *arg)
{
        (void)data, (void)id, (void)arg;
}

static void live_record(void)
{
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_topology(lb, tiny), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 8), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        ASSERT_EQ(lbomp_set_period(lb, 2), 0);
        static int data[8]; /* a task's pointer must not be NULL: NULL ends the iteration */
        for (int i = 0; i < 8; i++)
                ASSERT_EQ(lbomp_task_add(lb, &data[i], 64, LBOMP_NODE_ANY, NULL), 0);
        for (int i = 0; i < 8; i++)
                ASSERT_EQ(lbomp_link(lb, (lbomp_id_t)i, (lbomp_id_t)((i + 1) % 8), 100), 0);
        for (int s = 0; s < 4; s++)
                ASSERT_EQ(lbomp_step(lb, nop, NULL), 0);
        for (int i = 0; i < 8; i++)
                ASSERT_EQ(lbomp_task_worker(lb, (lbomp_id_t)i), i);
        ASSERT_EQ(lbomp_lb_count(lb), 2);
        lbomp_lb_stats_t st;
        ASSERT_EQ(lbomp_lb_get(lb, 1, &st, sizeof st), 0);
        ASSERT_NEAR(st.locality_before, 1300.0);
        ASSERT_NEAR(st.locality_after, 1300.0);
        ASSERT_EQ(st.migrations, 0);
        ASSERT_NEAR(st.move_cost, 0.0);
        /* The cost is kept between LB steps while nothing changes; each change shows at the next
         * LB step: a link from task 0 (node 0) to task 2 (node 1) adds 100×1.5, removing task 7
         * takes its two links, 100×1 and 100×3, away. */
        const double want[] = {1300.0, 1450.0, 1050.0};
        for (int phase = 0; phase < 3; phase++) {
                if (phase == 1)
                        ASSERT_EQ(lbomp_link(lb, 0, 2, 100), 0);
                if (phase == 2)
                        ASSERT_EQ(lbomp_task_remove(lb, 7), 0);
                for (int s = 0; s < 2; s++)
                        ASSERT_EQ(lbomp_step(lb, nop, NULL), 0);
                ASSERT_EQ(lbomp_lb_get(lb, lbomp_lb_count(lb) - 1, &st, sizeof st), 0);
                ASSERT_NEAR(st.locality_before, want[phase]);
                ASSERT_NEAR(st.locality_after, want[phase]);
        }
        lbomp_destroy(lb);
        printf("live record: link cost 1300 as computed by hand, 1450 after a link, 1050 after a "
               "removal\n");
}

/* A snapshot over the tiny profile's 8 workers with the given tasks (no links). */
struct small {
        struct lbomp__snap s;
        double cost[16], bg[8];
        uint32_t worker[16], id[16];
        uint64_t bytes[16];
        int32_t home[16], wnode[8];
        struct lbomp__params params;
};

static void small_init(struct small *y, const struct lbomp__topo *t, uint32_t T)
{
        memset(y, 0, sizeof *y);
        for (uint32_t i = 0; i < T; i++) {
                y->id[i] = i;
                y->home[i] = -1;
                y->bytes[i] = 64;
        }
        for (int w = 0; w < 8; w++)
                y->wnode[w] = t->core_node[lbomp__topo_spread_core(t, w, 8)];
        y->params = (struct lbomp__params){.tolerance = 0.05, .refine_factor = 1.05};
        y->s = (struct lbomp__snap){.ntasks = T,
                                    .nworkers = 8,
                                    .nnodes = 4,
                                    .cost = y->cost,
                                    .worker = y->worker,
                                    .bytes = y->bytes,
                                    .home = y->home,
                                    .id = y->id,
                                    .bg = y->bg,
                                    .wnode = y->wnode,
                                    .dist = t->dist,
                                    .params = &y->params};
}

static void tie_breaks(const struct lbomp__topo *t)
{
        struct small y;
        const char *const all[] = {"greedy", "refine", "hierarchical"};

        /* Equal loads: one task of cost 1 per worker. Nobody moves. */
        small_init(&y, t, 8);
        for (uint32_t i = 0; i < 8; i++)
                y.cost[i] = 1, y.worker[i] = i;
        for (int p = 0; p < 3; p++) {
                uint32_t *d = run(all[p], &y.s);
                for (uint32_t i = 0; i < 8; i++)
                        if (d[i] != i)
                                FAIL("%s moved task %u of a balanced mapping to worker %u", all[p],
                                     i, d[i]);
                free(d);
        }

        /* greedy: tasks A and B (cost 2) on w6 (node 3). A keeps w6; for B every other worker is
         * tied at load 0 and B takes w7, the one on its node, not the lowest id w0. */
        small_init(&y, t, 2);
        y.cost[0] = y.cost[1] = 2;
        y.worker[0] = y.worker[1] = 6;
        uint32_t *d = run("greedy", &y.s);
        ASSERT_EQ(d[0], 6);
        ASSERT_EQ(d[1], 7);
        free(d);
        /* w7 busy (background 0.5): B's ties are w0..w5 and it takes the nearest node, node 2 at
         * 1.5 (w4), not node 0 or 1 at 3.0. */
        y.bg[7] = 0.5;
        d = run("greedy", &y.s);
        ASSERT_EQ(d[0], 6);
        ASSERT_EQ(d[1], 4);
        free(d);
        /* A home node decides the node: B's data on node 1 (w2, w3). */
        y.home[1] = 1;
        d = run("greedy", &y.s);
        ASSERT_EQ(d[1], 2);
        free(d);

        /* refine: one base task per worker, X (cost 2) extra on w6; w0 and w7 lighter (8).
         * avg 9.75, limit 10.2375: X fits on w0 and w7 alike (10); it goes to w7, its node. */
        small_init(&y, t, 9);
        for (uint32_t i = 0; i < 8; i++)
                y.cost[i] = i == 0 || i == 7 ? 8 : 10, y.worker[i] = i;
        y.cost[8] = 2, y.worker[8] = 6;
        d = run("refine", &y.s);
        ASSERT_EQ(d[8], 7);
        for (uint32_t i = 0; i < 8; i++)
                ASSERT_EQ(d[i], i);
        free(d);
        /* w7 not light any more (10), w4 light instead: X takes the nearest, w4 on node 2 (1.5),
         * not w0 on node 0 (3.0). */
        y.cost[7] = 10, y.cost[4] = 8;
        d = run("refine", &y.s);
        ASSERT_EQ(d[8], 4);
        free(d);
        printf("tie-breaks: greedy and refine keep a task on its node, then the nearest\n");
}

/* The synthetic linked workload over the 16 workers of an 8-node profile. */
static void with_profile(struct synth *y, const struct lbomp__topo *t, uint32_t P)
{
        ASSERT_EQ(y->s.nnodes, (uint32_t)t->nnodes);
        for (uint32_t w = 0; w < P; w++)
                y->wnode[w] = t->core_node[lbomp__topo_spread_core(t, w, (int)P)];
        memcpy(y->dist, t->dist, (size_t)t->nnodes * t->nnodes * sizeof *y->dist);
}

/* Least load that must cross nodes for every node to reach its share: Σ over nodes of
 * max(0, node load − average worker load × its workers). */
static double must_cross(const struct lbomp__snap *s)
{
        double *w = calloc(s->nworkers, sizeof *w), *n = calloc(s->nnodes, sizeof *n), avg;
        uint32_t *nw = calloc(s->nnodes, sizeof *nw);
        lbomp__loads(s, s->worker, w);
        lbomp__imbalance(w, s->nworkers, NULL, &avg);
        for (uint32_t i = 0; i < s->nworkers; i++)
                n[s->wnode[i]] += w[i], nw[s->wnode[i]]++;
        double sum = 0;
        for (uint32_t i = 0; i < s->nnodes; i++)
                if (n[i] > avg * nw[i])
                        sum += n[i] - avg * nw[i];
        free(w), free(n), free(nw);
        return sum;
}

static void hierarchical_vs_greedy(const char *file)
{
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", profiles, file);
        struct lbomp__topo t;
        ASSERT_EQ(lbomp__topo_load(&t, path), 0);
        ASSERT_EQ(t.nnodes, 8);
        const enum synth_load loads[] = {SYNTH_LINEAR, SYNTH_HOTSPOT, SYNTH_LBTEST};
        const char *const names[] = {"linear", "hotspot", "lbtest"};
        for (int l = 0; l < 3; l++) {
                struct synth y;
                ASSERT_EQ(synth_make(&y, 2048, 16, 8, loads[l], 3, 42), 0);
                with_profile(&y, &t, 16);
                uint32_t *g = run("greedy", &y.s), *h = run("hierarchical", &y.s);
                struct lbomp__moves mg, mh;
                lbomp__moves(&y.s, g, &mg);
                lbomp__moves(&y.s, h, &mh);
                double lg = lbomp__locality_cost(&y.s, g), lh = lbomp__locality_cost(&y.s, h);
                double l0 = lbomp__locality_cost(&y.s, y.worker);
                double ig = synth_imbalance(&y, g), ih = synth_imbalance(&y, h);
                double need = must_cross(&y.s), maxc = 0;
                for (uint32_t i = 0; i < y.s.ntasks; i++)
                        maxc = y.cost[i] > maxc ? y.cost[i] : maxc;
                printf("%s %-7s: cross-node load greedy %.1f, hierarchical %.1f (must cross %.1f); "
                       "link cost %.5g -> greedy %.5g, hierarchical %.5g; λ %.3f -> greedy %.3f, "
                       "hierarchical %.3f\n",
                       file, names[l], mg.node_load, mh.node_load, need, l0, lg, lh,
                       synth_imbalance(&y, y.worker), ig, ih);
                ASSERT_DLE(mh.node_load, 0.5 * mg.node_load);
                ASSERT_DLE(mh.node_load, need + 8 * maxc); /* at most a task over, per node */
                /* Above the all-local cost (every link at distance 1.0), hierarchical adds at most
                 * half of what greedy adds. */
                double local = 0;
                for (uint32_t k = 0; k < y.s.link_off[y.s.ntasks]; k++)
                        local += y.s.link_bytes[k] / 2;
                ASSERT_DLE(lh, lg);
                ASSERT_DLE(lh - local, 0.5 * (lg - local));
                ASSERT_DLE(ih, 1.10); /* f = 1.05 per node, then greedy inside each */
                /* deterministic */
                uint32_t *h2 = run("hierarchical", &y.s);
                ASSERT(memcmp(h, h2, y.s.ntasks * sizeof *h) == 0);
                /* stable: on its own result, with the same costs, it moves (almost) nothing */
                memcpy(y.worker, h, y.s.ntasks * sizeof *h);
                synth_reindex(&y);
                uint32_t *h3 = run("hierarchical", &y.s);
                uint32_t again = synth_moves(&y, h3);
                printf("  hierarchical on its own result: %u moves\n", again);
                ASSERT_EQ(again, 0);
                free(g), free(h), free(h2), free(h3);
                synth_free(&y);
        }
        lbomp__topo_free(&t);
}

/* Without links, on one node, hierarchical is greedy over the node: as balanced as greedy. */
static void hierarchical_one_node(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 1000, 8, 1, SYNTH_LBTEST, 0, 7), 0);
        uint32_t *g = run("greedy", &y.s), *h = run("hierarchical", &y.s);
        ASSERT(memcmp(g, h, y.s.ntasks * sizeof *g) == 0);
        free(g), free(h);
        synth_free(&y);
}

/* Random snapshots (nodes without workers, zero costs, background loads, home nodes, random
 * links and distances): hierarchical always gives a valid and deterministic plan, and moves across
 * nodes at most what must cross plus one task per node. */
static void hierarchical_fuzz(void)
{
        struct lbomp__rng r;
        lbomp__rng_seed(&r, 2024);
        for (int round = 0; round < 300; round++) {
                uint32_t N = 1 + lbomp__rng_below(&r, 6), P = 1 + lbomp__rng_below(&r, 24);
                uint32_t T = lbomp__rng_below(&r, 300), L = T > 1 ? lbomp__rng_below(&r, 3 * T) : 0;
                double *cost = calloc(T + 1, sizeof *cost), *bg = calloc(P, sizeof *bg);
                double *dist = calloc(N * N, sizeof *dist), *lbytes = calloc(2 * L + 1, 8);
                uint32_t *worker = calloc(T + 1, 4), *id = calloc(T + 1, 4),
                         *off = calloc(T + 2, 4);
                uint32_t *dst = calloc(2 * L + 1, 4), *la = calloc(L + 1, 4),
                         *lb2 = calloc(L + 1, 4);
                uint32_t *fill = calloc(T + 1, 4), *wtoff = calloc(P + 1, 4),
                         *wt = calloc(T + 1, 4);
                uint64_t *bytes = calloc(T + 1, 8);
                int32_t *home = calloc(T + 1, 4), *wnode = calloc(P, 4);
                for (uint32_t a = 0; a < N; a++)
                        for (uint32_t b = 0; b <= a; b++)
                                dist[a * N + b] = dist[b * N + a] =
                                        a == b ? 1.0 : 1.0 + 4 * lbomp__rng_unit(&r);
                for (uint32_t w = 0; w < P; w++) {
                        wnode[w] = (int32_t)lbomp__rng_below(&r, N);
                        bg[w] = lbomp__rng_below(&r, 4) == 0 ? lbomp__rng_unit(&r) : 0;
                }
                double maxc = 0;
                for (uint32_t t = 0; t < T; t++) {
                        double u = lbomp__rng_unit(&r);
                        cost[t] = lbomp__rng_below(&r, 10) == 0 ? 0 : u * u * u;
                        maxc = cost[t] > maxc ? cost[t] : maxc;
                        worker[t] = lbomp__rng_below(&r, 4) ? lbomp__rng_below(&r, P) : 0;
                        id[t] = t;
                        bytes[t] = lbomp__rng_below(&r, 4096);
                        home[t] = lbomp__rng_below(&r, 3) ? -1 : (int32_t)lbomp__rng_below(&r, N);
                }
                for (uint32_t i = 0; i < L; i++) {
                        la[i] = lbomp__rng_below(&r, T);
                        do
                                lb2[i] = lbomp__rng_below(&r, T);
                        while (lb2[i] == la[i]);
                        off[la[i] + 1]++, off[lb2[i] + 1]++;
                }
                for (uint32_t t = 0; t < T; t++)
                        off[t + 1] += off[t];
                memcpy(fill, off, T * sizeof *fill);
                for (uint32_t i = 0; i < L; i++) {
                        double by = (double)lbomp__rng_below(&r, 2000);
                        dst[fill[la[i]]] = lb2[i], lbytes[fill[la[i]]++] = by;
                        dst[fill[lb2[i]]] = la[i], lbytes[fill[lb2[i]]++] = by;
                }
                for (uint32_t t = 0; t < T; t++)
                        wtoff[worker[t] + 1]++;
                for (uint32_t w = 0; w < P; w++)
                        wtoff[w + 1] += wtoff[w];
                uint32_t *cur = calloc(P + 1, 4);
                memcpy(cur, wtoff, P * 4);
                for (uint32_t t = 0; t < T; t++)
                        wt[cur[worker[t]]++] = t;
                free(cur);
                struct lbomp__params params = {.tolerance = 0.05, .refine_factor = 1.05};
                struct lbomp__snap sn = {.ntasks = T,
                                         .nworkers = P,
                                         .nnodes = N,
                                         .cost = cost,
                                         .worker = worker,
                                         .bytes = bytes,
                                         .home = home,
                                         .id = id,
                                         .link_off = off,
                                         .link_dst = dst,
                                         .link_bytes = lbytes,
                                         .wtask_off = wtoff,
                                         .wtask = wt,
                                         .bg = bg,
                                         .wnode = wnode,
                                         .dist = dist,
                                         .params = &params};
                uint32_t *h = run("hierarchical", &sn), *h2 = run("hierarchical", &sn);
                ASSERT(memcmp(h, h2, T * sizeof *h) == 0);
                struct lbomp__moves m;
                lbomp__moves(&sn, h, &m);
                double need = must_cross(&sn);
                if (m.node_load > need + N * maxc + 1e-9)
                        FAIL("round %d: %.6g crossed nodes, %.6g must (max task %.6g, %u nodes)",
                             round, m.node_load, need, maxc, N);
                free(h), free(h2), free(cost), free(bg), free(dist), free(lbytes), free(worker);
                free(id), free(off), free(dst), free(la), free(lb2), free(fill), free(wtoff);
                free(wt), free(bytes), free(home), free(wnode);
        }
        printf("hierarchical: 300 random snapshots, valid, deterministic, crossing bounded\n");
}

int main(int argc, char **argv)
{
        if (argc < 3)
                FAIL("usage: test_locality TINY_XML PROFILES_DIR");
        tiny = argv[1];
        profiles = argv[2];
        struct lbomp__topo t;
        tiny_topology(&t);
        cost_model(&t);
        tie_breaks(&t);
        lbomp__topo_free(&t);
        live_record();
        hierarchical_vs_greedy("epyc-7742-2s-nps4.xml");
        hierarchical_vs_greedy("xeon-8480-2s-snc4.xml");
        hierarchical_one_node();
        hierarchical_fuzz();
        printf("locality: ok\n");
        return 0;
}
