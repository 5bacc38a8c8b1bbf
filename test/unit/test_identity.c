/*
 * test_identity.c — the fast sort, greedy and refine give the plans the code before them gave,
 * bit for bit: each is run next to a frozen copy of that code (test/unit/ref) on many random inputs
 * — task counts from 0 to 30,000, 1 to 300 workers on 1 to 5 nodes, speeds other than 1, background
 * loads, costs with many ties, free (zero-cost) tasks, shuffled mappings — and the orders, the
 * greedy assignments over parts of the machine and the plans must be equal.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mailbox.h"
#include "ref/ref.h"
#include "synth.h"
#include "test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
        uint64_t x = rng_state; /* xorshift64* */
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        rng_state = x;
        return x * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint32_t n)
{
        return n ? (uint32_t)(rnd() % n) : 0;
}

static double unit(void)
{
        return (double)(rnd() >> 11) * 0x1p-53;
}

/* A cost drawn from one of several families, some with many exact ties, some with values a float
 * cannot tell apart. */
static double draw_cost(int kind)
{
        switch (kind) {
        case 0:
                return unit();
        case 1:
                return (double)(1 + below(4)); /* few values: long runs of ties */
        case 2: {
                double u = unit();
                return 30e-6 + 8970e-6 * u * u * u * u; /* lbtest: dense near the low end */
        }
        case 3:
                return below(3) == 0 ? 0.0 : 1.0 + below(1000) * 1e-12; /* free tasks, near-ties */
        case 4: {
                double pick[] = {0.0, -1.0, 1e-310, 1e300, DBL_MAX, INFINITY, 1.0, 1.0 + 1e-15};
                return pick[below(8)];
        }
        default:
                return 1.0 +
                       (double)below(1u << 20) * 0x1p-40; /* equal as floats, not as doubles */
        }
}

static void test_sort(void)
{
        uint32_t sizes[] = {0, 1, 2, 5, 33, 64, 65, 100, 511, 512, 513, 1000, 4096, 30000};
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int kind = 0; kind < 6; kind++)
                        for (int order = 0; order < 3; order++) {
                                uint32_t n = sizes[si], T = 2 * n + 1;
                                double *cost = malloc(T * sizeof *cost);
                                uint32_t *a = malloc((n + 1) * sizeof *a);
                                uint32_t *b = malloc((n + 1) * sizeof *b);
                                for (uint32_t t = 0; t < T; t++)
                                        cost[t] = draw_cost(kind);
                                /* ascending (greedy), a random subset ascending, or shuffled */
                                for (uint32_t i = 0; i < n; i++)
                                        a[i] = order == 0 ? i : 2 * i + below(2);
                                for (uint32_t i = n; order == 2 && i > 1; i--) {
                                        uint32_t j = below(i), x = a[i - 1];
                                        a[i - 1] = a[j];
                                        a[j] = x;
                                }
                                memcpy(b, a, (n + 1) * sizeof *a);
                                ASSERT_EQ(ref__sort_tasks_desc(cost, a, n), 0);
                                ASSERT_EQ(lbomp__sort_tasks_desc(cost, b, n), 0);
                                for (uint32_t i = 0; i < n; i++)
                                        if (a[i] != b[i])
                                                FAIL("sort n=%u kind=%d order=%d: at %u %u != %u",
                                                     n, kind, order, i, b[i], a[i]);
                                free(cost);
                                free(a);
                                free(b);
                        }
}

/* A random snapshot: T tasks on P workers over N nodes, a load family, maybe speeds, background
 * loads, costs replaced by `kind` (-1: the family's), a shuffled mapping, random distances. */
