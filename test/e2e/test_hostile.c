/*
 * test_hostile.c — a hostile environment keeps the run correct and is said in one line. Each
 * subcommand is one item of the reliability issue, run by meson as its own e2e test (some under
 * taskset or with a variable set): every task still runs exactly once per step, the mapping stays
 * valid, and the report or stderr carries the one line that says what happened.
 * Usage: test_hostile ITEM   (cpuset, bind-refused, oversubscribed, team, flat-topology,
 *                             clock-zero, clock-back, policy-fail, no-pay, huge, zero, one)
 * It links the library's internals for the hooks a real machine cannot be made to produce on
 * demand: a refused binding, a clock that stops or runs backwards, a failing policy.
 */
#include <errno.h>
#include <hwloc.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "report.h"
#include "test.h"

#define MAXT 512

struct task {
        _Atomic long runs;
        long expect;
        int alive;
        int cost;
        double x;
};

static struct task task[MAXT];
static int ntasks;

static void work(struct task *t)
{
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        for (int i = 0; i < t->cost * 50; i++)
                t->x = t->x * 0.999999 + 1e-6;
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        work(data);
}

static void add_tasks(lbomp_t *lb, int n, int cost)
{
        for (int i = 0; i < n; i++) {
                struct task *t = &task[ntasks];
                t->alive = 1;
                t->cost = cost;
                lbomp_id_t id;
                ASSERT_EQ(lbomp_task_add(lb, t, 64, LBOMP_NODE_ANY, &id), 0);
                ASSERT_EQ(id, ntasks);
                ntasks++;
        }
}

/* After a step: every live task ran exactly once more, and sits on a valid worker. */
static void check_once(lbomp_t *lb, const char *what)
{
        for (int i = 0; i < ntasks; i++) {
                struct task *t = &task[i];
                if (t->alive)
                        t->expect++;
                long r = atomic_load(&t->runs);
                if (r != t->expect)
                        FAIL("%s: task %d ran %ld times, expected %ld", what, i, r, t->expect);
                int w = lbomp_task_worker(lb, (lbomp_id_t)i);
                if (t->alive && (w < 0 || w >= lbomp_get_workers(lb)))
                        FAIL("%s: task %d on worker %d of %d", what, i, w, lbomp_get_workers(lb));
        }
}

static void steps(lbomp_t *lb, int n, const char *what)
{
        for (int s = 0; s < n; s++) {
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                check_once(lb, what);
        }
}

/* stderr into a file, to check the one line the library printed. */
static int saved_fd = -1;
static char cap_path[] = "/tmp/lbomp-hostile-XXXXXX";
static char captured[8192];

static void capture_begin(void)
{
        fflush(stderr);
        int fd = mkstemp(cap_path);
        ASSERT(fd >= 0);
        saved_fd = dup(2);
        dup2(fd, 2);
        close(fd);
}

static const char *capture_end(void)
{
        fflush(stderr);
        dup2(saved_fd, 2);
        close(saved_fd);
        FILE *f = fopen(cap_path, "r");
        ASSERT(f);
        size_t n = fread(captured, 1, sizeof captured - 1, f);
        captured[n] = 0;
        fclose(f);
        unlink(cap_path);
        strcpy(cap_path, "/tmp/lbomp-hostile-XXXXXX");
        fputs(captured, stderr); /* still in the test log */
        return captured;
}

static char report[16384];

static const char *report_of(lbomp_t *lb)
{
        FILE *f = fmemopen(report, sizeof report, "w");
        ASSERT(f);
        lbomp_report(lb, f);
        fclose(f);
        fputs(report, stdout);
        return report;
}

