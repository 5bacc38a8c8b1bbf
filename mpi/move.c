/*
 * move.c — tasks changing rank, and the table of this rank's tasks with global ids. A task moves
 * as one MPI message: a header (its gid, data bytes, links) and the state the application's pack
 * callback wrote. The receiver rebuilds it with unpack and adds it to its runtime; then every rank
 * learns from one all-gather which tasks arrived where (the directory), and only then does the
 * sender drop its copy: a task whose pack or unpack failed simply stays where it was, and the
 * step goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TAG_TASK   0x1b02
#define TASK_MAGIC 0x6c62746bu /* "lbtk" */

struct thdr {
        uint32_t magic;
        lbomp_gid_t gid;
        uint64_t bytes; /* the runtime's data bytes of the task */
        uint32_t nlk, pad;
        uint64_t state; /* bytes of packed state after the links */
};

/* ---------------------------------------------------------------------------------------------
 * The table of local tasks
 */

int lbomp__mpi_gid_room(struct lbomp_mpi *m, lbomp_gid_t gid)
{
        if (gid < m->gcap)
                return 0;
        uint32_t cap = m->gcap ? m->gcap : 64;
        while (cap <= gid)
                cap = cap > LBOMP_GID_MAX / 2 ? LBOMP_GID_MAX + 1u : 2 * cap;
        uint32_t *l = realloc(m->local_of, (size_t)cap * sizeof *l);
        if (!l)
                return -ENOMEM;
        for (uint32_t g = m->gcap; g < cap; g++)
                l[g] = NOLOCAL;
        m->local_of = l;
        m->gcap = cap;
        return 0;
}

int lbomp__mpi_track(struct lbomp_mpi *m, lbomp_id_t id, lbomp_gid_t gid, void *data,
                     uint64_t bytes)
{
        if (lbomp__mpi_gid_room(m, gid) < 0)
                return -ENOMEM;
        if (id >= m->tcap) {
                uint32_t cap = m->tcap ? m->tcap : 64;
                while (cap <= id)
                        cap *= 2;
                struct lbomp__mtask *t = realloc(m->t, (size_t)cap * sizeof *t);
                if (!t)
                        return -ENOMEM;
                for (uint32_t i = m->tcap; i < cap; i++)
                        t[i] = (struct lbomp__mtask){.gid = NOGID};
                m->t = t;
                m->tcap = cap;
        }
        m->t[id] = (struct lbomp__mtask){.gid = gid, .data = data, .bytes = bytes};
        m->local_of[gid] = id;
        m->nlocal++;
        return 0;
}

void lbomp__mpi_forget(struct lbomp_mpi *m, lbomp_id_t id)
{
        struct lbomp__mtask *t = &m->t[id];
        if (t->gid == NOGID)
                return;
        m->local_of[t->gid] = NOLOCAL;
        free(t->lk);
        *t = (struct lbomp__mtask){.gid = NOGID};
        m->nlocal--;
}

int lbomp__mpi_add_link(struct lbomp_mpi *m, lbomp_id_t id, lbomp_gid_t other, double bytes)
{
        struct lbomp__mtask *t = &m->t[id];
        for (uint32_t k = 0; k < t->nlk; k++)
                if (t->lk[k].gid == other) {
                        t->lk[k].bytes += bytes; /* repeated declarations add up */
                        return 0;
                }
        if (t->nlk == t->lkcap) {
                uint32_t cap = t->lkcap ? 2 * t->lkcap : 4;
                struct lbomp__mlink *l = realloc(t->lk, (size_t)cap * sizeof *l);
                if (!l)
                        return -ENOMEM;
                t->lk = l;
                t->lkcap = cap;
        }
        t->lk[t->nlk++] = (struct lbomp__mlink){other, bytes};
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Moving
 */

struct arrival {
        int from;
        lbomp_gid_t gid;
        unsigned char *msg;
        size_t len;
};

struct inbox {
        struct arrival *a;
        size_t n, cap;
};

static int on_task(void *arg, int from, const void *buf, size_t len)
{
        struct inbox *in = arg;
        struct thdr h;
        if (len < sizeof h)
                return -EFAULT;
        memcpy(&h, buf, sizeof h);
        if (h.magic != TASK_MAGIC ||
            len != sizeof h + (size_t)h.nlk * sizeof(struct lbomp__mlink) + h.state)
                return -EFAULT;
        if (in->n == in->cap) {
                size_t cap = in->cap ? 2 * in->cap : 16;
                struct arrival *a = realloc(in->a, cap * sizeof *a);
                if (!a)
                        return -ENOMEM;
                in->a = a;
                in->cap = cap;
        }
        unsigned char *copy = malloc(len);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, buf, len);
        in->a[in->n++] = (struct arrival){from, h.gid, copy, len};
        return 0;
}

