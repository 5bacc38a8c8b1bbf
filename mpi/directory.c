/*
 * directory.c — where every task lives: each rank's copy of owner[gid], filled by the commit (the
 * tasks every rank added and removed since, gathered from all) and by the moves (move.c), and the
 * queries an application makes for its halo exchanges. Every rank applies the same changes in rank
 * order, so the copies agree.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

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
