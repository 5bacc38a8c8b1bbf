/*
 * transfer.c — the phased transfer protocol of packdrop and distributed (transfer.h). Every
 * worker runs these rounds at the barrier, in phases of: a reduction (average and largest load,
 * task count, largest task, tasks moved by the last phase); then the workers above
 * ub = (1 + v) × L* (L* = max(average, largest task)) choose the tasks that leave, in packs of
 * about s (PackDrop's BatchAssembly) or one by one (GrapevineLB), while the workers below the
 * average gossip their load; once no message is in flight, each pack is offered to a receiver
 * drawn from the sender's view with probability proportional to its room, which accepts iff it
 * stays within ub; a rejected pack is offered once more, then forced.
 *
 * Forced, a pack goes only where it lowers the larger of the two loads: the receiver accepts it
 * when its load plus the pack stays below the sender's load with the pack, or when sending back
 * some of its own lighter tasks (fewer than the pack costs) brings it to ub and below that load
 * (a swap); otherwise it rejects, and after FORCED forced offers the pack stays home. So no worker
 * ever ends above the largest load it began with. Phases repeat, up to MAX_PHASES, while the
 * largest load is above ub and the last phase moved something: a worker a pack pushed above ub
 * sheds its lighter tasks in the next one. doc/policies.md says where and why this departs from
 * the two papers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../mailbox.h"
#include "transfer.h"

enum {
        K_GOSSIP = LBOMP__XK_GOSSIP,
        K_OFFER = LBOMP__XK_OFFER,
        K_ACCEPT = LBOMP__XK_ACCEPT,
        K_REJECT = LBOMP__XK_REJECT,
        K_FORCED = LBOMP__XK_FORCED
};

enum { PH_START, PH_ROLES, PH_GOSSIP, PH_SEND, PH_IDLE };

#define NOWHERE    UINT32_MAX
#define MAX_PHASES 8 /* phases per LB step; most runs end after 2-4 */
#define FORCED     3 /* forced offers of a pack before it stays home */

/* Reduction slots. */
enum { R_LOAD, R_TASKS, R_MAX, R_MAXTASK, R_MOVED };

/* An offer: this header, then the pack's task indices (the receiver holds them from then on). */
struct offer {
        uint32_t pack;
        uint32_t ntasks;
        double cost;
        double limit; /* the sender's load with this pack, its other packs gone */
        double full;  /* the sender's load with every pack still out */
};

/* A reply: this header, then the indices of the tasks a swap sends back (accept only). */
struct reply {
        uint32_t pack;
        uint32_t nback; /* tasks sent back */
        double load;    /* the target's load after its decision: news for the sender's view */
        double spare;   /* and what it could send back in a swap then (lbomp__xfer_spare()) */
        double small;
        double back; /* the cost of the tasks sent back */
};

/* ---------------------------------------------------------------------------------------------
 * Offers
 */

static double known_load(const struct lbomp__xfer *st, uint32_t w)
{
        int64_t i = lbomp__gossip_find(&st->g, w);
        return i >= 0 ? st->g.e[i].load : NAN;
}

/* The sender's view of a worker's load: what gossip said, plus what it offered there since, and
 * what replies told. A worker it never heard of enters the view when it replies. */
static int view_set(struct lbomp__xfer *st, uint32_t w, double load, double spare, double small)
{
        int64_t i = lbomp__gossip_find(&st->g, w);
        if (i < 0)
                return lbomp__gossip_set(&st->g, w, 0, load, spare, small);
        st->g.e[i].load = load;
        if (spare >= 0) {
                st->g.e[i].spare = spare;
                st->g.e[i].small = small;
        }
        return 0;
}

static bool refused(const struct lbomp__xpack *p, uint32_t w)
{
        for (uint32_t i = 0; i < LBOMP__XFER_REMEMBER && i < p->nref; i++)
                if (p->refused[i] == w)
                        return true;
        return false;
}

