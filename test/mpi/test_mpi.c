/*
 * test_mpi.c — liblbomp-mpi on real MPI ranks (mpirun -np 2 and 4, one or two threads each; see
 * meson.build). One case per run, named by argv[1]:
 *   balance      a hot quarter of the tasks on the first ranks: tasks change rank, every task runs
 *                exactly once per step across ranks, every rank's directory agrees, the results
 *                are those of a one-rank run, a plan predicts λ <= 1.10 (the best of the LB steps
 *                that balanced)
 *   roundtrip    every task travels around all ranks and back: its packed state is byte for byte
 *                what it was, release() ran once per departure
 *   empty        every task starts on rank 0: the other ranks step with no task, then get some
 *   packfail     a task whose pack (or unpack) fails stays where it was, with its state, the
 *                others move, the error is reported, and the steps go on
 *   plan         the decentralized plan over MPI is the plan of the virtual run of the gathered
 *                snapshot (packdrop, distributed), and a centralized plan is rank 0's
 *   misuse       every misuse ends in the documented error, on every rank
 *   single       MPI initialized without thread support is refused
 *   binding      (mpirun --bind-to core) every rank's runtime sees the cores mpirun gave it, and
 *                its threads run within them
 * A failed check exits 1 on that rank, which makes mpirun fail the job.
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "lbomp_mpi.h"
#include "mpitest.h"
#include "snapshot.h"
#include "test.h"

/* ---------------------------------------------------------------------------------------------
 * Cases
 */

static void case_balance(void)
{
        long n = 96, steps = 40;
        setup(n, place_block, work_hot_quarter, 5);
        check_directory(n);
        run_steps(0, steps, n);
        check_directory(n);
        check_results(n, steps, work_hot_quarter);
        uint32_t balanced;
        double pred;
        lbomp_mpi_lb_stats_t s = totals(&balanced, &pred);
        ASSERT_EQ(lbomp_mpi_lb_count(E.m), steps / 5);
        ASSERT_GT(balanced, 0);
        ASSERT_GT(s.migrations, 0);
        ASSERT_GT(s.mpi_messages, s.migrations); /* each task one message, plus the policy's */
        ASSERT_EQ(s.error, 0);
        ASSERT_DLE(pred, 1.10);
        ASSERT(lbomp_mpi_epoch(E.m) > 0);
        if (rank == 0)
                lbomp_mpi_report(E.m, stdout);
        teardown();
}

static void case_roundtrip(void)
{
        long n = 40;
        setup(n, place_block, work_hot_quarter, 1000);
        /* Every task's packed bytes before it travels. */
        unsigned char **before = calloc((size_t)n, sizeof *before);
        size_t *len = calloc((size_t)n, sizeof *len);
        lbomp_gid_t g[64];
        ASSERT(before && len);
        size_t k = lbomp_mpi_local_tasks(E.m, g, 64);
        long mine = (long)k;
        for (size_t i = 0; i < k; i++) {
                const struct ttask *t = lbomp_mpi_task_data(E.m, g[i]);
                len[g[i]] = t_size(t, g[i], &E);
                before[g[i]] = malloc(len[g[i]]);
                ASSERT_EQ(t_pack(t, g[i], before[g[i]], len[g[i]], &E), 0);
        }
        long released0 = E.released;
        for (int hop = 0; hop < nranks; hop++) {
                k = lbomp_mpi_local_tasks(E.m, g, 64);
                int to[64];
                for (size_t i = 0; i < k; i++)
                        to[i] = (rank + 1) % nranks;
                uint32_t failed = 7;
                ASSERT_EQ(lbomp_mpi_move(E.m, k, g, to, &failed), 0);
                ASSERT_EQ(failed, 0);
                ASSERT_EQ(E.released - released0, (long)k); /* once per departure */
                released0 = E.released;
                check_directory(n);
                run_steps(hop, 1, n);
        }
        /* Home again: same tasks, same bytes (runs went up by one per hop; compare the rest). */
        k = lbomp_mpi_local_tasks(E.m, g, 64);
        ASSERT_EQ((long)k, mine);
        for (size_t i = 0; i < k; i++) {
                struct ttask *t = lbomp_mpi_task_data(E.m, g[i]);
                ASSERT(before[g[i]] != NULL);
                ASSERT_EQ(t->runs, nranks);
                t->runs = 0;
                t->acc = 1.0 + g[i]; /* the steps changed it; the bytes of the rest must not */
                unsigned char *after = malloc(len[g[i]]);
                ASSERT_EQ(t_size(t, g[i], &E), len[g[i]]);
                ASSERT_EQ(t_pack(t, g[i], after, len[g[i]], &E), 0);
                if (memcmp(after, before[g[i]], len[g[i]]) != 0)
                        FAIL("task %u: packed state differs after %d hops", g[i], nranks);
                free(after);
                free(before[g[i]]);
        }
        free(before);
        free(len);
        teardown();
}

