/*
 * mpitest.c — the helpers of the MPI test cases (mpitest.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "test.h"

int rank, nranks;

struct env E = {.fail_pack = -1, .fail_unpack = -1};

/* The task's result after s steps: what a one-rank run computes. */
double burn(double acc, uint32_t work, lbomp_gid_t gid, long step)
{
        for (uint32_t i = 0; i < work; i++)
                acc = acc * 0.999999 + 1e-6 * (double)((gid + (uint32_t)step + i) % 7);
        return acc;
}

void run_task(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        struct ttask *t = data;
        const struct env *e = arg;
        t->acc = burn(t->acc, t->work, t->gid, e->step);
        t->runs++;
}

struct ttask *task_new(lbomp_gid_t gid, uint32_t work, uint32_t nblob)
{
        struct ttask *t = calloc(1, sizeof *t);
        ASSERT(t);
        t->gid = gid;
        t->work = work;
        t->nblob = nblob;
        t->acc = 1.0 + gid;
        t->blob = nblob ? malloc(nblob) : NULL;
        for (uint32_t i = 0; i < nblob; i++)
                t->blob[i] = (unsigned char)(gid * 31u + i * 7u);
        return t;
}

void task_free(struct ttask *t)
{
        free(t->blob);
        free(t);
}

#define HDR (sizeof(lbomp_gid_t) + sizeof(long) + 2 * sizeof(uint32_t) + sizeof(double))

size_t t_size(const void *data, lbomp_gid_t gid, void *arg)
{
        (void)gid;
        (void)arg;
        return HDR + ((const struct ttask *)data)->nblob;
}

int t_pack(const void *data, lbomp_gid_t gid, void *buf, size_t len, void *arg)
{
        const struct ttask *t = data;
        const struct env *e = arg;
        if ((long)gid == e->fail_pack || e->fail_pack == -2)
                return -EIO;
        if (len != HDR + t->nblob || t->gid != gid)
                return -EINVAL;
        unsigned char *p = buf;
        memcpy(p, &t->gid, sizeof t->gid);
        p += sizeof t->gid;
        memcpy(p, &t->runs, sizeof t->runs);
        p += sizeof t->runs;
        memcpy(p, &t->work, sizeof t->work);
        p += sizeof t->work;
        memcpy(p, &t->nblob, sizeof t->nblob);
        p += sizeof t->nblob;
        memcpy(p, &t->acc, sizeof t->acc);
        p += sizeof t->acc;
        if (t->nblob)
                memcpy(p, t->blob, t->nblob);
        return 0;
}

static void *t_unpack(lbomp_gid_t gid, const void *buf, size_t len, void *arg)
{
        const struct env *e = arg;
        if ((long)gid == e->fail_unpack || len < HDR)
                return NULL;
        struct ttask *t = calloc(1, sizeof *t);
        ASSERT(t);
        const unsigned char *p = buf;
        memcpy(&t->gid, p, sizeof t->gid);
        p += sizeof t->gid;
        memcpy(&t->runs, p, sizeof t->runs);
        p += sizeof t->runs;
        memcpy(&t->work, p, sizeof t->work);
        p += sizeof t->work;
        memcpy(&t->nblob, p, sizeof t->nblob);
        p += sizeof t->nblob;
        memcpy(&t->acc, p, sizeof t->acc);
        p += sizeof t->acc;
        ASSERT_EQ(t->gid, gid);
        ASSERT_EQ(len, HDR + t->nblob);
        t->blob = t->nblob ? malloc(t->nblob) : NULL;
        if (t->nblob)
                memcpy(t->blob, p, t->nblob);
        return t;
}

static void t_release(void *data, lbomp_gid_t gid, void *arg)
{
        struct env *e = arg;
        ASSERT_EQ(((struct ttask *)data)->gid, gid);
        e->released++;
        task_free(data);
}

const lbomp_mpi_pup_t pup = {
        .size = t_size, .pack = t_pack, .unpack = t_unpack, .release = t_release, .arg = &E};

/* A runtime per rank (OMP_NUM_THREADS workers), attached; tasks gid in [0, n) placed by place(),
 * costing work(gid); a ring of links. */
void setup(long n, int (*place)(long gid, long n), uint32_t (*work)(long gid, long n), int period)
{
        ASSERT_EQ(lbomp_create(&E.lb), 0);
        ASSERT_EQ(lbomp_set_period(E.lb, period), 0);
        ASSERT_EQ(lbomp_mpi_attach(E.lb, MPI_COMM_WORLD, &pup, &E.m), 0);
        for (long g = 0; g < n; g++)
                if (place(g, n) == rank)
                        ASSERT_EQ(lbomp_mpi_task_add(E.m, (lbomp_gid_t)g,
                                                     task_new((lbomp_gid_t)g, work(g, n),
                                                              (uint32_t)(g * 37 % 700)),
                                                     64, NULL),
                                  0);
        for (long g = 0; g < n; g++)
                ASSERT_EQ(lbomp_mpi_link(E.m, (lbomp_gid_t)g, (lbomp_gid_t)((g + 1) % n), 128), 0);
        ASSERT_EQ(lbomp_mpi_commit(E.m), 0);
}

void teardown(void)
{
        lbomp_gid_t g[4096];
        size_t n = lbomp_mpi_local_tasks(E.m, g, 4096);
        for (size_t i = 0; i < n; i++)
                task_free(lbomp_mpi_task_data(E.m, g[i]));
        lbomp_mpi_detach(E.m);
        lbomp_destroy(E.lb);
        E.m = NULL;
        E.lb = NULL;
}

