/*
 * kneighbor-mpi.c — the kNeighbor benchmark across MPI ranks (liblbomp-mpi). The tasks of
 * kneighbor lie on one ring over all ranks (block-placed: rank r starts with the r-th block);
 * every step each task reads the outboxes its 2k neighbours wrote in the previous step — from
 * memory when the neighbour is on the same rank, from a ghost copy exchanged by MPI (one message
 * per pair of neighbouring ranks per step) when it is not — computes under the same load patterns,
 * and publishes. lbomp balances the threads of each rank at every LB step and, through
 * liblbomp-mpi, the ranks: tasks move with their state (pack/unpack), and the halo lists are
 * rebuilt from the directory (lbomp_mpi_task_rank) after every move.
 *
 * The computation of a task depends only on its neighbours' previous outboxes, and the checksum
 * is summed on rank 0 in task order exactly as kneighbor's, so it is the same for any number of
 * ranks, threads and any balancing — and equal to kneighbor's for the same options.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kneighbor-mpi.h"

/* ---------------------------------------------------------------------------------------------
 * Options
 */

static void usage(FILE *out)
{
        fprintf(out,
                "usage: mpirun -np R kneighbor-mpi [--tasks N] [--k K] [--msg-bytes B]\n"
                "         [--work-us W] [--load uniform|linear|hotspot|lbtest|drift]\n"
                "         [--drift-every D] [--rank-policy NAME] [--rank-period auto|N]\n"
                "         [--place block|first] [common options]\n"
                "kneighbor's tasks on one ring over all ranks (see kneighbor --help), ghost data\n"
                "of the links that cross ranks sent by MPI; lbomp balances each rank's threads "
                "and\n"
                "liblbomp-mpi the ranks.\n"
                "  --rank-policy NAME  rank-level policy (LBOMP_MPI_POLICY; default packdrop)\n"
                "  --rank-period P     auto, or balance the ranks every P LB steps\n"
                "                      (LBOMP_MPI_PERIOD; default auto)\n"
                "  --place first       every task starts on rank 0 (default block)\n");
        bench_usage_common(out);
}

static const char *const loads[] = {"uniform", "linear", "hotspot", "lbtest", "drift"};

