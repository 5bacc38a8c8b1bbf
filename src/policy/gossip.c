/*
 * gossip.c — epidemic push of (id, load) entries, after GrapevineLB (Menon & Kalé, SC'13) and
 * Charm++'s DistributedLB: a worker with news sends it to `fanout` random others; receivers merge
 * (newer version wins) and forward what is new to them. Each worker sends at most
 * LBOMP__GOSSIP_BUDGET times per phase, which bounds it; the phase ends when the framework detects
 * that no message is in flight. Forwarding only news — the entries that entered the view since
 * the last send, not the whole list DistributedLB sends on every receipt — and bounding the views
 * (trim below) make gossip cost O(P) memory and O(P × view) entries sent per phase: at 16,384
 * workers, whole lists were 2.9 million messages of 2 KiB per LB step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gossip.h"

/* In an entry's version: news here, not yet forwarded (never set in what is sent). */
#define FRESH (1u << 31)

int lbomp__gossip_init(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self,
                       uint32_t kind)
{
        uint32_t P = lbomp__dc_snap(dc)->nworkers, lg = 0;
        while ((1ull << lg) < P)
                lg++;
        /* A later phase of the same LB step reuses the lists of the last one. */
        struct lbomp__gentry *e = g->dc == dc ? g->e : NULL, *tmp = g->dc == dc ? g->tmp : NULL;
        uint32_t cap = g->dc == dc ? g->cap : 0;
        memset(g, 0, sizeof *g);
        g->e = e;
        g->tmp = tmp;
        g->cap = cap;
        g->kind = kind;
        g->budget = LBOMP__GOSSIP_BUDGET(lg);
        g->max = P;
        g->dc = dc;
        g->self = self;
        return 0;
}

/* Lists start small and double (in the worker's arena, freed with the run). Merges keep at most
 * LBOMP__GOSSIP_VIEW entries (below); the sender's view may grow past that by the workers that
 * reply to its offers, never past P. */
static int reserve(struct lbomp__gossip *g, uint32_t need)
{
        if (need <= g->cap)
                return 0;
        uint32_t cap = g->cap ? 2 * g->cap : 16;
        cap = cap < need ? need : cap;
        cap = cap > g->max ? g->max : cap;
        struct lbomp__gentry *e = lbomp__dc_alloc(g->dc, g->self, (size_t)cap * sizeof *e);
        struct lbomp__gentry *t = lbomp__dc_alloc(g->dc, g->self, (size_t)cap * sizeof *t);
        if (!e || !t)
                return -ENOMEM;
        if (g->n)
                memcpy(e, g->e, (size_t)g->n * sizeof *e);
        g->e = e;
        g->tmp = t;
        g->cap = cap;
        return 0;
}

