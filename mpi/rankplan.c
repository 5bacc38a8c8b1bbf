/*
 * rankplan.c — the plan of the rank level: a snapshot whose workers are the ranks, and the policy
 * run on it. A decentralized policy runs where the data is: each rank builds its local view (its
 * own tasks, and as ghosts the tasks of other ranks its tasks are linked to) and runs its worker's
 * rounds through the round engine (mailbox.h), whose messages are MPI messages (xport.c); since
 * every rank closes each round with the same summaries, the plan is the one the virtual run of the
 * whole snapshot gives. A centralized policy runs on rank 0 over the whole snapshot, gathered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mailbox.h"
#include "snapshot.h"

#define TAG_POLICY 0x1b01

static const double one_node = 1.0; /* the rank level has no NUMA distances */

struct pair {
        lbomp_gid_t a, b; /* a < b */
        double bytes;
};

static int by_pair(const void *x, const void *y)
{
        const struct pair *p = x, *q = y;
        if (p->a != q->a)
                return p->a < q->a ? -1 : 1;
        return (p->b > q->b) - (p->b < q->b);
}

static int by_gid(const void *x, const void *y)
{
        lbomp_gid_t a = *(const lbomp_gid_t *)x, b = *(const lbomp_gid_t *)y;
        return (a > b) - (a < b);
}

static int64_t own_pos(const struct lbomp__rtasks *o, lbomp_gid_t g)
{
        uint32_t lo = 0, hi = o->n;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (o->gid[mid] < g)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < o->n && o->gid[lo] == g ? (int64_t)lo : -1;
}

/* The link pairs this rank knows of its own tasks, each once, as (min, max): a pair of two own
 * tasks from its smaller end; with `only_smaller`, also a pair to another rank's task only from
 * the smaller end (so that gathered from every rank, each pair comes once). */
static struct pair *own_pairs(const struct lbomp__rtasks *o, bool only_smaller, size_t *np)
{
        size_t n = 0, cap = o->lk_off[o->n];
        struct pair *p = malloc((cap ? cap : 1) * sizeof *p);
        if (!p)
                return NULL;
        for (uint32_t i = 0; i < o->n; i++) {
                lbomp_gid_t a = o->gid[i];
                for (uint32_t k = o->lk_off[i]; k < o->lk_off[i + 1]; k++) {
                        lbomp_gid_t b = o->lk_gid[k];
                        bool b_own = own_pos(o, b) >= 0;
                        if ((b_own || only_smaller) && b < a)
                                continue;
                        p[n++] = (struct pair){a < b ? a : b, a < b ? b : a, o->lk_bytes[k]};
                }
        }
        qsort(p, n, sizeof *p, by_pair);
        *np = n;
        return p;
}

/* ---------------------------------------------------------------------------------------------
 * Decentralized: the local view, and MPI as the round engine's transport
 */

struct dec_run {
        struct lbomp__xport *x;
        struct lbomp__dec *d;
        uint32_t self;
};

static int t_send(void *arg, uint32_t to, uint32_t seq, uint32_t kind, const void *data, size_t len)
{
        struct dec_run *r = arg;
        uint32_t hdr[2] = {seq, kind};
        return lbomp__xp_send(r->x, (int)to, TAG_POLICY, hdr, sizeof hdr, data, len);
}

static int on_policy_msg(void *arg, int from, const void *buf, size_t len)
{
        struct dec_run *r = arg;
        uint32_t hdr[2];
        if (len < sizeof hdr)
                return -EFAULT;
        memcpy(hdr, buf, sizeof hdr);
        return lbomp__dec_deliver(r->d, (uint32_t)from, hdr[0], hdr[1],
                                  (const unsigned char *)buf + sizeof hdr, len - sizeof hdr);
}

static int t_close(void *arg, struct lbomp__dec *d, struct lbomp__dec_wsum *sum)
{
        struct dec_run *r = arg;
        r->d = d;
        int rc = lbomp__xp_exchange(r->x, TAG_POLICY, on_policy_msg, r);
        if (rc < 0 && sum[r->self].rc >= 0)
                sum[r->self].rc = rc; /* every rank sees it in the summary: the run ends */
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sum, (int)sizeof *sum, MPI_BYTE,
                      r->x->comm);
        lbomp__xp_coll(r->x);
        return 0;
}

