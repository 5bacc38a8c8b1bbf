/*
 * lbomp_mpi.c — the public entry points of liblbomp-mpi (lbomp_mpi.h): attaching a runtime to a
 * communicator, tasks with global ids and their links, the directory of where every task lives,
 * and the rank level run after the runtime's LB steps: the ranks' loads reduced in one collective,
 * the rank-level plan (rankplan.c) and the moves (move.c) when due, one record per LB step. This
 * file is the library's only getenv() caller (LBOMP_MPI_POLICY, LBOMP_MPI_PERIOD).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "snapshot.h"

static _Thread_local char last_error[512];

const char *lbomp_mpi_last_error(void)
{
        return last_error;
}

void lbomp__mpi_error(const struct lbomp_mpi *m, bool print, const char *fmt, ...)
{
        (void)m;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
        if (print)
                fprintf(stderr, "%s\n", last_error);
}

/* ---------------------------------------------------------------------------------------------
 * Configuration: one validation path for the variables and the setters
 */

static int set_policy(struct lbomp_mpi *m, const char *name, const char *who)
{
        const struct lbomp__policy *p = name ? lbomp__policy_find(name) : NULL;
        if (!p) {
                char names[512];
                lbomp__policy_names(names, sizeof names);
                lbomp__mpi_error(m, false, "lbomp-mpi: %s '%s' is not a policy; valid: %s", who,
                                 name ? name : "(null)", names);
                return -ENOENT;
        }
        m->policy = p;
        return 0;
}

static int set_period(struct lbomp_mpi *m, const char *text, long v, const char *who)
{
        if (text) {
                char *end;
                errno = 0;
                v = strcmp(text, "auto") == 0 ? 0 : strtol(text, &end, 10);
                if (strcmp(text, "auto") != 0 && (!*text || *end || errno || v < 1))
                        v = -1;
        }
        if (v < 0 || v > 1000000000) {
                if (text)
                        lbomp__mpi_error(m, false,
                                         "lbomp-mpi: %s '%s' is not valid; expected auto or a "
                                         "number of LB steps from 1 to 1000000000",
                                         who, text);
                else
                        lbomp__mpi_error(m, false,
                                         "lbomp-mpi: %s(%ld) is not valid; expected 0 (auto) or "
                                         "a number of LB steps from 1 to 1000000000",
                                         who, v);
                return -EINVAL;
        }
        m->period = (int)v;
        return 0;
}

static int config_from_env(struct lbomp_mpi *m)
{
        const char *v = getenv("LBOMP_MPI_POLICY");
        int rc = set_policy(m, v && *v ? v : "packdrop", "LBOMP_MPI_POLICY");
        if (rc == 0 && (v = getenv("LBOMP_MPI_PERIOD")) != NULL)
                rc = set_period(m, v, 0, "LBOMP_MPI_PERIOD");
        return rc;
}

int lbomp_mpi_set_policy(lbomp_mpi_t *m, const char *name)
{
        return m ? set_policy(m, name, "lbomp_mpi_set_policy (LBOMP_MPI_POLICY)") : -EINVAL;
}

int lbomp_mpi_set_period(lbomp_mpi_t *m, int lb_steps)
{
        return m ? set_period(m, NULL, lb_steps, "lbomp_mpi_set_period (LBOMP_MPI_PERIOD)")
                 : -EINVAL;
}

const char *lbomp_mpi_get_policy(const lbomp_mpi_t *m)
{
        return m ? m->policy->name : NULL;
}

int lbomp_mpi_get_period(const lbomp_mpi_t *m)
{
        return m ? m->period : -EINVAL;
}

