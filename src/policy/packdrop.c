/*
 * packdrop.c — decentralized batch task migration (PackDrop, Freitas et al., SBAC-PAD 2018), as
 * POLICIES.md restates it. Every worker runs these rounds at the barrier: two reductions (average
 * load, total task count); overloaded workers cut their excess into packs (BatchAssembly) while
 * underloaded ones gossip their load; once no message is in flight, each pack is offered whole to a
 * receiver (BatchSend), which accepts iff it stays within (1 + v) × average; a rejected pack is
 * offered once more, then sent forced, so the protocol always ends.
 *
 * Locality (our extension, not the paper's): when tasks have links, a pack is a run of linked
 * tasks grown from the worker's boundary (a connected piece), and receivers on the sender's node
 * are drawn more often than far ones. Where we depart from the paper or fill a gap POLICIES.md
 * leaves (target draw, forced target, withdrawn packs, early exit), the comment at the spot says
 * why; README.md lists them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../mailbox.h"
#include "gossip.h"

enum { K_GOSSIP, K_OFFER, K_ACCEPT, K_REJECT, K_FORCED };
static const char *const kinds[] = {"gossip", "offer", "accept", "reject", "forced", NULL};

enum { PH_START, PH_ROLES, PH_GOSSIP, PH_SEND, PH_IDLE };
enum { PK_PENDING, PK_PLACED };

#define NOWHERE  UINT32_MAX
#define REMEMBER 4 /* targets that rejected a pack, not offered it again */

struct offer {
        uint32_t pack;
        uint32_t ntasks;
        double cost;
};

struct reply {
        uint32_t pack;
        uint32_t pad;
        double load; /* the target's load after its decision: news for the sender's view */
};

struct pack {
        uint32_t first, n; /* its tasks: ptask[first .. first + n) */
        double cost;
        uint32_t tries; /* normal offers made */
        uint32_t target;
        uint32_t refused[REMEMBER];
        uint32_t state;
};

struct pd {
        int phase;
        bool sender;
        double load; /* own load, minus packs leaving, plus packs accepted */
        double avg, ub, s;
        struct lbomp__gossip g;
        uint32_t m;      /* own tasks */
        uint32_t *own;   /* their snapshot indices, ascending */
        bool contiguous; /* own[i] == own[0] + i */
        uint32_t *ptask; /* tasks of the packs, pack after pack (snapshot indices) */
        struct pack *pk;
        double *cw;     /* [P] scratch: cumulative weights of the candidates */
        uint32_t *cand; /* [P] scratch: candidates */
        uint32_t npk, unplaced;
};

/* ---------------------------------------------------------------------------------------------
 * BatchAssembly
 */