static lbomp_t *create(const char *policy, int workers, int period)
{
        lbomp_t *lb;
        int rc = lbomp_create(&lb);
        if (rc != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        ASSERT_EQ(lbomp_set_policy(lb, policy), 0);
        ASSERT_EQ(lbomp_set_period(lb, period), 0);
        if (workers > 0)
                ASSERT_EQ(lbomp_set_workers(lb, workers), 0);
        return lb;
}

static void reset_tasks(void)
{
        memset(task, 0, sizeof task);
        ntasks = 0;
}

/* ---- binding ---------------------------------------------------------------------------- */

/* Run under `taskset -c 0` with 2 threads: lbomp sees one core, binds both workers there and
 * never moves a thread out of the user's CPU set; the report says so. */
static void t_cpuset(void)
{
        cpu_set_t user;
        ASSERT_EQ(sched_getaffinity(0, sizeof user, &user), 0);
        if (CPU_COUNT(&user) >= sysconf(_SC_NPROCESSORS_ONLN))
                SKIP("the process may use every CPU: run it under taskset -c 0");
        lbomp_t *lb = create("greedy", 2, 2);
        add_tasks(lb, 64, 4);
        static _Atomic int escaped;
        for (int s = 0; s < 8; s++) {
#pragma omp parallel num_threads(2)
                LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                        cpu_set_t now;
                        sched_getaffinity(0, sizeof now, &now);
                        CPU_AND(&now, &now, &user);
                        cpu_set_t mine;
                        sched_getaffinity(0, sizeof mine, &mine);
                        if (!CPU_EQUAL(&now, &mine))
                                atomic_store(&escaped, 1);
                        work(t);
                }
                check_once(lb, "cpuset");
        }
        ASSERT_EQ(atomic_load(&escaped), 0);
        int cores;
        lbomp_topology(lb, NULL, &cores);
        ASSERT_EQ(cores, CPU_COUNT(&user));
        const char *r = report_of(lb);
        ASSERT_STR_CONTAINS(r, "the process may use");
        ASSERT_STR_CONTAINS(r, "oversubscribed");
        lbomp_destroy(lb);
}

/* The system refuses one binding (here: a core whose CPU set names a CPU that does not exist):
 * the worker runs unbound and the report says "partial". */
static void t_bind_refused(void)
{
        lbomp_t *lb = create("refine", 2, 3);
        struct lbomp *in = lb;
        if (!in->topo.is_host || in->topo.flat || in->topo.ncores < 2 || in->omp_binds)
                SKIP("needs a host topology of 2 or more cores and lbomp binding the threads");
        hwloc_topology_t h = in->topo.hwloc;
        int core = in->ws.w[1].core;
        hwloc_obj_t o = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)core);
        if (!o)
                o = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)core);
        ASSERT(o && o->cpuset);
        hwloc_bitmap_only(o->cpuset, CPU_SETSIZE - 1); /* no such CPU: sched_setaffinity fails */
        add_tasks(lb, 100, 3);
        steps(lb, 9, "bind-refused");
        const char *r = report_of(lb);
        ASSERT_STR_CONTAINS(r, "partial: 1 of 2 workers bound, the others refused");
        lbomp_destroy(lb);
}

/* OMP_NUM_THREADS larger than the cores (meson sets 8): every worker exists, stealing on. */
static void t_oversubscribed(void)
{
        setenv("LBOMP_STEAL", "all", 1);
        lbomp_t *lb = create("greedy", 0, 2);
        unsetenv("LBOMP_STEAL");
        if (lbomp_get_workers(lb) <= omp_get_num_procs())
                SKIP("OMP_NUM_THREADS (%d) is not above the cores (%d)", lbomp_get_workers(lb),
                     omp_get_num_procs());
        add_tasks(lb, 200, 3);
        steps(lb, 12, "oversubscribed");
        ASSERT_STR_CONTAINS(report_of(lb), "oversubscribed");
        lbomp_destroy(lb);
}

/* The team size changes between steps (in-region form, different num_threads). */
static void t_team(void)
{
        lbomp_t *lb = create("greedy", 2, 2);
        add_tasks(lb, 150, 3);
        static const int teams[] = {2, 4, 4, 1, 3, 8, 2};
        for (size_t k = 0; k < sizeof teams / sizeof teams[0]; k++) {
                capture_begin();
                for (int s = 0; s < 3; s++) {
#pragma omp parallel num_threads(teams[k])
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                                work(t);
                        }
                        check_once(lb, "team");
                }
                const char *err = capture_end();
                ASSERT_EQ(lbomp_get_workers(lb), teams[k]);
                if (k > 0 && teams[k] != teams[k - 1]) {
                        char want[128];
                        snprintf(want, sizeof want, "the team has %d thread(s)", teams[k]);
                        ASSERT_STR_CONTAINS(err, want);
                        ASSERT(strchr(err, '\n') == strrchr(err, '\n')); /* one line */
                } else {
                        ASSERT(!strstr(err, "the team has"));
                }
        }
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                lbomp_lb_get(lb, i, &st, sizeof st);
                ASSERT_EQ(st.error, 0);
        }
        report_of(lb);
        lbomp_destroy(lb);
}