/* ---------------------------------------------------------------------------------------------
 * Life cycle
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

static void free_handle(struct lbomp_mpi *m)
{
        for (uint32_t i = 0; i < m->tcap; i++)
                free(m->t[i].lk);
        free(m->t);
        free(m->local_of);
        free(m->owner);
        free(m->added);
        free(m->removed);
        free(m->rec);
        lbomp__xp_free(&m->x);
        free(m);
}

int lbomp_mpi_attach(lbomp_t *lb, MPI_Comm comm, const lbomp_mpi_pup_t *pup, lbomp_mpi_t **out)
{
        int inited = 0, finalized = 0;
        MPI_Initialized(&inited);
        MPI_Finalized(&finalized);
        if (out)
                *out = NULL;
        if (!inited || finalized) {
                lbomp__mpi_error(NULL, false,
                                 "lbomp-mpi: lbomp_mpi_attach: MPI is not initialized "
                                 "(call MPI_Init_thread first)");
                return -EINVAL;
        }
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        /* From here on every rank reaches the agreement below, so that all return alike. */
        int rc = 0;
        struct lbomp_mpi *m = calloc(1, sizeof *m);
        if (!m) {
                rc = -ENOMEM;
        } else if (!lb || !out || !pup || !pup->size || !pup->pack || !pup->unpack) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_attach: %s is NULL; expected a runtime, "
                                 "the callbacks size, pack and unpack, and a place for the handle",
                                 !lb    ? "the runtime"
                                 : !out ? "out"
                                 : !pup ? "pup"
                                        : "a callback of pup (size, pack and unpack are needed)");
                rc = -EINVAL;
        } else if (provided < MPI_THREAD_FUNNELED) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_attach: MPI was initialized with "
                                 "MPI_THREAD_SINGLE, but the rank runs an OpenMP team; initialize "
                                 "it with MPI_Init_thread(..., MPI_THREAD_FUNNELED, ...)");
                rc = -EINVAL;
        } else {
                m->lb = lb;
                m->pup = *pup;
                rc = config_from_env(m);
        }
        /* Every rank must agree on the period of the LB steps and the rank-level settings. */
        int mine[4] = {rc, lb ? lbomp_get_period(lb) : -1, m && m->policy ? (int)m->period : -1, 0};
        if (m && m->policy)
                for (size_t i = 0; i < lbomp__policy_count(); i++)
                        if (lbomp__policy_at(i) == m->policy)
                                mine[3] = (int)i;
        int lo[4], hi[4];
        MPI_Allreduce(mine, lo, 4, MPI_INT, MPI_MIN, comm);
        MPI_Allreduce(mine, hi, 4, MPI_INT, MPI_MAX, comm);
        if (rc == 0 && lo[0] < 0) {
                lbomp__mpi_error(m, false, "lbomp-mpi: lbomp_mpi_attach failed on another rank");
                rc = lo[0];
        } else if (rc == 0 && (lo[1] != hi[1] || lo[2] != hi[2] || lo[3] != hi[3])) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_attach: the ranks differ in %s; it must be "
                                 "the same on every rank",
                                 lo[1] != hi[1]   ? "the runtime's period (LBOMP_PERIOD)"
                                 : lo[2] != hi[2] ? "LBOMP_MPI_PERIOD"
                                                  : "LBOMP_MPI_POLICY");
                rc = -EINVAL;
        }
        if (rc == 0) {
                MPI_Comm_dup(comm, &m->x.comm);
                MPI_Comm_rank(m->x.comm, &m->x.rank);
                MPI_Comm_size(m->x.comm, &m->x.size);
                if (load_op_users++ == 0)
                        MPI_Op_create(red_op, 1, &load_op);
                *out = m;
                return 0;
        }
        if (m)
                free_handle(m);
        return rc;
}

void lbomp_mpi_detach(lbomp_mpi_t *m)
{
        if (!m)
                return;
        MPI_Comm_free(&m->x.comm);
        if (--load_op_users == 0)
                MPI_Op_free(&load_op);
        free_handle(m);
}

/* ---------------------------------------------------------------------------------------------
 * Tasks and links
 */

static int push_gid(lbomp_gid_t **v, uint32_t *n, uint32_t *cap, lbomp_gid_t g)
{
        if (*n == *cap) {
                uint32_t c = *cap ? 2 * *cap : 64;
                lbomp_gid_t *p = realloc(*v, (size_t)c * sizeof *p);
                if (!p)
                        return -ENOMEM;
                *v = p;
                *cap = c;
        }
        (*v)[(*n)++] = g;
        return 0;
}