static int64_t own_index(const struct pd *st, uint32_t t)
{
        if (st->contiguous) { /* the usual case: a worker's tasks are consecutive */
                if (st->m && t >= st->own[0] && t - st->own[0] < st->m)
                        return (int64_t)(t - st->own[0]);
                return -1;
        }
        uint32_t lo = 0, hi = st->m;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (st->own[mid] < t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < st->m && st->own[lo] == t ? (int64_t)lo : -1;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

/* Lightest first, ties by snapshot index (deterministic). */
static bool lighter(const double *cost, uint32_t a, uint32_t b)
{
        return cost[a] < cost[b] || (cost[a] == cost[b] && a < b);
}

static int by_cost(const void *a, const void *b, void *arg)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return lighter(arg, x, y) ? -1 : lighter(arg, y, x) ? 1 : 0;
}

/*
 * Connected assembly (the locality extension). A pack grows breadth-first through the links from
 * its first task (a FIFO of neighbours still here), so it is a connected piece; a new pack starts
 * from the task found earliest next to one that left (a second FIFO, over the whole assembly), so
 * that the region that leaves grows breadth-first from the boundary without leaving holes; the
 * first starts from the lightest boundary task (one that talks to another worker). The order inside
 * a run does not look at measured costs: choosing the lightest neighbour each time would ship
 * exactly the tasks whose costs were measured too low (noise on a loaded machine), and the sender
 * would end lighter, the receiver heavier than predicted.
 */
struct assembly {
        struct pd *st;
        const struct lbomp__snap *s;
        bool linked;
        uint32_t *sorted; /* own tasks lightest first (the paper's order, and the fallback) */
        uint32_t next;    /* cursor in sorted */
        uint8_t *taken;   /* [m] */
        uint32_t *fifo, fhead, fn;  /* frontier of the open pack */
        uint32_t *seeds, shead, sn; /* where the next pack starts */
};

static bool remaining(const struct assembly *a, uint32_t t)
{
        return !a->taken[own_index(a->st, t)];
}

/* A task heavier than the worker's excess over the average: moving it moves the overload. */
static bool too_heavy(const struct assembly *a, uint32_t t)
{
        return a->s->cost[t] > a->st->load - a->st->avg;
}

static uint32_t lightest_left(struct assembly *a)
{
        while (a->next < a->st->m && !remaining(a, a->sorted[a->next]))
                a->next++;
        return a->next < a->st->m ? a->sorted[a->next] : NOWHERE;
}

/*
 * The next task; sets *fresh when it cannot extend the open pack (a new piece starts). Without
 * links: lightest first (the paper). With links: the open pack's frontier, then the seeds,
 * skipping tasks heavier than the worker's excess over the average (moving one only moves the
 * overload); then the lightest task left, so those come last, as in the paper's order. Skipping
 * on a lower bar (say, tasks heavier than s) would be cherry-picking again: the tasks left behind
 * would be those measured too high.
 */
static uint32_t next_task(struct assembly *a, bool open, bool *fresh)
{
        *fresh = false;
        if (a->linked) {
                while (open && a->fhead < a->fn) {
                        uint32_t t = a->fifo[a->fhead];
                        if (!remaining(a, t)) {
                                a->fhead++;
                                continue;
                        }
                        if (too_heavy(a, t))
                                break;
                        a->fhead++;
                        return t;
                }
                *fresh = open;
                while (a->shead < a->sn) {
                        uint32_t t = a->seeds[a->shead++];
                        if (remaining(a, t) && !too_heavy(a, t))
                                return t;
                }
        }
        return lightest_left(a);
}

/* The task leaves: its neighbours still here join the pack's frontier and the seeds. */
static void take(struct assembly *a, uint32_t t)
{
        const struct lbomp__snap *s = a->s;
        a->taken[own_index(a->st, t)] = 1;
        if (!a->linked)
                return;
        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++) {
                uint32_t b = s->link_dst[k];
                int64_t j = own_index(a->st, b);
                if (j >= 0 && !a->taken[j]) {
                        a->fifo[a->fn++] = b;
                        a->seeds[a->sn++] = b;
                }
        }
}

static int assemble(struct pd *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t m = st->m;
        struct assembly a = {.st = st, .s = s};
        size_t local_links = 0;
        if (s->link_off)
                for (uint32_t i = 0; i < m; i++)
                        local_links += s->link_off[st->own[i] + 1] - s->link_off[st->own[i]];
        a.linked = local_links > 0;
        a.sorted = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *a.sorted);
        a.taken = lbomp__dc_alloc(dc, self, m);
        st->ptask = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *st->ptask);
        st->pk = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *st->pk);
        if (a.linked) {
                a.seeds = lbomp__dc_alloc(dc, self, (m + local_links) * sizeof *a.seeds);
                a.fifo = lbomp__dc_alloc(dc, self, (local_links + 1) * sizeof *a.fifo);
        }
        if (!a.sorted || !a.taken || !st->ptask || !st->pk || (a.linked && (!a.seeds || !a.fifo)))
                return -ENOMEM;
        memcpy(a.sorted, st->own, (size_t)m * sizeof *a.sorted);
        qsort_r(a.sorted, m, sizeof *a.sorted, by_cost, (void *)s->cost);
        /* The boundary, lightest first. */
        for (uint32_t i = 0; a.linked && i < m; i++) {
                uint32_t t = a.sorted[i];
                for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++)
                        if (own_index(st, s->link_dst[k]) < 0) {
                                a.seeds[a.sn++] = t;
                                break;
                        }
        }
        /*
         * The paper's Algorithm 1: lightest task first (runs of linked tasks when there are
         * links, above) into the open pack, the worker's load reduced by it; the pack closes when
         * its cost exceeds s; stop as soon as the load is within (1 + v) × avg, and ship the last,
         * partial pack too. (The thesis code takes the heaviest first and never resets its pack
         * accumulator; POLICIES.md calls that a bug and follows the text, and so do we.) One task
         * always stays: moving a worker's last task only moves its overload elsewhere (the rule
         * DistributedLB follows too).
         */
        uint32_t left = m, n = 0;
        struct pack *open = NULL;
        while (st->load > st->ub && left > 1) {
                bool fresh;
                uint32_t t = next_task(&a, open != NULL, &fresh);
                if (t == NOWHERE)
                        break;
                if (fresh && open) /* a connected piece is complete: close it even if small */
                        open = NULL;
                if (!open) {
                        open = &st->pk[st->npk++];
                        *open = (struct pack){.first = n, .target = NOWHERE};
                        a.fhead = a.fn = 0;
                }
                st->ptask[n++] = t;
                open->n++;
                open->cost += s->cost[t];
                st->load -= s->cost[t];
                left--;
                take(&a, t);
                if (open->cost > st->s)
                        open = NULL;
        }
        st->unplaced = st->npk;
        for (uint32_t i = 0; i < st->npk; i++)
                lbomp__dc_count_pack(dc, self, st->pk[i].cost);
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * BatchSend
 */