static int parse(struct mopts *mo, int argc, char **argv, int rank)
{
        struct kn_opts *o = &mo->kn;
        *mo = (struct mopts){.rank_period = -1, .fail_pack = -1};
        *o = (struct kn_opts){.tasks = -1,
                              .k = 3,
                              .msg_bytes = 1024,
                              .work_us = -1,
                              .drift_every = 20,
                              .load = "linear"};
        bench_opts_init(&o->c);
        FILE *err = rank == 0 ? stderr : fopen("/dev/null", "w");
        if (!err)
                err = stderr;
        int rc = 0;
        for (int i = 1; i < argc && rc == 0; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (rank != 0 && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0))
                        return 1;
                int r = bench_opt(&o->c, "kneighbor-mpi", argc, argv, &i);
                if (r != 0) {
                        rc = r < 0 ? -1 : 0;
                        continue;
                }
                long x;
#define NUM(name, lo, hi, field)                                                                   \
        if (strcmp(a, name) == 0) {                                                                \
                if (bench_parse_long("kneighbor-mpi", name, v, lo, hi, &x) < 0) {                  \
                        rc = -1;                                                                   \
                        continue;                                                                  \
                }                                                                                  \
                field = x;                                                                         \
                i++;                                                                               \
                continue;                                                                          \
        }
                NUM("--tasks", 1, 10000000, o->tasks);
                NUM("--k", 0, 1000, o->k);
                NUM("--msg-bytes", 8, 1 << 24, o->msg_bytes);
                NUM("--work-us", 0, 10000000, o->work_us);
                NUM("--drift-every", 1, 1000000000, o->drift_every);
                NUM("--fail-pack", 0, 10000000, mo->fail_pack);
#undef NUM
                if (strcmp(a, "--load") == 0 && v) {
                        int ok = 0;
                        for (size_t l = 0; l < sizeof loads / sizeof *loads; l++)
                                ok |= strcmp(v, loads[l]) == 0;
                        if (!ok) {
                                fprintf(err,
                                        "kneighbor-mpi: --load '%s' is not valid; valid: uniform, "
                                        "linear, hotspot, lbtest, drift\n",
                                        v);
                                rc = -1;
                        }
                        o->load = v;
                        i++;
                } else if (strcmp(a, "--rank-policy") == 0 && v) {
                        mo->rank_policy = v;
                        i++;
                } else if (strcmp(a, "--rank-period") == 0 && v) {
                        if (strcmp(v, "auto") == 0) {
                                mo->rank_period = 0;
                        } else if (bench_parse_long("kneighbor-mpi", a, v, 1, 1000000000, &x) < 0) {
                                rc = -1;
                        } else {
                                mo->rank_period = x;
                        }
                        i++;
                } else if (strcmp(a, "--place") == 0 && v) {
                        if (strcmp(v, "block") != 0 && strcmp(v, "first") != 0) {
                                fprintf(err,
                                        "kneighbor-mpi: --place '%s' is not valid; valid: block, "
                                        "first\n",
                                        v);
                                rc = -1;
                        }
                        mo->place_first = strcmp(v, "first") == 0;
                        i++;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return 1;
                } else {
                        fprintf(err, "kneighbor-mpi: unknown or incomplete option '%s'\n", a);
                        usage(err);
                        rc = -1;
                }
        }
        if (err != stderr)
                fclose(err);
        if (rc < 0)
                return rc;
        if (o->c.baseline) {
                if (rank == 0)
                        fprintf(stderr, "kneighbor-mpi: --baseline is not available: the MPI "
                                        "benchmark always runs through lbomp (use "
                                        "--policy none --rank-policy none for no balancing)\n");
                return -1;
        }
        static const long tasks[] = {64, 256, 512, 2048}, iters[] = {12, 40, 100, 200},
                          work[] = {5, 20, 50, 50};
        int z = bench_size_index(o->c.size);
        if (o->tasks < 0)
                o->tasks = tasks[z];
        if (o->c.iters < 0)
                o->c.iters = iters[z];
        if (o->work_us < 0)
                o->work_us = work[z];
        if (o->k * 2 >= o->tasks && o->k > 0) {
                if (rank == 0)
                        fprintf(stderr, "kneighbor-mpi: --k %ld needs more than %ld tasks\n", o->k,
                                2 * o->k);
                return -1;
        }
        return 0;
}

/* kneighbor's load patterns (kneighbor.c), the same formulas. */
static double load_factor(const struct kn_opts *o, long i, long s)
{
        long n = o->tasks, tenth = (n + 9) / 10;
        const char *load = o->load;
        if (strcmp(load, "uniform") == 0)
                return 1.0;
        if (strcmp(load, "linear") == 0)
                return 2.0 * (double)(i + 1) / (double)n;
        if (strcmp(load, "hotspot") == 0)
                return i < tenth ? 10.0 : 1.0;
        if (strcmp(load, "lbtest") == 0)
                return bench_lbtest_factor((unsigned long long)o->c.seed, i, 0.2, 4.2);
        long shift = (s / o->drift_every) * tenth % n; /* drift */
        return (i - shift + n) % n < tenth ? 10.0 : 1.0;
}

/* ---------------------------------------------------------------------------------------------
 * Tasks, and their state as one message (pack/unpack)
 */

static struct ktask *task_new(const struct app *a, long i)
{
        size_t nd = a->nd;
        struct ktask *t = calloc(1, sizeof *t);
        double *d = malloc((3 + 2 * (size_t)a->k) * nd * sizeof *d);
        struct nbsrc *nb = calloc(2 * (size_t)a->k + 1, sizeof *nb);
        if (!t || !d || !nb) {
                free(t);
                free(d);
                free(nb);
                return NULL;
        }
        t->i = i;
        t->data = d;
        t->out[0] = d + nd;
        t->out[1] = t->out[0] + nd;
        t->in = t->out[1] + nd;
        t->nb = nb;
        return t;
}