static void case_empty(void)
{
        long n = 64, steps = 30;
        setup(n, place_first, work_hot_quarter, 5);
        ASSERT_EQ(check_directory(n), rank == 0 ? n : 0);
        run_steps(0, steps, n);
        size_t k = check_directory(n);
        check_results(n, steps, work_hot_quarter);
        uint32_t balanced;
        double pred;
        lbomp_mpi_lb_stats_t s = totals(&balanced, &pred);
        ASSERT_GT(s.migrations, 0);
        ASSERT_EQ(s.error, 0);
        int have = k > 0, all = 0;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all)
                FAIL("rank %d: a rank still has no task after %ld steps", rank, steps);
        teardown();
}

static void case_packfail(void)
{
        long n = 32;
        setup(n, place_block, work_hot_quarter, 5);
        /* Rank 0 sends its first four tasks to rank 1; packing task 1 fails. */
        E.fail_pack = 1;
        lbomp_gid_t g[4] = {0, 1, 2, 3};
        int to[4] = {1, 1, 1, 1};
        void *data1 = lbomp_mpi_task_data(E.m, 1);
        uint32_t failed = 99;
        ASSERT_EQ(lbomp_mpi_move(E.m, rank == 0 ? 4 : 0, g, to, &failed), 0);
        ASSERT_EQ(failed, 1);
        if (rank == 0) {
                ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "packing task 1 for rank 1 failed");
                ASSERT(lbomp_mpi_task_data(E.m, 1) == data1); /* stayed, untouched */
        }
        ASSERT_EQ(lbomp_mpi_task_rank(E.m, 0), 1);
        ASSERT_EQ(lbomp_mpi_task_rank(E.m, 1), 0);
        ASSERT_EQ(lbomp_mpi_task_rank(E.m, 2), 1);
        check_directory(n);
        run_steps(0, 2, n);
        /* Rank 1 sends task 2 back, but rank 0 cannot rebuild it: it stays on rank 1. */
        E.fail_pack = -1;
        E.fail_unpack = 2;
        lbomp_gid_t g2[1] = {2};
        int to2[1] = {0};
        ASSERT_EQ(lbomp_mpi_move(E.m, rank == 1 ? 1 : 0, g2, to2, &failed), 0);
        ASSERT_EQ(failed, 1);
        if (rank == 0)
                ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "unpacking task 2 from rank 1 failed");
        ASSERT_EQ(lbomp_mpi_task_rank(E.m, 2), 1);
        check_directory(n);
        run_steps(2, 2, n);
        /* Balancing while no task can be packed: every LB step tries, nothing moves, the records
         * say why, and the steps go on. */
        E.fail_unpack = -1;
        E.fail_pack = -2;
        size_t r0 = lbomp_mpi_lb_count(E.m);
        run_steps(4, 36, n);
        E.fail_pack = -1;
        check_directory(n);
        check_results(n, 40, work_hot_quarter);
        uint32_t balanced = 0, fails = 0, moved = 0;
        for (size_t i = r0; i < lbomp_mpi_lb_count(E.m); i++) {
                lbomp_mpi_lb_stats_t r;
                ASSERT_EQ(lbomp_mpi_lb_get(E.m, i, &r, sizeof r), 0);
                balanced += (uint32_t)r.balanced;
                fails += r.pack_failures;
                moved += r.migrations;
                if (r.pack_failures)
                        ASSERT_EQ(r.error, -EIO);
        }
        ASSERT_GT(balanced, 0);
        ASSERT_GT(fails, 0);
        ASSERT_EQ(moved, 0);
        teardown();
}