int lbomp_mpi_task_add(lbomp_mpi_t *m, lbomp_gid_t gid, void *data, size_t bytes, lbomp_id_t *id)
{
        if (!m || !data || gid > LBOMP_GID_MAX) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_task_add: %s; expected a handle, data not "
                                 "NULL and a gid up to %u",
                                 !m      ? "m is NULL"
                                 : !data ? "data is NULL"
                                         : "gid too large",
                                 LBOMP_GID_MAX);
                return -EINVAL;
        }
        if (lbomp__mpi_gid_room(m, gid) < 0)
                return -ENOMEM;
        if (m->local_of[gid] != NOLOCAL) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_task_add: task %u is already on this rank",
                                 gid);
                return -EEXIST;
        }
        lbomp_id_t lid;
        int rc = lbomp_task_add(m->lb, data, bytes, LBOMP_NODE_ANY, &lid);
        if (rc < 0)
                return rc;
        if ((rc = lbomp__mpi_track(m, lid, gid, data, bytes)) < 0 ||
            (rc = push_gid(&m->added, &m->nadded, &m->addcap, gid)) < 0) {
                lbomp__mpi_forget(m, lid);
                lbomp_task_remove(m->lb, lid);
                return rc;
        }
        if (id)
                *id = lid;
        return 0;
}

int lbomp_mpi_task_remove(lbomp_mpi_t *m, lbomp_gid_t gid)
{
        if (!m)
                return -EINVAL;
        if (gid >= m->gcap || m->local_of[gid] == NOLOCAL) {
                lbomp__mpi_error(m, false,
                                 "lbomp-mpi: lbomp_mpi_task_remove: task %u is not on "
                                 "this rank",
                                 gid);
                return -ENOENT;
        }
        uint32_t id = m->local_of[gid];
        int rc = lbomp_task_remove(m->lb, id);
        if (rc < 0)
                return rc;
        lbomp__mpi_forget(m, id);
        /* Added and removed before anyone heard of it: the others need not hear of either. */
        for (uint32_t i = 0; i < m->nadded; i++)
                if (m->added[i] == gid) {
                        m->added[i] = m->added[--m->nadded];
                        return 0;
                }
        return push_gid(&m->removed, &m->nremoved, &m->remcap, gid);
}

int lbomp_mpi_link(lbomp_mpi_t *m, lbomp_gid_t a, lbomp_gid_t b, size_t bytes)
{
        if (!m || a == b) {
                lbomp__mpi_error(m, false, "lbomp-mpi: lbomp_mpi_link: %s",
                                 !m ? "m is NULL" : "a task cannot be linked to itself");
                return -EINVAL;
        }
        uint32_t la = a < m->gcap ? m->local_of[a] : NOLOCAL;
        uint32_t lb_ = b < m->gcap ? m->local_of[b] : NOLOCAL;
        int rc = 0;
        if (la != NOLOCAL)
                rc = lbomp__mpi_add_link(m, la, b, (double)bytes);
        if (rc == 0 && lb_ != NOLOCAL)
                rc = lbomp__mpi_add_link(m, lb_, a, (double)bytes);
        if (rc == 0 && la != NOLOCAL && lb_ != NOLOCAL)
                rc = lbomp_link(m->lb, la, lb_, bytes);
        return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The directory
 */

static int owner_room(struct lbomp_mpi *m, uint32_t ngid)
{
        if (ngid <= m->ngid)
                return 0;
        int32_t *o = realloc(m->owner, (size_t)ngid * sizeof *o);
        if (!o)
                return -ENOMEM;
        for (uint32_t g = m->ngid; g < ngid; g++)
                o[g] = -1;
        m->owner = o;
        m->ngid = ngid;
        return 0;
}

/* Both lists of every rank, rank by rank. */
static int gather_changes(struct lbomp_mpi *m, int *cnt, int *dsp, lbomp_gid_t **all, int which)
{
        struct lbomp__xport *x = &m->x;
        int mine = which ? (int)m->nremoved : (int)m->nadded;
        MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, x->comm);
        long long t = 0;
        for (int r = 0; r < x->size; r++) {
                dsp[r] = (int)t;
                t += cnt[r];
        }
        *all = malloc((t ? (size_t)t : 1) * sizeof **all);
        int ok = *all != NULL && t <= INT32_MAX;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, x->comm);
        x->colls += 2;
        if (!ok)
                return -ENOMEM;
        MPI_Allgatherv(which ? m->removed : m->added, mine, MPI_UINT32_T, *all, cnt, dsp,
                       MPI_UINT32_T, x->comm);
        lbomp__xp_coll(x);
        return 0;
}