/* This rank's view: its tasks and, as ghosts, the other ranks' tasks they are linked to, all in
 * gid order; the links of its tasks in (min, max) order. */
static int build_local(struct lbomp__snapbuf *sb, const struct lbomp__rplan_in *in, int rank, int P,
                       uint32_t **own_index)
{
        const struct lbomp__rtasks *o = in->own;
        size_t np;
        struct pair *pr = own_pairs(o, false, &np);
        lbomp_gid_t *ghost = malloc((np ? np : 1) * sizeof *ghost);
        uint32_t *idx = malloc((o->n ? o->n : 1) * sizeof *idx);
        int rc = -ENOMEM;
        if (!pr || !ghost || !idx)
                goto out;
        size_t ng = 0;
        for (size_t k = 0; k < np; k++) {
                lbomp_gid_t g = own_pos(o, pr[k].a) >= 0 ? pr[k].b : pr[k].a;
                if (own_pos(o, g) < 0)
                        ghost[ng++] = g;
        }
        qsort(ghost, ng, sizeof *ghost, by_gid);
        size_t u = 0;
        for (size_t k = 0; k < ng; k++)
                if (u == 0 || ghost[u - 1] != ghost[k])
                        ghost[u++] = ghost[k];
        ng = u;
        for (size_t k = 0; k < ng; k++)
                if (ghost[k] >= in->ngid || in->owner[ghost[k]] < 0) {
                        rc = -EFAULT; /* a link to a task no rank has: the directory is stale */
                        goto out;
                }
        if ((rc = lbomp__snap_begin(sb, (uint32_t)P, 1, &one_node, o->n + (uint32_t)ng, in->ngid,
                                    np)) < 0)
                goto out;
        for (int w = 0; w < P; w++)
                lbomp__snap_worker(sb, (uint32_t)w, w == rank ? o->bg : 0.0, 0);
        size_t gi = 0;
        for (uint32_t i = 0; i <= o->n; i++) {
                while (gi < ng && (i == o->n || ghost[gi] < o->gid[i])) {
                        lbomp__snap_task(sb, (uint32_t)in->owner[ghost[gi]], ghost[gi], 0.0, 0, -1);
                        gi++;
                }
                if (i < o->n)
                        idx[i] = lbomp__snap_task(sb, (uint32_t)rank, o->gid[i], o->cost[i],
                                                  o->bytes[i], -1);
        }
        for (size_t k = 0; k < np; k++)
                lbomp__snap_link(sb, pr[k].a, pr[k].b, pr[k].bytes);
        *own_index = idx;
        idx = NULL;
        rc = 0;
out:
        free(pr);
        free(ghost);
        free(idx);
        return rc;
}

/* Sums the policy's per-rank figures into every rank's st (rounds and span are already global). */
static void reduce_pstats(struct lbomp__xport *x, struct lbomp__pstats *st)
{
        uint64_t v[LBOMP__MSG_KINDS + 5];
        for (int k = 0; k < LBOMP__MSG_KINDS; k++)
                v[k] = st->msg_by_kind[k];
        v[LBOMP__MSG_KINDS] = st->messages;
        v[LBOMP__MSG_KINDS + 1] = st->packs;
        v[LBOMP__MSG_KINDS + 2] = st->rejected;
        v[LBOMP__MSG_KINDS + 3] = st->forced;
        v[LBOMP__MSG_KINDS + 4] = st->withdrawn;
        MPI_Allreduce(MPI_IN_PLACE, v, LBOMP__MSG_KINDS + 5, MPI_UINT64_T, MPI_SUM, x->comm);
        double pm = st->pack_max;
        MPI_Allreduce(MPI_IN_PLACE, &pm, 1, MPI_DOUBLE, MPI_MAX, x->comm);
        x->colls += 2;
        for (int k = 0; k < LBOMP__MSG_KINDS; k++)
                st->msg_by_kind[k] = v[k];
        st->messages = v[LBOMP__MSG_KINDS];
        st->packs = (uint32_t)v[LBOMP__MSG_KINDS + 1];
        st->rejected = (uint32_t)v[LBOMP__MSG_KINDS + 2];
        st->forced = (uint32_t)v[LBOMP__MSG_KINDS + 3];
        st->withdrawn = (uint32_t)v[LBOMP__MSG_KINDS + 4];
        st->pack_max = pm;
}