static double known_load(const struct pd *st, uint32_t w)
{
        int64_t i = lbomp__gossip_find(&st->g, w);
        return i >= 0 ? st->g.e[i].load : NAN;
}

/* The sender's view of a worker's load: what gossip said, plus what it offered there since, and
 * what replies told. A worker it never heard of enters the view when it replies. */
static int view_set(struct pd *st, uint32_t w, double load)
{
        int64_t i = lbomp__gossip_find(&st->g, w);
        if (i < 0)
                return lbomp__gossip_set(&st->g, w, 0, load);
        st->g.e[i].load = load;
        return 0;
}

static bool refused(const struct pack *p, uint32_t w)
{
        for (uint32_t i = 0; i < REMEMBER && i < p->tries; i++)
                if (p->refused[i] == w)
                        return true;
        return false;
}

/*
 * A target for a normal offer: a receiver heard of whose load + s < ub and that did not refuse
 * this pack, drawn with probability proportional to its room under ub in the sender's view (as
 * GrapevineLB draws; a uniform draw, which the paper implies, sends as many packs to a nearly full
 * receiver as to an empty one, and the collisions turn into rejections and forced packs), divided
 * by the square of the distance from the sender's node to the receiver's (local = 1): receivers
 * on the sender's node are preferred (the locality extension) without being the only ones drawn,
 * since restricting the draw to the nearest node crowds its few receivers and the rejections cost
 * more balance and messages than the locality gains. If none qualifies, a random other worker
 * (the paper's fallback). (Preferring the receiver that holds the pack's linked tasks was tried
 * too: every sender then chains its packs onto one receiver, with the same result.)
 */
static uint32_t pick_normal(struct pd *st, struct lbomp__dctx *dc, uint32_t self,
                            const struct pack *p, uint32_t *cand)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        struct lbomp__rng *r = lbomp__dc_rng(dc, self);
        uint32_t P = s->nworkers, nc = 0;
        bool numa = s->dist && s->wnode && s->nnodes > 1;
        /* The first offer follows POLICIES.md (load + s < ub); a retry knows the pack and asks
         * for room for its actual cost. */
        double need = p->tries == 0 || p->cost < st->s ? st->s : p->cost, total = 0;
        for (uint32_t i = 0; i < st->g.n; i++) {
                const struct lbomp__gentry *e = &st->g.e[i];
                if (e->id == self || !(e->load + need < st->ub) || refused(p, e->id))
                        continue;
                double wt = st->ub - e->load;
                if (numa) {
                        double d = s->dist[s->wnode[self] * (int32_t)s->nnodes + s->wnode[e->id]];
                        wt /= d > 0 ? d * d : 1;
                }
                total += wt;
                st->cw[nc] = total;
                cand[nc++] = e->id;
        }
        if (nc == 0) {
                if (P < 2)
                        return NOWHERE;
                uint32_t w;
                int guard = 0;
                do {
                        w = lbomp__rng_below(r, P - 1);
                        w += w >= self;
                } while (refused(p, w) && ++guard < 16);
                return w;
        }
        /* The first candidate whose cumulative weight exceeds x. */
        double x = lbomp__rng_unit(r) * total;
        uint32_t lo = 0, hi = nc - 1;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (st->cw[mid] > x)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return cand[lo];
}

/*
 * A forced pack must be accepted, so its target matters. POLICIES.md names none; we take the
 * lesser loaded (in the sender's view, which replies keep fresh) of two workers drawn at random
 * among those the pack fits on (view + cost <= ub), else among those whose view is below the
 * sender's remaining load, the only ones to which a move lowers the larger of the two loads. Two
 * random choices keep senders that force at the same time from piling onto one least loaded
 * worker. When neither kind of worker is known, forcing could only move the overload: the pack is
 * withdrawn (it stays home) instead; the protocol still ends, and never makes the maximum worse.
 */
