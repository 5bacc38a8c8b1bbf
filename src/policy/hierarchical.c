/*
 * hierarchical.c — topology-aware balancing in two levels that follow the machine (our extension,
 * after Pilla et al.'s NUMA-aware balancers). Level 1 balances the NUMA nodes, refine-like: only
 * the load above f × a node's share leaves it, and the tasks that leave are those whose links (and
 * data) point to the node they go to, so that the link cost grows as little as it can. Level 2
 * balances each node's workers with greedy, every node on its own: those calls share nothing and
 * may run on one thread per node. With speeds, level 1 counts work (a worker's load × its speed,
 * so that a task moves its cost whatever the workers) against each node's share, the ideal time
 * × the node's capacity (Σ of its speeds): a node twice as fast takes twice the work.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"

/* A candidate move out of a heavy node. Heap order: locality change ascending (most gain first),
 * then cost descending (fewer moves), then task index. */
struct cand {
        double delta;
        double cost;
        uint32_t t;
};

struct cheap {
        struct cand *e;
        uint32_t n, cap;
        bool built;
};

struct hier {
        const struct lbomp__snap *s;
        uint32_t N;
        uint32_t *nw;      /* [N] workers on each node */
        double *cap;       /* [N] capacity of each node: Σ of its workers' speeds */
        double *load0;     /* [N] node loads of the current mapping, in work: Σ speed × load */
        double *load;      /* [N] node loads during an attempt */
        double *target;    /* [N] the node's share: the ideal time × its capacity */
        double limit_f;    /* factor of the attempt */
        int32_t *node;     /* [T] node of each task during an attempt */
        uint8_t *moved;    /* [T] */
        uint8_t *light;    /* [N] may receive */
        struct cheap *hp;  /* [N] candidates of each node that gives */
        double *acc;       /* [N] scratch: link bytes per neighbour node, zero between uses */
        uint8_t *mark;     /* [N] scratch: node already in touched[], zero between uses */
        uint32_t *touched; /* [N] scratch */
};

static bool before(const struct cand *a, const struct cand *b)
{
        if (a->delta != b->delta)
                return a->delta < b->delta;
        if (a->cost != b->cost)
                return a->cost > b->cost;
        return a->t < b->t;
}

