/*
 * ranklevel.c — the rank level after each LB step of the runtimes: the ranks' loads reduced in one
 * collective (from the costs the runtime measured, rtcost.c), and, when due, the rank-level plan
 * (rankplan.c), the plan's predicted λ and the moves (move.c); one record per LB step, the same
 * on every rank, and the report.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "snapshot.h"

/* ---------------------------------------------------------------------------------------------
 * The rank level
 */

/* The load reduction of every LB step in one collective: sums, then maxima. */
enum { RED_LOAD, RED_STALE, RED_PENDING, RED_MAX, RED_N };

static void red_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
        (void)type;
        const double *a = in;
        double *b = inout;
        for (int i = 0; i + RED_N <= *len; i += RED_N) {
                for (int k = 0; k < RED_MAX; k++)
                        b[i + k] += a[i + k];
                if (a[i + RED_MAX] > b[i + RED_MAX])
                        b[i + RED_MAX] = a[i + RED_MAX];
        }
}

static MPI_Op load_op = MPI_OP_NULL;
static int load_op_users;

/* MPI operations are process-wide: one for every handle, made by the first, freed by the last. */
void lbomp__rank_level_init(void)
{
        if (load_op_users++ == 0)
                MPI_Op_create(red_op, 1, &load_op);
}

void lbomp__rank_level_fini(void)
{
        if (--load_op_users == 0)
                MPI_Op_free(&load_op);
}

static lbomp_mpi_lb_stats_t *new_record(struct lbomp_mpi *m)
{
        if (m->nrec == m->reccap) {
                size_t cap = m->reccap ? 2 * m->reccap : 16;
                lbomp_mpi_lb_stats_t *r = realloc(m->rec, cap * sizeof *r);
                if (!r)
                        return NULL;
                m->rec = r;
                m->reccap = cap;
        }
        lbomp_mpi_lb_stats_t *r = &m->rec[m->nrec++];
        memset(r, 0, sizeof *r);
        return r;
}

/* This rank's movable tasks as the plan sees them, from the runtime's costs; the others' load
 * goes into bg. Arrays freed by the caller (one block each). */
struct own_buf {
        struct lbomp__rtasks o;
        lbomp_gid_t *gid, *lk_gid;
        double *cost, *lk_bytes;
        uint64_t *bytes;
        uint32_t *lk_off, *id;
};

static void own_free(struct own_buf *b)
{
        free(b->gid);
        free(b->lk_gid);
        free(b->cost);
        free(b->lk_bytes);
        free(b->bytes);
        free(b->lk_off);
        free(b->id);
}

static int by_id_gid(const void *x, const void *y, void *arg)
{
        const struct lbomp_mpi *m = arg;
        lbomp_gid_t a = m->t[*(const uint32_t *)x].gid, b = m->t[*(const uint32_t *)y].gid;
        return (a > b) - (a < b);
}

static int own_build(struct lbomp_mpi *m, const struct lbomp__rtcost *c, struct own_buf *b)
{
        memset(b, 0, sizeof *b);
        double W = c->workers > 0 ? c->workers : 1;
        uint32_t n = 0;
        size_t nlk = 0;
        double bg = 0;
        double *cost_of = malloc((m->tcap ? m->tcap : 1) * sizeof *cost_of);
        b->id = malloc((c->n ? c->n : 1) * sizeof *b->id);
        if (!cost_of || !b->id) {
                free(cost_of);
                return -ENOMEM;
        }
        for (uint32_t k = 0; k < c->n; k++) {
                uint32_t id = c->id[k];
                if (id < m->tcap && m->t[id].gid != NOGID && m->t[id].gid < m->ngid) {
                        b->id[n++] = id;
                        cost_of[id] = c->cost[k] / W;
                        nlk += m->t[id].nlk;
                } else {
                        bg += c->cost[k] / W;
                }
        }
        qsort_r(b->id, n, sizeof *b->id, by_id_gid, m);
        b->gid = malloc((n ? n : 1) * sizeof *b->gid);
        b->cost = malloc((n ? n : 1) * sizeof *b->cost);
        b->bytes = malloc((n ? n : 1) * sizeof *b->bytes);
        b->lk_off = malloc(((size_t)n + 1) * sizeof *b->lk_off);
        b->lk_gid = malloc((nlk ? nlk : 1) * sizeof *b->lk_gid);
        b->lk_bytes = malloc((nlk ? nlk : 1) * sizeof *b->lk_bytes);
        if (!b->gid || !b->cost || !b->bytes || !b->lk_off || !b->lk_gid || !b->lk_bytes) {
                free(cost_of);
                return -ENOMEM;
        }
        size_t l = 0;
        for (uint32_t i = 0; i < n; i++) {
                const struct lbomp__mtask *t = &m->t[b->id[i]];
                b->gid[i] = t->gid;
                b->cost[i] = cost_of[b->id[i]];
                b->bytes[i] = t->bytes;
                b->lk_off[i] = (uint32_t)l;
                for (uint32_t k = 0; k < t->nlk; k++) {
                        b->lk_gid[l] = t->lk[k].gid;
                        b->lk_bytes[l++] = t->lk[k].bytes;
                }
        }
        b->lk_off[n] = (uint32_t)l;
        free(cost_of);
        b->o = (struct lbomp__rtasks){.n = n,
                                      .gid = b->gid,
                                      .cost = b->cost,
                                      .bytes = b->bytes,
                                      .lk_off = b->lk_off,
                                      .lk_gid = b->lk_gid,
                                      .lk_bytes = b->lk_bytes,
                                      .bg = bg};
        return 0;
}