/* Room for one candidate per entry of the view. */
static int candidates(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self)
{
        if (st->g.n <= st->capcand)
                return 0;
        uint32_t cap = 2 * st->g.n;
        st->cand = lbomp__dc_alloc(dc, self, (size_t)cap * sizeof *st->cand);
        st->cw = lbomp__dc_alloc(dc, self, (size_t)cap * sizeof *st->cw);
        if (!st->cand || !st->cw)
                return -ENOMEM;
        st->capcand = cap;
        return 0;
}

/* The candidate of nc whose cumulative weight first exceeds a uniform draw below `total`. */
static uint32_t draw(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self, uint32_t nc,
                     double total)
{
        double x = lbomp__rng_unit(lbomp__dc_rng(dc, self)) * total;
        uint32_t lo = 0, hi = nc - 1;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (st->cw[mid] > x)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return st->cand[lo];
}

/*
 * A target for a normal offer: a receiver heard of with room for the pack under ub (the paper
 * asks room for s; a pack costlier than s needs room for its cost, or it is a rejection and a
 * round trip lost) and that did not refuse it, drawn with probability proportional to its room
 * under ub in the sender's view (as GrapevineLB draws; a uniform draw, which PackDrop implies,
 * sends as many packs to a nearly full receiver as to an empty one, and the collisions turn into
 * rejections), divided with the locality rule by the square of the distance from the sender's
 * node to the receiver's (local = 1): receivers on the sender's node are preferred without being
 * the only ones drawn, since restricting the draw to the nearest node crowds its few receivers.
 * NOWHERE when none qualifies: the pack goes forced at once (the paper's fallback, a random other
 * worker, is rejected almost always at scale and costs a round trip).
 */
static uint32_t pick_normal(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                            const struct lbomp__xpack *p, const struct lbomp__xfer_rules *rules)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        bool numa = rules->locality && s->dist && s->wnode && s->nnodes > 1;
        double need = p->cost > st->s ? p->cost : st->s, total = 0;
        uint32_t nc = 0;
        for (uint32_t i = 0; i < st->g.n; i++) {
                const struct lbomp__gentry *e = &st->g.e[i];
                if (e->id == self || !(e->load + lbomp__time_on(s, e->id, need) <= st->ub) ||
                    refused(p, e->id))
                        continue;
                double wt = st->ub - e->load;
                if (numa) {
                        double d = s->dist[s->wnode[self] * (int32_t)s->nnodes + s->wnode[e->id]];
                        wt /= d > 0 ? d * d : 1;
                }
                if (!(wt > 0))
                        continue;
                total += wt;
                st->cw[nc] = total;
                st->cand[nc++] = e->id;
        }
        return nc ? draw(st, dc, self, nc, total) : NOWHERE;
}

/*
 * Whether a forced pack that leaves the larger of the pair's loads at pm is worth it: pm within
 * ub, or a factor 1 + v below the sender's load with this pack and without its other ones
 * (`limit`), so that a receiver does not take a second large pack and become the new maximum;
 * from the third phase on, when what is left are workers a little above ub that shed small tasks
 * to workers a little below it, also half of the way from the sender's load with all its packs
 * still out (`full`) down to ub. Always below `full`: no load ever rises above the largest of the
 * phase's start.
 */
static bool acceptable(const struct lbomp__xfer *st, double pm, double limit, double full)
{
        return pm <= st->ub || pm * (1 + st->v) <= limit ||
               (st->nphase > 2 && pm <= 0.5 * (full + st->ub));
}

/* The larger of the two loads after a pack of cost c moved from a sender left with `rest` to a
 * receiver at `load`, which sent back d: costs in reference units, the receiver's speed sr, the
 * sender's ss (c / 1.0 is c: with equal speeds, the arithmetic of speed-blind loads). */
static double pair_max(double load, double c, double rest, double d, double sr, double ss)
{
        double a = load + c / sr - d / sr, b = rest + d / ss;
        return a > b ? a : b;
}