static void make(struct synth *y, uint32_t T, uint32_t P, uint32_t N, int family, int kind,
                 int speeds, int bg, int shuffle)
{
        enum synth_load loads[] = {SYNTH_UNIFORM, SYNTH_LINEAR,    SYNTH_HOTSPOT,
                                   SYNTH_LBTEST,  SYNTH_ONE_HEAVY, SYNTH_ALL_BUT_ONE};
        ASSERT_EQ(synth_make(y, T, P, N, loads[family], N > 1 ? 2 : 0, rnd()), 0);
        for (uint32_t t = 0; kind >= 0 && t < T; t++)
                y->cost[t] = draw_cost(kind == 4 ? 3 : kind); /* finite costs ≥ 0 here */
        if (shuffle) {
                for (uint32_t t = 0; t < T; t++)
                        if (below(4) == 0)
                                y->worker[t] = below(P / 2 + 1); /* the first half overloaded */
                synth_reindex(y);
        }
        if (speeds) {
                double sp[][4] = {{1, 2, 1, 2}, {0.5, 1, 1.5, 3}, {1, 1, 1, 0.25}};
                synth_speeds(y, sp[speeds - 1], 4);
        }
        if (bg) {
                for (uint32_t w = 0; w < P; w++)
                        y->bg[w] = bg == 1 ? (double)below(3) : unit() * 0.1;
                y->s.bg = y->bg;
        }
        for (uint32_t a = 0; a < N; a++)
                for (uint32_t b = 0; b < a; b++)
                        y->dist[a * N + b] = y->dist[b * N + a] = 1.0 + (double)below(3);
}

/* Runs the reference and the new policy in a child process and compares the plans there: a
 * crash of either is a failure that names the input. */
static void compare_policy(const char *name, const struct lbomp__policy *ref, struct synth *y,
                           const char *what)
{
        const struct lbomp__policy *p = lbomp__policy_find(name);
        ASSERT(p != NULL);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) {
                uint32_t T = y->s.ntasks;
                uint32_t *a = calloc(T + 1, sizeof *a), *b = calloc(T + 1, sizeof *b);
                struct lbomp__pstats sa = {0}, sb = {0};
                int ra = lbomp__policy_run_offline(ref, &y->s, a, &sa);
                int rb = lbomp__policy_run_offline(p, &y->s, b, &sb);
                ASSERT_EQ(rb, ra);
                for (uint32_t t = 0; t < T; t++)
                        if (a[t] != b[t])
                                FAIL("%s (%s): task %u to %u, the reference gives %u", name, what,
                                     t, b[t], a[t]);
                ASSERT_EQ(sb.attempts, sa.attempts);
                ASSERT_DEQ(sb.factor, sa.factor);
                _exit(0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
                FAIL("%s (%s): the reference or the new code crashes (signal %d)", name, what,
                     WTERMSIG(status));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                FAIL("%s (%s): the plans differ", name, what);
}

/* refine's make_room: room_for sums a worker's task times in one order, the loop that then takes
 * tasks off subtracts them in another, and when rounding left the worker a hair above M with no
 * task below c left, choose() returned UINT32_MAX and take_off wrote gone[4294967295] (a crash,
 * or memory overwritten). Hotspot loads on 300 workers with speeds 0.5/1/1.5/3 and a shuffled
 * mapping reach that path in several of these inputs. */
static void test_make_room_rounding(void)
{
        for (int rep = 0; rep < 80; rep++) {
                struct synth y;
                make(&y, 700, 300, 3, 2, -1, 2, (int)below(3), 1);
                if (rep % 2)
                        y.params.tolerance = 0.01;
                char what[64];
                snprintf(what, sizeof what, "make_room rounding, input %d", rep);
                compare_policy("refine", &ref__policy_refine, &y, what);
                uint32_t *d = calloc(701, sizeof *d), bad = 0;
                struct lbomp__pstats st = {0};
                ASSERT_EQ(lbomp__policy_run_offline(lbomp__policy_find("refine"), &y.s, d, &st), 0);
                if (lbomp__plan_check(&y.s, d, &bad) != 0)
                        FAIL("%s: task %u has no valid worker", what, bad);
                free(d);
                synth_free(&y);
        }
}

static int plan_greedy_refine(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return ref__greedy_refine_plan(s, dest, st);
}

static int plan_greedy_comm(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        return ref__greedy_comm_plan(s, dest, st);
}

static void test_policies(void)
{
        const struct lbomp__policy ref_gr = {
                .name = "ref-greedy-refine", .kind = LBOMP__CENTRAL, .plan = plan_greedy_refine};
        const struct lbomp__policy ref_gc = {
                .name = "ref-greedy-comm", .kind = LBOMP__CENTRAL, .plan = plan_greedy_comm};
        uint32_t Ts[] = {1, 3, 40, 700, 3000, 30000};
        uint32_t Ps[] = {1, 2, 5, 8, 64, 300};
        uint32_t Ns[] = {1, 2, 3, 5};
        int runs = 0;
        for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
                for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++)
                        for (int rep = 0; rep < (Ts[ti] >= 30000 ? 3 : 12); rep++) {
                                uint32_t T = Ts[ti], P = Ps[pi], N = Ns[below(4)];
                                if (N > P)
                                        N = P;
                                int family = (int)below(6), kind = (int)below(8) - 2;
                                int speeds = (int)below(4), bg = (int)below(3);
                                int shuffle = (int)below(2);
                                char what[160];
                                snprintf(what, sizeof what,
                                         "T=%u P=%u N=%u family=%d kind=%d speeds=%d bg=%d "
                                         "shuffle=%d",
                                         T, P, N, family, kind, speeds, bg, shuffle);
                                struct synth y;
                                make(&y, T, P, N, family, kind, speeds, bg, shuffle);
                                compare_policy("greedy", &ref__policy_greedy, &y, what);
                                compare_policy("refine", &ref__policy_refine, &y, what);
                                compare_policy("greedy-refine", &ref_gr, &y, what);
                                if (T <= 3000)
                                        compare_policy("greedy-comm", &ref_gc, &y, what);
                                /* tighter tolerances make refine loosen and search */
                                y.params.tolerance = 0.01;
                                compare_policy("refine", &ref__policy_refine, &y, what);
                                compare_policy("greedy", &ref__policy_greedy, &y, what);
                                synth_free(&y);
                                runs++;
                        }
        printf("identity: %d random snapshots, greedy, refine, greedy-refine, greedy-comm\n", runs);
}