static void task_free(struct ktask *t)
{
        if (t) {
                free(t->data);
                free(t->nb);
                free(t);
        }
}

/* kneighbor's initial data of task i (kn_setup). */
static void task_init(const struct app *a, struct ktask *t)
{
        uint64_t x = (uint64_t)a->o.kn.c.seed * 0x9e3779b97f4a7c15ull + (uint64_t)t->i;
        for (size_t d = 0; d < a->nd; d++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                t->data[d] = (double)(x >> 11) * 0x1.0p-53;
                t->out[0][d] = t->out[1][d] = t->data[d];
        }
}

static size_t pup_size(const void *data, lbomp_gid_t gid, void *arg)
{
        (void)data;
        (void)gid;
        const struct app *a = arg;
        return 2 * sizeof(long) + 3 * a->nd * sizeof(double);
}

static int pup_pack(const void *data, lbomp_gid_t gid, void *buf, size_t len, void *arg)
{
        const struct ktask *t = data;
        const struct app *a = arg;
        if ((long)gid == a->o.fail_pack)
                return -EIO; /* the tests' failing task */
        if (len != pup_size(data, gid, arg) || t->i != (long)gid)
                return -EINVAL;
        unsigned char *p = buf;
        memcpy(p, &t->i, sizeof t->i);
        memcpy(p + sizeof(long), &t->runs, sizeof t->runs);
        /* data, out[0], out[1]: one block; the inbox is scratch and is not sent */
        memcpy(p + 2 * sizeof(long), t->data, 3 * a->nd * sizeof(double));
        return 0;
}

static void *pup_unpack(lbomp_gid_t gid, const void *buf, size_t len, void *arg)
{
        const struct app *a = arg;
        if (len != 2 * sizeof(long) + 3 * a->nd * sizeof(double))
                return NULL;
        struct ktask *t = task_new(a, (long)gid);
        if (!t)
                return NULL;
        const unsigned char *p = buf;
        long i;
        memcpy(&i, p, sizeof i);
        memcpy(&t->runs, p + sizeof(long), sizeof t->runs);
        memcpy(t->data, p + 2 * sizeof(long), 3 * a->nd * sizeof(double));
        if (i != (long)gid) {
                task_free(t);
                return NULL;
        }
        return t;
}

static void pup_release(void *data, lbomp_gid_t gid, void *arg)
{
        (void)gid;
        (void)arg;
        task_free(data);
}

/* ---------------------------------------------------------------------------------------------
 * Ghosts: who sends what to whom, rebuilt from the directory after every move
 */

static void peers_free(struct app *a)
{
        for (int p = 0; p < a->npeer; p++) {
                free(a->peer[p].send);
                free(a->peer[p].recv);
                free(a->peer[p].sbuf);
                free(a->peer[p].rbuf);
        }
        free(a->peer);
        a->peer = NULL;
        a->npeer = 0;
}

static long nb_gid(const struct app *a, long i, long slot)
{
        long j = slot / 2 + 1;
        return slot % 2 == 0 ? (i + j) % a->n : (i - j + a->n) % a->n;
}

static int cmp_gid(const void *x, const void *y)
{
        lbomp_gid_t p = *(const lbomp_gid_t *)x, q = *(const lbomp_gid_t *)y;
        return (p > q) - (p < q);
}

static int cmp_task(const void *x, const void *y)
{
        long p = (*(struct ktask *const *)x)->i, q = (*(struct ktask *const *)y)->i;
        return (p > q) - (p < q);
}