/* hwloc cannot read the host (meson sets HWLOC_COMPONENTS=stop): a flat topology and a warning;
 * a topology FILE hwloc cannot parse is still a configuration error. */
static void t_flat(void)
{
        capture_begin();
        lbomp_t *lb = create("greedy", 2, 2);
        const char *err = capture_end();
        ASSERT_STR_CONTAINS(err, "hwloc cannot read the host topology");
        ASSERT_STR_CONTAINS(err, "flat topology");
        int nodes;
        ASSERT_STR_CONTAINS(lbomp_topology(lb, &nodes, NULL), "flat");
        ASSERT_EQ(nodes, 1);
        add_tasks(lb, 80, 3);
        steps(lb, 8, "flat");
        ASSERT_STR_CONTAINS(report_of(lb), "not bound: hwloc could not read the host");
        lbomp_destroy(lb);

        char path[] = "/tmp/lbomp-bad-topology-XXXXXX";
        int fd = mkstemp(path);
        ASSERT(fd >= 0);
        ASSERT_EQ(write(fd, "not xml\n", 8), 8);
        close(fd);
        setenv("LBOMP_TOPOLOGY", path, 1);
        lbomp_t *bad = (lbomp_t *)1;
        int rc = lbomp_create(&bad);
        unsetenv("LBOMP_TOPOLOGY");
        unlink(path);
        ASSERT_EQ(rc, -EINVAL);
        ASSERT(bad == NULL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "LBOMP_TOPOLOGY");
}

/* ---- clock -------------------------------------------------------------------------------- */

static _Atomic uint64_t fake_now;
static uint64_t clock_stopped(void)
{
        return 1000;
}
static uint64_t clock_backwards(void)
{
        /* Mostly forwards, every fifth reading a second earlier than the one before. */
        uint64_t n = atomic_fetch_add(&fake_now, 1);
        return n % 5 == 4 ? 1000000000000u + n * 1000 - 1000000000u : 1000000000000u + n * 1000;
}

static void t_clock(uint64_t (*hook)(void), const char *what)
{
        lbomp_t *lb = create("greedy", 2, 2);
        struct lbomp *in = lb;
        in->clock.tsc = false; /* the hook replaces the non-TSC source */
        lbomp__ticks_hook = hook;
        add_tasks(lb, 100, 2);
        task[0].cost = 40; /* a real imbalance, if only the clock could see it */
        capture_begin();
        steps(lb, 10, what);
        const char *err = capture_end();
        lbomp__ticks_hook = NULL;
        ASSERT_EQ(lbomp_lb_count(lb), 5);
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                lbomp_lb_get(lb, i, &st, sizeof st);
                ASSERT_EQ(st.error, 0);
                ASSERT(st.imbalance_before >= 1.0 && st.imbalance_before < 1e9);
                ASSERT(st.imbalance_after >= 1.0 && st.imbalance_after < 1e9);
                if (hook == clock_stopped)
                        ASSERT_EQ(st.migrations, 0);
        }
        const char *r = report_of(lb);
        if (hook == clock_stopped) {
                ASSERT_STR_CONTAINS(err, "the clock did not advance");
                ASSERT(strchr(err, '\n') == strrchr(err, '\n')); /* said once */
                ASSERT_STR_CONTAINS(r, "no time measured: mapping kept");
        } else {
                ASSERT_STR_CONTAINS(r, "backwards reading(s), counted as 0 s");
        }
        lbomp_destroy(lb);
}

/* ---- a failing policy --------------------------------------------------------------------- */

static int plan_fails(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        for (uint32_t t = 0; t < s->ntasks; t++)
                dest[t] = (s->worker[t] + 1) % s->nworkers; /* half-written, then gives up */
        return -EAGAIN;
}