/* greedy's placement of the sorted `tasks` on `workers` (starting loads load0), ours against the
 * reference, task for task. */
static void compare_assign(struct synth *y, const uint32_t *tasks, uint32_t n,
                           const uint32_t *workers, uint32_t m, const double *load0,
                           const char *what)
{
        uint32_t T = y->s.ntasks;
        uint32_t *a = malloc((T + 1) * sizeof *a), *b = malloc((T + 1) * sizeof *b);
        memcpy(a, y->s.worker, T * sizeof *a);
        memcpy(b, y->s.worker, T * sizeof *b);
        ASSERT_EQ(ref__greedy_assign(&y->s, tasks, n, workers, m, load0, a), 0);
        ASSERT_EQ(lbomp__greedy_assign(&y->s, tasks, n, workers, m, load0, b), 0);
        for (uint32_t t = 0; t < T; t++)
                if (a[t] != b[t])
                        FAIL("%s: task %u to %u, the reference gives %u", what, t, b[t], a[t]);
        free(a);
        free(b);
}

/* lbomp__greedy_assign over a part of the workers (hierarchical's use), from given loads, many of
 * them equal. */
static void test_assign(void)
{
        for (int rep = 0; rep < 300; rep++) {
                uint32_t T = 1 + below(rep < 280 ? 2000 : 40000), P = 1 + below(rep % 3 ? 40 : 600);
                uint32_t N = 1 + below(P < 5 ? P : 5);
                struct synth y;
                int kind = (int)below(8) - 2;
                make(&y, T, P, N, (int)below(6), kind, (int)below(4), 0, (int)below(2));
                uint32_t *tasks = malloc((T + 1) * sizeof *tasks), n = 0;
                for (uint32_t t = 0; t < T; t++)
                        if (below(4))
                                tasks[n++] = t;
                ASSERT_EQ(lbomp__sort_tasks_desc(y.s.cost, tasks, n), 0);
                uint32_t *workers = malloc((P + 1) * sizeof *workers), m = 0;
                bool all = below(3) == 0;
                for (uint32_t w = 0; w < P; w++)
                        if (all || below(2))
                                workers[m++] = w;
                double *load0 = malloc((P + 1) * sizeof *load0);
                /* equal loads; distinct ones; and -0 and negative ones, which compare as
                 * doubles rather than as bits */
                for (uint32_t i = 0; i < m; i++)
                        load0[i] = rep % 5 == 4   ? (below(3) ? -0.0 : unit() - 0.5)
                                   : rep % 2 == 1 ? (double)below(2)
                                                  : unit();
                char what[64];
                snprintf(what, sizeof what, "greedy_assign rep %d T=%u P=%u m=%u", rep, T, P, m);
                compare_assign(&y, tasks, n, workers, m, load0, what);
                free(tasks);
                free(workers);
                free(load0);
                synth_free(&y);
        }
}