/*
 * A target for a forced offer: a worker known where the pack can lower the larger of the two
 * loads enough to be accepted (decide()): from its load and what it could send back (as the
 * sender last heard them), the best split of the pair estimated as if its tasks were fine-grained,
 * and drawn with probability proportional to how far below the sender's load with the pack
 * (`limit`) that would leave the pair (so the best are likeliest, but senders that see the same
 * light workers do not all pick the same one). The receiver decides with its actual load and
 * tasks. NOWHERE when none is known: the pack stays home. PackDrop's forced pack must be accepted
 * wherever it lands; at scale that turned rejections into forced packs on the few workers gossip
 * had reported light, and made the maximum many times worse (λ 5.4 -> 18 at 256 workers).
 */
static uint32_t pick_forced(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                            const struct lbomp__xpack *p, double limit, double full)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t nc = 0;
        double ss = lbomp__speed(s, self);
        double total = 0, c = p->cost, rest = limit - c / ss;
        for (uint32_t i = 0; i < st->g.n; i++) {
                const struct lbomp__gentry *e = &st->g.e[i];
                if (e->id == self || refused(p, e->id))
                        continue;
                double sr = lbomp__speed(s, e->id);
                /* Sending back nothing, its smallest task, or (as if its tasks were fine-grained)
                 * what splits the pair evenly, at least its smallest task and at most all but its
                 * largest: exact for workers of one or two tasks, optimistic beyond. */
                double pm = pair_max(e->load, c, rest, 0, sr, ss);
                if (e->small < c) {
                        /* the even split: e->load + (c - d) / sr = rest + d / ss */
                        double d = s->speed ? (e->load + c / sr - rest) / (1 / sr + 1 / ss)
                                            : 0.5 * (e->load + c - rest);
                        double most = e->spare < c ? e->spare : c;
                        d = d > most ? most : d;
                        d = d < e->small ? e->small : d;
                        double x = pair_max(e->load, c, rest, e->small, sr, ss);
                        double y = pair_max(e->load, c, rest, d, sr, ss);
                        pm = x < pm ? x : pm;
                        pm = y < pm ? y : pm;
                }
                if (!acceptable(st, pm, limit, full))
                        continue;
                total += limit - pm;
                st->cw[nc] = total;
                st->cand[nc++] = e->id;
        }
        return nc && total > 0 ? draw(st, dc, self, nc, total) : NOWHERE;
}

static void place(struct lbomp__xfer *st, struct lbomp__dctx *dc, struct lbomp__xpack *p,
                  uint32_t target)
{
        uint32_t *dest = lbomp__dc_dest(dc);
        for (uint32_t i = p->first; i < p->first + p->n; i++) {
                uint32_t t = st->ptask[i];
                dest[t] = target;
                st->left[lbomp__xfer_held_index(st, t)] = 1;
        }
        p->target = target;
        p->state = LBOMP__PK_PLACED;
        st->unplaced--;
        st->pending -= p->cost;
        st->moved += p->n;
}

static void withdraw(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                     struct lbomp__xpack *p)
{
        st->load += lbomp__time_on(lbomp__dc_snap(dc), self, p->cost);
        st->pending -= p->cost;
        p->target = self;
        p->state = LBOMP__PK_PLACED;
        st->unplaced--;
        lbomp__dc_count(dc, self, LBOMP__DC_WITHDRAWN, 1);
}

/* Offers pack p: normally while it has normal offers left and a receiver known with room, else
 * forced; when no forced target is left either, it stays home. */