static int plan_invalid(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        (void)st;
        if (s->ntasks)
                dest[s->ntasks / 2] = s->nworkers + 3; /* a worker that does not exist */
        return 0;
}

static const struct lbomp__policy failing = {.name = "test-fails",
                                             .help = "test: returns -EAGAIN",
                                             .kind = LBOMP__CENTRAL,
                                             .plan = plan_fails};
static const struct lbomp__policy invalid = {.name = "test-invalid",
                                             .help = "test: plans a missing worker",
                                             .kind = LBOMP__CENTRAL,
                                             .plan = plan_invalid};

static void t_policy_fail(void)
{
        const struct lbomp__policy *pols[] = {&failing, &invalid};
        const char *lines[] = {"policy test-fails failed at step", "produced an invalid plan"};
        for (int k = 0; k < 2; k++) {
                reset_tasks();
                lbomp_t *lb = create("greedy", 2, 3);
                add_tasks(lb, 90, 2);
                task[1].cost = 3000; /* an imbalance worth an LB step (moves that pay) */
                steps(lb, 1, "policy-fail");
                ((struct lbomp *)lb)->cfg.policy = pols[k]; /* not in the public registry */
                int before[MAXT];
                for (int i = 0; i < ntasks; i++)
                        before[i] = lbomp_task_worker(lb, (lbomp_id_t)i);
                capture_begin();
                steps(lb, 8, "policy-fail");
                const char *err = capture_end();
                ASSERT_STR_CONTAINS(err, lines[k]);
                ASSERT_STR_CONTAINS(err, "mapping kept");
                for (int i = 0; i < ntasks; i++)
                        ASSERT_EQ(lbomp_task_worker(lb, (lbomp_id_t)i), before[i]);
                ASSERT_GT(lbomp_lb_count(lb), 0);
                size_t failed = 0;
                for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                        lbomp_lb_stats_t st;
                        lbomp_lb_get(lb, i, &st, sizeof st);
                        ASSERT_EQ(st.migrations, 0);
                        /* A step that stealing left balanced, or whose excess did not persist,
                         * runs no policy (on a loaded machine, under a sanitizer): no error. */
                        char buf[400];
                        const char *note = lbomp__lbrec_note(
                                lbomp__lbs_at(&((struct lbomp *)lb)->lbs, i), buf, sizeof buf);
                        if (strstr(note, "policy not run")) {
                                ASSERT_EQ(st.error, 0);
                                continue;
                        }
                        ASSERT_EQ(st.error, k == 0 ? -EAGAIN : -EFAULT);
                        failed++;
                }
                printf("policy-fail: %s failed in %zu of %zu LB steps, the others ran no "
                       "policy\n",
                       pols[k]->name, failed, lbomp_lb_count(lb));
                ASSERT_GT(failed, 0);
                report_of(lb);
                lbomp_destroy(lb);
        }
}

/* ---- workloads at the edges, under every policy ------------------------------------------- */

static void t_huge(const char *p)
{
        reset_tasks();
        lbomp_t *lb = create(p, 2, 3);
        add_tasks(lb, 120, 1);
        task[7].cost = 2000; /* ~ 1000x the average task */
        steps(lb, 12, "huge");
        size_t ran = 0;
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                lbomp_lb_get(lb, i, &st, sizeof st);
                ASSERT_EQ(st.error, 0);
                /* A step whose excess did not persist over its timed steps (a loaded machine, a
                 * sanitizer: ASan once read all four so) runs no policy, and says so. */
                ran += lbomp__lbs_at(&((struct lbomp *)lb)->lbs, i)->note_kind == LBOMP__NOTE_TEXT;
        }
        /* `none` times no task (its LB step reads only the workers' loads): no such note. The
         * others say it at every LB step that ran the policy. */
        if (strcmp(p, "none") != 0 && ran > 0)
                ASSERT_STR_CONTAINS(report_of(lb), "task 7 alone costs that much");
        else if (strcmp(p, "none") != 0)
                printf("huge: %s ran no policy at any of its %zu LB steps (the excess never "
                       "persisted); the note is not checked\n",
                       p, lbomp_lb_count(lb));
        lbomp_destroy(lb);
}