/* greedy's rounds (LPT's structure, assign_zip) against the reference, where they are long: many
 * tasks a worker on up to 8,000 workers, costs lb_test-graded as the simulator makes them (exact
 * ties at each range's low end), from few values (loads tied all along, settled by the tree's
 * rules or handed to the tree), falling steeply (a round's costs below the loads' spread: the
 * rounds hand over to the tree), with equal or random starting loads, speeds, several nodes, and
 * the workers of a part of the machine. */
static void test_rounds(void)
{
        for (int rep = 0; rep < 48; rep++) {
                uint32_t P =
                        rep % 4 == 0 ? 4097 + below(4000) : 1 + below(rep % 4 == 1 ? 3000 : 400);
                uint32_t T = P * (2 + below(rep % 4 == 0 ? 24 : 60));
                uint32_t N = 1 + below(P < 5 ? P : 5);
                struct synth y;
                make(&y, T, P, N, 3, -1, (int)below(4), 0, (int)below(2));
                int kind = rep % 6;
                for (uint32_t t = 0; t < T; t++) {
                        double u = unit(), lo = 30.0 + 8970.0 * (t % P) / P, w = 8970.0 / P;
                        y.cost[t] = kind == 0   ? lo + w * u * u * u * u
                                    : kind == 1 ? (double)(1 + below(3))
                                    : kind == 2 ? (below(2) ? 1e-6 : 1.0) * (1.0 + u)
                                    : kind == 3 ? (below(50) ? lo : lo + w * u)
                                                : 30.0 + 8970.0 * u * u * u * u;
                }
                uint32_t *tasks = malloc((T + 1) * sizeof *tasks), n = 0;
                for (uint32_t t = 0; t < T; t++)
                        if (below(20))
                                tasks[n++] = t;
                ASSERT_EQ(lbomp__sort_tasks_desc(y.s.cost, tasks, n), 0);
                uint32_t *workers = malloc((P + 1) * sizeof *workers), m = 0;
                bool all = rep % 3 != 0;
                for (uint32_t w = 0; w < P; w++)
                        if (all || below(2))
                                workers[m++] = w;
                double *load0 = malloc((P + 1) * sizeof *load0);
                for (uint32_t i = 0; i < m; i++)
                        load0[i] = rep % 2 ? 0.0 : unit() * 100.0;
                char what[96];
                snprintf(what, sizeof what, "rounds rep %d T=%u P=%u m=%u N=%u kind %d", rep, T, P,
                         m, N, kind);
                compare_assign(&y, tasks, n, workers, m, load0, what);
                compare_policy("greedy", &ref__policy_greedy, &y, what);
                free(tasks);
                free(workers);
                free(load0);
                synth_free(&y);
        }
        printf("identity: greedy's rounds, 48 inputs\n");
}

int main(void)
{
        test_sort();
        test_assign();
        test_rounds();
        test_policies();
        test_make_room_rounding();
        printf("identity: ok\n");
        return 0;
}