static int offer(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self, uint32_t pi,
                 const struct lbomp__xfer_rules *rules)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        struct lbomp__xpack *p = &st->pk[pi];
        int rc = candidates(st, dc, self);
        if (rc < 0)
                return rc;
        uint32_t normal = s->params && s->params->retries >= 0 ? (uint32_t)s->params->retries : 2;
        /* The sender's load with this pack, its other packs gone: where a forced pack may take
         * its receiver at most (so that no load ever rises above the largest of the phase's
         * start, and a receiver never takes more than the sender gives up). */
        double limit = st->load + lbomp__time_on(s, self, p->cost);
        double full = st->load + lbomp__time_on(s, self, st->pending);
        uint32_t to = NOWHERE;
        /* distributed: a sender whose offers were refused by more than a share of the receivers
         * it knows stops offering normally (GrapevineLB gives up there; we force instead). */
        bool gave_up = rules->give_up > 0 && st->rejections > rules->give_up * st->known;
        p->forced = p->tries >= normal || gave_up;
        if (!p->forced && (to = pick_normal(st, dc, self, p, rules)) == NOWHERE)
                p->forced = true;
        if (p->forced)
                to = p->ftries < FORCED ? pick_forced(st, dc, self, p, limit, full) : NOWHERE;
        if (to == NOWHERE) {
                withdraw(st, dc, self, p);
                return 0;
        }
        size_t len = sizeof(struct offer) + (size_t)p->n * sizeof(uint32_t);
        unsigned char *msg = lbomp__dc_alloc(dc, self, len);
        if (!msg)
                return -ENOMEM;
        struct offer o = {
                .pack = pi, .ntasks = p->n, .cost = p->cost, .limit = limit, .full = full};
        memcpy(msg, &o, sizeof o);
        memcpy(msg + sizeof o, st->ptask + p->first, (size_t)p->n * sizeof(uint32_t));
        if ((rc = lbomp__dc_send(dc, self, to, p->forced ? K_FORCED : K_OFFER, msg, len)) < 0)
                return rc;
        double v = known_load(st, to);
        if (!isnan(v))
                view_set(st, to, v + lbomp__time_on(s, to, p->cost), -1, 0); /* known */
        p->target = to;
        if (p->forced)
                p->ftries++;
        else
                p->tries++;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Phases
 */

/* Every worker, at the start of a phase: its load and tasks into the phase's reduction. */
static int contribute(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        double maxtask = 0;
        for (uint32_t i = 0; i < st->ncur; i++)
                maxtask = s->cost[st->cur[i]] > maxtask ? s->cost[st->cur[i]] : maxtask;
        /* Work, speed × load: the sum over workers divided by Σ speed is the ideal time. */
        lbomp__dc_reduce(dc, self, R_LOAD, LBOMP__RED_SUM, lbomp__speed(s, self) * st->load);
        lbomp__dc_reduce(dc, self, R_TASKS, LBOMP__RED_SUM, (double)st->ncur);
        lbomp__dc_reduce(dc, self, R_MAX, LBOMP__RED_MAX, st->load);
        lbomp__dc_reduce(dc, self, R_MAXTASK, LBOMP__RED_MAX, maxtask);
        lbomp__dc_reduce(dc, self, R_MOVED, LBOMP__RED_SUM, (double)st->moved);
        st->nphase++;
        st->phase = PH_ROLES;
        return LBOMP__ROUND_BUSY;
}

static int start(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t lo = s->wtask_off[self], hi = s->wtask_off[self + 1];
        int rc = lbomp__xfer_hold(st, dc, self, s->wtask + lo, hi - lo);
        if (rc < 0)
                return rc;
        st->load = s->bg ? s->bg[self] : 0;
        for (uint32_t i = 0; i < st->ncur; i++)
                st->load += lbomp__time_on(s, self, s->cost[st->cur[i]]);
        st->moved = 1; /* the first phase has no previous one to have stalled */
        return contribute(st, dc, self);
}

