/*
 * mailbox.c — the round engine of decentralized policies (mailbox.h). It runs them on the live team
 * at the LB step and on virtual workers for the simulator and the tests (policy/offline.c).
 *
 * Every worker runs the policy's round function once per round; what it sends in round r lands in
 * the destination's inbox for round r + 1, sorted by (sender, sequence), so a run depends only on
 * the snapshot and the seed, not on which thread got the lock first. Between rounds one thread
 * closes the round: it combines collectives in worker order, takes the slowest worker's time into
 * the span, and ends the run when every worker said DONE in a round that sent nothing.
 *
 * Concurrency: each destination owns two boxes, one read in the current round and one being
 * filled for the next. Appends to a box are serialized by that destination's mutex (a sender holds
 * it for one header and one memcpy); everything else a worker touches in a round is its own, and
 * rounds are separated by barriers. A mutex rather than a lock-free append because boxes grow by
 * realloc and messages have variable size; contention is bounded by the fanout and by the number
 * of pending offers, and a futex mutex does not burn the time slice of a descheduled holder when
 * the team oversubscribes the cores (spinlocks would).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "mailbox.h"

#define ALIGN     16u
#define CACHELINE 64u

struct hdr {
        uint32_t from, seq, kind, len;
        size_t off; /* of the payload in the box's bytes */
};

struct box {
        struct hdr *h;
        size_t n, cap;
        unsigned char *bytes;
        size_t used, bcap;
};

struct chunk {
        struct chunk *next;
        size_t size, used;
        _Alignas(ALIGN) unsigned char mem[];
};

/* One worker. Senders touch only `lock` and `box`; the rest is the owner's (and the closing
 * thread's between barriers). */
struct dworker {
        _Alignas(CACHELINE) pthread_mutex_t lock;
        struct box box[2]; /* box[r & 1] is read in round r, box[(r + 1) & 1] filled */
        _Alignas(CACHELINE) struct lbomp__rng rng;
        struct lbomp__msg *view; /* the sorted inbox of this round */
        size_t view_cap;
        struct chunk *arena, *arena_cur;
        uint32_t seq;       /* sends this round */
        uint32_t kind_mask; /* kinds sent this round */
        uint64_t kind_sent[LBOMP__MSG_KINDS];
        uint64_t sent; /* messages this round */
        uint32_t cnt[LBOMP__DC_NCOUNT];
        uint32_t packs;
        double pack_max;
        double red_v[LBOMP__RED_SLOTS];
        uint8_t red_op[LBOMP__RED_SLOTS];
        uint32_t red_mask;
        bool quiet_asked;
        int rc; /* of this round */
        double t_round;
};

struct lbomp__dctx {
        const struct lbomp__policy *p;
        const struct lbomp__snap *s;
        uint32_t *dest;
        uint32_t nworkers;
        struct dworker *w;
        unsigned char *state; /* nworkers × state_stride */
        size_t state_stride;
        /* written only by the closing thread, between barriers */
        uint32_t round;
        bool quiet_prev; /* no message was sent in the previous round */
        bool quiet_charged;
        bool finished;
        int err;
        double red_out[LBOMP__RED_SLOTS];
        uint32_t rounds, collectives, hops_per_coll;
        uint32_t kind_rounds[LBOMP__MSG_KINDS];
        double span_s, hop_s;
        bool virtual_run;
        /* lbomp__dec_run_remote: the other workers are in other processes, reached through tp */
        const struct lbomp__dec_transport *tp;
        uint32_t local; /* the worker of this process */
};

/* Virtual workers share one thread. Each worker's round is timed on the monotonic clock (a vDSO
 * read, where the thread CPU clock is a system call: at 16,384 workers those calls were most of
 * the simulator's time), and every VCHUNK workers the thread's CPU time is read too: the wall time
 * of the chunk beyond its CPU time was a preemption (other processes on a shared machine), and is
 * taken off the chunk's slowest worker, where it most likely fell, so that it is not charged to
 * the span. */
#define VCHUNK 64

struct lbomp__dec {
        struct lbomp__dctx dc;
        uint32_t cap; /* workers allocated */
        size_t state_cap;
};

static double round_clock(void)
{
        return lbomp__mono_s();
}

static size_t round_up(size_t n, size_t a)
{
        return (n + a - 1) / a * a;
}

