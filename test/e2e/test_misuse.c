/*
 * test_misuse.c — a misuse of the step ends in an error with a message that says what happened,
 * never in a hang, a task run twice, or a step that silently ran nothing. One subcommand per
 * misuse, each a meson test with a timeout of seconds:
 *   single, master   LBOMP_FOR_EACH_TASK inside `single` / `master`: refused after the step
 *                    timeout (the runtime then refuses every later step at once). As a team's
 *                    first step (it gathers): no task runs. After a step of the whole team (the
 *                    next one is entered without gathering): refused at the step's end, the
 *                    tasks of the thread that came ran once, the others' not, and the message
 *                    counts them
 *   nested           two nested teams enter the same runtime at once: no task runs twice in a
 *                    step, the second team is refused (-EBUSY)
 *   nested-stress [S] `nested` on fresh runtimes for S seconds (default 3), the threads of the two
 *                    teams coming in random orders: no task twice, none missing from a step
 *                    counted (stress suite, run under TSan)
 *   cut              the interleaving behind a flake of `nested`, forced: thread 0 of the team
 *                    that ran the last step enters the next one at once, a second team is
 *                    refused before thread 1 comes, so the step is refused at its end with half
 *                    its tasks run: the runtime does not count it as a step (lbomp_steps), and the
 *                    message says how many tasks did not run
 *   prepared         a second team comes while the first one's gathering prepares its step:
 *                    the second is refused, the first runs its step whole (or, not all there yet,
 *                    none of it), and the runtime counts the step only if it ran
 *   outside          LBOMP_FOR_EACH_TASK outside any parallel region: -EPERM
 *   step-in-region   lbomp_step() inside a parallel region: -EPERM, and a message that says so
 *   break            a thread breaks out of its loop after 3 tasks, 200 steps, without and with
 *                    stealing: every step reports the tasks that did not run (-EINTR, and
 *                    lbomp_step_get), no more and no fewer, and nothing piles up on the thread
 *                    that breaks (its number does not grow, the balancer never gives it tasks)
 * Usage: test_misuse ITEM [SECONDS]
 */
#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"
#include "test.h"

#define NTASKS 64

struct task {
        _Atomic long runs;
        double x;
};

static struct task task[NTASKS];

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void work(struct task *t)
{
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        test_spin(&t->x, 2000);
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        work(data);
}

static lbomp_t *create(int workers)
{
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        ASSERT_EQ(lbomp_set_workers(lb, workers), 0);
        ASSERT_EQ(lbomp_set_period(lb, 2), 0);
        for (int i = 0; i < NTASKS; i++) {
                atomic_store(&task[i].runs, 0);
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        return lb;
}

static long max_runs(void)
{
        long mx = 0;
        for (int i = 0; i < NTASKS; i++)
                if (atomic_load(&task[i].runs) > mx)
                        mx = atomic_load(&task[i].runs);
        return mx;
}

static void run_ok_step(lbomp_t *lb)
{
#pragma omp parallel num_threads(2)
        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                work(t);
        ASSERT_EQ(lbomp_last_step(lb), 0);
}

static long runs_of(int i)
{
        return atomic_load(&task[i].runs);
}

static void in_construct(lbomp_t *lb, const char *which)
{
        if (strcmp(which, "single") == 0) {
#pragma omp parallel num_threads(2)
#pragma omp single
                LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                        work(t);
        } else {
#pragma omp parallel num_threads(2)
#pragma omp master
                LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                        work(t);
        }
}

/* Every later step is refused at once, in both forms, and runs nothing. */
static void later_steps_refused(lbomp_t *lb, long before)
{
        double t0 = now_s();
#pragma omp parallel num_threads(2)
        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                work(t);
        ASSERT_EQ(lbomp_last_step(lb), -ETIMEDOUT);
        ASSERT_EQ(lbomp_step(lb, cb, NULL), -ETIMEDOUT);
        ASSERT_DLE(now_s() - t0, 1.0);
        long total = 0;
        for (int i = 0; i < NTASKS; i++)
                total += runs_of(i);
        ASSERT_EQ(total, before);
}

/* `single` or `master`: one thread of two runs the loop; the step is refused after the timeout,
 * never a task twice, and every later step is refused at once. */
static void construct_then_refused(const char *which)
{
        /* A team's first step gathers the team: refused at the start, no task ran. */
        lbomp_t *lb = create(2);
        double t0 = now_s();
        in_construct(lb, which);
        double took = now_s() - t0;
        ASSERT_EQ(lbomp_last_step(lb), -ETIMEDOUT);
        printf("%s, first step: refused after %.2f s: %s\n", which, took, lbomp_last_error());
        ASSERT_STR_CONTAINS(lbomp_last_error(), "single");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "master");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "only 1 of the 2 threads");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "No task of the step ran");
        ASSERT_EQ(max_runs(), 0);
        ASSERT_DLE(took, 8.0);
        later_steps_refused(lb, 0);
        lbomp_destroy(lb);

        /* After a step of the whole team, the next one is entered without gathering: refused at
         * its end; the thread that came ran its tasks once, the other thread's did not run. */
        lb = create(2);
        run_ok_step(lb);
        t0 = now_s();
        in_construct(lb, which);
        took = now_s() - t0;
        ASSERT_EQ(lbomp_last_step(lb), -ETIMEDOUT);
        printf("%s, later step: refused after %.2f s: %s\n", which, took, lbomp_last_error());
        ASSERT_STR_CONTAINS(lbomp_last_error(), "only 1 of the 2 threads");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "single");
        long ran = 0, total = 0;
        for (int i = 0; i < NTASKS; i++) {
                ASSERT(runs_of(i) == 1 || runs_of(i) == 2); /* never twice in the step */
                ran += runs_of(i) == 2;
                total += runs_of(i);
        }
        ASSERT_GT(ran, 0);
        ASSERT_LT(ran, NTASKS);
        char want[96];
        snprintf(want, sizeof want, "%ld task(s) of the others did not run", NTASKS - ran);
        ASSERT_STR_CONTAINS(lbomp_last_error(), want);
        ASSERT_DLE(took, 8.0);
        later_steps_refused(lb, total);
        lbomp_destroy(lb);
}