/* The rank level's plan, over MPI, against the virtual run of the whole snapshot. */
static void case_plan(void)
{
        struct lbomp__xport x = {.rank = rank, .size = nranks};
        MPI_Comm_dup(MPI_COMM_WORLD, &x.comm);
        long n = 600;
        uint32_t cnt = 0;
        lbomp_gid_t gid[600];
        double cost[600];
        uint64_t bytes[600];
        uint32_t lk_off[601];
        lbomp_gid_t lk_gid[1800];
        double lk_bytes[1800];
        int32_t owner[600], dest[600];
        uint32_t l = 0;
        /* Uneven blocks, costs rising along the ring, a ring of links (k = 1), plus a chord. */
        for (long g = 0; g < n; g++) {
                long r = (g * g / n) * nranks / n;
                owner[g] = (int32_t)r;
                if (r != rank)
                        continue;
                gid[cnt] = (lbomp_gid_t)g;
                cost[cnt] = 1e-4 * (1.0 + (double)((g * 7919) % 13)) * (1.0 + 3.0 * g / n);
                bytes[cnt] = 100;
                lk_off[cnt] = l;
                lk_gid[l] = (lbomp_gid_t)((g + 1) % n);
                lk_bytes[l++] = 64;
                lk_gid[l] = (lbomp_gid_t)((g + n - 1) % n);
                lk_bytes[l++] = 64;
                if (g % 50 == 0) {
                        lk_gid[l] = (lbomp_gid_t)((g + n / 2) % n);
                        lk_bytes[l++] = 8;
                } else if ((g + n / 2) % 50 == 0) {
                        lk_gid[l] = (lbomp_gid_t)((g + n / 2) % n);
                        lk_bytes[l++] = 8;
                }
                cnt++;
        }
        lk_off[cnt] = l;
        struct lbomp__rtasks own = {.n = cnt,
                                    .gid = gid,
                                    .cost = cost,
                                    .bytes = bytes,
                                    .lk_off = lk_off,
                                    .lk_gid = lk_gid,
                                    .lk_bytes = lk_bytes,
                                    .bg = 1e-3 * rank};
        struct lbomp__params prm = lbomp__params_default();
        const char *names[] = {"packdrop", "distributed", "refine", "greedy"};
        for (int pi = 0; pi < 4; pi++) {
                const struct lbomp__policy *p = lbomp__policy_find(names[pi]);
                ASSERT(p);
                struct lbomp__rplan_in in = {.policy = p,
                                             .own = &own,
                                             .owner = owner,
                                             .ngid = (uint32_t)n,
                                             .seed = 12345,
                                             .lb_step = 3,
                                             .params = &prm};
                struct lbomp__pstats st;
                ASSERT_EQ(lbomp__rank_plan(&x, &in, dest, &st), 0);
                struct lbomp__rglobal *gl = NULL;
                ASSERT_EQ(lbomp__rank_gather(&x, &in, &gl), 0);
                /* every rank's (gid, dest) to rank 0 */
                int32_t pairs[1200];
                for (uint32_t i = 0; i < cnt; i++) {
                        pairs[2 * i] = (int32_t)gid[i];
                        pairs[2 * i + 1] = dest[i];
                }
                int c2 = 2 * (int)cnt, *cs = NULL, *ds = NULL;
                int32_t *all = NULL;
                if (rank == 0) {
                        cs = malloc((size_t)nranks * sizeof *cs);
                        ds = malloc((size_t)nranks * sizeof *ds);
                        all = malloc(2 * (size_t)n * sizeof *all);
                }
                MPI_Gather(&c2, 1, MPI_INT, cs, 1, MPI_INT, 0, MPI_COMM_WORLD);
                if (rank == 0)
                        for (int r = 0, d = 0; r < nranks; d += cs[r], r++)
                                ds[r] = d;
                MPI_Gatherv(pairs, c2, MPI_INT32_T, all, cs, ds, MPI_INT32_T, 0, MPI_COMM_WORLD);
                if (rank == 0) {
                        ASSERT(gl);
                        const struct lbomp__snap *s = gl->s;
                        ASSERT_EQ(s->ntasks, n);
                        uint32_t *plan = malloc(s->ntasks * sizeof *plan);
                        struct lbomp__pstats vst;
                        ASSERT_EQ(lbomp__policy_run_offline(p, s, plan, &vst), 0);
                        int32_t want[600];
                        for (uint32_t k = 0; k < s->ntasks; k++)
                                want[s->id[k]] = (int32_t)plan[k];
                        long moved = 0;
                        for (long q = 0; q < n; q++) {
                                lbomp_gid_t g = (lbomp_gid_t)all[2 * q];
                                if (all[2 * q + 1] != want[g])
                                        FAIL("%s: task %u goes to rank %d over MPI, to %d in the "
                                             "virtual run",
                                             p->name, g, all[2 * q + 1], want[g]);
                                moved += all[2 * q + 1] != owner[g];
                        }
                        if (p->kind == LBOMP__DECENTRAL) {
                                ASSERT_EQ(st.messages, vst.messages);
                                ASSERT_EQ(st.rounds, vst.rounds);
                        }
                        printf("%s: %ld of %ld tasks change rank, %llu messages, %u rounds: "
                               "the same plan as the virtual run\n",
                               p->name, moved, n, (unsigned long long)st.messages, st.rounds);
                        ASSERT_GT(moved, 0);
                        free(plan);
                }
                free(cs);
                free(ds);
                free(all);
                lbomp__rank_global_free(gl);
        }
        MPI_Comm_free(&x.comm);
        lbomp__xp_free(&x);
}