static int by_arrival_gid(const void *x, const void *y)
{
        const struct arrival *a = x, *b = y;
        return (a->gid > b->gid) - (a->gid < b->gid);
}

/* One task of this rank into one message to `to`. 0, or the pack callback's error (a negative
 * errno; size() returning more than 2 GiB counts as -EFBIG), or -ENOMEM. */
static int send_task(struct lbomp_mpi *m, uint32_t id, int to, uint64_t *bytes)
{
        const struct lbomp__mtask *t = &m->t[id];
        size_t state = m->pup.size(t->data, t->gid, m->pup.arg);
        size_t lk = (size_t)t->nlk * sizeof *t->lk;
        if (state > (size_t)INT32_MAX - sizeof(struct thdr) - lk)
                return -EFBIG;
        size_t len = sizeof(struct thdr) + lk + state;
        unsigned char *buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        struct thdr h = {.magic = TASK_MAGIC,
                         .gid = t->gid,
                         .bytes = t->bytes,
                         .nlk = t->nlk,
                         .state = state};
        memcpy(buf, &h, sizeof h);
        if (lk)
                memcpy(buf + sizeof h, t->lk, lk);
        int rc = m->pup.pack(t->data, t->gid, buf + sizeof h + lk, state, m->pup.arg);
        if (rc < 0) {
                free(buf);
                return rc;
        }
        *bytes += len;
        return lbomp__xp_send_owned(&m->x, to, TAG_TASK, buf, len);
}

/* A task arrived: rebuilt by unpack, added to the runtime with its links. 0, or -EIO (unpack
 * failed), or the error of adding it. */
static int adopt(struct lbomp_mpi *m, const struct arrival *a)
{
        struct thdr h;
        memcpy(&h, a->msg, sizeof h);
        const unsigned char *lk = a->msg + sizeof h;
        const unsigned char *state = lk + (size_t)h.nlk * sizeof(struct lbomp__mlink);
        void *data = m->pup.unpack(h.gid, state, h.state, m->pup.arg);
        if (!data) {
                lbomp__mpi_error(m, true,
                                 "lbomp-mpi: rank %d: unpacking task %u from rank %d failed; it "
                                 "stays on rank %d",
                                 m->x.rank, h.gid, a->from, a->from);
                return -EIO;
        }
        lbomp_id_t id;
        int rc = lbomp_task_add(m->lb, data, h.bytes, LBOMP_NODE_ANY, &id);
        if (rc == 0 && (rc = lbomp__mpi_track(m, id, h.gid, data, h.bytes)) < 0)
                lbomp_task_remove(m->lb, id);
        for (uint32_t k = 0; rc == 0 && k < h.nlk; k++) {
                struct lbomp__mlink l;
                memcpy(&l, lk + k * sizeof l, sizeof l);
                rc = lbomp__mpi_add_link(m, id, l.gid, l.bytes);
                uint32_t nb = l.gid < m->gcap ? m->local_of[l.gid] : NOLOCAL;
                if (rc == 0 && nb != NOLOCAL) /* both ends here now: the runtime's link */
                        rc = lbomp_link(m->lb, id, nb, (size_t)l.bytes);
        }
        if (rc < 0) {
                if (m->local_of && h.gid < m->gcap && m->local_of[h.gid] != NOLOCAL) {
                        lbomp__mpi_forget(m, m->local_of[h.gid]);
                        lbomp_task_remove(m->lb, id);
                }
                if (m->pup.release)
                        m->pup.release(data, h.gid, m->pup.arg);
                lbomp__mpi_error(m, true,
                                 "lbomp-mpi: rank %d: task %u from rank %d could not be added: %s; "
                                 "it stays on rank %d",
                                 m->x.rank, h.gid, a->from, lbomp_strerror(rc), a->from);
        }
        return rc;
}