/* The refusal of a second team says so, in either of its two words: the second team's thread
 * that takes the runtime over finds the first team inside ("a second OpenMP team ..."), unless
 * its thread numbered like one of the first team's, joining that takeover, found that one in its
 * place first ("two threads numbered 0 ... two teams of the same shape": under ASan, once). */
static void assert_second_team(const char *msg)
{
        if (!strstr(msg, "second OpenMP team"))
                ASSERT_STR_CONTAINS(msg, "two teams of the same shape");
}

/* Two nested teams on one runtime: never a task twice in a step; the second team is refused.
 * The two inner teams start together; one of them may still finish its whole step before the
 * other arrives (a busy machine), and then the other runs a step of its own, which is no misuse
 * of a step: each task runs exactly once in every step the runtime counts, and at most once more
 * in a step refused at its end. */
static void t_nested(void)
{
        omp_set_max_active_levels(2);
        lbomp_t *lb = create(2);
        run_ok_step(lb);
        double t0 = now_s();
        long runs[NTASKS];
        /* Five races at least, and more until the teams met: on a busy machine one team may
         * finish before the other arrives five times in a row (2 runs in 60 at load 6). */
        for (int rep = 0; rep < 5 || (lbomp_last_step(lb) != -EBUSY && now_s() - t0 < 8.0); rep++) {
                for (int i = 0; i < NTASKS; i++)
                        runs[i] = runs_of(i);
                uint64_t steps = lbomp_steps(lb);
#pragma omp parallel num_threads(2)
                {
#pragma omp barrier
#pragma omp parallel num_threads(2)
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                                work(t);
                }
                /* Every step counted ran each task once; a step refused at its end (a team that
                 * entered without gathering, caught by the other) ran the tasks of the threads
                 * that came, once. */
                long ran = (long)(lbomp_steps(lb) - steps);
                int rc = lbomp_last_step(lb);
                ASSERT_LE(ran, 2);
                for (int i = 0; i < NTASKS; i++) {
                        long d = runs_of(i) - runs[i];
                        if (d != ran && !(d == ran + 1 && rc != 0))
                                FAIL("rep %d: task %d ran %ld times in %ld step(s) (last step: %d)",
                                     rep, i, d, ran, rc);
                }
        }
        ASSERT_EQ(lbomp_last_step(lb), -EBUSY);
        assert_second_team(lbomp_last_error());
        printf("nested: %s\n", lbomp_last_error());
        ASSERT_DLE(now_s() - t0, 10.0);
        lbomp_destroy(lb);
}

