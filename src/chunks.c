/*
 * chunks.c — an LBOMP_FOR loop's chunks (chunks.h): the first cut, new cuts from measured costs,
 * edges that follow a changing range, and the task table of the loop's task set rebuilt from them.
 * Everything here runs in the serial part of a gathering, while no thread of the team runs a
 * chunk: the workers' arrays are rebuilt from the task table right after (step.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunks.h"
#include "error.h"
#include "runtime.h"

#define PER_CHUNK_FIXED_S 5e-9 /* loads and stores of a chunk besides the clock reading */

int lbomp__chunks_init(struct lbomp__chunks *ch, const char *name, uint32_t req_cap, double tick_s)
{
        memset(ch, 0, sizeof *ch);
        atomic_init(&ch->b_or, 0);
        atomic_init(&ch->e_or, 0);
        atomic_init(&ch->b_and, ~0ull);
        atomic_init(&ch->e_and, ~0ull);
        ch->name = strdup(name);
        ch->req = calloc(2 * (size_t)(req_cap ? req_cap : 1), sizeof *ch->req);
        if (!ch->name || !ch->req) {
                lbomp__chunks_free(ch);
                return -ENOMEM;
        }
        ch->req_cap = req_cap;
        ch->tick_s = tick_s;
        return 0;
}

void lbomp__chunks_free(struct lbomp__chunks *ch)
{
        free(ch->name);
        free(ch->req);
        free(ch->c);
        free(ch->seg);
        memset(ch, 0, sizeof *ch);
}

void lbomp__chunks_ask(struct lbomp__chunks *ch, uint32_t self, int64_t begin, int64_t end)
{
        atomic_fetch_or_explicit(&ch->b_or, (uint64_t)begin, memory_order_relaxed);
        atomic_fetch_and_explicit(&ch->b_and, (uint64_t)begin, memory_order_relaxed);
        atomic_fetch_or_explicit(&ch->e_or, (uint64_t)end, memory_order_relaxed);
        atomic_fetch_and_explicit(&ch->e_and, (uint64_t)end, memory_order_relaxed);
        if (self < ch->req_cap) {
                ch->req[2 * (size_t)self] = begin;
                ch->req[2 * (size_t)self + 1] = end;
        }
}

static uint64_t span(int64_t lo, int64_t hi)
{
        return hi > lo ? (uint64_t)hi - (uint64_t)lo : 0;
}

double lbomp__chunks_target(double total, uint32_t nworkers, double tolerance, double per_chunk_s)
{
        double share = total / (nworkers ? nworkers : 1);
        double t = 0.5 * tolerance * share;
        if (t > LBOMP__CHUNK_MAX_S)
                t = LBOMP__CHUNK_MAX_S;
        if (t < 200 * per_chunk_s)
                t = 200 * per_chunk_s;
        return t < share ? t : share;
}

/* Appends [lo, hi) with its owner to the growing arrays. */
static int emit(struct lbomp__chunk **c, uint32_t **owner, uint32_t *n, uint32_t *cap, int64_t lo,
                int64_t hi, uint32_t who)
{
        if (*n == *cap) {
                uint32_t nc = *cap ? 2 * *cap : 16;
                if (LBOMP__GROW(*c, nc) || LBOMP__GROW(*owner, nc))
                        return -ENOMEM;
                *cap = nc;
        }
        (*c)[*n] = (struct lbomp__chunk){lo, hi};
        (*owner)[*n] = who;
        (*n)++;
        return 0;
}