int place_block(long g, long n)
{
        return (int)(g * nranks / n);
}

int place_first(long g, long n)
{
        (void)g;
        (void)n;
        return 0;
}

uint32_t work_hot_quarter(long g, long n)
{
        return g < n / 4 ? 40000 : 4000;
}

/* Every gid in [0, n) is on exactly one rank, every rank's directory says which, and that rank
 * holds its data. Returns the tasks on this rank. */
size_t check_directory(long n)
{
        lbomp_gid_t *mine = malloc((size_t)n * sizeof *mine);
        int *holder = malloc((size_t)n * sizeof *holder), *all = NULL;
        ASSERT(mine && holder);
        size_t k = lbomp_mpi_local_tasks(E.m, mine, (size_t)n);
        ASSERT_LE(k, n);
        for (long g = 0; g < n; g++)
                holder[g] = -1;
        for (size_t i = 0; i < k; i++) {
                holder[mine[i]] = rank;
                ASSERT(lbomp_mpi_task_data(E.m, mine[i]) != NULL);
                ASSERT_EQ(((struct ttask *)lbomp_mpi_task_data(E.m, mine[i]))->gid, mine[i]);
        }
        all = malloc((size_t)n * sizeof *all);
        ASSERT(all);
        /* max over ranks: the holder; and the count of holders must be one */
        MPI_Allreduce(holder, all, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        int *cnt = malloc((size_t)n * sizeof *cnt), *tot = malloc((size_t)n * sizeof *tot);
        ASSERT(cnt && tot);
        for (long g = 0; g < n; g++)
                cnt[g] = holder[g] >= 0;
        MPI_Allreduce(cnt, tot, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (long g = 0; g < n; g++) {
                if (tot[g] != 1)
                        FAIL("task %ld is on %d ranks", g, tot[g]);
                if (lbomp_mpi_task_rank(E.m, (lbomp_gid_t)g) != all[g])
                        FAIL("rank %d: the directory says task %ld is on rank %d, it is on %d",
                             rank, g, lbomp_mpi_task_rank(E.m, (lbomp_gid_t)g), all[g]);
        }
        free(mine);
        free(holder);
        free(all);
        free(cnt);
        free(tot);
        return k;
}

/* Steps `steps` times; after each, every task of this rank ran exactly once per step so far. */
void run_steps(long from, long steps, long n)
{
        lbomp_gid_t *g = malloc((size_t)n * sizeof *g);
        ASSERT(g);
        for (long s = from; s < from + steps; s++) {
                E.step = s;
                ASSERT_EQ(lbomp_mpi_step(E.m, run_task, &E), 0);
                size_t k = lbomp_mpi_local_tasks(E.m, g, (size_t)n);
                long total = (long)k;
                for (size_t i = 0; i < k; i++) {
                        const struct ttask *t = lbomp_mpi_task_data(E.m, g[i]);
                        if (t->runs != s + 1)
                                FAIL("rank %d, step %ld: task %u ran %ld times", rank, s, g[i],
                                     t->runs);
                }
                MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
                ASSERT_EQ(total, n);
        }
        free(g);
}

/* Every task's result is what a one-rank run computes, step by step, for the same costs. */
void check_results(long n, long steps, uint32_t (*work)(long, long))
{
        lbomp_gid_t *g = malloc((size_t)n * sizeof *g);
        double *got = calloc((size_t)n, sizeof *got);
        ASSERT(g && got);
        size_t k = lbomp_mpi_local_tasks(E.m, g, (size_t)n);
        for (size_t i = 0; i < k; i++)
                got[g[i]] = ((const struct ttask *)lbomp_mpi_task_data(E.m, g[i]))->acc;
        MPI_Allreduce(MPI_IN_PLACE, got, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (long t = 0; t < n; t++) {
                double want = 1.0 + (double)t;
                for (long s = 0; s < steps; s++)
                        want = burn(want, work(t, n), (lbomp_gid_t)t, s);
                if (got[t] != want)
                        FAIL("task %ld: %.17g, a one-rank run gives %.17g", t, got[t], want);
        }
        free(g);
        free(got);
}

lbomp_mpi_lb_stats_t totals(uint32_t *balanced, double *pred_best)
{
        lbomp_mpi_lb_stats_t sum = {0}, r;
        *balanced = 0;
        *pred_best = NAN;
        for (size_t i = 0; i < lbomp_mpi_lb_count(E.m); i++) {
                ASSERT_EQ(lbomp_mpi_lb_get(E.m, i, &r, sizeof r), 0);
                sum.migrations += r.migrations;
                sum.pack_failures += r.pack_failures;
                sum.unpack_failures += r.unpack_failures;
                sum.mpi_messages += r.mpi_messages;
                if (!sum.error)
                        sum.error = r.error;
                if (r.balanced) {
                        (*balanced)++;
                        if (isnan(*pred_best) || r.imbalance_after < *pred_best)
                                *pred_best = r.imbalance_after;
                }
                ASSERT(r.imbalance >= 1.0 - 1e-9);
                ASSERT_EQ(r.stale, 0);
        }
        return sum;
}

void expect_all(int got, int want, const char *what)
{
        int lo = got, hi = got;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (lo != want || hi != want)
                FAIL("%s: rank %d got %d; every rank should get %d", what, rank, got, want);
}