int lbomp__mpi_move(struct lbomp_mpi *m, uint32_t n, const uint32_t *ids, const int32_t *to,
                    struct lbomp__move_result *res)
{
        struct lbomp__xport *x = &m->x;
        memset(res, 0, sizeof *res);
        uint64_t bytes = 0;
        uint32_t pack_fail = 0, unpack_fail = 0;
        int err = 0, fatal = 0;
        /* sent[i]: ids[i] left in a message (its copy here waits for the directory) */
        uint8_t *sent = calloc(n ? n : 1, 1);
        if (!sent)
                fatal = -ENOMEM;
        for (uint32_t i = 0; i < n && !fatal; i++) {
                if (to[i] == x->rank)
                        continue;
                int rc = send_task(m, ids[i], to[i], &bytes);
                if (rc == 0) {
                        sent[i] = 1;
                } else if (rc == -ENOMEM) {
                        fatal = rc;
                } else {
                        pack_fail++;
                        err = err ? err : rc;
                        lbomp__mpi_error(m, true,
                                         "lbomp-mpi: rank %d: packing task %u for rank %d failed: "
                                         "%s; the task stays on rank %d",
                                         x->rank, m->t[ids[i]].gid, to[i], lbomp_strerror(rc),
                                         x->rank);
                }
        }
        /* Every rank takes part in the exchange, even one that could not send everything. */
        struct inbox in = {0};
        int rc = lbomp__xp_exchange(x, TAG_TASK, on_task, &in);
        if (rc < 0 && !fatal)
                fatal = rc;
        /* In gid order, so that local ids do not depend on the order messages arrived in. */
        if (in.n)
                qsort(in.a, in.n, sizeof *in.a, by_arrival_gid);
        lbomp_gid_t *got = malloc((in.n ? in.n : 1) * sizeof *got);
        uint32_t ngot = 0;
        if (!got)
                fatal = -ENOMEM;
        for (size_t k = 0; k < in.n && got; k++) {
                if ((rc = adopt(m, &in.a[k])) == 0) {
                        got[ngot++] = in.a[k].gid;
                } else {
                        unpack_fail++;
                        err = err ? err : rc;
                }
                free(in.a[k].msg);
        }
        for (size_t k = ngot; !got && k < in.n; k++)
                free(in.a[k].msg);
        free(in.a);
        /* The directory: who received what. */
        int P = x->size, mine = (int)ngot, *cnt = malloc((size_t)P * sizeof *cnt),
            *dsp = malloc((size_t)P * sizeof *dsp);
        int ok = cnt && dsp && !fatal, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, x->comm);
        lbomp__xp_coll(x);
        lbomp_gid_t *arrived = NULL;
        long long total = 0;
        if (all_ok) {
                MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, x->comm);
                for (int r = 0; r < P; r++) {
                        dsp[r] = (int)total;
                        total += cnt[r];
                }
                arrived = malloc((total ? (size_t)total : 1) * sizeof *arrived);
                ok = arrived != NULL;
                MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, x->comm);
                x->colls += 2;
                if (ok) {
                        MPI_Allgatherv(got, mine, MPI_UINT32_T, arrived, cnt, dsp, MPI_UINT32_T,
                                       x->comm);
                        lbomp__xp_coll(x);
                        for (int r = 0; r < P; r++)
                                for (int k = 0; k < cnt[r]; k++)
                                        m->owner[arrived[dsp[r] + k]] = r;
                } else {
                        fatal = -ENOMEM;
                }
        }
        /*
         * Out of memory somewhere: the directory could not be told, so nothing moves — the
         * arrivals are undone here and the senders keep their copies. (Their state was sent; the
         * copies that stay are the ones every rank's directory still names.)
         */
        if (!all_ok || fatal) {
                fatal = fatal ? fatal : -ENOMEM;
                for (uint32_t k = 0; k < ngot; k++) {
                        uint32_t id = m->local_of[got[k]];
                        void *data = m->t[id].data;
                        lbomp__mpi_forget(m, id);
                        lbomp_task_remove(m->lb, id);
                        if (m->pup.release)
                                m->pup.release(data, got[k], m->pup.arg);
                }
        } else {
                for (uint32_t i = 0; i < n; i++) {
                        const struct lbomp__mtask *t = &m->t[ids[i]];
                        if (!sent[i] || m->owner[t->gid] == x->rank)
                                continue; /* not sent, or not rebuilt on arrival: it stays */
                        void *data = t->data;
                        lbomp_gid_t gid = t->gid;
                        lbomp__mpi_forget(m, ids[i]);
                        lbomp_task_remove(m->lb, ids[i]);
                        if (m->pup.release)
                                m->pup.release(data, gid, m->pup.arg);
                }
        }
        /* Global figures, the same on every rank. */
        uint64_t v[4] = {all_ok && !fatal ? (uint64_t)ngot : 0, pack_fail, unpack_fail, bytes};
        MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_UINT64_T, MPI_SUM, x->comm);
        int e[2] = {err, fatal};
        MPI_Allreduce(MPI_IN_PLACE, e, 2, MPI_INT, MPI_MIN, x->comm);
        x->colls += 2;
        res->moved = (uint32_t)v[0];
        res->pack_failures = (uint32_t)v[1];
        res->unpack_failures = (uint32_t)v[2];
        res->bytes = v[3];
        res->err = e[0];
        if (res->moved)
                m->epoch++;
        free(sent);
        free(got);
        free(arrived);
        free(cnt);
        free(dsp);
        return e[1];
}