static uint32_t pick_forced(struct pd *st, struct lbomp__dctx *dc, uint32_t self, double cost,
                            uint32_t *cand)
{
        uint32_t nc = 0; /* cand[] holds indices into the known list here */
        for (uint32_t i = 0; i < st->g.n; i++)
                if (st->g.e[i].id != self && st->g.e[i].load + cost <= st->ub)
                        cand[nc++] = i;
        for (uint32_t i = 0; nc == 0 && i < st->g.n; i++)
                if (st->g.e[i].id != self && st->g.e[i].load < st->load)
                        cand[nc++] = i;
        if (nc == 0)
                return NOWHERE;
        struct lbomp__rng *r = lbomp__dc_rng(dc, self);
        const struct lbomp__gentry *a = &st->g.e[cand[lbomp__rng_below(r, nc)]],
                                   *b = &st->g.e[cand[lbomp__rng_below(r, nc)]];
        return b->load < a->load || (b->load == a->load && b->id < a->id) ? b->id : a->id;
}

static void place(struct pd *st, struct lbomp__dctx *dc, struct pack *p, uint32_t target)
{
        uint32_t *dest = lbomp__dc_dest(dc);
        for (uint32_t i = p->first; i < p->first + p->n; i++)
                dest[st->ptask[i]] = target;
        p->state = PK_PLACED;
        st->unplaced--;
}