int64_t lbomp__gossip_find(const struct lbomp__gossip *g, uint32_t id)
{
        uint32_t lo = 0, hi = g->n;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (g->e[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < g->n && g->e[lo].id == id ? (int64_t)lo : -1;
}

int lbomp__gossip_set(struct lbomp__gossip *g, uint32_t id, uint32_t ver, double load, double spare,
                      double small)
{
        struct lbomp__gentry one = {
                .id = id, .ver = ver, .load = load, .spare = spare, .small = small};
        int64_t i = lbomp__gossip_find(g, id);
        if (i >= 0) {
                if (ver >= (g->e[i].ver & ~FRESH)) {
                        bool news = ver > (g->e[i].ver & ~FRESH) || load != g->e[i].load;
                        one.ver |= news || (g->e[i].ver & FRESH) ? FRESH : 0;
                        g->changed |= news;
                        g->e[i] = one;
                }
                return 0;
        }
        one.ver |= FRESH;
        if (g->n >= g->max || reserve(g, g->n + 1) < 0)
                return -ENOMEM; /* more ids than workers cannot happen */
        uint32_t at = 0;
        while (at < g->n && g->e[at].id < id)
                at++;
        memmove(&g->e[at + 1], &g->e[at], (g->n - at) * sizeof *g->e);
        g->e[at] = one;
        g->n++;
        g->changed = true;
        return 0;
}

/* The rank of worker id in self's view: a hash of both, so that every worker keeps its own
 * sample of the machine (splitmix64's finaliser). */
uint64_t lbomp__gossip_rank(uint32_t self, uint32_t id)
{
        uint64_t z = ((uint64_t)self << 32 | id) + 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

struct ranked {
        uint64_t rank;
        uint32_t at;
};

static bool rank_before(const struct ranked *a, const struct ranked *b)
{
        return a->rank < b->rank || (a->rank == b->rank && a->at < b->at);
}

static void swap_ranked(struct ranked *a, struct ranked *b)
{
        struct ranked x = *a;
        *a = *b;
        *b = x;
}

/* Quickselect (Lomuto, the middle as pivot: deterministic): the k entries of lowest rank end up
 * first, in no order. Expected O(n). Ranks are distinct (ties go by position). */
static void select_lowest(struct ranked *r, uint32_t n, uint32_t k)
{
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                swap_ranked(&r[lo + (hi - lo) / 2], &r[hi - 1]);
                uint32_t store = lo;
                for (uint32_t i = lo; i < hi - 1; i++)
                        if (rank_before(&r[i], &r[hi - 1]))
                                swap_ranked(&r[i], &r[store++]);
                swap_ranked(&r[store], &r[hi - 1]);
                if (k == store || k == store + 1)
                        return;
                if (k < store)
                        hi = store;
                else
                        lo = store + 1;
        }
}

/*
 * A view of at most LBOMP__GOSSIP_VIEW entries: the worker's own entry, then those of lowest rank
 * (a sample that differs from worker to worker). Bounding the views is what keeps gossip linear
 * in P: with whole lists, P workers each end up knowing about P/2 receivers (P² entries held and
 * copied; 8.6 GB at 16,384 workers). A sender needs only a few receivers per pack it sends, and
 * different senders sampling different receivers spreads their offers. GrapevineLB gossips whole
 * lists; this is where we depart (doc/policies.md).
 */
static void trim(struct lbomp__gossip *g)
{
        if (g->n <= LBOMP__GOSSIP_VIEW)
                return;
        struct ranked r[4 * LBOMP__GOSSIP_VIEW], *rk = r;
        if (g->n > 4 * LBOMP__GOSSIP_VIEW)
                rk = lbomp__dc_alloc(g->dc, g->self, (size_t)g->n * sizeof *rk);
        if (!rk)
                return; /* out of memory: keep the longer list, correct if larger */
        for (uint32_t i = 0; i < g->n; i++)
                rk[i] = (struct ranked){
                        .rank = g->e[i].id == g->self ? 0
                                                      : lbomp__gossip_rank(g->self, g->e[i].id) | 1,
                        .at = i};
        select_lowest(rk, g->n, LBOMP__GOSSIP_VIEW);
        uint8_t keep[4 * LBOMP__GOSSIP_VIEW] = {0}, *kp = keep;
        if (g->n > sizeof keep) {
                kp = lbomp__dc_alloc(g->dc, g->self, g->n);
                if (!kp)
                        return;
        }
        for (uint32_t i = 0; i < LBOMP__GOSSIP_VIEW; i++)
                kp[rk[i].at] = 1;
        uint32_t k = 0;
        for (uint32_t i = 0; i < g->n; i++)
                if (kp[i])
                        g->e[k++] = g->e[i];
        g->n = k;
}

/* Linear merge of two id-sorted lists into tmp, then swap, then trim. */
static int merge(struct lbomp__gossip *g, const struct lbomp__gentry *in, uint32_t m)
{
        uint64_t need = (uint64_t)g->n + m;
        if (reserve(g, need < g->max ? (uint32_t)need : g->max) < 0)
                return -ENOMEM;
        uint32_t i = 0, j = 0, k = 0;
        bool news = false;
        while ((i < g->n || j < m) && k < g->cap) {
                if (j == m || (i < g->n && g->e[i].id < in[j].id)) {
                        g->tmp[k++] = g->e[i++];
                } else if (i == g->n || in[j].id < g->e[i].id) {
                        g->tmp[k] = in[j++];
                        g->tmp[k++].ver |= FRESH; /* new here: news to forward if it stays */
                } else {
                        struct lbomp__gentry a = g->e[i++], b = in[j++];
                        if ((b.ver & ~FRESH) > (a.ver & ~FRESH)) {
                                b.ver |= FRESH;
                                a = b;
                        }
                        g->tmp[k++] = a;
                }
        }
        struct lbomp__gentry *x = g->e;
        g->e = g->tmp;
        g->tmp = x;
        g->n = k;
        trim(g);
        for (uint32_t q = 0; q < g->n && !news; q++)
                news = g->e[q].ver & FRESH;
        g->changed = news;
        return 0;
}

int lbomp__gossip_receive(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__msg *msg;
        size_t n = lbomp__dc_inbox(dc, self, &msg);
        for (size_t i = 0; i < n; i++) {
                if (msg[i].kind != g->kind)
                        continue;
                int rc = merge(g, msg[i].data, msg[i].len / (uint32_t)sizeof(struct lbomp__gentry));
                if (rc < 0)
                        return rc;
        }
        return 0;
}

int lbomp__gossip_send(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t P = s->nworkers;
        if (!g->changed || !g->budget || !g->n || P < 2)
                return 0;
        /* The news: the entries fresh here, sent without the mark. */
        struct lbomp__gentry buf[2 * LBOMP__GOSSIP_VIEW], *out = buf;
        if (g->n > 2 * LBOMP__GOSSIP_VIEW &&
            !(out = lbomp__dc_alloc(dc, self, (size_t)g->n * sizeof *out)))
                return -ENOMEM;
        uint32_t n = 0;
        for (uint32_t i = 0; i < g->n; i++)
                if (g->e[i].ver & FRESH) {
                        g->e[i].ver &= ~FRESH;
                        out[n++] = g->e[i];
                }
        g->changed = false;
        if (!n)
                return 0;
        uint32_t f = s->params && s->params->fanout > 0 ? (uint32_t)s->params->fanout : 2;
        if (f > P - 1)
                f = P - 1;
        struct lbomp__rng *r = lbomp__dc_rng(dc, self);
        uint32_t to[64];
        for (uint32_t k = 0; k < f; k++) {
                uint32_t t;
                bool dup;
                do { /* a random other worker, distinct from the ones already drawn */
                        t = lbomp__rng_below(r, P - 1);
                        t += t >= self;
                        dup = false;
                        for (uint32_t q = 0; q < k; q++)
                                dup |= to[q] == t;
                } while (dup);
                to[k] = t;
                int rc = lbomp__dc_send(dc, self, t, g->kind, out, (size_t)n * sizeof *out);
                if (rc < 0)
                        return rc;
        }
        g->budget--;
        return 0;
}

int lbomp__gossip_round(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self, bool sender)
{
        if (lbomp__dc_quiet(dc, self))
                return LBOMP__GOSSIP_OVER;
        int rc;
        if ((rc = lbomp__gossip_receive(g, dc, self)) < 0 ||
            (rc = lbomp__gossip_send(g, dc, self)) < 0)
                return rc;
        return sender ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
}