int lbomp__chunks_cut(const struct lbomp__seg *p, uint32_t np, double target,
                      struct lbomp__chunk **out_c, uint32_t **out_owner, uint32_t *out_n)
{
        struct lbomp__chunk *c = NULL;
        uint32_t *owner = NULL, n = 0, cap = 0;
        int rc = 0;
        for (uint32_t i = 0, j; i < np && rc == 0; i = j) {
                /* One run of pieces with the same owner, cut at equal shares of its cost. A piece
                 * that costs a chunk or more is a run of its own: spreading its cost over its
                 * indices is a guess, so its cold neighbours must not be cut by that guess (they
                 * would take its hot part with them); a hot index is thus closed in a little more
                 * at every cut until it is alone. */
                double run = 0;
                bool hot = p[i].cost >= target;
                for (j = i; j < np && p[j].owner == p[i].owner && (j == i || !hot) &&
                            (j == i || p[j].cost < target);
                     j++)
                        run += p[j].cost > 0 ? p[j].cost : 0;
                int64_t lo = p[i].lo, hi = p[j - 1].hi;
                double len = (double)span(lo, hi);
                double k = target > 0 && run > 0 ? floor(run / target + 0.5) : 1;
                if (k > len)
                        k = len;
                if (k > LBOMP__CHUNKS_MAX - (double)n)
                        k = LBOMP__CHUNKS_MAX - (double)n;
                if (k < 1)
                        k = 1;
                int64_t prev = lo;
                double cum = 0;
                uint32_t q = i;
                for (double m = 1; m < k && rc == 0; m++) {
                        double want = run * m / k;
                        while (q < j && cum + (p[q].cost > 0 ? p[q].cost : 0) < want)
                                cum += p[q].cost > 0 ? p[q].cost : 0, q++;
                        if (q == j)
                                break;
                        /* Within piece q, its cost spread evenly: where the share is reached. A
                         * share that falls inside one index gives no cut: a hot index stays whole,
                         * its neighbours go to the chunks around it. */
                        double f = p[q].cost > 0 ? (want - cum) / p[q].cost : 1.0;
                        int64_t x = p[q].lo + (int64_t)llround(f * (double)span(p[q].lo, p[q].hi));
                        if (x <= prev || x >= hi)
                                continue;
                        rc = emit(&c, &owner, &n, &cap, prev, x, p[i].owner);
                        prev = x;
                }
                if (rc == 0)
                        rc = emit(&c, &owner, &n, &cap, prev, hi, p[i].owner);
        }
        if (rc < 0) {
                free(c);
                free(owner);
                return rc;
        }
        *out_c = c;
        *out_owner = owner;
        *out_n = n;
        return 0;
}

/* The loop's task table becomes the chunks c[0..n) with their workers (a worker the team no
 * longer has, or LBOMP__PENDING, lets the step place the chunk as schedule(static) would). The
 * chunk arrays become the loop's own; on failure nothing changed. */
static int adopt(struct lbomp *lb, struct lbomp__chunks *ch, struct lbomp__chunk *c,
                 const uint32_t *owner, uint32_t n, int64_t begin, int64_t end)
{
        struct lbomp__tasks *t = &lb->tasks;
        if (n > t->cap) {
                if (LBOMP__GROW(t->task, n))
                        return -ENOMEM;
                t->cap = n;
        }
        for (uint32_t i = 0; i < n; i++) {
                uint32_t w = owner && owner[i] < (uint32_t)lb->ws.n ? owner[i] : LBOMP__PENDING;
                /* A chunk's data size is taken as its number of indices: the locality model then
                 * prefers to move short chunks. */
                t->task[i] = (struct lbomp__task){.data = &c[i],
                                                  .bytes = span(c[i].lo, c[i].hi),
                                                  .home = -1,
                                                  .worker = w,
                                                  .id = i};
        }
        /* A loop's task set is its chunks, in slots 0..n-1 under ids 0..n-1 (no id is looked up:
         * the loop's handle takes no task call), all new: the window forgets what the slots
         * measured before. */
        t->nslots = t->nalive = t->next_id = n;
        t->nfree = 0;
        t->nlink = 0;
        t->renewed = true;
        t->version++;
        lbomp__tasks_reshaped(t);
        free(ch->c);
        ch->c = c;
        ch->n = n;
        ch->begin = begin;
        ch->end = end;
        ch->built = true;
        ch->len_first = n ? span(c[0].lo, c[0].hi) : 0;
        ch->len_last = n ? span(c[n - 1].lo, c[n - 1].hi) : 0;
        return 0;
}

/* lbomp's own cost per chunk and step: the clock reading, the rest of the step's path, and the LB
 * step's work per chunk spread over the period. */
static double per_chunk_s(const struct lbomp *lb, const struct lbomp__chunks *ch)
{
        return ch->tick_s + PER_CHUNK_FIXED_S +
               ch->lb_task_s / (lb->cfg.period ? lb->cfg.period : 1);
}