/* Every rank's worst: the same error everywhere. */
static int agree(struct lbomp__xport *x, int rc)
{
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, x->comm);
        x->colls++;
        return rc;
}

static int plan_decentral(struct lbomp__xport *x, const struct lbomp__rplan_in *in, int32_t *dest,
                          struct lbomp__pstats *st)
{
        int P = x->size, rank = x->rank;
        struct lbomp__snapbuf *sb = lbomp__snapbuf_create();
        struct lbomp__dec *d = lbomp__dec_create((uint32_t)P);
        uint32_t *idx = NULL;
        struct lbomp__dec_wsum *sum = calloc((size_t)P, sizeof *sum);
        int rc = sb && d && sum ? build_local(sb, in, rank, P, &idx) : -ENOMEM;
        const struct lbomp__snap *s = NULL;
        if (rc == 0) {
                s = lbomp__snap_end(sb, in->seed, in->lb_step, in->params);
                rc = lbomp__dec_prepare(d, in->policy, s, lbomp__snap_dest(sb));
        }
        /* Every rank must enter the rounds, or none. */
        if ((rc = agree(x, rc)) == 0) {
                struct dec_run run = {.x = x, .d = d, .self = (uint32_t)rank};
                struct lbomp__dec_transport t = {.arg = &run, .send = t_send, .close = t_close};
                rc = lbomp__dec_run_remote(d, (uint32_t)rank, &t, sum);
                lbomp__dec_stats(d, st);
                reduce_pstats(x, st);
                if (rc == 0) {
                        const uint32_t *plan = lbomp__snap_dest(sb);
                        for (uint32_t i = 0; i < in->own->n; i++)
                                dest[i] = (int32_t)plan[idx[i]];
                }
        }
        free(idx);
        free(sum);
        lbomp__dec_destroy(d);
        lbomp__snapbuf_destroy(sb);
        return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The whole snapshot on rank 0, and a centralized plan from it
 */

void lbomp__rank_global_free(struct lbomp__rglobal *g)
{
        if (!g)
                return;
        lbomp__snapbuf_destroy(g->sb);
        free(g->where);
        free(g);
}

struct gathered {
        int *cnt, *dsp;    /* tasks per rank */
        int *pcnt, *pdsp;  /* pairs per rank (in units of struct pair) */
        lbomp_gid_t *gid;  /* [T] rank by rank */
        double *cost, *bg; /* [T], [P] */
        uint64_t *bytes;   /* [T] */
        struct pair *pair; /* [npairs] */
        int T, npairs;
};

static void gathered_free(struct gathered *g)
{
        free(g->cnt);
        free(g->dsp);
        free(g->pcnt);
        free(g->pdsp);
        free(g->gid);
        free(g->cost);
        free(g->bg);
        free(g->bytes);
        free(g->pair);
}

static int by_gid_of(const void *x, const void *y, void *arg)
{
        const lbomp_gid_t *gid = arg;
        lbomp_gid_t a = gid[*(const uint32_t *)x], b = gid[*(const uint32_t *)y];
        return (a > b) - (a < b);
}

/* Rank 0: the gathered tasks in gid order, each on its rank, with its position there. */
static int build_global(struct gathered *g, const struct lbomp__rplan_in *in, int P,
                        struct lbomp__rglobal *out)
{
        uint32_t T = (uint32_t)g->T;
        uint32_t *order = malloc((T ? T : 1) * sizeof *order);
        int32_t *from = malloc((T ? T : 1) * sizeof *from);
        out->where = malloc((T ? T : 1) * sizeof *out->where);
        out->sb = lbomp__snapbuf_create();
        int rc = -ENOMEM;
        if (!order || !from || !out->where || !out->sb)
                goto out;
        for (int r = 0; r < P; r++)
                for (int i = 0; i < g->cnt[r]; i++)
                        from[g->dsp[r] + i] = r;
        for (uint32_t k = 0; k < T; k++)
                order[k] = k;
        qsort_r(order, T, sizeof *order, by_gid_of, g->gid);
        qsort(g->pair, (size_t)g->npairs, sizeof *g->pair, by_pair);
        out->dist = 1.0;
        if ((rc = lbomp__snap_begin(out->sb, (uint32_t)P, 1, &one_node, T, in->ngid,
                                    (size_t)g->npairs)) < 0)
                goto out;
        for (int r = 0; r < P; r++)
                lbomp__snap_worker(out->sb, (uint32_t)r, g->bg[r], 0);
        for (uint32_t k = 0; k < T; k++) {
                uint32_t j = order[k];
                if (k && g->gid[order[k - 1]] == g->gid[j]) {
                        rc = -EFAULT; /* one gid on two ranks: the directory should have said */
                        goto out;
                }
                lbomp__snap_task(out->sb, (uint32_t)from[j], g->gid[j], g->cost[j], g->bytes[j],
                                 -1);
                out->where[k] = j - (uint32_t)g->dsp[from[j]];
        }
        for (int k = 0; k < g->npairs; k++)
                lbomp__snap_link(out->sb, g->pair[k].a, g->pair[k].b, g->pair[k].bytes);
        out->s = lbomp__snap_end(out->sb, in->seed, in->lb_step, in->params);
        rc = 0;
out:
        free(order);
        free(from);
        return rc;
}

/* Displacements from counts; -ENOMEM when the total does not fit an int. */
static int displs(const int *cnt, int *dsp, int P, int *total)
{
        long long t = 0;
        for (int r = 0; r < P; r++) {
                dsp[r] = (int)t;
                t += cnt[r];
                if (t > INT32_MAX)
                        return -ENOMEM;
        }
        *total = (int)t;
        return 0;
}

int lbomp__rank_gather(struct lbomp__xport *x, const struct lbomp__rplan_in *in,
                       struct lbomp__rglobal **out)
{
        const struct lbomp__rtasks *o = in->own;
        int P = x->size, root = x->rank == 0;
        struct gathered g = {0};
        size_t np = 0;
        struct pair *pr = own_pairs(o, true, &np);
        int rc = pr && np <= INT32_MAX / sizeof *pr ? 0 : -ENOMEM;
        int mine[2] = {(int)o->n, (int)np}, *both = NULL;
        if (root) {
                both = malloc(2 * (size_t)P * sizeof *both);
                g.cnt = malloc((size_t)P * sizeof *g.cnt);
                g.dsp = malloc((size_t)P * sizeof *g.dsp);
                g.pcnt = malloc((size_t)P * sizeof *g.pcnt);
                g.pdsp = malloc((size_t)P * sizeof *g.pdsp);
                g.bg = malloc((size_t)P * sizeof *g.bg);
                if (!both || !g.cnt || !g.dsp || !g.pcnt || !g.pdsp || !g.bg)
                        rc = -ENOMEM;
        }
        if ((rc = agree(x, rc)) < 0)
                goto out;
        MPI_Gather(mine, 2, MPI_INT, both, 2, MPI_INT, 0, x->comm);
        MPI_Gather(&o->bg, 1, MPI_DOUBLE, g.bg, 1, MPI_DOUBLE, 0, x->comm);
        x->colls += 2;
        if (root) {
                for (int r = 0; r < P; r++) {
                        g.cnt[r] = both[2 * r];
                        g.pcnt[r] = both[2 * r + 1] * (int)sizeof(struct pair);
                }
                int pb = 0;
                if (displs(g.cnt, g.dsp, P, &g.T) < 0 || displs(g.pcnt, g.pdsp, P, &pb) < 0) {
                        rc = -ENOMEM;
                } else {
                        g.npairs = pb / (int)sizeof(struct pair);
                        size_t T = g.T ? (size_t)g.T : 1;
                        g.gid = malloc(T * sizeof *g.gid);
                        g.cost = malloc(T * sizeof *g.cost);
                        g.bytes = malloc(T * sizeof *g.bytes);
                        g.pair = malloc((g.npairs ? (size_t)g.npairs : 1) * sizeof *g.pair);
                        if (!g.gid || !g.cost || !g.bytes || !g.pair)
                                rc = -ENOMEM;
                }
        }
        if ((rc = agree(x, rc)) < 0)
                goto out;
        MPI_Gatherv(o->gid, (int)o->n, MPI_UINT32_T, g.gid, g.cnt, g.dsp, MPI_UINT32_T, 0, x->comm);
        MPI_Gatherv(o->cost, (int)o->n, MPI_DOUBLE, g.cost, g.cnt, g.dsp, MPI_DOUBLE, 0, x->comm);
        MPI_Gatherv(o->bytes, (int)o->n, MPI_UINT64_T, g.bytes, g.cnt, g.dsp, MPI_UINT64_T, 0,
                    x->comm);
        MPI_Gatherv(pr, (int)(np * sizeof *pr), MPI_BYTE, g.pair, g.pcnt, g.pdsp, MPI_BYTE, 0,
                    x->comm);
        x->colls += 4;
        struct lbomp__rglobal *gl = NULL;
        if (root) {
                gl = calloc(1, sizeof *gl);
                rc = gl ? build_global(&g, in, P, gl) : -ENOMEM;
                if (rc < 0) {
                        lbomp__rank_global_free(gl);
                        gl = NULL;
                }
        }
        if ((rc = agree(x, rc)) == 0)
                *out = gl;
        else
                lbomp__rank_global_free(gl);
out:
        free(both);
        free(pr);
        gathered_free(&g);
        return rc;
}

static int plan_central(struct lbomp__xport *x, const struct lbomp__rplan_in *in, int32_t *dest,
                        struct lbomp__pstats *st)
{
        int P = x->size, root = x->rank == 0;
        struct lbomp__rglobal *gl = NULL;
        int rc = lbomp__rank_gather(x, in, &gl);
        if (rc < 0)
                return rc;
        int *cnt = NULL, *dsp = NULL;
        int32_t *send = NULL;
        if (root) {
                const struct lbomp__snap *s = gl->s;
                uint32_t *plan = lbomp__snap_dest(gl->sb);
                rc = in->policy->plan(s, plan, st);
                cnt = calloc((size_t)P, sizeof *cnt);
                dsp = malloc((size_t)P * sizeof *dsp);
                send = malloc((s->ntasks ? s->ntasks : 1) * sizeof *send);
                if (!cnt || !dsp || !send)
                        rc = rc < 0 ? rc : -ENOMEM;
                if (rc == 0) {
                        int T = 0;
                        for (uint32_t k = 0; k < s->ntasks; k++)
                                cnt[s->worker[k]]++;
                        displs(cnt, dsp, P, &T);
                        for (uint32_t k = 0; k < s->ntasks; k++)
                                send[dsp[s->worker[k]] + (int)gl->where[k]] = (int32_t)plan[k];
                }
        }
        if ((rc = agree(x, rc)) == 0) {
                MPI_Scatterv(send, cnt, dsp, MPI_INT32_T, dest, (int)in->own->n, MPI_INT32_T, 0,
                             x->comm);
                lbomp__xp_coll(x);
        }
        /* Every rank reports the same figures: rank 0's. */
        MPI_Bcast(st, (int)sizeof *st, MPI_BYTE, 0, x->comm);
        lbomp__xp_coll(x);
        free(cnt);
        free(dsp);
        free(send);
        lbomp__rank_global_free(gl);
        return rc;
}

int lbomp__rank_plan(struct lbomp__xport *x, const struct lbomp__rplan_in *in, int32_t *dest,
                     struct lbomp__pstats *st)
{
        memset(st, 0, sizeof *st);
        for (uint32_t i = 0; i < in->own->n; i++)
                dest[i] = x->rank;
        int rc = in->policy->kind == LBOMP__DECENTRAL ? plan_decentral(x, in, dest, st)
                                                      : plan_central(x, in, dest, st);
        if (rc < 0)
                for (uint32_t i = 0; i < in->own->n; i++)
                        dest[i] = x->rank;
        st->msg_kind_names = in->policy->msg_kinds;
        return rc;
}