/* Each task checks the CPUs its thread may run on against the rank's set. */
static cpu_set_t rank_cpus;
static int outside; /* tasks that ran on a thread allowed outside the rank's set */

static void run_where(void *data, lbomp_id_t id, void *arg)
{
        cpu_set_t mine, both;
        run_task(data, id, arg);
        if (sched_getaffinity(0, sizeof mine, &mine) == 0) {
                CPU_AND(&both, &mine, &rank_cpus);
                if (!CPU_EQUAL(&both, &mine))
                        __atomic_fetch_add(&outside, 1, __ATOMIC_RELAXED);
        }
}

static void case_binding(void)
{
        ASSERT_EQ(sched_getaffinity(0, sizeof rank_cpus, &rank_cpus), 0);
        int ncpu = CPU_COUNT(&rank_cpus);
        setup(64, place_block, work_hot_quarter, 5);
        int nodes = 0, cores = 0;
        lbomp_topology(E.lb, &nodes, &cores);
        if (cores != ncpu)
                FAIL("rank %d may use %d CPUs but its runtime sees %d cores", rank, ncpu, cores);
        for (long s = 0; s < 10; s++) {
                E.step = s;
                ASSERT_EQ(lbomp_mpi_step(E.m, run_where, &E), 0);
        }
        if (outside)
                FAIL("rank %d: %d tasks ran on threads bound outside its CPUs", rank, outside);
        /* mpirun --bind-to core: the ranks have CPUs of their own. */
        int first = -1;
        for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
                if (CPU_ISSET(c, &rank_cpus))
                        first = c;
        int *all = malloc((size_t)nranks * sizeof *all);
        ASSERT(all);
        MPI_Allgather(&first, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        long ncores = sysconf(_SC_NPROCESSORS_ONLN);
        if (nranks <= ncores)
                for (int r = 0; r < nranks; r++)
                        if (r != rank && all[r] == first)
                                FAIL("ranks %d and %d share CPU %d: was mpirun told --bind-to "
                                     "core?",
                                     rank, r, first);
        printf("rank %d: %d CPU(s) from %d, %d threads, all within\n", rank, ncpu, first,
               lbomp_get_workers(E.lb));
        free(all);
        teardown();
}

static void case_misuse(void)
{
        lbomp_t *lb;
        lbomp_mpi_t *m = (lbomp_mpi_t *)&m;
        ASSERT_EQ(lbomp_create(&lb), 0);
        lbomp_mpi_pup_t bad = pup;
        bad.unpack = NULL;
        expect_all(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &bad, &m), -EINVAL, "no unpack");
        ASSERT(m == NULL);
        ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "size, pack and unpack");
        /* One rank with another period: refused everywhere. */
        ASSERT_EQ(lbomp_set_period(lb, rank == nranks - 1 ? 7 : 5), 0);
        expect_all(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m), -EINVAL, "periods differ");
        ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "LBOMP_PERIOD");
        ASSERT_EQ(lbomp_set_period(lb, 5), 0);
        setenv("LBOMP_MPI_PERIOD", "sometimes", 1);
        expect_all(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m), -EINVAL, "LBOMP_MPI_PERIOD");
        ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "LBOMP_MPI_PERIOD 'sometimes' is not valid");
        unsetenv("LBOMP_MPI_PERIOD");
        setenv("LBOMP_MPI_POLICY", "gredy", 1);
        expect_all(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m), -ENOENT, "LBOMP_MPI_POLICY");
        ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "'gredy' is not a policy; valid: none");
        unsetenv("LBOMP_MPI_POLICY");
        ASSERT_EQ(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m), 0);
        ASSERT_EQ(lbomp_mpi_set_policy(m, "nope"), -ENOENT);
        ASSERT_EQ(lbomp_mpi_set_period(m, -1), -EINVAL);
        ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "lbomp_mpi_set_period");
        ASSERT_EQ(lbomp_mpi_set_policy(m, "refine"), 0);
        ASSERT_EQ(strcmp(lbomp_mpi_get_policy(m), "refine"), 0);
        ASSERT_EQ(lbomp_mpi_task_add(m, 1, NULL, 8, NULL), -EINVAL);
        ASSERT_EQ(lbomp_mpi_task_add(m, LBOMP_GID_MAX + 1u, &lb, 8, NULL), -EINVAL);
        struct ttask *mine = task_new((lbomp_gid_t)(10 + rank), 10, 3);
        ASSERT_EQ(lbomp_mpi_task_add(m, mine->gid, mine, 8, NULL), 0);
        ASSERT_EQ(lbomp_mpi_task_add(m, mine->gid, mine, 8, NULL), -EEXIST);
        ASSERT_EQ(lbomp_mpi_link(m, 3, 3, 8), -EINVAL);
        ASSERT_EQ(lbomp_mpi_task_remove(m, 99), -ENOENT);
        /* Task 5 on the first two ranks: the commit says so on every rank, rank 1 drops it. */
        struct ttask *dup = task_new(5, 10, 0);
        if (rank < 2)
                ASSERT_EQ(lbomp_mpi_task_add(m, 5, dup, 8, NULL), 0);
        long released = E.released;
        expect_all(lbomp_mpi_commit(m), -EEXIST, "one gid on two ranks");
        ASSERT_EQ(E.released - released, rank == 1);
        if (rank == 0)
                ASSERT_STR_CONTAINS(lbomp_mpi_last_error(),
                                    "task 5 was added on rank 0 and on rank 1");
        ASSERT_EQ(lbomp_mpi_task_rank(m, 5), 0);
        ASSERT((lbomp_mpi_task_data(m, 5) != NULL) == (rank == 0));
        /* A move of a task the rank does not have: refused everywhere, nothing moves. */
        lbomp_gid_t g = rank == 0 ? 11 : mine->gid;
        int to = (rank + 1) % nranks;
        uint32_t failed;
        expect_all(lbomp_mpi_move(m, 1, &g, &to, &failed), -EINVAL, "move of a foreign task");
        ASSERT_EQ(lbomp_mpi_task_rank(m, mine->gid), rank);
        int far = nranks;
        g = mine->gid;
        expect_all(lbomp_mpi_move(m, 1, &g, &far, &failed), -EINVAL, "move to a rank too far");
        ASSERT_EQ(lbomp_mpi_task_rank(m, 4000), -ENOENT);
        lbomp_id_t nolid = 12345;
        lbomp_gid_t out;
        ASSERT_EQ(lbomp_mpi_task_gid(m, nolid, &out), -ENOENT);
        ASSERT_EQ(lbomp_mpi_lb_get(m, 0, &(lbomp_mpi_lb_stats_t){0}, 8), -ENOENT);
        ASSERT_EQ(lbomp_mpi_lb_get(m, 0, NULL, 8), -EINVAL);
        lbomp_mpi_detach(m);
        lbomp_destroy(lb);
        if (rank != 1)
                task_free(dup); /* rank 1's was released by the commit that dropped it */
        task_free(mine);
        lbomp_mpi_detach(NULL);
}