static int push(struct cheap *h, struct cand c)
{
        if (h->n == h->cap) {
                uint32_t cap = h->cap ? 2 * h->cap : 64;
                struct cand *e = realloc(h->e, cap * sizeof *e);
                if (!e)
                        return -ENOMEM;
                h->e = e;
                h->cap = cap;
        }
        uint32_t i = h->n++;
        while (i > 0 && before(&c, &h->e[(i - 1) / 2])) {
                h->e[i] = h->e[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        h->e[i] = c;
        return 0;
}

static struct cand pop(struct cheap *h)
{
        struct cand top = h->e[0], x = h->e[--h->n];
        uint32_t i = 0;
        for (;;) {
                uint32_t l = 2 * i + 1, m = l;
                if (l >= h->n)
                        break;
                if (l + 1 < h->n && before(&h->e[l + 1], &h->e[l]))
                        m = l + 1;
                if (!before(&h->e[m], &x))
                        break;
                h->e[i] = h->e[m];
                i = m;
        }
        if (h->n)
                h->e[i] = x;
        return top;
}

/*
 * Best destination for moving task t out of node h: among the light nodes it fits on, the one
 * where the change of the locality cost is smallest (links: bytes × distance to each neighbour's
 * node; data: its bytes × distance to its home node when known), then the nearest to h, then the
 * least loaded per worker. Returns the node (-1 when none fits) and the change in *delta.
 */
static int32_t best_dest(struct hier *r, uint32_t t, int32_t h, double *delta)
{
        const struct lbomp__snap *s = r->s;
        int32_t N = (int32_t)r->N;
        uint32_t nt = 0;
        for (uint32_t k = s->link_off ? s->link_off[t] : 0; s->link_off && k < s->link_off[t + 1];
             k++) {
                int32_t nb = r->node[s->link_dst[k]];
                if (!r->mark[nb])
                        r->mark[nb] = 1, r->touched[nt++] = (uint32_t)nb;
                r->acc[nb] += s->link_bytes[k];
        }
        if (s->home && s->home[t] >= 0 && s->home[t] < N) {
                int32_t hn = s->home[t];
                if (!r->mark[hn])
                        r->mark[hn] = 1, r->touched[nt++] = (uint32_t)hn;
                r->acc[hn] += (double)s->bytes[t];
        }
        double base = 0;
        for (uint32_t i = 0; i < nt; i++)
                base += r->acc[r->touched[i]] * s->dist[h * N + (int32_t)r->touched[i]];
        int32_t best = -1;
        double bv = 0, bd = 0, bl = 0;
        for (int32_t d = 0; d < N; d++) {
                if (!r->light[d] || r->load[d] + s->cost[t] > r->limit_f * r->target[d])
                        continue;
                double v = -base;
                for (uint32_t i = 0; i < nt; i++)
                        v += r->acc[r->touched[i]] * s->dist[d * N + (int32_t)r->touched[i]];
                double dd = s->dist[h * N + d], dl = r->load[d] / r->cap[d];
                if (best < 0 || v < bv || (v == bv && (dd < bd || (dd == bd && dl < bl))))
                        best = d, bv = v, bd = dd, bl = dl;
        }
        for (uint32_t i = 0; i < nt; i++)
                r->acc[r->touched[i]] = 0, r->mark[r->touched[i]] = 0;
        /* Sums in another order differ in the last bits: a change below this is no change. */
        *delta = fabs(bv) < 1e-9 * (base + 1) ? 0 : bv;
        return best;
}

/* Puts task t (on node h) in h's candidates, with its current best move. Tasks that fit nowhere
 * are left out: light nodes only fill up, so they will not fit later in this attempt. */
static int offer(struct hier *r, uint32_t t, int32_t h)
{
        double delta;
        if (r->moved[t] || r->s->cost[t] <= 0 || best_dest(r, t, h, &delta) < 0)
                return 0;
        return push(&r->hp[h], (struct cand){.delta = delta, .cost = r->s->cost[t], .t = t});
}

static int build(struct hier *r, int32_t h)
{
        r->hp[h].n = 0;
        r->hp[h].built = true;
        for (uint32_t t = 0; t < r->s->ntasks; t++)
                if (r->node[t] == h) {
                        int rc = offer(r, t, h);
                        if (rc < 0)
                                return rc;
                }
        return 0;
}

/* Level 1 with factor f, from the original mapping. 1 when no node is left above f × its share,
 * 0 when stuck, or -ENOMEM. */
static int attempt(struct hier *r, double f, uint32_t *moves)
{
        const struct lbomp__snap *s = r->s;
        int32_t N = (int32_t)r->N;
        r->limit_f = f;
        memcpy(r->load, r->load0, r->N * sizeof *r->load);
        for (uint32_t t = 0; t < s->ntasks; t++)
                r->node[t] = s->wnode[s->worker[t]];
        memset(r->moved, 0, s->ntasks);
        for (int32_t n = 0; n < N; n++) {
                r->light[n] = r->nw[n] && r->load[n] < r->target[n];
                r->hp[n].built = false;
                r->hp[n].n = 0;
        }
        *moves = 0;
        for (;;) {
                int32_t h = -1;
                for (int32_t n = 0; n < N; n++)
                        if (r->nw[n] && r->load[n] > f * r->target[n] &&
                            (h < 0 || r->load[n] / r->cap[n] > r->load[h] / r->cap[h]))
                                h = n;
                if (h < 0)
                        return 1;
                int rc;
                if (!r->hp[h].built && (rc = build(r, h)) < 0)
                        return rc;
                uint32_t t = UINT32_MAX;
                int32_t d = -1;
                while (r->hp[h].n) {
                        struct cand c = pop(&r->hp[h]);
                        if (r->moved[c.t] || r->node[c.t] != h)
                                continue;
                        double delta;
                        d = best_dest(r, c.t, h, &delta);
                        if (d < 0)
                                continue;
                        if (delta != c.delta) { /* stale: the neighbourhood changed */
                                c.delta = delta;
                                if ((rc = push(&r->hp[h], c)) < 0)
                                        return rc;
                                continue;
                        }
                        t = c.t;
                        break;
                }
                if (t == UINT32_MAX)
                        return 0;
                r->load[h] -= s->cost[t];
                r->load[d] += s->cost[t];
                r->node[t] = d;
                r->moved[t] = 1;
                r->light[h] = 0; /* a node that gives never receives */
                if (r->load[d] >= r->target[d])
                        r->light[d] = 0;
                (*moves)++;
                /* The neighbours' best moves changed: offer them again (old entries go stale). */
                for (uint32_t k = s->link_off ? s->link_off[t] : 0;
                     s->link_off && k < s->link_off[t + 1]; k++) {
                        uint32_t b = s->link_dst[k];
                        int32_t nb = r->node[b];
                        if (!r->moved[b] && r->hp[nb].built && (rc = offer(r, b, nb)) < 0)
                                return rc;
                }
        }
}

/* Level 2 for node n: greedy over its workers, starting from their background loads. A node that
 * level 1 left alone and whose workers are all within the tolerance above the bound L* keeps its
 * mapping (dest arrives filled with it); free tasks stay. Touches only dest[] of the node's tasks:
 * independent of every other node. */
static int balance_node(const struct lbomp__snap *s, const uint32_t *tasks, uint32_t ntasks,
                        int32_t n, bool changed, const double *wload, double lstar, uint32_t *dest)
{
        uint32_t nw = 0;
        double max = 0;
        for (uint32_t w = 0; w < s->nworkers; w++)
                if (s->wnode[w] == n) {
                        nw++;
                        max = wload[w] > max ? wload[w] : max;
                }
        double tol = s->params ? s->params->tolerance : 0.05;
        if (!changed && max <= (1 + tol) * lstar)
                return 0;
        uint32_t *workers = malloc(nw * sizeof *workers + 1);
        double *load0 = malloc(nw * sizeof *load0 + 1);
        int rc = -ENOMEM;
        if (workers && load0) {
                uint32_t k = 0;
                for (uint32_t w = 0; w < s->nworkers; w++)
                        if (s->wnode[w] == n) {
                                workers[k] = w;
                                load0[k++] = s->bg ? s->bg[w] : 0;
                        }
                rc = lbomp__greedy_assign(s, tasks, ntasks, workers, nw, load0, dest);
        }
        free(workers);
        free(load0);
        return rc;
}

static int hierarchical_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        uint32_t N = s->nnodes, P = s->nworkers, T = s->ntasks;
        struct hier r = {.s = s, .N = N};
        uint32_t *order = lbomp__tasks_by_cost_desc(s);
        uint32_t *by_node = malloc((size_t)T * sizeof *by_node + 1);
        uint32_t *node_off = calloc(N + 1, sizeof *node_off);
        double *wload = malloc(P * sizeof *wload + 1);
        r.nw = calloc(N, sizeof *r.nw);
        r.cap = calloc(N, sizeof *r.cap);
        r.load0 = calloc(N, sizeof *r.load0);
        r.load = calloc(N, sizeof *r.load);
        r.target = calloc(N, sizeof *r.target);
        r.node = malloc((size_t)T * sizeof *r.node + 1);
        r.moved = malloc((size_t)T + 1);
        r.light = calloc(N, 1);
        r.hp = calloc(N, sizeof *r.hp);
        r.acc = calloc(N, sizeof *r.acc);
        r.mark = calloc(N, 1);
        r.touched = malloc(N * sizeof *r.touched);
        int rc = 0;
        if (!order || !by_node || !node_off || !wload || !r.nw || !r.cap || !r.load0 || !r.load ||
            !r.target || !r.node || !r.moved || !r.light || !r.hp || !r.acc || !r.mark ||
            !r.touched) {
                rc = -ENOMEM;
                goto out;
        }
        double avg, max;
        if (lbomp__within_tolerance(s, wload, &max))
                goto out; /* moves must pay: the mapping stays */
        lbomp__snap_lambda(s, wload, NULL, &avg);
        double lstar = lbomp__bound(s, avg);
        for (uint32_t w = 0; w < P; w++) {
                r.nw[s->wnode[w]]++;
                r.cap[s->wnode[w]] += lbomp__speed(s, w);
                r.load0[s->wnode[w]] += lbomp__speed(s, w) * wload[w];
        }
        double worst = 0; /* highest node load over its share */
        for (uint32_t n = 0; n < N; n++) {
                r.target[n] = avg * r.cap[n];
                if (r.nw[n] && r.target[n] > 0 && r.load0[n] / r.target[n] > worst)
                        worst = r.load0[n] / r.target[n];
        }
        /* Level 1, loosening the factor as refine does when it gets stuck. */
        double f0 = 1 + (s->params ? s->params->tolerance : 0.05);
        uint32_t moves = 0;
        st->attempts = 1;
        st->factor = f0;
        if ((rc = attempt(&r, f0, &moves)) == 0) {
                long kmax = (long)floor((worst - f0) / 0.01) + 1, lo = 0, hi = kmax;
                while (hi - lo > 1) {
                        long mid = lo + (hi - lo) / 2;
                        st->attempts++;
                        if ((rc = attempt(&r, f0 + mid * 0.01, &moves)) < 0)
                                goto out;
                        if (rc)
                                hi = mid;
                        else
                                lo = mid;
                }
                st->attempts++;
                st->factor = f0 + hi * 0.01;
                if ((rc = attempt(&r, st->factor, &moves)) <= 0) {
                        rc = rc < 0 ? rc : -EAGAIN; /* cannot happen: f > worst moves nothing */
                        goto out;
                }
        }
        if (rc < 0)
                goto out;
        rc = 0;
        /* Level 2: each node's tasks, heaviest first, over its own workers. */
        for (uint32_t t = 0; t < T; t++)
                node_off[r.node[t] + 1]++;
        for (uint32_t n = 0; n < N; n++)
                node_off[n + 1] += node_off[n];
        memcpy(r.touched, node_off, N * sizeof *r.touched); /* fill cursors */
        for (uint32_t k = 0; k < T; k++)
                by_node[r.touched[r.node[order[k]]]++] = order[k];
        uint8_t *changed = r.mark; /* zero after level 1 */
        for (uint32_t t = 0; t < T; t++)
                if (r.moved[t])
                        changed[r.node[t]] = changed[s->wnode[s->worker[t]]] = 1;
        for (uint32_t n = 0; n < N && rc == 0; n++) /* independent: one thread per node would do */
                if (node_off[n + 1] > node_off[n])
                        rc = balance_node(s, by_node + node_off[n], node_off[n + 1] - node_off[n],
                                          (int32_t)n, changed[n], wload, lstar, dest);
        if (rc == 0)
                lbomp__keep_unless_lower(s, dest, max, wload);
out:
        for (uint32_t n = 0; r.hp && n < N; n++)
                free(r.hp[n].e);
        free(order);
        free(by_node);
        free(node_off);
        free(wload);
        free(r.nw);
        free(r.cap);
        free(r.load0);
        free(r.load);
        free(r.target);
        free(r.node);
        free(r.moved);
        free(r.light);
        free(r.hp);
        free(r.acc);
        free(r.mark);
        free(r.touched);
        return rc;
}

const struct lbomp__policy lbomp__policy_hierarchical = {
        .name = "hierarchical",
        .help = "centralized: balance NUMA nodes first (moving only the load that must cross, "
                "along links), then each node's workers with greedy",
        .kind = LBOMP__CENTRAL,
        .plan = hierarchical_plan,
};