int lbomp_mpi_commit(lbomp_mpi_t *m)
{
        if (!m)
                return -EINVAL;
        struct lbomp__xport *x = &m->x;
        int P = x->size;
        int *cnt[2] = {malloc((size_t)P * sizeof(int)), malloc((size_t)P * sizeof(int))};
        int *dsp[2] = {malloc((size_t)P * sizeof(int)), malloc((size_t)P * sizeof(int))};
        lbomp_gid_t *all[2] = {NULL, NULL};
        int ok = cnt[0] && cnt[1] && dsp[0] && dsp[1];
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, x->comm);
        lbomp__xp_coll(x);
        int rc = ok ? 0 : -ENOMEM;
        for (int w = 0; w < 2 && rc == 0; w++)
                rc = gather_changes(m, cnt[w], dsp[w], &all[w], w);
        uint32_t ngid = m->ngid;
        if (rc == 0) {
                for (int k = 0; k < dsp[0][P - 1] + cnt[0][P - 1]; k++)
                        ngid = all[0][k] + 1 > ngid ? all[0][k] + 1 : ngid;
                ok = owner_room(m, ngid) == 0;
                MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, x->comm);
                lbomp__xp_coll(x);
                rc = ok ? 0 : -ENOMEM;
        }
        if (rc == 0) {
                for (int r = 0; r < P; r++)
                        for (int k = 0; k < cnt[1][r]; k++) {
                                lbomp_gid_t g = all[1][dsp[1][r] + k];
                                if (g < m->ngid && m->owner[g] == r)
                                        m->owner[g] = -1;
                        }
                long first = -1;
                int first_r = -1, first_o = -1;
                for (int r = 0; r < P; r++)
                        for (int k = 0; k < cnt[0][r]; k++) {
                                lbomp_gid_t g = all[0][dsp[0][r] + k];
                                if (m->owner[g] < 0 || m->owner[g] == r) {
                                        m->owner[g] = r;
                                        continue;
                                }
                                /* One gid on two ranks: the later rank in rank order drops it. */
                                if (first < 0) {
                                        first = g;
                                        first_r = r;
                                        first_o = m->owner[g];
                                }
                                if (r == x->rank && m->local_of[g] != NOLOCAL) {
                                        uint32_t id = m->local_of[g];
                                        void *data = m->t[id].data;
                                        lbomp__mpi_forget(m, id);
                                        lbomp_task_remove(m->lb, id);
                                        if (m->pup.release)
                                                m->pup.release(data, g, m->pup.arg);
                                }
                        }
                m->nadded = m->nremoved = 0;
                m->committed = true;
                if (first >= 0) {
                        lbomp__mpi_error(m, x->rank == 0,
                                         "lbomp-mpi: task %ld was added on rank %d and on rank "
                                         "%d; rank %d dropped its copy",
                                         first, first_o, first_r, first_r);
                        rc = -EEXIST;
                }
        }
        for (int w = 0; w < 2; w++) {
                free(cnt[w]);
                free(dsp[w]);
                free(all[w]);
        }
        return rc;
}

int lbomp_mpi_task_rank(const lbomp_mpi_t *m, lbomp_gid_t gid)
{
        if (!m)
                return -EINVAL;
        if (gid < m->gcap && m->local_of[gid] != NOLOCAL)
                return m->x.rank;
        if (gid < m->ngid && m->owner[gid] >= 0 && m->owner[gid] != m->x.rank)
                return m->owner[gid];
        return -ENOENT;
}

void *lbomp_mpi_task_data(const lbomp_mpi_t *m, lbomp_gid_t gid)
{
        if (!m || gid >= m->gcap || m->local_of[gid] == NOLOCAL)
                return NULL;
        return m->t[m->local_of[gid]].data;
}

int lbomp_mpi_task_gid(const lbomp_mpi_t *m, lbomp_id_t id, lbomp_gid_t *gid)
{
        if (!m || !gid)
                return -EINVAL;
        if (id >= m->tcap || m->t[id].gid == NOGID)
                return -ENOENT;
        *gid = m->t[id].gid;
        return 0;
}