/* ---------------------------------------------------------------------------------------------
 * Life cycle
 */

static void worker_free(struct dworker *w)
{
        pthread_mutex_destroy(&w->lock);
        for (int b = 0; b < 2; b++) {
                free(w->box[b].h);
                free(w->box[b].bytes);
        }
        free(w->view);
        for (struct chunk *c = w->arena, *n; c; c = n) {
                n = c->next;
                free(c);
        }
}

static int resize(struct lbomp__dec *d, uint32_t n)
{
        if (n <= d->cap)
                return 0;
        struct dworker *w = aligned_alloc(CACHELINE, round_up(n * sizeof *w, CACHELINE));
        if (!w)
                return -ENOMEM;
        memset(w, 0, n * sizeof *w);
        for (uint32_t i = 0; i < n; i++) {
                if (i < d->cap) {
                        /* A mutex may not be copied: move everything else, make a new one. */
                        w[i] = d->dc.w[i];
                        pthread_mutex_destroy(&d->dc.w[i].lock);
                }
                pthread_mutex_init(&w[i].lock, NULL);
        }
        free(d->dc.w);
        d->dc.w = w;
        d->cap = n;
        return 0;
}

struct lbomp__dec *lbomp__dec_create(uint32_t nworkers)
{
        struct lbomp__dec *d = calloc(1, sizeof *d);
        if (!d)
                return NULL;
        if (resize(d, nworkers ? nworkers : 1) < 0) {
                free(d);
                return NULL;
        }
        d->dc.nworkers = nworkers;
        return d;
}

void lbomp__dec_destroy(struct lbomp__dec *d)
{
        if (!d)
                return;
        for (uint32_t i = 0; i < d->cap; i++)
                worker_free(&d->dc.w[i]);
        free(d->dc.w);
        free(d->dc.state);
        free(d);
}