/* Spins a while: 0 to 2^bits polls, so that the threads of the two teams come in every order. */
static void jitter(unsigned *seed, int bits)
{
        *seed = *seed * 1103515245u + 12345u;
        for (volatile unsigned k = (*seed >> 16) & ((1u << bits) - 1); k > 0; k--)
                ;
}

/* A team of two threads running a step, each thread after a random spin. */
static void inner_team(lbomp_t *lb, unsigned seed)
{
#pragma omp parallel num_threads(2)
        {
                /* One thread of the team late, the other on time: which one, and how late,
                 * from the seed. */
                int me = omp_get_thread_num(), late = (int)(seed >> 12) & 1;
                unsigned s = seed * 7 + (unsigned)me;
                jitter(&s, me == late ? 14 + 2 * (int)((seed >> 13) & 3) : 6);
                LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                        work(t);
        }
}

/* `nested` on fresh runtimes for `seconds`, each thread starting after a random spin, half of the
 * runtimes with a first step of their own, some reps changing the tasks (a gathering): every step
 * counted ran each task once, a refused one each at most once (stress suite, TSan). */
static void t_nested_stress(double seconds)
{
        omp_set_max_active_levels(2);
        double t0 = now_s();
        long runtimes = 0, refused = 0, reps = 0, cut = 0;
        long runs[NTASKS];
        while (now_s() - t0 < seconds || runtimes < 10) {
                lbomp_t *lb = create(2);
                if (runtimes & 1)
                        run_ok_step(lb);
                for (int rep = 0; rep < 20 && lbomp_last_step(lb) != -EBUSY; rep++, reps++) {
                        if (rep % 7 == 6) { /* the next step gathers */
                                lbomp_id_t id;
                                ASSERT_EQ(lbomp_task_add(lb, &task[0], 64, LBOMP_NODE_ANY, &id), 0);
                                ASSERT_EQ(lbomp_task_remove(lb, id), 0);
                        }
                        for (int i = 0; i < NTASKS; i++)
                                runs[i] = runs_of(i);
                        uint64_t steps = lbomp_steps(lb);
#pragma omp parallel num_threads(2)
                        {
                                /* Some runtimes begin with the two teams one after the other, so
                                 * that the next race finds a team that may enter at once. */
                                int me = omp_get_thread_num(), first = (int)(runtimes / 3) & 1;
                                unsigned seed = (unsigned)(runtimes * 977 + rep * 31 + me);
                                if (rep == 0 && runtimes % 3 != 0) {
                                        if (me == first)
                                                inner_team(lb, seed);
#pragma omp barrier
                                        if (me != first)
                                                inner_team(lb, seed);
                                } else {
                                        jitter(&seed, 8 + 4 * (int)((seed >> 8) & 3));
                                        inner_team(lb, seed);
                                }
                        }
                        long ran = (long)(lbomp_steps(lb) - steps);
                        int rc = lbomp_last_step(lb);
                        ASSERT_LE(ran, 2);
                        cut += rc != 0 &&
                               runs_of(0) - runs[0] != runs_of(NTASKS - 1) - runs[NTASKS - 1];
                        for (int i = 0; i < NTASKS; i++) {
                                long d = runs_of(i) - runs[i];
                                if (d != ran && !(d == ran + 1 && rc != 0))
                                        FAIL("runtime %ld, rep %d: task %d ran %ld times in %ld "
                                             "step(s) (last step: %d)",
                                             runtimes, rep, i, d, ran, rc);
                        }
                }
                refused += lbomp_last_step(lb) == -EBUSY;
                lbomp_destroy(lb);
                runtimes++;
        }
        printf("nested-stress: %ld runtimes, %ld reps, %ld ended refused, %ld with a step cut, "
               "%.1f s\n",
               runtimes, reps, refused, cut, now_s() - t0);
}

static _Atomic int entered0, second_done;
static char cut_msg[512]; /* what thread 0 of the cut step was told */

static void cut_step(lbomp_t *lb)
{
        int self = omp_get_thread_num();
        if (self == 1)
                while (!atomic_load(&second_done))
                        sched_yield();
        LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                atomic_store(&entered0, 1);
                work(t);
        }
        if (self == 0)
                snprintf(cut_msg, sizeof cut_msg, "%s", lbomp_last_error());
}

/* The team that ran the last step comes back without gathering; its thread 1 only after a second
 * team was refused. */
