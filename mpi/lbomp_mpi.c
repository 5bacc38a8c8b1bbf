/*
 * lbomp_mpi.c — the entry points of liblbomp-mpi (lbomp_mpi.h) an application calls first and most:
 * attaching a runtime to a communicator, the rank level's configuration, tasks with global ids and
 * their links, and the collective step, sync and move. The directory is directory.c, the rank
 * level ranklevel.c. This file is the library's only getenv() caller (LBOMP_MPI_POLICY,
 * LBOMP_MPI_PERIOD).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
                lbomp__rt_want_costs(lb);
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
                lbomp__rank_level_init();
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
        lbomp__rank_level_fini();
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
                int r2 = lbomp__rank_level(m);
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