static void t_zero(const char *p)
{
        reset_tasks();
        lbomp_t *lb = create(p, 3, 1);
        steps(lb, 4, "zero");
#pragma omp parallel num_threads(3)
        for (int s = 0; s < 3; s++) {
                LBOMP_FOR_EACH_TASK (lb, struct task *, t) {
                        work(t);
                }
        }
        ASSERT_EQ(lbomp_lb_count(lb), 7);
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                lbomp_lb_get(lb, i, &st, sizeof st);
                ASSERT_EQ(st.error, 0);
                ASSERT_EQ(st.migrations, 0);
        }
        ASSERT_STR_CONTAINS(report_of(lb), "tasks 0");
        lbomp_destroy(lb);
}

static void t_one(const char *p)
{
        static const char *const steal[] = {"off", "all"};
        for (int k = 0; k < 2; k++) {
                reset_tasks();
                setenv("LBOMP_STEAL", steal[k], 1);
                lbomp_t *lb = create(p, 4, 1);
                unsetenv("LBOMP_STEAL");
                /* A NULL task pointer would end its thread's loop early: refused. */
                ASSERT_EQ(lbomp_task_add(lb, NULL, 8, LBOMP_NODE_ANY, NULL), -EINVAL);
                ASSERT_STR_CONTAINS(lbomp_last_error(), "NULL");
                add_tasks(lb, 1, 5);
                steps(lb, 6, "one");
                for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                        lbomp_lb_stats_t st;
                        lbomp_lb_get(lb, i, &st, sizeof st);
                        ASSERT_EQ(st.error, 0);
                }
                ASSERT_STR_CONTAINS(report_of(lb), "tasks 1,");
                lbomp_destroy(lb);
        }
}

/* ---- moves that pay, in time ---------------------------------------------------------------- */

/* An imbalance of nanoseconds is not worth an LB step: the policy does not run, nothing moves,
 * the record says why; the same tasks with one of them made dear enough run it and move. A
 * preemption inside a timed step can make a window look worth balancing, so the first half asks
 * for one such LB step among eight, not for all of them. */