static void t_cut(void)
{
        omp_set_max_active_levels(2);
        lbomp_t *lb = create(2);
        uint64_t steps = 0;
        long runs[NTASKS];
#pragma omp parallel num_threads(2)
        {
                int outer = omp_get_thread_num();
                if (outer == 0) {
#pragma omp parallel num_threads(2)
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                                work(t);
                        ASSERT_EQ(lbomp_last_step(lb), 0);
                        ASSERT_EQ(max_runs(), 1);
                        steps = lbomp_steps(lb);
                        for (int i = 0; i < NTASKS; i++)
                                runs[i] = runs_of(i);
                }
#pragma omp barrier
                if (outer == 0) {
#pragma omp parallel num_threads(2)
                        cut_step(lb);
                } else {
                        while (!atomic_load(&entered0))
                                sched_yield();
#pragma omp parallel num_threads(2)
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                                work(t);
                        atomic_store(&second_done, 1);
                }
        }
        ASSERT_EQ(lbomp_last_step(lb), -EBUSY);
        printf("cut: %s\n", lbomp_last_error());
        long ran = 0;
        for (int i = 0; i < NTASKS; i++) {
                long d = runs_of(i) - runs[i];
                ASSERT(d == 0 || d == 1);
                ran += d;
        }
        /* Thread 0's tasks ran, thread 1's did not; the step was refused, not counted. */
        ASSERT_GT(ran, 0);
        ASSERT_LT(ran, NTASKS);
        ASSERT_EQ(lbomp_steps(lb), steps);
        /* Thread 0 of the cut step is told what of it ran, and why. */
        printf("cut, thread 0: %s\n", cut_msg);
        char want[96];
        snprintf(want, sizeof want, "%ld task(s) of the others did not run", NTASKS - ran);
        ASSERT_STR_CONTAINS(cut_msg, want);
        const char *why = strstr(cut_msg, "Why: ");
        ASSERT(why != NULL);
        assert_second_team(why);
        lbomp_destroy(lb);
}

#define NBIG (1 << 20)

static _Atomic unsigned char big_runs[NBIG];

/* A team's gathering prepares a long first step (a million new tasks to place) when a second
 * team comes: the second team is refused, and the first one, all arrived, runs its step whole (it
 * was refused too, and the step counted with no task run). */
static void t_prepared(void)
{
        omp_set_max_active_levels(2);
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        for (int i = 0; i < NBIG; i++)
                ASSERT_EQ(lbomp_task_add(lb, (void *)&big_runs[i], 8, LBOMP_NODE_ANY, NULL), 0);
#pragma omp parallel num_threads(2)
        {
                if (omp_get_thread_num() == 0) {
#pragma omp parallel num_threads(2)
                        LBOMP_FOR_EACH_TASK (lb, _Atomic unsigned char *, r)
                                atomic_fetch_add_explicit(r, 1, memory_order_relaxed);
                } else {
                        /* The first team's time step begins in its gathering's serial part,
                         * before the tasks are placed. */
                        while (lbomp_steps(lb) == 0)
                                sched_yield();
#pragma omp parallel num_threads(2)
                        LBOMP_FOR_EACH_TASK (lb, _Atomic unsigned char *, r)
                                atomic_fetch_add_explicit(r, 1, memory_order_relaxed);
                }
        }
        /* Every task ran once in each step counted: the first team's (the second refused), or,
         * when the second came only after the first team's step (a busy machine), each team's. */
        int rc = lbomp_last_step(lb);
        uint64_t steps = lbomp_steps(lb);
        printf("prepared: %llu step(s) counted, last step %d\n", (unsigned long long)steps, rc);
        for (int i = 0; i < NBIG; i++)
                if (atomic_load(&big_runs[i]) != steps)
                        FAIL("task %d ran %d times in %llu step(s) (last step: %d)", i,
                             (int)atomic_load(&big_runs[i]), (unsigned long long)steps, rc);
        ASSERT(rc == -EBUSY || (rc == 0 && steps == 2));
        lbomp_destroy(lb);
}

static void t_outside(void)
{
        lbomp_t *lb = create(2);
        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                work(t);
        ASSERT_EQ(lbomp_last_step(lb), -EPERM);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "outside a parallel region");
        ASSERT_EQ(max_runs(), 0);
        /* Not a poison: a correct step runs afterwards. */
        run_ok_step(lb);
        ASSERT_EQ(max_runs(), 1);
        lbomp_destroy(lb);
}