/* λ the plan predicts: every rank's load after the moves, from what each sends where. */
static double predicted(struct lbomp_mpi *m, const struct own_buf *b, const int32_t *dest,
                        double load, int *rc)
{
        struct lbomp__xport *x = &m->x;
        int P = x->size;
        double *out = calloc((size_t)P, sizeof *out), in = 0;
        int ok = out != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, x->comm);
        lbomp__xp_coll(x);
        if (!ok) {
                free(out);
                *rc = -ENOMEM;
                return NAN;
        }
        for (uint32_t i = 0; i < b->o.n; i++)
                if (dest[i] != x->rank) {
                        out[dest[i]] += b->o.cost[i];
                        load -= b->o.cost[i];
                }
        MPI_Reduce_scatter_block(out, &in, 1, MPI_DOUBLE, MPI_SUM, x->comm);
        double v[RED_N] = {load + in, 0, 0, load + in};
        MPI_Allreduce(MPI_IN_PLACE, v, RED_N, MPI_DOUBLE, load_op, x->comm);
        x->colls += 2;
        free(out);
        double avg = v[RED_LOAD] / P;
        return avg > 0 ? v[RED_MAX] / avg : 1.0;
}

int lbomp__rank_level(struct lbomp_mpi *m)
{
        struct lbomp__xport *x = &m->x;
        int P = x->size;
        uint64_t msgs0 = x->msgs, bytes0 = x->bytes, colls0 = x->colls;
        struct lbomp__rtcost c;
        lbomp__rt_costs(m->lb, &m->lb_seen, &c);
        double W = c.workers > 0 ? c.workers : 1, load = 0;
        for (uint32_t k = 0; k < c.n; k++)
                load += c.cost[k] / W;
        double v[RED_N] = {load, c.fresh ? 0 : 1, (double)(m->nadded + m->nremoved), load};
        double tr = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, v, RED_N, MPI_DOUBLE, load_op, x->comm);
        lbomp__xp_coll(x);
        double t0 = MPI_Wtime(); /* every rank leaves the reduction at about the same time */
        int rc = v[RED_PENDING] > 0 ? lbomp_mpi_commit(m) : 0;
        lbomp_mpi_lb_stats_t rec = {.step = m->steps - 1, .policy = m->policy->name};
        for (int k = 0; k < LBOMP_MSG_KINDS && m->policy->msg_kinds && m->policy->msg_kinds[k]; k++)
                rec.kind_name[k] = m->policy->msg_kinds[k];
        rec.avg_load = v[RED_LOAD] / P;
        rec.max_load = v[RED_MAX];
        rec.imbalance = rec.avg_load > 0 ? rec.max_load / rec.avg_load : 1.0;
        rec.imbalance_after = rec.imbalance;
        rec.stale = v[RED_STALE] > 0;
        rec.error = rc;
        rec.reduce_s = t0 - tr;
        uint64_t check = m->checks++;
        const struct lbomp__params *prm = lbomp__rt_params(m->lb);
        /* Policy none: the loads are reduced and recorded, nothing is planned. */
        bool due = !rec.stale && P > 1 && strcmp(m->policy->name, "none") != 0 &&
                   (m->period == 0 ? rec.imbalance > 1 + prm->tolerance
                                   : (check + 1) % (uint64_t)m->period == 0);
        double decision = 0, migrate = 0;
        if (due) {
                struct own_buf b;
                int32_t *dest = NULL;
                int brc = own_build(m, &c, &b);
                if (brc == 0 && !(dest = malloc((b.o.n ? b.o.n : 1) * sizeof *dest)))
                        brc = -ENOMEM;
                MPI_Allreduce(MPI_IN_PLACE, &brc, 1, MPI_INT, MPI_MIN, x->comm);
                lbomp__xp_coll(x);
                if (brc == 0) {
                        struct lbomp__rplan_in in = {
                                .policy = m->policy,
                                .own = &b.o,
                                .owner = m->owner,
                                .ngid = m->ngid,
                                .seed = lbomp__snap_seed(lbomp__rt_seed(m->lb) ^ 0x6d7069ull,
                                                         check),
                                .lb_step = check,
                                .params = prm};
                        struct lbomp__pstats st;
                        double td = MPI_Wtime();
                        brc = lbomp__rank_plan(x, &in, dest, &st);
                        decision = MPI_Wtime() - td;
                        rec.balanced = 1;
                        rec.messages = st.messages;
                        rec.rounds = st.rounds;
                        rec.span_s = st.span_s;
                        for (int k = 0; k < LBOMP_MSG_KINDS; k++)
                                rec.kind_messages[k] = st.msg_by_kind[k];
                        if (brc == 0)
                                rec.imbalance_after = predicted(m, &b, dest, load, &brc);
                        if (brc == 0) {
                                uint32_t n = 0;
                                for (uint32_t i = 0; i < b.o.n; i++)
                                        if (dest[i] != x->rank) {
                                                b.id[n] = b.id[i];
                                                dest[n++] = dest[i];
                                        }
                                double tm = MPI_Wtime();
                                struct lbomp__move_result res;
                                brc = lbomp__mpi_move(m, n, b.id, dest, &res);
                                migrate = MPI_Wtime() - tm;
                                rec.migrations = res.moved;
                                rec.migrated_bytes = res.bytes;
                                rec.pack_failures = res.pack_failures;
                                rec.unpack_failures = res.unpack_failures;
                                if (!rec.error)
                                        rec.error = res.err;
                        }
                }
                if (brc < 0 && !rec.error)
                        rec.error = brc;
                if (brc < 0)
                        lbomp__mpi_error(m, x->rank == 0,
                                         "lbomp-mpi: the rank level after step %llu failed: %s; "
                                         "no task moved",
                                         (unsigned long long)rec.step, lbomp_strerror(brc));
                /* As the runtime's LB step: a policy that failed is recorded (and said), not
                 * returned; running out of memory is. */
                rc = rc ? rc : brc == -ENOMEM ? brc : 0;
                own_free(&b);
                free(dest);
                /* Global figures of a balancing step: sums of what was sent, the slowest times. */
                uint64_t sum[2] = {x->msgs - msgs0, x->bytes - bytes0};
                double mx[3] = {decision, migrate, MPI_Wtime() - t0};
                MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_UINT64_T, MPI_SUM, x->comm);
                MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, x->comm);
                x->colls += 2;
                rec.mpi_messages = sum[0];
                rec.mpi_bytes = sum[1];
                decision = mx[0];
                migrate = mx[1];
                rec.total_s = mx[2];
        }
        rec.decision_s = decision;
        rec.migrate_s = migrate;
        rec.collectives = (uint32_t)(x->colls - colls0);
        lbomp_mpi_lb_stats_t *r = new_record(m);
        if (r)
                *r = rec;
        else if (!rc)
                rc = -ENOMEM;
        return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Records and report
 */