/* [begin, end) cut evenly: what is known before anything is measured. */
static int cut_even(struct lbomp *lb, struct lbomp__chunks *ch, int64_t begin, int64_t end)
{
        uint64_t len = span(begin, end);
        uint64_t want = (uint64_t)LBOMP__CHUNKS_PER_WORKER * (uint64_t)lb->ws.n;
        struct lbomp__chunk *c = NULL;
        uint32_t *owner = NULL, n = 0;
        int rc = 0;
        if (len) {
                struct lbomp__seg one = {begin, end, (double)len, LBOMP__PENDING};
                rc = lbomp__chunks_cut(&one, 1, (double)len / (double)(want < len ? want : len), &c,
                                       &owner, &n);
        }
        if (rc == 0)
                rc = adopt(lb, ch, c, owner, n, begin, end);
        if (rc < 0)
                free(c);
        free(owner);
        return rc;
}

/* What the LB step that just ran measured: the chunks' costs by index and their workers after its
 * plan. Returns the loop's cost per step, 0 when nothing usable was measured. */
static double learn(struct lbomp *lb, struct lbomp__chunks *ch)
{
        const struct lbomp__snap *s = lb->lbs.snap;
        const struct lbomp__lbrec *r = lbomp__lbs_at(&lb->lbs, lb->lbs.recs.n - 1);
        if (!s || !r || s->ntasks != ch->n || r->pub.error)
                return 0;
        if (ch->n > ch->seg_cap) {
                if (LBOMP__GROW(ch->seg, ch->n))
                        return 0;
                ch->seg_cap = ch->n;
        }
        double total = 0;
        for (uint32_t k = 0; k < s->ntasks; k++) {
                uint32_t id = s->id[k];
                if (id >= ch->n)
                        return 0;
                double cost = s->cost[k] > 0 ? s->cost[k] : 0;
                ch->seg[id] = (struct lbomp__seg){ch->c[id].lo, ch->c[id].hi, cost,
                                                  lb->tasks.task[id].worker};
                total += cost;
        }
        if (!(total > 0))
                return 0;
        ch->nseg = ch->n;
        /* The LB step's time per chunk, smoothed: one slow decision is not the rule. Its fixed
         * part (snapshot, plan set-up) does not grow with the chunks: below 1024 chunks the time
         * is spread as if there were 1024, or a few chunks would ask for fewer still. */
        double lbt = (r->pub.decision_s + r->pub.apply_s) / (ch->n > 1024 ? ch->n : 1024);
        ch->lb_task_s = ch->lb_task_s > 0 ? 0.5 * (ch->lb_task_s + lbt) : lbt;
        return total;
}

/* After an LB step: new chunks when some chunk costs more than twice the target (too coarse to
 * balance) or when half as many would do (lbomp's cost per chunk); otherwise the chunks stay, and
 * with them what each core has in its cache. */
static int recut(struct lbomp *lb, struct lbomp__chunks *ch, double total)
{
        double target = lbomp__chunks_target(total, (uint32_t)lb->ws.n, lb->cfg.params.tolerance,
                                             per_chunk_s(lb, ch));
        /* Measured costs move from window to window: the target only follows a change of 2x,
         * so that noise does not cut chunks one way and back. */
        if (ch->target_s > 0 && target > 0.5 * ch->target_s && target < 2 * ch->target_s)
                target = ch->target_s;
        ch->target_s = target;
        bool coarse = false;
        for (uint32_t i = 0; i < ch->nseg && !coarse; i++)
                coarse = span(ch->seg[i].lo, ch->seg[i].hi) > 1 && ch->seg[i].cost > 2 * target;
        struct lbomp__chunk *c;
        uint32_t *owner, n;
        int rc = lbomp__chunks_cut(ch->seg, ch->nseg, target, &c, &owner, &n);
        if (rc < 0)
                return rc;
        if (coarse || 2 * (uint64_t)n < ch->n) {
                rc = adopt(lb, ch, c, owner, n, ch->begin, ch->end);
                if (rc == 0) {
                        ch->recuts++;
                        c = NULL;
                }
        }
        free(c);
        free(owner);
        return rc;
}

/* Before any LB step: the first run that ran whole gives the chunks, so that the first LB step
 * already balances chunks of about the target (the even first cut knows nothing of where the cost
 * is, and its long chunks are timed badly on a loaded machine). A window that measured nothing
 * leaves them to the LB step. */