static int roles(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                 const struct lbomp__xfer_rules *rules)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        double P = s->nworkers, v = s->params ? s->params->tolerance : 0.05;
        double ttc = lbomp__dc_reduced(dc, R_TASKS), max = lbomp__dc_reduced(dc, R_MAX);
        double maxtask = lbomp__dc_reduced(dc, R_MAXTASK);
        double cap = lbomp__speed_sum(s); /* P with equal speeds */
        st->avg = lbomp__dc_reduced(dc, R_LOAD) / cap;
        st->v = v;
        if (s->speed)
                maxtask /= lbomp__speed_max(s); /* its time on the fastest worker */
        st->ub = (1 + v) * (st->avg > maxtask ? st->avg : maxtask);
        st->sender = false;
        /* Nobody is above the bound (DistributedLB's early exit; the paper's text would gossip
         * anyway and move nothing), the last phase moved nothing, or enough phases ran. */
        if (ttc < 1 || !(st->avg > 0) || max <= st->ub || lbomp__dc_reduced(dc, R_MOVED) < 1 ||
            st->nphase > (lbomp__dc_remote(dc) ? 1 : MAX_PHASES)) {
                st->phase = PH_IDLE;
                return LBOMP__ROUND_DONE;
        }
        st->moved = st->rejections = 0;
        double ats = st->avg * cap / ttc; /* mean task cost */
        double ps = 2.0 - P / ttc;        /* pack scale, real division */
        st->s = ats * ps;
        int rc = lbomp__gossip_init(&st->g, dc, self, K_GOSSIP);
        if (rc < 0)
                return rc;
        st->capcand = 0;
        st->npk = 0;
        if (st->load > st->ub) {
                if ((rc = lbomp__xfer_assemble(st, dc, self, rules)) < 0)
                        return rc;
                st->sender = st->npk > 0;
        } else if (st->load < st->ub) {
                double small, sp = lbomp__xfer_spare(st, dc, &small);
                if ((rc = lbomp__gossip_set(&st->g, self, 0, st->load, sp, small)) < 0)
                        return rc;
        }
        st->phase = PH_GOSSIP;
        if ((rc = lbomp__gossip_send(&st->g, dc, self)) < 0)
                return rc;
        return LBOMP__ROUND_BUSY;
}