/* Offers pack p, normally while it has normal offers left, else forced (placed at once). */
static int offer(struct pd *st, struct lbomp__dctx *dc, uint32_t self, uint32_t pi, uint32_t *cand)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        struct pack *p = &st->pk[pi];
        uint32_t normal = s->params && s->params->retries >= 0 ? (uint32_t)s->params->retries : 2;
        bool forced = p->tries >= normal;
        uint32_t to = forced ? pick_forced(st, dc, self, p->cost, cand)
                             : pick_normal(st, dc, self, p, cand);
        if (to == NOWHERE) { /* no worker at all (P = 1), or a forced pack that cannot help */
                st->load += p->cost;
                p->target = self;
                p->state = PK_PLACED;
                st->unplaced--;
                lbomp__dc_count(dc, self, LBOMP__DC_WITHDRAWN, 1);
                return 0;
        }
        struct offer o = {.pack = pi, .ntasks = p->n, .cost = p->cost};
        int rc = lbomp__dc_send(dc, self, to, forced ? K_FORCED : K_OFFER, &o, sizeof o);
        if (rc < 0)
                return rc;
        double v = known_load(st, to);
        if (!isnan(v))
                view_set(st, to, v + p->cost); /* known: cannot fail */
        p->target = to;
        if (forced) {
                lbomp__dc_count(dc, self, LBOMP__DC_FORCED, 1);
                place(st, dc, p, to);
        } else {
                p->tries++;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Rounds
 */

static int start(struct pd *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t lo = s->wtask_off[self], hi = s->wtask_off[self + 1];
        st->m = hi - lo;
        st->own = lbomp__dc_alloc(dc, self, (size_t)st->m * sizeof *st->own);
        if (!st->own)
                return -ENOMEM;
        st->load = s->bg ? s->bg[self] : 0;
        for (uint32_t i = 0; i < st->m; i++) {
                st->own[i] = s->wtask[lo + i];
                st->load += s->cost[st->own[i]];
        }
        qsort(st->own, st->m, sizeof *st->own, cmp_u32);
        st->contiguous = st->m == 0 || st->own[st->m - 1] - st->own[0] == st->m - 1;
        /* One collective of three values: Σ load, Σ task count, max load. */
        lbomp__dc_reduce(dc, self, 0, LBOMP__RED_SUM, st->load);
        lbomp__dc_reduce(dc, self, 1, LBOMP__RED_SUM, (double)st->m);
        lbomp__dc_reduce(dc, self, 2, LBOMP__RED_MAX, st->load);
        st->phase = PH_ROLES;
        return LBOMP__ROUND_BUSY;
}

static int roles(struct pd *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        double P = s->nworkers, v = s->params ? s->params->tolerance : 0.05;
        double ttc = lbomp__dc_reduced(dc, 1), max = lbomp__dc_reduced(dc, 2);
        st->avg = lbomp__dc_reduced(dc, 0) / P;
        st->ub = (1 + v) * st->avg;
        /* Nobody is above the bound: no sender, so nobody to gossip for (DistributedLB's early
         * exit; the paper's text would gossip anyway and move nothing). */
        if (ttc < 1 || !(st->avg > 0) || max <= st->ub) {
                st->phase = PH_IDLE;
                return LBOMP__ROUND_DONE;
        }
        double ats = st->avg * P / ttc; /* mean task cost */
        double ps = 2.0 - P / ttc;      /* pack scale, real division */
        st->s = ats * ps;
        int rc = lbomp__gossip_init(&st->g, dc, self, K_GOSSIP);
        if (rc < 0)
                return rc;
        if (st->load > st->ub) {
                if ((rc = assemble(st, dc, self)) < 0)
                        return rc;
                st->sender = st->npk > 0;
        } else if (st->load < st->avg) {
                if ((rc = lbomp__gossip_set(&st->g, self, 0, st->load)) < 0)
                        return rc;
        }
        st->phase = PH_GOSSIP;
        if ((rc = lbomp__gossip_send(&st->g, dc, self)) < 0)
                return rc;
        return st->sender ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
}

static int batch_send(struct pd *st, struct lbomp__dctx *dc, uint32_t self)
{
        uint32_t P = lbomp__dc_snap(dc)->nworkers;
        st->cand = lbomp__dc_alloc(dc, self, (size_t)P * sizeof *st->cand);
        st->cw = lbomp__dc_alloc(dc, self, (size_t)P * sizeof *st->cw);
        if (!st->cand || !st->cw)
                return -ENOMEM;
        /* Heaviest pack first (assembly made them lightest first): the large ones get the pick
         * of the rooms, as in first-fit decreasing; the paper leaves the order open. */
        for (uint32_t i = st->npk; i-- > 0;) {
                int rc = offer(st, dc, self, i, st->cand);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* Offers and replies of this round, in (sender, sequence) order. */
static int exchange(struct pd *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__msg *msg;
        size_t n = lbomp__dc_inbox(dc, self, &msg);
        for (size_t i = 0; i < n; i++) {
                const struct lbomp__msg *m = &msg[i];
                int rc = 0;
                if (m->kind == K_OFFER || m->kind == K_FORCED) {
                        struct offer o;
                        memcpy(&o, m->data, sizeof o);
                        /* Check and update together: the inbox is processed in order, alone. */
                        bool ok = m->kind == K_FORCED || st->load + o.cost <= st->ub;
                        if (ok)
                                st->load += o.cost;
                        if (m->kind == K_OFFER) {
                                struct reply r = {.pack = o.pack, .load = st->load};
                                rc = lbomp__dc_send(dc, self, m->from, ok ? K_ACCEPT : K_REJECT, &r,
                                                    sizeof r);
                        }
                } else if (m->kind == K_ACCEPT || m->kind == K_REJECT) {
                        struct reply r;
                        memcpy(&r, m->data, sizeof r);
                        struct pack *p = &st->pk[r.pack];
                        if (m->kind == K_ACCEPT) {
                                double v = known_load(st, m->from);
                                rc = view_set(st, m->from, isnan(v) || r.load > v ? r.load : v);
                                place(st, dc, p, m->from);
                                if (rc < 0)
                                        return rc;
                                continue;
                        }
                        lbomp__dc_count(dc, self, LBOMP__DC_REJECTED, 1);
                        if ((rc = view_set(st, m->from, r.load)) < 0)
                                return rc;
                        p->refused[(p->tries - 1) % REMEMBER] = m->from;
                        rc = offer(st, dc, self, r.pack, st->cand); /* replies reach senders */
                }
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static int packdrop_round(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state)
{
        struct pd *st = state;
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
                /* No message in flight: gossip is over everywhere at once (the barrier of the
                 * paper's line 13). */
                st->phase = PH_SEND;
                if (st->sender && (rc = batch_send(st, dc, self)) < 0)
                        return rc;
                return st->unplaced ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
        case PH_SEND:
                if ((rc = exchange(st, dc, self)) < 0)
                        return rc;
                return st->unplaced ? LBOMP__ROUND_BUSY : LBOMP__ROUND_DONE;
        default:
                return LBOMP__ROUND_DONE;
        }
}

const struct lbomp__policy lbomp__policy_packdrop = {
        .name = "packdrop",
        .help = "decentralized: overloaded workers send packs of tasks to receivers found by "
                "gossip (PackDrop)",
        .kind = LBOMP__DECENTRAL,
        .wstate_size = sizeof(struct pd),
        .round = packdrop_round,
        .msg_kinds = kinds,
};
