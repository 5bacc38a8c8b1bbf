/*
 * distributed.c — decentralized per-task balancing (GrapevineLB, Menon & Kalé SC'13; Charm++
 * DistributedLB), as POLICIES.md restates it: underloaded workers gossip their load; an
 * overloaded worker offers its tasks one by one, smallest first, each to a receiver drawn with
 * probability proportional to its free room under thr = (1 + v) × avg; the receiver accepts iff it
 * stays within thr. One offer and one reply per task: the baseline packdrop is measured against.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../mailbox.h"
#include "gossip.h"

enum { K_GOSSIP, K_OFFER, K_ACCEPT, K_REJECT };
static const char *const kinds[] = {"gossip", "offer", "accept", "reject", NULL};

enum { PH_START, PH_ROLES, PH_GOSSIP, PH_SEND, PH_IDLE };

struct offer {
        uint32_t idx; /* position in the sender's order */
        uint32_t pad;
        double cost;
};

struct reply {
        uint32_t idx;
        uint32_t pad;
        double load; /* the receiver's load after its decision */
};

struct ds {
        int phase;
        bool sender;
        double load, avg, thr;
        struct lbomp__gossip g;
        uint32_t m;       /* own tasks */
        uint32_t *order;  /* own tasks, smallest first */
        uint8_t *tries;   /* [m] offers made for each task */
        uint32_t next;    /* first task not offered yet */
        uint32_t kept;    /* tasks still here, counting pending offers as gone */
        uint32_t pending; /* offers awaiting a reply */
        uint32_t rejections;
        uint32_t nknown; /* receivers known when the transfer phase started */
        double *w;       /* [P] scratch: cumulative draw weights */
};

static bool smaller(const double *cost, uint32_t a, uint32_t b)
{
        return cost[a] < cost[b] || (cost[a] == cost[b] && a < b);
}

static int by_cost(const void *a, const void *b, void *arg)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return smaller(arg, x, y) ? -1 : smaller(arg, y, x) ? 1 : 0;
}

/* A known receiver with room for `cost`, drawn with probability ∝ (thr − load) / thr. */
static uint32_t draw(struct ds *st, struct lbomp__dctx *dc, uint32_t self, double cost)
{
        double total = 0;
        for (uint32_t i = 0; i < st->g.n; i++) {
                const struct lbomp__gentry *e = &st->g.e[i];
                double wt = 0;
                if (e->id != self && e->load + cost <= st->thr)
                        wt = (st->thr - e->load) / st->thr;
                total += wt;
                st->w[i] = total;
        }
        if (!(total > 0))
                return UINT32_MAX;
        double x = lbomp__rng_unit(lbomp__dc_rng(dc, self)) * total;
        for (uint32_t i = 0; i < st->g.n; i++)
                if (x < st->w[i])
                        return i;
        return st->g.n - 1;
}

/* Offers task order[idx] to a drawn receiver; false when no receiver has room for it. */
static int offer(struct ds *st, struct lbomp__dctx *dc, uint32_t self, uint32_t idx, bool *sent)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        double c = s->cost[st->order[idx]];
        *sent = false;
        uint32_t i = draw(st, dc, self, c);
        if (i == UINT32_MAX)
                return 0;
        struct offer o = {.idx = idx, .cost = c};
        int rc = lbomp__dc_send(dc, self, st->g.e[i].id, K_OFFER, &o, sizeof o);
        if (rc < 0)
                return rc;
        st->g.e[i].load += c; /* the sender's view, as DistributedLB keeps it */
        st->load -= c;
        st->kept--;
        st->pending++;
        st->tries[idx]++;
        *sent = true;
        return 0;
}

static int start(struct ds *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t lo = s->wtask_off[self];
        st->m = s->wtask_off[self + 1] - lo;
        st->load = s->bg ? s->bg[self] : 0;
        for (uint32_t i = 0; i < st->m; i++)
                st->load += s->cost[s->wtask[lo + i]];
        lbomp__dc_reduce(dc, self, 0, LBOMP__RED_SUM, st->load);
        lbomp__dc_reduce(dc, self, 1, LBOMP__RED_MAX, st->load);
        st->phase = PH_ROLES;
        return LBOMP__ROUND_BUSY;
}