int lbomp__dec_prepare(struct lbomp__dec *d, const struct lbomp__policy *p,
                       const struct lbomp__snap *s, uint32_t *dest)
{
        if (!d || !p || !s || !dest || p->kind != LBOMP__DECENTRAL || !p->round || !s->nworkers)
                return -EINVAL;
        uint32_t P = s->nworkers;
        if (resize(d, P) < 0)
                return -ENOMEM;
        struct lbomp__dctx *dc = &d->dc;
        size_t stride = round_up(p->wstate_size ? p->wstate_size : 1, CACHELINE);
        if ((size_t)P * stride > d->state_cap) {
                free(dc->state);
                dc->state = aligned_alloc(CACHELINE, (size_t)P * stride);
                d->state_cap = dc->state ? (size_t)P * stride : 0;
                if (!dc->state)
                        return -ENOMEM;
        }
        memset(dc->state, 0, (size_t)P * stride);
        dc->state_stride = stride;
        dc->p = p;
        dc->s = s;
        dc->dest = dest;
        dc->nworkers = P;
        for (uint32_t t = 0; t < s->ntasks; t++)
                dest[t] = s->worker[t];
        for (uint32_t i = 0; i < P; i++) {
                struct dworker *w = &dc->w[i];
                for (int b = 0; b < 2; b++)
                        w->box[b].n = w->box[b].used = 0;
                for (struct chunk *c = w->arena; c; c = c->next)
                        c->used = 0;
                w->arena_cur = w->arena;
                /* seed ^ worker, the worker spread over 64 bits: with a plain seed ^ i, seeds
                 * that differ in their low bits would only permute the workers' streams. */
                lbomp__rng_seed(&w->rng, s->seed ^ (0x9e3779b97f4a7c15ull * (i + 1)));
                w->seq = w->kind_mask = w->red_mask = 0;
                w->sent = 0;
                memset(w->kind_sent, 0, sizeof w->kind_sent);
                memset(w->cnt, 0, sizeof w->cnt);
                w->packs = 0;
                w->pack_max = 0;
                w->quiet_asked = false;
                w->rc = 0;
        }
        dc->round = 0;
        dc->quiet_prev = dc->quiet_charged = dc->finished = false;
        dc->err = 0;
        memset(dc->red_out, 0, sizeof dc->red_out);
        dc->rounds = dc->collectives = 0;
        memset(dc->kind_rounds, 0, sizeof dc->kind_rounds);
        dc->span_s = dc->hop_s = 0;
        dc->virtual_run = false; /* live: wall time; lbomp__dec_run_virtual says otherwise */
        dc->tp = NULL;
        uint32_t h = 0;
        while ((1ull << h) < P)
                h++;
        dc->hops_per_coll = h;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Rounds
 */

static int by_sender(const void *a, const void *b)
{
        const struct hdr *x = a, *y = b;
        if (x->from != y->from)
                return x->from < y->from ? -1 : 1;
        return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The owner, at the start of its round: sorts what was delivered and builds the view. */
static int deliver(struct lbomp__dctx *dc, struct dworker *w)
{
        struct box *b = &w->box[dc->round & 1];
        if (b->n > w->view_cap) {
                size_t cap = b->n > 2 * w->view_cap ? b->n : 2 * w->view_cap;
                struct lbomp__msg *v = realloc(w->view, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                w->view = v;
                w->view_cap = cap;
        }
        bool sorted = true;
        for (size_t i = 1; i < b->n && sorted; i++)
                sorted = by_sender(&b->h[i - 1], &b->h[i]) < 0;
        if (!sorted) /* arrival order on real threads: make it the virtual order */
                qsort(b->h, b->n, sizeof *b->h, by_sender);
        for (size_t i = 0; i < b->n; i++)
                w->view[i] = (struct lbomp__msg){.from = b->h[i].from,
                                                 .seq = b->h[i].seq,
                                                 .kind = b->h[i].kind,
                                                 .len = b->h[i].len,
                                                 .data = b->bytes + b->h[i].off};
        return 0;
}

/* One worker's round: delivery, the policy's call, and emptying the box it read. */
static void worker_round(struct lbomp__dctx *dc, uint32_t self)
{
        struct dworker *w = &dc->w[self];
        double t0 = round_clock();
        int rc = deliver(dc, w);
        if (rc == 0)
                rc = dc->p->round(dc, self, dc->round, dc->state + (size_t)self * dc->state_stride);
        /* Nobody writes this box during this round (senders fill the other one), so it can be
         * emptied here for the round after next. */
        struct box *b = &w->box[dc->round & 1];
        b->n = b->used = 0;
        w->rc = rc;
        w->t_round = round_clock() - t0;
}

static double combine(enum lbomp__red_op op, double a, double b)
{
        switch (op) {
        case LBOMP__RED_MAX:
                return a > b ? a : b;
        case LBOMP__RED_MIN:
                return a < b ? a : b;
        default:
                return a + b;
        }
}

/* One thread, after every worker's round and before any starts the next. */
static void close_round(struct lbomp__dctx *dc)
{
        uint32_t P = dc->nworkers;
        uint64_t sent = 0;
        uint32_t kinds = 0, reds = 0;
        bool all_done = true, quiet_asked = false;
        double slowest = 0;
        int err = 0;
        for (uint32_t i = 0; i < P; i++) {
                struct dworker *w = &dc->w[i];
                sent += w->sent;
                kinds |= w->kind_mask;
                reds |= w->red_mask;
                quiet_asked |= w->quiet_asked;
                if (w->t_round > slowest)
                        slowest = w->t_round;
                if (w->rc < 0 && !err)
                        err = w->rc;
                all_done &= w->rc == LBOMP__ROUND_DONE;
        }
        dc->rounds++;
        dc->span_s += slowest;
        for (unsigned k = 0; k < LBOMP__MSG_KINDS; k++)
                dc->kind_rounds[k] += (kinds >> k) & 1;
        if (reds) {
                /* In worker order, so that live and virtual runs add in the same order. */
                double t0 = round_clock();
                uint32_t folds = 0;
                for (unsigned k = 0; k < LBOMP__RED_SLOTS; k++) {
                        if (!((reds >> k) & 1))
                                continue;
                        bool first = true;
                        double acc = 0;
                        for (uint32_t i = 0; i < P; i++) {
                                struct dworker *w = &dc->w[i];
                                if (!((w->red_mask >> k) & 1))
                                        continue;
                                acc = first ? w->red_v[k]
                                            : combine((enum lbomp__red_op)w->red_op[k], acc,
                                                      w->red_v[k]);
                                first = false;
                                folds++;
                        }
                        dc->red_out[k] = acc;
                }
                /* A tree does the same work in ceil(log2 P) hops; a hop is charged the measured
                 * cost of one fold (shared memory has no message latency to add). */
                double per_fold = folds ? (round_clock() - t0) / folds : 0;
                dc->collectives++;
                dc->span_s += dc->hops_per_coll * per_fold;
        }
        if (quiet_asked && dc->quiet_prev && !dc->quiet_charged) {
                dc->quiet_charged = true;
                dc->collectives++;
        }
        for (uint32_t i = 0; i < P; i++) {
                struct dworker *w = &dc->w[i];
                w->sent = 0;
                w->seq = w->kind_mask = w->red_mask = 0;
                w->quiet_asked = false;
        }
        dc->quiet_prev = sent == 0;
        if (!dc->quiet_prev)
                dc->quiet_charged = false;
        dc->err = err;
        dc->finished = err != 0 || (all_done && sent == 0 && reds == 0);
        if (!dc->finished && dc->rounds >= LBOMP__MAX_ROUNDS) {
                dc->err = -ELOOP;
                dc->finished = true;
        }
        dc->round++;
}

int lbomp__dec_run_threads(struct lbomp__dec *d, uint32_t self, void (*barrier)(void *arg),
                           void *arg)
{
        struct lbomp__dctx *dc = &d->dc;
        for (;;) {
                worker_round(dc, self);
                barrier(arg);
                if (self == 0)
                        close_round(dc);
                barrier(arg);
                if (dc->finished)
                        return dc->err;
        }
}

static void close_round_cb(void *arg)
{
        close_round(arg);
}

int lbomp__dec_run_serial(struct lbomp__dec *d, uint32_t self, lbomp__serial_barrier_fn barrier,
                          void *arg)
{
        struct lbomp__dctx *dc = &d->dc;
        for (;;) {
                worker_round(dc, self);
                barrier(arg, close_round_cb, dc);
                if (dc->finished)
                        return dc->err;
        }
}

int lbomp__dec_run_virtual(struct lbomp__dec *d)
{
        struct lbomp__dctx *dc = &d->dc;
        if (!dc->p)
                return -EINVAL;
        dc->virtual_run = true;
        while (!dc->finished) {
                for (uint32_t c = 0; c < dc->nworkers; c += VCHUNK) {
                        uint32_t end = c + VCHUNK < dc->nworkers ? c + VCHUNK : dc->nworkers;
                        double c0 = lbomp__thread_cpu_s(), m0 = lbomp__mono_s();
                        for (uint32_t i = c; i < end; i++)
                                worker_round(dc, i);
                        double lost = (lbomp__mono_s() - m0) - (lbomp__thread_cpu_s() - c0);
                        if (lost > 0) {
                                uint32_t top = c;
                                for (uint32_t i = c + 1; i < end; i++)
                                        top = dc->w[i].t_round > dc->w[top].t_round ? i : top;
                                double t = dc->w[top].t_round - lost;
                                dc->w[top].t_round = t > 0 ? t : 0;
                        }
                }
                close_round(dc);
        }
        return dc->err;
}

void lbomp__dec_stats(const struct lbomp__dec *d, struct lbomp__pstats *st)
{
        const struct lbomp__dctx *dc = &d->dc;
        st->messages = 0;
        memset(st->msg_by_kind, 0, sizeof st->msg_by_kind);
        st->packs = st->rejected = st->forced = st->withdrawn = 0;
        st->pack_max = 0;
        for (uint32_t i = 0; i < dc->nworkers; i++) {
                const struct dworker *w = &dc->w[i];
                for (unsigned k = 0; k < LBOMP__MSG_KINDS; k++) {
                        st->msg_by_kind[k] += w->kind_sent[k];
                        st->messages += w->kind_sent[k];
                }
                st->packs += w->packs;
                st->pack_max = w->pack_max > st->pack_max ? w->pack_max : st->pack_max;
                st->rejected += w->cnt[LBOMP__DC_REJECTED];
                st->forced += w->cnt[LBOMP__DC_FORCED];
                st->withdrawn += w->cnt[LBOMP__DC_WITHDRAWN];
        }
        st->msg_kind_names = dc->p ? dc->p->msg_kinds : NULL;
        st->collectives = dc->collectives;
        st->rounds = dc->rounds + dc->collectives * dc->hops_per_coll;
        st->span_s = dc->span_s;
        st->gossip_rounds = 0;
        for (unsigned k = 0; st->msg_kind_names && k < LBOMP__MSG_KINDS && st->msg_kind_names[k];
             k++)
                if (strcmp(st->msg_kind_names[k], "gossip") == 0)
                        st->gossip_rounds = dc->kind_rounds[k];
}

/* ---------------------------------------------------------------------------------------------
 * The policy-facing calls
 */

const struct lbomp__snap *lbomp__dc_snap(const struct lbomp__dctx *dc)
{
        return dc->s;
}

bool lbomp__dc_remote(const struct lbomp__dctx *dc)
{
        return dc->tp != NULL;
}

uint32_t *lbomp__dc_dest(struct lbomp__dctx *dc)
{
        return dc->dest;
}

uint32_t lbomp__dc_round(const struct lbomp__dctx *dc)
{
        return dc->round;
}

static int box_append(struct box *b, uint32_t from, uint32_t seq, uint32_t kind, const void *data,
                      size_t len)
{
        if (b->n == b->cap) {
                size_t cap = b->cap ? 2 * b->cap : 16;
                struct hdr *h = realloc(b->h, cap * sizeof *h);
                if (!h)
                        return -ENOMEM;
                b->h = h;
                b->cap = cap;
        }
        size_t need = b->used + round_up(len, ALIGN);
        if (need > b->bcap) {
                size_t cap = b->bcap ? 2 * b->bcap : 1024;
                while (cap < need)
                        cap *= 2;
                unsigned char *p = realloc(b->bytes, cap);
                if (!p)
                        return -ENOMEM;
                b->bytes = p;
                b->bcap = cap;
        }
        if (len)
                memcpy(b->bytes + b->used, data, len);
        b->h[b->n++] = (struct hdr){
                .from = from, .seq = seq, .kind = kind, .len = (uint32_t)len, .off = b->used};
        b->used = need;
        return 0;
}

int lbomp__dc_send(struct lbomp__dctx *dc, uint32_t self, uint32_t to, uint32_t kind,
                   const void *data, size_t len)
{
        if (to >= dc->nworkers || self >= dc->nworkers || kind >= LBOMP__MSG_KINDS ||
            len > UINT32_MAX || (len && !data))
                return -EINVAL;
        struct dworker *me = &dc->w[self], *dst = &dc->w[to];
        int rc;
        if (dc->tp && to != self) {
                rc = dc->tp->send(dc->tp->arg, to, me->seq, kind, data, len);
        } else {
                pthread_mutex_lock(&dst->lock);
                rc = box_append(&dst->box[(dc->round + 1) & 1], self, me->seq, kind, data, len);
                pthread_mutex_unlock(&dst->lock);
        }
        if (rc < 0)
                return rc;
        me->seq++;
        me->sent++;
        me->kind_sent[kind]++;
        me->kind_mask |= 1u << kind;
        return 0;
}

size_t lbomp__dc_inbox(struct lbomp__dctx *dc, uint32_t self, const struct lbomp__msg **msgs)
{
        struct dworker *w = &dc->w[self];
        *msgs = w->view;
        return w->box[dc->round & 1].n;
}

struct lbomp__rng *lbomp__dc_rng(struct lbomp__dctx *dc, uint32_t self)
{
        return &dc->w[self].rng;
}

void *lbomp__dc_alloc(struct lbomp__dctx *dc, uint32_t self, size_t bytes)
{
        struct dworker *w = &dc->w[self];
        bytes = round_up(bytes ? bytes : 1, ALIGN);
        /* First fit from the current chunk on; chunks are kept across runs and reused. */
        for (struct chunk *c = w->arena_cur; c; c = c->next) {
                if (c->size - c->used >= bytes) {
                        void *p = c->mem + c->used;
                        c->used += bytes;
                        w->arena_cur = c;
                        memset(p, 0, bytes);
                        return p;
                }
        }
        size_t last = 0;
        struct chunk **tail = &w->arena;
        while (*tail) {
                last = (*tail)->size;
                tail = &(*tail)->next;
        }
        /* Small first: most workers of a large run allocate little, and P first chunks of 64 KiB
         * were 1 GiB at 16,384 workers. */
        size_t size = last ? 2 * last : 2048;
        while (size < bytes)
                size *= 2;
        struct chunk *c = malloc(sizeof *c + size);
        if (!c)
                return NULL;
        c->next = NULL;
        c->size = size;
        c->used = bytes;
        *tail = c;
        w->arena_cur = c;
        memset(c->mem, 0, bytes);
        return c->mem;
}

void lbomp__dc_reduce(struct lbomp__dctx *dc, uint32_t self, unsigned slot, enum lbomp__red_op op,
                      double v)
{
        if (slot >= LBOMP__RED_SLOTS)
                return;
        struct dworker *w = &dc->w[self];
        w->red_v[slot] = v;
        w->red_op[slot] = (uint8_t)op;
        w->red_mask |= 1u << slot;
}

double lbomp__dc_reduced(const struct lbomp__dctx *dc, unsigned slot)
{
        return slot < LBOMP__RED_SLOTS ? dc->red_out[slot] : 0;
}

bool lbomp__dc_quiet(struct lbomp__dctx *dc, uint32_t self)
{
        dc->w[self].quiet_asked = true;
        return dc->round > 0 && dc->quiet_prev;
}

void lbomp__dc_count(struct lbomp__dctx *dc, uint32_t self, enum lbomp__dc_counter c, uint32_t n)
{
        if ((unsigned)c < LBOMP__DC_NCOUNT)
                dc->w[self].cnt[c] += n;
}

void lbomp__dc_count_pack(struct lbomp__dctx *dc, uint32_t self, double cost)
{
        struct dworker *w = &dc->w[self];
        w->packs++;
        w->pack_max = cost > w->pack_max ? cost : w->pack_max;
}

/* ---------------------------------------------------------------------------------------------
 * Workers in other processes: one local worker, the rest through a transport (mailbox.h)
 */

_Static_assert(LBOMP__RED_SLOTS == 8, "struct lbomp__dec_wsum holds 8 collective slots");

/* The summary of worker i's round that close_round() reads, and back. */
static void wsum_get(const struct dworker *w, struct lbomp__dec_wsum *m)
{
        memset(m, 0, sizeof *m);
        m->sent = w->sent;
        m->kind_mask = w->kind_mask;
        m->red_mask = w->red_mask;
        m->rc = w->rc;
        m->quiet_asked = w->quiet_asked;
        m->t_round = w->t_round;
        memcpy(m->red_v, w->red_v, sizeof m->red_v);
        memcpy(m->red_op, w->red_op, sizeof m->red_op);
}

static void wsum_put(struct dworker *w, const struct lbomp__dec_wsum *m)
{
        w->sent = m->sent;
        w->kind_mask = m->kind_mask;
        w->red_mask = m->red_mask;
        w->rc = m->rc;
        w->quiet_asked = m->quiet_asked != 0;
        w->t_round = m->t_round;
        memcpy(w->red_v, m->red_v, sizeof w->red_v);
        memcpy(w->red_op, m->red_op, sizeof w->red_op);
}

int lbomp__dec_run_remote(struct lbomp__dec *d, uint32_t self, const struct lbomp__dec_transport *t,
                          struct lbomp__dec_wsum *sum)
{
        struct lbomp__dctx *dc = &d->dc;
        if (!dc->p || !t || !t->send || !t->close || !sum || self >= dc->nworkers)
                return -EINVAL;
        dc->tp = t;
        dc->local = self;
        while (!dc->finished) {
                worker_round(dc, self);
                wsum_get(&dc->w[self], &sum[self]);
                int rc = t->close(t->arg, d, sum);
                if (rc < 0) { /* the same in every process: the run ends everywhere */
                        dc->err = rc;
                        break;
                }
                for (uint32_t i = 0; i < dc->nworkers; i++)
                        if (i != self)
                                wsum_put(&dc->w[i], &sum[i]);
                close_round(dc);
        }
        dc->tp = NULL;
        return dc->err;
}

int lbomp__dec_deliver(struct lbomp__dec *d, uint32_t from, uint32_t seq, uint32_t kind,
                       const void *data, size_t len)
{
        struct lbomp__dctx *dc = &d->dc;
        if (!dc->tp || from >= dc->nworkers || kind >= LBOMP__MSG_KINDS || len > UINT32_MAX ||
            (len && !data))
                return -EINVAL;
        /* Between the local round and close_round(): nobody else appends to this box. */
        struct dworker *w = &dc->w[dc->local];
        return box_append(&w->box[(dc->round + 1) & 1], from, seq, kind, data, len);
}