size_t lbomp_mpi_local_tasks(const lbomp_mpi_t *m, lbomp_gid_t *gids, size_t cap)
{
        if (!m)
                return 0;
        size_t n = 0;
        for (uint32_t g = 0; g < m->gcap && n < m->nlocal; g++)
                if (m->local_of[g] != NOLOCAL) {
                        if (gids && n < cap)
                                gids[n] = g;
                        n++;
                }
        return n;
}

uint64_t lbomp_mpi_epoch(const lbomp_mpi_t *m)
{
        return m ? m->epoch : 0;
}

void lbomp_mpi_counters(const lbomp_mpi_t *m, uint64_t *messages, uint64_t *bytes,
                        uint64_t *collectives)
{
        if (messages)
                *messages = m ? m->x.msgs : 0;
        if (bytes)
                *bytes = m ? m->x.bytes : 0;
        if (collectives)
                *collectives = m ? m->x.colls : 0;
}

/* ---------------------------------------------------------------------------------------------
 * The rank level
 */

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

static int rank_level(struct lbomp_mpi *m)
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
                rc = rc ? rc : brc;
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

int lbomp_mpi_sync(lbomp_mpi_t *m)
{
        if (!m)
                return -EINVAL;
        int rc = 0;
        if (!m->committed)
                rc = lbomp_mpi_commit(m);
        m->steps++;
        int period = lbomp_get_period(m->lb);
        if (period > 0 && m->steps % (uint64_t)period == 0) {
                int r2 = rank_level(m);
                rc = rc ? rc : r2;
        }
        return rc;
}

int lbomp_mpi_step(lbomp_mpi_t *m, lbomp_task_fn fn, void *arg)
{
        if (!m)
                return -EINVAL;
        int rc = lbomp_step(m->lb, fn, arg);
        int r2 = lbomp_mpi_sync(m); /* every rank, whatever its step did: it is collective */
        return rc ? rc : r2;
}

int lbomp_mpi_move(lbomp_mpi_t *m, size_t n, const lbomp_gid_t *gid, const int *to,
                   uint32_t *failed)
{
        if (!m)
                return -EINVAL;
        struct lbomp__xport *x = &m->x;
        uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
        int32_t *dst = malloc((n ? n : 1) * sizeof *dst);
        int rc = ids && dst ? 0 : -ENOMEM;
        for (size_t i = 0; i < n && rc == 0; i++) {
                if (!gid || !to || gid[i] >= m->gcap || m->local_of[gid[i]] == NOLOCAL ||
                    to[i] < 0 || to[i] >= x->size) {
                        lbomp__mpi_error(m, false,
                                         "lbomp-mpi: lbomp_mpi_move: entry %zu: %s; expected a "
                                         "task of this rank and a rank from 0 to %d",
                                         i,
                                         !gid || !to ? "gid or to is NULL"
                                         : (gid[i] >= m->gcap || m->local_of[gid[i]] == NOLOCAL)
                                                 ? "the task is not on this rank"
                                                 : "the rank is out of range",
                                         x->size - 1);
                        rc = -EINVAL;
                        break;
                }
                ids[i] = m->local_of[gid[i]];
                dst[i] = to[i];
        }
        /* Everyone checks, then everyone announces what was added since (moves need it). */
        int v[2] = {rc, -(int)(m->nadded + m->nremoved + !m->committed)};
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, x->comm);
        lbomp__xp_coll(x);
        if (v[0] < 0) {
                if (rc == 0)
                        lbomp__mpi_error(m, false,
                                         "lbomp-mpi: lbomp_mpi_move failed on another "
                                         "rank: nothing moved");
                free(ids);
                free(dst);
                return v[0];
        }
        if (v[1] < 0) {
                rc = lbomp_mpi_commit(m);
                if (rc < 0) { /* a gid on two ranks: the ids checked above may be gone */
                        free(ids);
                        free(dst);
                        return rc;
                }
        }
        struct lbomp__move_result res;
        if (rc == 0)
                rc = lbomp__mpi_move(m, (uint32_t)n, ids, dst, &res);
        if (failed)
                *failed = rc == 0 ? res.pack_failures + res.unpack_failures : 0;
        free(ids);
        free(dst);
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