static int batch_send(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                      const struct lbomp__xfer_rules *rules)
{
        st->known = 0;
        for (uint32_t i = 0; i < st->g.n; i++)
                st->known += st->g.e[i].id != self;
        /* Heaviest pack first (assembly made them lightest first): the large ones get the pick
         * of the rooms, as in first-fit decreasing; the paper leaves the order open. */
        for (uint32_t i = st->npk; i-- > 0;) {
                int rc = offer(st, dc, self, i, rules);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Decisions
 */

/*
 * A receiver's answer to one offer, load and check updated together (the inbox is processed in
 * order, alone). Normal: accept iff the pack fits under ub. Forced, when it does not fit: of
 * taking the pack alone, or with one of its own tasks cheaper than the pack sent back, or with
 * its lightest tasks sent back (a swap), the choice that leaves the larger of the two loads
 * lowest; accepted iff that is acceptable() against the sender's load with the pack (`limit`).
 * So a forced pack always lowers the larger of the two loads. The swap is what pairs a large task
 * with a small one when every worker holds two. The reply carries the tasks sent back, which the
 * receiver stops holding.
 */
static int decide(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                  const struct lbomp__msg *m)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        struct offer o;
        memcpy(&o, m->data, sizeof o);
        /* Costs in reference units; the pack takes c / sr here and took c / sf at the sender. */
        double sr = lbomp__speed(s, self), sf = lbomp__speed(s, m->from);
        double c = o.cost, rl = st->load, sender = o.limit - c / sf; /* the sender without it */
        bool ok = rl + c / sr <= st->ub;
        uint32_t nback = 0;
        double back = 0;
        int rc;
        /* Remote workers (one per process, lbomp__dc_remote()) cannot send back tasks of their
         * own, as the sender's snapshot does not hold them: there a forced pack is taken alone
         * or not at all, and received tasks are not held, as a single phase runs. */
        bool remote = lbomp__dc_remote(dc);
        if (!ok && m->kind == K_FORCED && !st->sender && c > 0) {
                if (!remote && (rc = lbomp__xfer_lightest(st, dc, self)) < 0)
                        return rc;
                /* Options: d = 0; one task t below c; the lightest prefix below c. */
                double best = rl + c / sr > sender ? rl + c / sr : sender, prefix = 0;
                uint32_t one = UINT32_MAX, npre = 0, bestpre = 0;
                for (uint32_t i = 0; !remote && i < st->nlight; i++) {
                        uint32_t t = st->light[i];
                        int64_t k = lbomp__xfer_held_index(st, t);
                        if (k < 0 || st->left[k])
                                continue; /* sent back already */
                        double d = s->cost[t];
                        if (!(d < c))
                                break; /* lightest first: none further is cheaper than c */
                        double pm = pair_max(rl, c, sender, d, sr, sf);
                        if (pm < best)
                                best = pm, one = t, bestpre = 0;
                        if (prefix + d < c) {
                                st->cand_back[npre++] = t;
                                prefix += d;
                                pm = pair_max(rl, c, sender, prefix, sr, sf);
                                if (pm < best)
                                        best = pm, one = UINT32_MAX, bestpre = npre;
                        }
                }
                ok = acceptable(st, best, o.limit, o.full);
                if (ok && bestpre) {
                        nback = bestpre;
                        for (uint32_t i = 0; i < nback; i++)
                                back += s->cost[st->cand_back[i]];
                } else if (ok && one != UINT32_MAX) {
                        nback = 1;
                        st->cand_back[0] = one;
                        back = s->cost[one];
                }
        }
        if (ok) {
                st->load += (o.cost - back) / sr;
                rc = remote ? 0
                            : lbomp__xfer_receive(
                                      st, dc, self,
                                      (const uint32_t *)((const unsigned char *)m->data + sizeof o),
                                      o.ntasks);
                if (rc < 0)
                        return rc;
                uint32_t *dest = lbomp__dc_dest(dc);
                for (uint32_t i = 0; i < nback; i++) {
                        dest[st->cand_back[i]] = m->from;
                        st->left[lbomp__xfer_held_index(st, st->cand_back[i])] = 1;
                }
                st->moved += nback;
        }
        size_t len = sizeof(struct reply) + (size_t)nback * sizeof(uint32_t);
        unsigned char buf[sizeof(struct reply) + 64 * sizeof(uint32_t)], *msg = buf;
        if (len > sizeof buf && !(msg = lbomp__dc_alloc(dc, self, len)))
                return -ENOMEM;
        struct reply r = {.pack = o.pack, .nback = nback, .load = st->load, .back = back};
        if (nback || !(st->spare_small >= 0)) /* what a swap could send back changed */
                st->spare = lbomp__xfer_spare(st, dc, &st->spare_small);
        r.spare = st->spare;
        r.small = st->spare_small;
        memcpy(msg, &r, sizeof r);
        if (nback)
                memcpy(msg + sizeof r, st->cand_back, (size_t)nback * sizeof(uint32_t));
        return lbomp__dc_send(dc, self, m->from, ok ? K_ACCEPT : K_REJECT, msg, len);
}

/* A sender's handling of one reply. */
static int answered(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                    const struct lbomp__msg *m, const struct lbomp__xfer_rules *rules)
{
        struct reply r;
        memcpy(&r, m->data, sizeof r);
        struct lbomp__xpack *p = &st->pk[r.pack];
        int rc;
        if (m->kind == K_ACCEPT) {
                double v = known_load(st, m->from);
                rc = view_set(st, m->from, isnan(v) || r.load > v ? r.load : v, r.spare, r.small);
                if (p->forced)
                        lbomp__dc_count(dc, self, LBOMP__DC_FORCED, 1);
                place(st, dc, p, m->from);
                if (rc == 0 && r.nback) { /* a swap: the receiver's lighter tasks come here */
                        st->load += lbomp__time_on(lbomp__dc_snap(dc), self, r.back);
                        rc = lbomp__xfer_receive(
                                st, dc, self,
                                (const uint32_t *)((const unsigned char *)m->data + sizeof r),
                                r.nback);
                }
                return rc;
        }
        if ((rc = view_set(st, m->from, r.load, r.spare, r.small)) < 0)
                return rc;
        if (!p->forced) {
                lbomp__dc_count(dc, self, LBOMP__DC_REJECTED, 1);
                st->rejections++;
        }
        p->refused[p->nref++ % LBOMP__XFER_REMEMBER] = m->from;
        return offer(st, dc, self, r.pack, rules); /* replies reach senders */
}

/* An offer of this round, for the order in which a receiver decides. */
struct incoming {
        double limit;
        uint32_t at; /* index in the inbox: (sender, sequence) order */
};

static int by_limit(const void *a, const void *b)
{
        const struct incoming *x = a, *y = b;
        if (x->limit != y->limit)
                return x->limit > y->limit ? -1 : 1;
        return (x->at > y->at) - (x->at < y->at);
}

/*
 * This round's messages: replies in (sender, sequence) order, then offers from the most loaded
 * sender down (each offer carries its sender's load with the pack). Deciding in arrival order
 * would serve the low worker ids first: on a machine whose heavy workers have high ids (a linear
 * gradient), every offer of the heaviest worker arrived last at receivers already full, and the
 * maximum never came down.
 */
static int exchange(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                    const struct lbomp__xfer_rules *rules)
{
        const struct lbomp__msg *msg;
        size_t n = lbomp__dc_inbox(dc, self, &msg);
        uint32_t noff = 0;
        for (size_t i = 0; i < n; i++)
                noff += msg[i].kind == K_OFFER || msg[i].kind == K_FORCED;
        struct incoming *in = noff ? lbomp__dc_alloc(dc, self, noff * sizeof *in) : NULL;
        if (noff && !in)
                return -ENOMEM;
        noff = 0;
        for (size_t i = 0; i < n; i++) {
                const struct lbomp__msg *m = &msg[i];
                int rc = 0;
                if (m->kind == K_OFFER || m->kind == K_FORCED) {
                        struct offer o;
                        memcpy(&o, m->data, sizeof o);
                        in[noff++] = (struct incoming){.limit = o.limit, .at = (uint32_t)i};
                } else if (m->kind == K_ACCEPT || m->kind == K_REJECT) {
                        rc = answered(st, dc, self, m, rules);
                }
                if (rc < 0)
                        return rc;
        }
        if (noff > 1)
                qsort(in, noff, sizeof *in, by_limit);
        st->spare_small = -1;         /* recomputed once for this round's replies */
        if (noff && !st->cand_back) { /* at most every task held goes back */
                st->cand_back =
                        lbomp__dc_alloc(dc, self, ((size_t)st->ncur + 1) * sizeof(uint32_t));
                if (!st->cand_back)
                        return -ENOMEM;
        }
        for (uint32_t k = 0; k < noff; k++) {
                int rc = decide(st, dc, self, &msg[in[k].at]);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

int lbomp__xfer_round(struct lbomp__dctx *dc, uint32_t self, struct lbomp__xfer *st,
                      const struct lbomp__xfer_rules *rules)
{
        int rc;
        switch (st->phase) {
        case PH_START:
                return start(st, dc, self);
        case PH_ROLES:
                return roles(st, dc, self, rules);
        case PH_GOSSIP:
                if ((rc = lbomp__gossip_round(&st->g, dc, self, true)) != LBOMP__GOSSIP_OVER)
                        return rc;
                /* No message in flight: gossip is over everywhere at once (the barrier of
                 * PackDrop's line 13). */
                st->phase = PH_SEND;
                if (st->sender && (rc = batch_send(st, dc, self, rules)) < 0)
                        return rc;
                return LBOMP__ROUND_BUSY;
        case PH_SEND:
                /* Every pack is placed or home once a round passes without a message: the phase
                 * ends on every worker in the same round, and the next one starts. */
                if (lbomp__dc_quiet(dc, self)) {
                        if ((rc = lbomp__xfer_hold(st, dc, self, NULL, 0)) < 0)
                                return rc;
                        return contribute(st, dc, self);
                }
                if ((rc = exchange(st, dc, self, rules)) < 0)
                        return rc;
                return LBOMP__ROUND_BUSY;
        default:
                return LBOMP__ROUND_DONE;
        }
}