static int first_costs(struct lbomp *lb, struct lbomp__chunks *ch)
{
        if (ch->nseg || lb->lbs.recs.n || lb->win.timed == 0 || lb->tasks.renewed ||
            !(lb->clock.ticks_per_s > 0))
                return 0;
        /* Every chunk's times (a timed run: lbomp__chunks_want_times()). */
        for (uint32_t i = 0; i < ch->n; i++)
                if (i >= lb->win.cap || !lb->win.ns[i])
                        return 0;
        if (ch->n > ch->seg_cap) {
                if (LBOMP__GROW(ch->seg, ch->n))
                        return -ENOMEM;
                ch->seg_cap = ch->n;
        }
        double total = 0;
        for (uint32_t i = 0; i < ch->n; i++) {
                double cost = lb->win.ticks[i] / ((double)lb->win.ns[i] * lb->clock.ticks_per_s);
                ch->seg[i] = (struct lbomp__seg){ch->c[i].lo, ch->c[i].hi, cost > 0 ? cost : 0,
                                                 lb->tasks.task[i].worker};
                total += ch->seg[i].cost;
        }
        if (!(total > 0))
                return 0;
        ch->nseg = ch->n;
        return recut(lb, ch, total);
}

/* The pieces of [b, e) as the last measurement saw them: measured segments clipped to the range
 * (their cost in proportion), and around them the mean cost per index, with the nearest
 * segment's worker. */
static int pieces_for(const struct lbomp__chunks *ch, int64_t b, int64_t e, struct lbomp__seg **out,
                      uint32_t *np)
{
        const struct lbomp__seg *s = ch->seg;
        uint32_t ns = ch->nseg;
        double cost = 0;
        for (uint32_t i = 0; i < ns; i++)
                cost += s[i].cost;
        double mean = cost / (double)span(s[0].lo, s[ns - 1].hi);
        struct lbomp__seg *p = malloc(((size_t)ns + 2) * sizeof *p);
        if (!p)
                return -ENOMEM;
        uint32_t n = 0;
        if (b < s[0].lo) {
                int64_t hi = e < s[0].lo ? e : s[0].lo;
                p[n++] = (struct lbomp__seg){b, hi, mean * (double)span(b, hi), s[0].owner};
        }
        for (uint32_t i = 0; i < ns; i++) {
                int64_t lo = s[i].lo > b ? s[i].lo : b, hi = s[i].hi < e ? s[i].hi : e;
                if (lo >= hi)
                        continue;
                double f = (double)span(lo, hi) / (double)span(s[i].lo, s[i].hi);
                p[n++] = (struct lbomp__seg){lo, hi, s[i].cost * f, s[i].owner};
        }
        if (e > s[ns - 1].hi) {
                int64_t lo = b > s[ns - 1].hi ? b : s[ns - 1].hi;
                p[n++] = (struct lbomp__seg){lo, e, mean * (double)span(lo, e), s[ns - 1].owner};
        }
        if (b >= s[ns - 1].hi || e <= s[0].lo) /* no overlap: a new domain, placed afresh */
                for (uint32_t i = 0; i < n; i++)
                        p[i].owner = LBOMP__PENDING;
        *out = p;
        *np = n;
        return 0;
}

/* The range changed to [b, e). While every chunk keeps an index and the edge chunks at most
 * double, the edges follow the range and the task set stays (its window goes on); otherwise new
 * chunks are cut, from the measured costs by index when there are some. */
static int follow(struct lbomp *lb, struct lbomp__chunks *ch, int64_t b, int64_t e)
{
        uint32_t n = ch->n;
        int64_t first_hi = n == 1 ? e : n ? ch->c[0].hi : 0;
        int64_t last_lo = n == 1 ? b : n ? ch->c[n - 1].lo : 0;
        if (ch->built && n && b < first_hi && last_lo < e &&
            span(b, first_hi) <= 2 * ch->len_first + 1 &&
            span(last_lo, e) <= 2 * ch->len_last + 1) {
                ch->c[0].lo = b;
                ch->c[n - 1].hi = e;
                ch->begin = b;
                ch->end = e;
                ch->resizes++;
                return 0;
        }
        int rc;
        if (ch->built)
                ch->rebuilds++;
        if (ch->nseg == 0 || b >= e)
                return cut_even(lb, ch, b, e);
        struct lbomp__seg *p;
        uint32_t np;
        rc = pieces_for(ch, b, e, &p, &np);
        if (rc < 0)
                return rc;
        double total = 0;
        for (uint32_t i = 0; i < np; i++)
                total += p[i].cost;
        struct lbomp__chunk *c;
        uint32_t *owner, nc;
        rc = lbomp__chunks_cut(p, np,
                               lbomp__chunks_target(total, (uint32_t)lb->ws.n,
                                                    lb->cfg.params.tolerance, per_chunk_s(lb, ch)),
                               &c, &owner, &nc);
        free(p);
        if (rc < 0)
                return rc;
        rc = adopt(lb, ch, c, owner, nc, b, e);
        if (rc < 0)
                free(c);
        free(owner);
        return rc;
}