int main(int argc, char **argv)
{
        const char *c = argc > 1 ? argv[1] : "";
        int provided;
        if (strcmp(c, "single") == 0)
                MPI_Init(&argc, &argv);
        else
                MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        if (strcmp(c, "balance") == 0)
                case_balance();
        else if (strcmp(c, "roundtrip") == 0)
                case_roundtrip();
        else if (strcmp(c, "empty") == 0)
                case_empty();
        else if (strcmp(c, "packfail") == 0)
                case_packfail();
        else if (strcmp(c, "plan") == 0)
                case_plan();
        else if (strcmp(c, "misuse") == 0)
                case_misuse();
        else if (strcmp(c, "binding") == 0)
                case_binding();
        else if (strcmp(c, "single") == 0) {
                MPI_Query_thread(&provided);
                if (provided >= MPI_THREAD_FUNNELED) {
                        MPI_Finalize();
                        SKIP("MPI_Init gave thread level %d here: nothing to refuse", provided);
                }
                lbomp_t *lb;
                lbomp_mpi_t *m;
                ASSERT_EQ(lbomp_create(&lb), 0);
                expect_all(lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m), -EINVAL,
                           "MPI_THREAD_SINGLE");
                ASSERT_STR_CONTAINS(lbomp_mpi_last_error(), "MPI_THREAD_FUNNELED");
                lbomp_destroy(lb);
        } else {
                if (rank == 0)
                        fprintf(stderr, "test_mpi: unknown case '%s'\n", c);
                MPI_Finalize();
                return 2;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
                printf("%s: ok on %d ranks\n", c, nranks);
        MPI_Finalize();
        return 0;
}