static int rebuild(struct app *a)
{
        peers_free(a);
        size_t n = lbomp_mpi_local_tasks(a->m, NULL, 0);
        free(a->gids);
        free(a->local);
        a->gids = malloc((n ? n : 1) * sizeof *a->gids);
        a->local = malloc((n ? n : 1) * sizeof *a->local);
        if (!a->gids || !a->local)
                return -ENOMEM;
        a->nlocal = lbomp_mpi_local_tasks(a->m, a->gids, n);
        for (size_t q = 0; q < n; q++)
                a->local[q] = lbomp_mpi_task_data(a->m, a->gids[q]);
        for (int r = 0; r < a->size; r++)
                a->peer_of[r] = -1;
        /* Upper bounds first: every slot of every task may be remote. */
        size_t slots = n * 2 * (size_t)a->k;
        a->peer = calloc((size_t)a->size, sizeof *a->peer);
        if (!a->peer)
                return -ENOMEM;
        for (size_t q = 0; q < n; q++) {
                struct ktask *t = a->local[q];
                for (long s = 0; s < 2 * a->k; s++) {
                        lbomp_gid_t g = (lbomp_gid_t)nb_gid(a, t->i, s);
                        int r = lbomp_mpi_task_rank(a->m, g);
                        if (r < 0)
                                return -EFAULT;
                        t->nb[s] = (struct nbsrc){0};
                        if (r == a->rank) {
                                t->nb[s].local = lbomp_mpi_task_data(a->m, g);
                                continue;
                        }
                        if (a->peer_of[r] < 0) {
                                struct peer *p = &a->peer[a->npeer];
                                p->rank = r;
                                p->send = malloc((slots ? slots : 1) * sizeof *p->send);
                                p->recv = malloc((slots ? slots : 1) * sizeof *p->recv);
                                if (!p->send || !p->recv)
                                        return -ENOMEM;
                                a->peer_of[r] = a->npeer++;
                        }
                        struct peer *p = &a->peer[a->peer_of[r]];
                        p->recv[p->nrecv++] = g;
                        p->send[p->nsend++] = t;
                }
        }
        for (int pi = 0; pi < a->npeer; pi++) {
                struct peer *p = &a->peer[pi];
                qsort(p->recv, p->nrecv, sizeof *p->recv, cmp_gid);
                qsort(p->send, p->nsend, sizeof *p->send, cmp_task);
                uint32_t u = 0;
                for (uint32_t j = 0; j < p->nrecv; j++)
                        if (u == 0 || p->recv[u - 1] != p->recv[j])
                                p->recv[u++] = p->recv[j];
                p->nrecv = u;
                u = 0;
                for (uint32_t j = 0; j < p->nsend; j++)
                        if (u == 0 || p->send[u - 1] != p->send[j])
                                p->send[u++] = p->send[j];
                p->nsend = u;
                p->sbuf = malloc(((size_t)p->nsend * a->nd + 1) * sizeof(double));
                p->rbuf = malloc(((size_t)p->nrecv * a->nd + 1) * sizeof(double));
                if (!p->sbuf || !p->rbuf)
                        return -ENOMEM;
        }
        for (size_t q = 0; q < n; q++) {
                struct ktask *t = a->local[q];
                for (long s = 0; s < 2 * a->k; s++) {
                        if (t->nb[s].local)
                                continue;
                        lbomp_gid_t g = (lbomp_gid_t)nb_gid(a, t->i, s);
                        struct peer *p = &a->peer[a->peer_of[lbomp_mpi_task_rank(a->m, g)]];
                        lbomp_gid_t *at = bsearch(&g, p->recv, p->nrecv, sizeof g, cmp_gid);
                        t->nb[s].ghost = p->rbuf + (size_t)(at - p->recv) * a->nd;
                }
        }
        a->epoch = lbomp_mpi_epoch(a->m);
        a->built = true;
        return 0;
}