/* The team's range for this run, and the accumulators ready for the next one. */
static int team_range(struct lbomp *lb, struct lbomp__chunks *ch, int64_t *b, int64_t *e)
{
        uint64_t bo = atomic_exchange(&ch->b_or, 0), ba = atomic_exchange(&ch->b_and, ~0ull);
        uint64_t eo = atomic_exchange(&ch->e_or, 0), ea = atomic_exchange(&ch->e_and, ~0ull);
        *b = (int64_t)bo;
        *e = (int64_t)eo;
        if (bo == ba && eo == ea)
                return 0;
        /* Name two threads that disagree, when both are among those with a slot. */
        int team = lb->team_n;
        char who[160] = "";
        for (int t = 1; t < team && (uint32_t)t < ch->req_cap; t++)
                if (ch->req[2 * t] != ch->req[0] || ch->req[2 * t + 1] != ch->req[1]) {
                        snprintf(who, sizeof who,
                                 " (thread 0: [%lld, %lld), thread %d: [%lld, %lld))",
                                 (long long)ch->req[0], (long long)ch->req[1], t,
                                 (long long)ch->req[2 * t], (long long)ch->req[2 * t + 1]);
                        break;
                }
        lbomp__set_error("lbomp: LBOMP_FOR(\"%s\"): the threads of the team passed different "
                         "ranges%s; every thread must pass the same [begin, end). The run was "
                         "refused: no index ran",
                         ch->name, who);
        return -EINVAL;
}

/* A loop follows the runtime it belongs to: a setter called on it between runs applies here too.
 * The loop's strings (topology, trace) are not its own: the loop never frees them. */
static void follow_config(struct lbomp *lb)
{
        struct lbomp__config c = lb->root->cfg;
        c.topology = NULL;
        c.trace = NULL;
        c.powercap_root = NULL;
        bool steal = c.steal != lb->cfg.steal;
        lb->cfg = c;
        if (steal) /* lbomp_set_steal: node keeps other nodes' workers off the victims */
                lbomp__workers_victims(&lb->ws, &lb->topo, c.steal);
}

bool lbomp__chunks_want_times(const struct lbomp *lb)
{
        const struct lbomp__chunks *ch = lb->chunks;
        return ch && !ch->nseg && lb->lbs.recs.n == 0;
}

int lbomp__chunks_prepare(struct lbomp *lb)
{
        struct lbomp__chunks *ch = lb->chunks;
        int64_t b = 0, e = 0;
        if (ch) {
                int rc = team_range(lb, ch, &b, &e);
                if (rc < 0)
                        return rc;
                follow_config(lb);
        }
        bool again = lbomp__tsteps_begin(lb->ts, &lb->tset);
        if (!ch)
                return 0;
        if (again && (b != ch->ts_begin || e != ch->ts_end)) {
                lbomp__set_error("lbomp: LBOMP_FOR(\"%s\") ran twice in time step %llu with two "
                                 "ranges, [%lld, %lld) then [%lld, %lld): are these two loops "
                                 "under one name? Each loop needs its own name (it has its own "
                                 "chunks, costs and balance). The run was refused: no index ran",
                                 ch->name, (unsigned long long)lb->tset.t, (long long)ch->ts_begin,
                                 (long long)ch->ts_end, (long long)b, (long long)e);
                return -EINVAL;
        }
        ch->ts_begin = b;
        ch->ts_end = e;
        int rc = 0;
        if (lb->lbs.recs.n != ch->lb_seen) {
                ch->lb_seen = lb->lbs.recs.n;
                double total = learn(lb, ch);
                if (total > 0)
                        rc = recut(lb, ch, total);
        } else if (ch->built)
                rc = first_costs(lb, ch);
        if (rc == 0 && (!ch->built || b != ch->begin || e != ch->end))
                rc = follow(lb, ch, b, e);
        return rc;
}