static void t_step_in_region(void)
{
        lbomp_t *lb = create(2);
        int rc[2] = {0, 0};
#pragma omp parallel num_threads(2)
        rc[omp_get_thread_num()] = lbomp_step(lb, cb, NULL);
        ASSERT_EQ(rc[0], -EPERM);
        ASSERT_EQ(rc[1], -EPERM);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "inside a parallel region");
        ASSERT(strcmp(lbomp_strerror(-EPERM), lbomp_strerror(-EBUSY)) != 0);
        ASSERT_EQ(max_runs(), 0);
        ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
        ASSERT_EQ(max_runs(), 1);
        lbomp_destroy(lb);
}

/* One thread breaks out after 3 tasks in every step: each step says so, exactly, and nothing
 * piles up on it. */
static void break_steps(const char *steal)
{
        setenv("LBOMP_STEAL", steal, 1);
        lbomp_t *lb = create(2);
        unsetenv("LBOMP_STEAL");
        ASSERT_EQ(lbomp_set_policy(lb, "greedy"), 0);
        run_ok_step(lb);
        int owned0 = 0;
        for (int i = 0; i < NTASKS; i++)
                owned0 += lbomp_task_worker(lb, (lbomp_id_t)i) == 1;
        long first = -1, last = -1, reported = 0;
        for (int step = 0; step < 200; step++) {
                long ran[2] = {0, 0}, before = 0, after = 0;
                for (int i = 0; i < NTASKS; i++)
                        before += runs_of(i);
#pragma omp parallel num_threads(2)
                {
                        int self = omp_get_thread_num();
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                                work(t);
                                if (++ran[self] == 3 && self == 1)
                                        break;
                        }
                }
                for (int i = 0; i < NTASKS; i++)
                        after += runs_of(i);
                ASSERT_EQ(after - before, ran[0] + ran[1]); /* none ran twice */
                long skipped = NTASKS - ran[0] - ran[1];
                lbomp_step_stats_t st;
                ASSERT_EQ(lbomp_step_get(lb, lbomp_steps(lb) - 1, &st, sizeof st), 0);
                ASSERT_EQ((long)st.skipped, skipped);
                if (skipped) {
                        ASSERT_EQ(lbomp_last_step(lb), -EINTR);
                        char want[64];
                        snprintf(want, sizeof want, "before %ld of its", skipped);
                        ASSERT_STR_CONTAINS(lbomp_last_error(), want);
                        reported++;
                } else {
                        ASSERT_EQ(lbomp_last_step(lb), 0);
                }
                if (first < 0)
                        first = skipped;
                last = skipped;
        }
        int owned = 0;
        for (int i = 0; i < NTASKS; i++)
                owned += lbomp_task_worker(lb, (lbomp_id_t)i) == 1;
        printf("break, steal %s: skipped %ld at the first step, %ld at the last; %ld steps "
               "reported it; the thread that breaks owns %d tasks, %d before\n",
               steal, first, last, reported, owned, owned0);
        /* No pile-up: the skipped tasks never looked free to the balancer. */
        ASSERT_LE(owned, owned0);
        if (strcmp(steal, "off") == 0) {
                ASSERT_EQ(reported, 200);
                ASSERT_LE(last, first);
        }
        lbomp_destroy(lb);
}

static void t_break(void)
{
        break_steps("off");
        break_steps("all");
}

int main(int argc, char **argv)
{
        ASSERT(argc > 1);
        const char *item = argv[1];
        if (strcmp(item, "single") == 0 || strcmp(item, "master") == 0)
                construct_then_refused(item);
        else if (strcmp(item, "nested") == 0)
                t_nested();
        else if (strcmp(item, "nested-stress") == 0)
                t_nested_stress(argc > 2 ? atof(argv[2]) : 3.0);
        else if (strcmp(item, "cut") == 0)
                t_cut();
        else if (strcmp(item, "prepared") == 0)
                t_prepared();
        else if (strcmp(item, "outside") == 0)
                t_outside();
        else if (strcmp(item, "step-in-region") == 0)
                t_step_in_region();
        else if (strcmp(item, "break") == 0)
                t_break();
        else
                FAIL("unknown item %s", item);
        printf("%s: ok\n", item);
        return 0;
}