/* Before step s: the outboxes written at step s - 1 that other ranks read. */
static void halo(struct app *a, long s)
{
        int prev = (int)((s + 1) & 1);
        MPI_Request *req = a->req;
        int nr = 0;
        for (int pi = 0; pi < a->npeer; pi++) {
                struct peer *p = &a->peer[pi];
                MPI_Irecv(p->rbuf, (int)(p->nrecv * a->nd), MPI_DOUBLE, p->rank, TAG_HALO,
                          MPI_COMM_WORLD, &req[nr++]);
        }
        for (int pi = 0; pi < a->npeer; pi++) {
                struct peer *p = &a->peer[pi];
                for (uint32_t j = 0; j < p->nsend; j++)
                        memcpy(p->sbuf + (size_t)j * a->nd, p->send[j]->out[prev],
                               a->nd * sizeof(double));
                MPI_Isend(p->sbuf, (int)(p->nsend * a->nd), MPI_DOUBLE, p->rank, TAG_HALO,
                          MPI_COMM_WORLD, &req[nr++]);
                a->ghost_msgs++;
                a->ghost_bytes += (uint64_t)p->nsend * a->nd * sizeof(double);
        }
        MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
}

/* One step of one task: kneighbor's kn_task_step, reading neighbours where they are. */
static void task_step(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        struct ktask *t = data;
        const struct app *a = arg;
        long k = a->k, s = a->step;
        size_t nd = a->nd;
        int prev = (int)((s + 1) & 1), cur = (int)(s & 1);
        for (long slot = 0; slot < 2 * k; slot++) {
                const struct nbsrc *b = &t->nb[slot];
                memcpy(t->in + nd * (size_t)slot, b->local ? b->local->out[prev] : b->ghost,
                       nd * sizeof(double));
        }
        double f = load_factor(&a->o.kn, t->i, s);
        double acc =
                bench_burn(t->data, nd, (long)llround(f * (double)a->o.kn.work_us * WORK_PER_US));
        for (size_t d = 0; d < nd; d++) {
                double sum = 0;
                for (long j = 0; j < 2 * k; j++)
                        sum += t->in[nd * (size_t)j + d];
                t->data[d] =
                        0.5 * t->data[d] + 0.5 * (k > 0 ? sum / (double)(2 * k) : 0.0) + 1e-9 * acc;
        }
        memcpy(t->out[cur], t->data, nd * sizeof(double));
        t->runs++;
}