static void t_no_pay(void)
{
        reset_tasks();
        lbomp_t *lb = create("greedy", 2, 5);
        ASSERT_EQ(lbomp_set_tolerance(lb, 0.01), 0);
        add_tasks(lb, 64, 1);
        task[0].cost = 20; /* worker 0: ≈ 1.5 µs more per step than worker 1 */
        steps(lb, 40, "no-pay");
        size_t n = lbomp_lb_count(lb), quiet = 0;
        ASSERT_EQ(n, 8);
        for (size_t i = 0; i < n; i++) {
                lbomp_lb_stats_t st;
                ASSERT_EQ(lbomp_lb_get(lb, i, &st, sizeof st), 0);
                char buf[400];
                const char *note = lbomp__lbrec_note(lbomp__lbs_at(&((struct lbomp *)lb)->lbs, i),
                                                     buf, sizeof buf); /* as in the report */
                if (strstr(note, "does not pay")) {
                        ASSERT_STR_CONTAINS(note, "policy not run");
                        ASSERT_EQ(st.migrations, 0);
                        quiet++;
                }
        }
        printf("no-pay: %zu of %zu LB steps judged not worth a plan\n", quiet, n);
        ASSERT_GT(quiet, 0);
        ASSERT_STR_CONTAINS(report_of(lb), "does not pay");
        lbomp_destroy(lb);

        reset_tasks();
        lb = create("greedy", 2, 5);
        add_tasks(lb, 64, 1);
        for (int i = 0; i < 16; i++)
                task[i].cost = 2000; /* ≈ 2 ms more per step on worker 0: a plan pays */
        struct test_times t0 = test_times_now();
        steps(lb, 5, "no-pay");
        /* unless its threads were kept from their cores: then the timed steps they spent off
         * them are left out, and the two left say the excess is within their noise (beside a
         * `yes` pinned to one core, 0.7 of two, once under ASan) */
        double served = test_served(t0, test_times_now(), 2);
        lbomp_lb_stats_t st;
        ASSERT_EQ(lbomp_lb_count(lb), 1);
        ASSERT_EQ(lbomp_lb_get(lb, 0, &st, sizeof st), 0);
        char buf[400];
        const char *pays =
                lbomp__lbrec_note(lbomp__lbs_at(&((struct lbomp *)lb)->lbs, 0), buf, sizeof buf);
        printf("no-pay, 2 ms: %llu moved, note \"%s\"; the threads had %.2f of two cores\n",
               (unsigned long long)st.migrations, pays, served);
        if (served >= TEST_SERVED_MIN) {
                ASSERT(!strstr(pays, "does not pay"));
                ASSERT_GT(st.migrations, 0);
        }
        lbomp_destroy(lb);

        /* An excess that does not stay on the same worker is not worth a plan either: in the
         * three timed steps at the end of each 5-step window, one task of worker 0 is dear in
         * the first two and one of worker 1 in the third. Summed over those steps worker 0 is
         * ≈ 1 ms per step above the mean, but no worker is above it at every step: no plan
         * would have helped, none runs. */
        reset_tasks();
        lb = create("greedy", 2, 5);
        add_tasks(lb, 64, 1);
        for (int s = 0; s < 20; s++) {
                task[0].cost = s % 5 == 2 || s % 5 == 3 ? 16000 : 1;
                task[32].cost = s % 5 == 4 ? 16000 : 1;
                steps(lb, 1, "no-pay");
        }
        ASSERT_EQ(lbomp_lb_count(lb), 4);
        size_t judged = 0;
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                ASSERT_EQ(lbomp_lb_get(lb, i, &st, sizeof st), 0);
                const char *note = lbomp__lbrec_note(lbomp__lbs_at(&((struct lbomp *)lb)->lbs, i),
                                                     buf, sizeof buf);
                printf("no-pay, excess that moves: LB step %zu: λ %.3f, %llu moved: %s\n", i,
                       st.imbalance_before, (unsigned long long)st.migrations, note);
                ASSERT_EQ(st.migrations, 0);
                /* (a slow build may see a window within the tolerance: no policy either; a
                 * machine busy with other tests may stretch a cheap task's step so that the
                 * excess looks as if it stayed: the policy then runs, and still moves nothing,
                 * as the task's own cost is what it finds: seen once under `meson test` with two
                 * processes on two cores) */
                if (!strstr(note, "policy not run"))
                        ASSERT_STR_CONTAINS(note, "alone costs that much");
                judged += strstr(note, "does not pay") != NULL;
        }
        ASSERT_GT(judged, 0);
        lbomp_destroy(lb);
}

int main(int argc, char **argv)
{
        const char *item = argc > 1 ? argv[1] : "";
        void (*per_policy)(const char *) = NULL;
        if (strcmp(item, "cpuset") == 0)
                t_cpuset();
        else if (strcmp(item, "bind-refused") == 0)
                t_bind_refused();
        else if (strcmp(item, "oversubscribed") == 0)
                t_oversubscribed();
        else if (strcmp(item, "team") == 0)
                t_team();
        else if (strcmp(item, "flat-topology") == 0)
                t_flat();
        else if (strcmp(item, "clock-zero") == 0)
                t_clock(clock_stopped, "clock-zero");
        else if (strcmp(item, "clock-back") == 0)
                t_clock(clock_backwards, "clock-back");
        else if (strcmp(item, "policy-fail") == 0)
                t_policy_fail();
        else if (strcmp(item, "no-pay") == 0)
                t_no_pay();
        else if (strcmp(item, "huge") == 0)
                per_policy = t_huge;
        else if (strcmp(item, "zero") == 0)
                per_policy = t_zero;
        else if (strcmp(item, "one") == 0)
                per_policy = t_one;
        else
                FAIL("unknown item '%s' (see the comment at the top of the file)", item);
        if (per_policy) {
                char names[32][32];
                int n = test_policy_names(names, 32);
                ASSERT_GT(n, 0);
                for (int i = 0; i < n; i++) {
                        printf("--- %s under %s\n", item, names[i]);
                        per_policy(names[i]);
                }
        }
        printf("%s: ok\n", item);
        return 0;
}