static int roles(struct ds *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        double v = s->params ? s->params->tolerance : 0.05;
        st->avg = lbomp__dc_reduced(dc, 0) / s->nworkers;
        st->thr = (1 + v) * st->avg;
        if (!(st->avg > 0) || lbomp__dc_reduced(dc, 1) <= st->thr) {
                st->phase = PH_IDLE; /* nobody above the threshold (DistributedLB ends early) */
                return LBOMP__ROUND_DONE;
        }
        int rc = lbomp__gossip_init(&st->g, dc, self, K_GOSSIP);
        if (rc < 0)
                return rc;
        if (st->load > st->thr && st->m >= 2) {
                uint32_t lo = s->wtask_off[self];
                st->order = lbomp__dc_alloc(dc, self, (size_t)st->m * sizeof *st->order);
                st->tries = lbomp__dc_alloc(dc, self, st->m);
                st->w = lbomp__dc_alloc(dc, self, (size_t)s->nworkers * sizeof *st->w);
                if (!st->order || !st->tries || !st->w)
                        return -ENOMEM;
                memcpy(st->order, &s->wtask[lo], (size_t)st->m * sizeof *st->order);
                qsort_r(st->order, st->m, sizeof *st->order, by_cost, (void *)s->cost);
                st->kept = st->m;
                st->sender = true;
        } else if (st->load < st->avg) {
                if ((rc = lbomp__gossip_set(&st->g, self, 0, st->load)) < 0)
                        return rc;
        }
        st->phase = PH_GOSSIP;
        if ((rc = lbomp__gossip_send(&st->g, dc, self)) < 0)
                return rc;
        return st->sender ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
}

/* Smallest first while the load is above thr, keeping one task, and stopping before a move that
 * would take the load below thr (POLICIES.md) or when no known receiver has room. */
static int transfer(struct ds *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        st->nknown = 0;
        for (uint32_t i = 0; i < st->g.n; i++)
                st->nknown += st->g.e[i].id != self;
        while (st->load > st->thr && st->kept >= 2 && st->next < st->m) {
                double c = s->cost[st->order[st->next]];
                if (st->load - c < st->thr)
                        break;
                bool sent;
                int rc = offer(st, dc, self, st->next, &sent);
                if (rc < 0)
                        return rc;
                if (!sent)
                        break; /* smallest first: no larger task fits either */
                st->next++;
        }
        return 0;
}

static int exchange(struct ds *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t *dest = lbomp__dc_dest(dc);
        const struct lbomp__msg *msg;
        size_t n = lbomp__dc_inbox(dc, self, &msg);
        for (size_t i = 0; i < n; i++) {
                const struct lbomp__msg *m = &msg[i];
                int rc = 0;
                if (m->kind == K_OFFER) {
                        struct offer o;
                        memcpy(&o, m->data, sizeof o);
                        bool ok = st->load + o.cost <= st->thr; /* checked and taken together */
                        if (ok)
                                st->load += o.cost;
                        struct reply r = {.idx = o.idx, .load = st->load};
                        rc = lbomp__dc_send(dc, self, m->from, ok ? K_ACCEPT : K_REJECT, &r,
                                            sizeof r);
                } else if (m->kind == K_ACCEPT || m->kind == K_REJECT) {
                        struct reply r;
                        memcpy(&r, m->data, sizeof r);
                        double c = s->cost[st->order[r.idx]];
                        int64_t k = lbomp__gossip_find(&st->g, m->from);
                        st->pending--;
                        if (m->kind == K_ACCEPT) {
                                dest[st->order[r.idx]] = m->from;
                                if (k >= 0 && r.load > st->g.e[k].load)
                                        st->g.e[k].load = r.load;
                                continue;
                        }
                        lbomp__dc_count(dc, self, LBOMP__DC_REJECTED, 1);
                        if (k >= 0)
                                st->g.e[k].load = r.load;
                        st->load += c;
                        st->kept++;
                        st->rejections++;
                        /* Retry once; give up on the task once rejections exceed 10 % of the
                         * known receivers. */
                        if (st->tries[r.idx] < 2 && st->rejections <= 0.1 * st->nknown &&
                            st->kept >= 2) {
                                bool sent;
                                rc = offer(st, dc, self, r.idx, &sent);
                        }
                }
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static int distributed_round(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state)
{
        struct ds *st = state;
        int rc;
        (void)round;
        switch (st->phase) {
        case PH_START:
                return start(st, dc, self);
        case PH_ROLES:
                return roles(st, dc, self);
        case PH_GOSSIP:
                if ((rc = lbomp__gossip_round(&st->g, dc, self, st->sender)) != LBOMP__GOSSIP_OVER)
                        return rc;
                st->phase = PH_SEND;
                if (st->sender && (rc = transfer(st, dc, self)) < 0)
                        return rc;
                return st->pending ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
        case PH_SEND:
                if ((rc = exchange(st, dc, self)) < 0)
                        return rc;
                return st->pending ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
        default:
                return LBOMP__ROUND_DONE;
        }
}

const struct lbomp__policy lbomp__policy_distributed = {
        .name = "distributed",
        .help = "decentralized: gossip, then tasks offered one by one to random underloaded "
                "workers (GrapevineLB)",
        .kind = LBOMP__DECENTRAL,
        .wstate_size = sizeof(struct ds),
        .round = distributed_round,
        .msg_kinds = kinds,
};