int main(int argc, char **argv)
{
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        struct app a = {0};
        MPI_Comm_rank(MPI_COMM_WORLD, &a.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &a.size);
        int prc = parse(&a.o, argc, argv, a.rank);
        if (prc != 0) {
                MPI_Finalize();
                return prc > 0 ? 0 : 2;
        }
        const struct kn_opts *o = &a.o.kn;
        a.n = o->tasks;
        a.k = o->k;
        a.nd = (size_t)o->msg_bytes / sizeof(double);
        a.peer_of = malloc((size_t)a.size * sizeof *a.peer_of);
        a.req = malloc(2 * (size_t)a.size * sizeof *a.req);
        if (!a.peer_of || !a.req)
                return kmpi_fail(&a, "out of memory", -ENOMEM);
        int rc = lbomp_create(&a.lb);
        if (rc == -ECANCELED) {
                MPI_Finalize();
                return 0;
        }
        if (rc < 0)
                return kmpi_fail(&a, "lbomp_create failed", rc);
        if ((o->c.policy && (rc = lbomp_set_policy(a.lb, o->c.policy)) < 0) ||
            (o->c.period > 0 && (rc = lbomp_set_period(a.lb, (int)o->c.period)) < 0) ||
            (o->c.threads > 0 && (rc = lbomp_set_workers(a.lb, (int)o->c.threads)) < 0))
                return kmpi_fail(&a, "configuration", rc);
        lbomp_mpi_pup_t pup = {.size = pup_size,
                               .pack = pup_pack,
                               .unpack = pup_unpack,
                               .release = pup_release,
                               .arg = &a};
        if ((rc = lbomp_mpi_attach(a.lb, MPI_COMM_WORLD, &pup, &a.m)) < 0)
                return kmpi_fail(&a, "lbomp_mpi_attach failed", rc);
        if ((a.o.rank_policy && (rc = lbomp_mpi_set_policy(a.m, a.o.rank_policy)) < 0) ||
            (a.o.rank_period >= 0 && (rc = lbomp_mpi_set_period(a.m, (int)a.o.rank_period)) < 0))
                return kmpi_fail(&a, "rank-level configuration", rc);
        /* This rank's block of the ring (or everything on rank 0). */
        long lo = a.o.place_first ? (a.rank == 0 ? 0 : a.n) : a.n * a.rank / a.size;
        long hi = a.o.place_first ? a.n : a.n * (a.rank + 1) / a.size;
        size_t bytes = (3 + 2 * (size_t)a.k) * (size_t)o->msg_bytes;
        for (long i = lo; i < hi; i++) {
                struct ktask *t = task_new(&a, i);
                if (!t)
                        return kmpi_fail(&a, "out of memory", -ENOMEM);
                task_init(&a, t);
                if ((rc = lbomp_mpi_task_add(a.m, (lbomp_gid_t)i, t, bytes, NULL)) < 0)
                        return kmpi_fail(&a, "adding a task", rc);
        }
        /* Every rank declares the links of its own tasks (the next k on the ring, both ways:
         * each rank keeps the halves of its tasks). */
        for (long i = 0; i < a.n; i++)
                for (long j = 1; j <= a.k; j++) {
                        long b = (i + j) % a.n;
                        if ((i >= lo && i < hi) || (b >= lo && b < hi))
                                if ((rc = lbomp_mpi_link(a.m, (lbomp_gid_t)i, (lbomp_gid_t)b,
                                                         (size_t)o->msg_bytes)) < 0)
                                        return kmpi_fail(&a, "linking tasks", rc);
                }
        if ((rc = lbomp_mpi_commit(a.m)) < 0)
                return kmpi_fail(&a, "lbomp_mpi_commit failed", rc);
        double *step_s = malloc((size_t)o->c.iters * sizeof *step_s);
        if (!step_s)
                return kmpi_fail(&a, "out of memory", -ENOMEM);
        int once = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = bench_now_s(), checking = 0;
        for (long s = 0; s < o->c.iters; s++) {
                double ts = bench_now_s();
                if ((!a.built || lbomp_mpi_epoch(a.m) != a.epoch) && (rc = rebuild(&a)) < 0)
                        return kmpi_fail(&a, "rebuilding the halo lists", rc);
                halo(&a, s);
                a.step = s;
                if ((rc = lbomp_mpi_step(a.m, task_step, &a)) < 0)
                        return kmpi_fail(&a, "step failed", rc);
                double te = bench_now_s();
                step_s[s] = te - ts;
                /* Every task of this rank ran once more (the tasks that arrived ran on the
                 * rank they left: their count came with them). */
                if ((!a.built || lbomp_mpi_epoch(a.m) != a.epoch) && (rc = rebuild(&a)) < 0)
                        return kmpi_fail(&a, "rebuilding the halo lists", rc);
                for (size_t q = 0; q < a.nlocal && once; q++)
                        if (a.local[q]->runs != s + 1) {
                                fprintf(stderr,
                                        "kneighbor-mpi: rank %d: task %ld ran %ld times in %ld "
                                        "steps: exactly-once violated\n",
                                        a.rank, a.local[q]->i, a.local[q]->runs, s + 1);
                                once = 0;
                        }
                checking += bench_now_s() - te;
        }
        double total_s = bench_now_s() - t0 - checking;
        MPI_Allreduce(MPI_IN_PLACE, &total_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &once, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        double step_med = bench_median(step_s, o->c.iters), sum = NAN;
        int all_once = once;
        if (kmpi_checksum(&a, o->c.iters, &sum, &all_once) < 0)
                return kmpi_fail(&a, "out of memory", -ENOMEM);
        once = once && all_once;
        MPI_Bcast(&once, 1, MPI_INT, 0, MPI_COMM_WORLD);
        kmpi_report(&a, total_s, step_med, sum, once);
        for (size_t q = 0; q < a.nlocal; q++)
                task_free(a.local[q]);
        peers_free(&a);
        free(a.gids);
        free(a.local);
        free(a.peer_of);
        free(a.req);
        free(step_s);
        lbomp_mpi_detach(a.m);
        lbomp_destroy(a.lb);
        MPI_Finalize();
        return once ? 0 : 1;
}
