/*
 * xport.c — how liblbomp-mpi talks: every message of a phase (a policy round, the tasks of a move)
 * is a synchronous-mode MPI send, and the phase ends with the NBX algorithm (Hoefler, Siebert and
 * Lumsdaine, PPoPP 2010): each rank receives whatever arrives while its own sends are not all
 * matched, then enters a non-blocking barrier and keeps receiving until the barrier completes,
 * which it does once every send of every rank was matched. No rank needs to know beforehand how
 * many messages it will get, and no array over all ranks is exchanged. Counted here: every
 * point-to-point message and byte lbomp sends, and every collective it calls.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct xout {
        unsigned char *buf;
};

/* The requests apart from the buffers, for MPI_Testall. */
static MPI_Request *reqs_of(struct lbomp__xport *x)
{
        return (MPI_Request *)(void *)(x->out + x->outcap);
}

static int grow_out(struct lbomp__xport *x)
{
        if (x->nout < x->outcap)
                return 0;
        size_t cap = x->outcap ? 2 * x->outcap : 16;
        /* One block: cap buffers, then cap requests. */
        void *p = malloc(cap * (sizeof(struct xout) + sizeof(MPI_Request)));
        if (!p)
                return -ENOMEM;
        struct xout *o = p;
        MPI_Request *r = (MPI_Request *)(void *)(o + cap);
        if (x->nout) {
                memcpy(o, x->out, x->nout * sizeof *o);
                memcpy(r, reqs_of(x), x->nout * sizeof *r);
        }
        free(x->out);
        x->out = o;
        x->outcap = cap;
        return 0;
}

int lbomp__xp_send_owned(struct lbomp__xport *x, int to, int tag, void *buf, size_t len)
{
        if (len > (size_t)INT32_MAX) { /* one MPI message counts its bytes in an int */
                free(buf);
                return -EINVAL;
        }
        if (grow_out(x) < 0) {
                free(buf);
                return -ENOMEM;
        }
        MPI_Issend(buf, (int)len, MPI_BYTE, to, tag, x->comm, &reqs_of(x)[x->nout]);
        x->out[x->nout++].buf = buf;
        x->msgs++;
        x->bytes += len;
        return 0;
}

int lbomp__xp_send(struct lbomp__xport *x, int to, int tag, const void *hdr, size_t hlen,
                   const void *data, size_t len)
{
        if (hlen + len > (size_t)INT32_MAX)
                return -EINVAL;
        unsigned char *buf = malloc(hlen + len ? hlen + len : 1);
        if (!buf)
                return -ENOMEM;
        if (hlen)
                memcpy(buf, hdr, hlen);
        if (len)
                memcpy(buf + hlen, data, len);
        return lbomp__xp_send_owned(x, to, tag, buf, hlen + len);
}

/* One matched message: into the receive buffer, or, when that cannot grow, consumed and lost
 * (the receive truncates it on purpose; the caller reports -ENOMEM). */
static int receive(struct lbomp__xport *x, MPI_Message *msg, int count)
{
        size_t need = count > 0 ? (size_t)count : 1;
        if (need > x->rcap) {
                unsigned char *b = realloc(x->rbuf, need);
                if (!b) {
                        unsigned char c;
                        MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
                        MPI_Mrecv(&c, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);
                        MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_ARE_FATAL);
                        return -ENOMEM;
                }
                x->rbuf = b;
                x->rcap = need;
        }
        MPI_Mrecv(x->rbuf, count, MPI_BYTE, msg, MPI_STATUS_IGNORE);
        return 0;
}

/*
 * The phases of one rank follow each other, and every caller separates two phases with the same
 * tag by a collective (the round's summary, the move's directory), so a message of the next phase
 * cannot reach a rank still receiving this one.
 */
int lbomp__xp_exchange(struct lbomp__xport *x, int tag,
                       int (*on_recv)(void *arg, int from, const void *buf, size_t len), void *arg)
{
        int err = 0, done = 0;
        bool in_barrier = false;
        MPI_Request barrier = MPI_REQUEST_NULL;
        while (!done) {
                int flag = 0;
                MPI_Message msg;
                MPI_Status st;
                MPI_Improbe(MPI_ANY_SOURCE, tag, x->comm, &flag, &msg, &st);
                if (flag) {
                        int count = 0;
                        MPI_Get_count(&st, MPI_BYTE, &count);
                        int rc = receive(x, &msg, count);
                        if (rc == 0)
                                rc = on_recv(arg, st.MPI_SOURCE, x->rbuf, (size_t)count);
                        if (rc < 0 && !err)
                                err = rc;
                        continue;
                }
                if (!in_barrier) {
                        int all = 0;
                        MPI_Testall((int)x->nout, reqs_of(x), &all, MPI_STATUSES_IGNORE);
                        if (all) {
                                MPI_Ibarrier(x->comm, &barrier);
                                in_barrier = true;
                        }
                } else {
                        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
                }
                /* Nothing arrived: let the other processes of an oversubscribed node run. */
                if (!done)
                        sched_yield();
        }
        for (size_t i = 0; i < x->nout; i++)
                free(x->out[i].buf);
        x->nout = 0;
        x->colls++;
        return err;
}

void lbomp__xp_coll(struct lbomp__xport *x)
{
        x->colls++;
}

void lbomp__xp_free(struct lbomp__xport *x)
{
        for (size_t i = 0; i < x->nout; i++)
                free(x->out[i].buf);
        free(x->out);
        free(x->rbuf);
        x->out = NULL;
        x->rbuf = NULL;
        x->nout = x->outcap = x->rcap = 0;
}