size_t lbomp_mpi_lb_count(const lbomp_mpi_t *m)
{
        return m ? m->nrec : 0;
}

int lbomp_mpi_lb_get(const lbomp_mpi_t *m, size_t i, lbomp_mpi_lb_stats_t *out, size_t size)
{
        if (!m || !out || size == 0)
                return -EINVAL;
        if (i >= m->nrec)
                return -ENOENT;
        memset(out, 0, size);
        memcpy(out, &m->rec[i], size < sizeof m->rec[i] ? size : sizeof m->rec[i]);
        return 0;
}

int lbomp_mpi_report(const lbomp_mpi_t *m, FILE *out)
{
        if (!m || !out)
                return -EINVAL;
        fprintf(out,
                "lbomp-mpi: %d ranks, rank-level policy %s, period %s%.0d LB step(s)\n"
                "%6s %8s %8s %10s %9s %10s %10s %10s %10s %10s\n",
                m->x.size, m->policy->name, m->period ? "" : "auto", m->period, "step", "λ-ranks",
                "λ-after", "migrations", "messages", "mpi-msgs", "mpi-bytes", "reduce-s",
                "decision-s", "balance-s");
        uint64_t mig = 0, msgs = 0, bytes = 0;
        for (size_t i = 0; i < m->nrec; i++) {
                const lbomp_mpi_lb_stats_t *r = &m->rec[i];
                fprintf(out,
                        "%6llu %8.3f %8.3f %10u %9llu %10llu %10llu %10.3g %10.3g %10.3g%s%s\n",
                        (unsigned long long)r->step, r->imbalance, r->imbalance_after,
                        r->migrations, (unsigned long long)r->messages,
                        (unsigned long long)r->mpi_messages, (unsigned long long)r->mpi_bytes,
                        r->reduce_s, r->decision_s, r->total_s,
                        r->stale ? "  stale costs: skipped" : "",
                        r->pack_failures || r->unpack_failures ? "  failed moves" : "");
                mig += r->migrations;
                msgs += r->mpi_messages;
                bytes += r->mpi_bytes;
        }
        fprintf(out,
                "lbomp-mpi: %zu LB steps, %llu tasks changed rank, %llu MPI messages, %llu "
                "bytes\n",
                m->nrec, (unsigned long long)mig, (unsigned long long)msgs,
                (unsigned long long)bytes);
        return 0;
}
