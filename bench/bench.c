/*
 * bench.c — the driver every benchmark shares: common options, running a workload's kernel through
 * lbomp or through a plain OpenMP baseline (schedule static, dynamic, guided, or one OpenMP task
 * per task), and the one-line JSON result. Its keys are a contract read by bench/run, the tests
 * and the issues: bench, policy, baseline, threads, tasks, k, iters, period, load, total_s,
 * step_s_median, lb_steps, imbalance_first, imbalance_last, migrations, decision_s, messages,
 * topology, nodes, cores, locality_cost_first, locality_cost_last, energy_j (joules of all
 * packages over the run, null when the counters cannot be read or for a baseline), energy_note
 * (then the reason; otherwise the reader: "powercap: ...", "perf: ...", "msr: ..."), move_cost
 * (Σ data bytes × distance of the migrations), stolen (tasks run by another worker than their
 * owner), exactly_once (every task ran once in every step, checked after each step, outside the
 * timed step), checksum.
 *
 * Baselines never touch lbomp while they run; their λ comes from each thread's busy time in the
 * loop over windows of --period steps (the library's windows), so both sides are measured alike.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static const char *const sizes[] = {"tiny", "small", "default", "large"};
static const char *const baselines[] = {"omp-static", "omp-dynamic", "omp-guided", "omp-tasks"};

double bench_now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double thread_cpu_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_u01(unsigned long long key)
{
        uint64_t z = (uint64_t)key + 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return (double)(z >> 11) * 0x1.0p-53;
}

double bench_lbtest_factor(unsigned long long seed, long i, double min, double max)
{
        double u = bench_u01(seed * 0x100000001b3ull + (unsigned long long)i);
        return min + (max - min) * u * u * u * u;
}

double bench_burn(const double *data, size_t nd, long iters)
{
        double acc = data[0];
        for (long it = 0; it < iters; it++)
                acc = acc * 0.9999999 + data[(size_t)it % nd] * 1e-7;
        return acc;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

double bench_median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

void bench_opts_init(struct bench_opts *o)
{
        *o = (struct bench_opts){.size = "default", .iters = -1, .period = -1, .seed = 1};
}

int bench_parse_long(const char *prog, const char *opt, const char *s, long lo, long hi, long *out)
{
        char *end;
        errno = 0;
        long v = s ? strtol(s, &end, 10) : 0;
        if (!s || !*s || *end || errno || v < lo || v > hi) {
                fprintf(stderr,
                        "%s: %s '%s' is not valid; expected a whole number from %ld to %ld\n", prog,
                        opt, s ? s : "", lo, hi);
                return -1;
        }
        *out = v;
        return 0;
}

int bench_parse_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                       double *out)
{
        char *end;
        errno = 0;
        double v = s ? strtod(s, &end) : 0;
        if (!s || !*s || *end || errno || !(v >= lo && v <= hi)) {
                fprintf(stderr, "%s: %s '%s' is not valid; expected a number from %g to %g\n", prog,
                        opt, s ? s : "", lo, hi);
                return -1;
        }
        *out = v;
        return 0;
}

int bench_size_index(const char *size)
{
        for (int i = 0; i < 4; i++)
                if (strcmp(size, sizes[i]) == 0)
                        return i;
        return -1;
}

void bench_usage_common(FILE *out)
{
        fprintf(out, "common options:\n"
                     "  --size tiny|small|default|large   workload preset (tiny: smoke tests)\n"
                     "  --policy NAME       lbomp policy (LBOMP_POLICY=help lists them)\n"
                     "  --baseline NAME     run without lbomp: " BENCH_BASELINES "\n"
                     "  --iters I           steps (default: the size's preset)\n"
                     "  --period P          LB period; also the window of λ for baselines (10)\n"
                     "  --threads T         OpenMP threads (default omp_get_max_threads())\n"
                     "  --seed S            seed of every random choice of the workload\n"
                     "  --json              print the one-line JSON result\n"
                     "  --report-json FILE  write the per-window/per-LB-step report as JSON\n");
}

int bench_opt(struct bench_opts *o, const char *prog, int argc, char **argv, int *i)
{
        const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
        long x;
#define NUM(name, lo, hi, field)                                                                   \
        if (strcmp(a, name) == 0) {                                                                \
                if (bench_parse_long(prog, name, v, lo, hi, &x) < 0)                               \
                        return -1;                                                                 \
                o->field = x;                                                                      \
                ++*i;                                                                              \
                return 1;                                                                          \
        }
        NUM("--iters", 1, 100000000, iters);
        NUM("--period", 1, 1000000000, period);
        NUM("--threads", 1, 4096, threads);
        NUM("--seed", 0, INT64_MAX, seed);
#undef NUM
        if (strcmp(a, "--json") == 0) {
                o->json = 1;
                return 1;
        }
        const char **field = strcmp(a, "--policy") == 0        ? &o->policy
                             : strcmp(a, "--baseline") == 0    ? &o->baseline
                             : strcmp(a, "--size") == 0        ? &o->size
                             : strcmp(a, "--report-json") == 0 ? &o->report_json
                                                               : NULL;
        if (!field)
                return 0;
        if (!v) {
                fprintf(stderr, "%s: %s needs a value\n", prog, a);
                return -1;
        }
        if (field == &o->size && bench_size_index(v) < 0) {
                fprintf(stderr,
                        "%s: --size '%s' is not valid; valid: tiny, small, default, large\n", prog,
                        v);
                return -1;
        }
        if (field == &o->baseline) {
                int ok = 0;
                for (int b = 0; b < 4; b++)
                        ok |= strcmp(v, baselines[b]) == 0;
                if (!ok) {
                        fprintf(stderr,
                                "%s: --baseline '%s' is not valid; valid: " BENCH_BASELINES "\n",
                                prog, v);
                        return -1;
                }
        }
        *field = v;
        ++*i;
        return 1;
}

/* ---------------------------------------------------------------------------------------------
 * lbomp
 */

struct lb_arg {
        const struct bench_kernel *k;
        long step;
        long *runs; /* per task: times it ran (atomic) */
};

static void run_task(void *data, lbomp_id_t id, void *arg)
{
        const struct lb_arg *a = arg;
        __atomic_fetch_add(&a->runs[id], 1, __ATOMIC_RELAXED);
        a->k->step(data, a->step);
}

/* Every task ran exactly once in each of the `steps` steps so far (stealing must neither lose nor
 * repeat a task). Prints the first violation. */
static int check_runs(const char *bench, const long *runs, long n, long steps)
{
        for (long i = 0; i < n; i++) {
                long r = __atomic_load_n(&runs[i], __ATOMIC_RELAXED);
                if (r != steps) {
                        fprintf(stderr,
                                "%s: task %ld ran %ld times in %ld steps: exactly-once violated\n",
                                bench, i, r, steps);
                        return -1;
                }
        }
        return 0;
}

static void result_from_lbomp(struct bench_result *r, const lbomp_t *lb)
{
        /* the run's totals, whatever LBOMP_HISTORY keeps of its LB steps and windows */
        lbomp_totals_t t;
        lbomp_totals_get(lb, &t, sizeof t);
        r->lb_steps = t.lb_steps;
        r->imbalance_first = t.imbalance_first;
        r->imbalance_last = t.imbalance_last;
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        r->energy_j = en.package_j;
        r->energy_note = en.note;
        r->migrations = t.migrations;
        r->messages = t.messages;
        r->stolen = t.stolen;
        r->steal_steps = t.steal_steps;
        r->steal_front_steps = t.steal_front_steps;
        r->decision_s = t.decision_s;
        r->move_cost = t.move_cost;
        r->locality_first = t.locality_first;
        r->locality_last = t.locality_last;
}

/* A JSON string value: the note may carry a path, and a path may hold quotes or control bytes. */
static void str(FILE *out, const char *key, const char *v)
{
        fprintf(out, ",\"%s\":", key);
        if (!v) {
                fputs("null", out);
                return;
        }
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(out, "\\%c", *p);
                else if (*p < 0x20)
                        fprintf(out, "\\u%04x", *p);
                else
                        fputc(*p, out);
        }
        fputc('"', out);
}

static void num(FILE *out, const char *key, double v)
{
        if (isfinite(v))
                fprintf(out, ",\"%s\":%.6g", key, v);
        else
                fprintf(out, ",\"%s\":null", key);
}

static void print_json(FILE *out, const struct bench_opts *o, const struct bench_kernel *k,
                       const struct bench_result *r, const char *policy, int threads, int period,
                       const char *topo, int nodes, int cores)
{
        fprintf(out, "{\"bench\":\"%s\"", k->bench);
        if (policy)
                fprintf(out, ",\"policy\":\"%s\",\"baseline\":null", policy);
        else
                fprintf(out, ",\"policy\":null,\"baseline\":\"%s\"", o->baseline);
        fprintf(out,
                ",\"threads\":%d,\"tasks\":%ld,\"k\":%ld,\"iters\":%ld,\"period\":%d,\"load\":\"%"
                "s\"",
                threads, k->ntasks, k->k, o->iters, period, k->load);
        num(out, "total_s", r->total_s);
        num(out, "step_s_median", r->step_s_median);
        fprintf(out, ",\"lb_steps\":%llu", r->lb_steps);
        num(out, "imbalance_first", r->imbalance_first);
        num(out, "imbalance_last", r->imbalance_last);
        fprintf(out, ",\"migrations\":%llu", r->migrations);
        num(out, "decision_s", r->decision_s);
        fprintf(out, ",\"messages\":%llu", r->messages);
        str(out, "topology", topo);
        fprintf(out, ",\"nodes\":%d,\"cores\":%d", nodes, cores);
        num(out, "locality_cost_first", r->locality_first);
        num(out, "locality_cost_last", r->locality_last);
        num(out, "move_cost", r->move_cost);
        fprintf(out,
                ",\"stolen\":%llu,\"steal_steps\":%llu,\"steal_front_steps\":%llu,"
                "\"exactly_once\":%s",
                r->stolen, r->steal_steps, r->steal_front_steps,
                r->exactly_once ? "true" : "false");
        num(out, "energy_j", r->energy_j);
        str(out, "energy_note", r->energy_note);
        if (k->json_extra)
                k->json_extra(k->ctx, out);
        fprintf(out, ",\"checksum\":%.17g}\n", r->checksum);
}

static int fail(const char *bench, const char *what, int rc)
{
        fprintf(stderr, "%s: %s: %s\n", bench, what,
                *lbomp_last_error() ? lbomp_last_error() : lbomp_strerror(rc));
        return 2;
}

static int run_lbomp(const struct bench_opts *o, const struct bench_kernel *k)
{
        lbomp_t *lb;
        int rc = lbomp_create(&lb);
        if (rc == -ECANCELED)
                return 0; /* LBOMP_POLICY=help: the list was printed */
        if (rc < 0)
                return fail(k->bench, "lbomp_create failed", rc);
        if ((o->policy && (rc = lbomp_set_policy(lb, o->policy)) < 0) ||
            (o->period > 0 && (rc = lbomp_set_period(lb, (int)o->period)) < 0) ||
            (o->threads > 0 && (rc = lbomp_set_workers(lb, (int)o->threads)) < 0)) {
                lbomp_destroy(lb);
                return fail(k->bench, "configuration", rc);
        }
        for (long i = 0; i < k->ntasks && rc == 0; i++)
                rc = lbomp_task_add(lb, k->task(k->ctx, i), k->bytes(k->ctx, i), LBOMP_NODE_ANY,
                                    NULL);
        if (rc == 0 && k->links)
                rc = k->links(k->ctx, lb);
        if (rc < 0) {
                lbomp_destroy(lb);
                return fail(k->bench, "setting up tasks failed", rc);
        }
        double *step_s = malloc((size_t)o->iters * sizeof *step_s);
        long *runs = calloc((size_t)k->ntasks, sizeof *runs);
        if (!step_s || !runs) {
                free(step_s);
                lbomp_destroy(lb);
                return fail(k->bench, "out of memory", -ENOMEM);
        }
        struct lb_arg arg = {.k = k, .runs = runs};
        int once = 1;
        double t0 = bench_now_s(), checking = 0;
        for (long s = 0; s < o->iters; s++) {
                double ts = bench_now_s();
                arg.step = s;
                if ((rc = lbomp_step(lb, run_task, &arg)) < 0) {
                        free(step_s);
                        free(runs);
                        lbomp_destroy(lb);
                        return fail(k->bench, "step failed", rc);
                }
                double te = bench_now_s();
                step_s[s] = te - ts;
                if (once && check_runs(k->bench, runs, k->ntasks, s + 1) < 0)
                        once = 0;
                checking += bench_now_s() - te;
        }
        struct bench_result r = {.total_s = bench_now_s() - t0 - checking, .exactly_once = once};
        free(runs);
        r.step_s_median = bench_median(step_s, o->iters);
        r.checksum = k->checksum(k->ctx);
        result_from_lbomp(&r, lb);
        if (o->report_json) {
                FILE *f = fopen(o->report_json, "w");
                if (!f || lbomp_report_json(lb, f) < 0 || fclose(f) != 0) {
                        fprintf(stderr, "%s: cannot write %s: %s\n", k->bench, o->report_json,
                                strerror(errno));
                        free(step_s);
                        lbomp_destroy(lb);
                        return 2;
                }
        }
        int nodes = 0, cores = 0;
        const char *topo = lbomp_topology(lb, &nodes, &cores);
        if (o->json) {
                print_json(stdout, o, k, &r, lbomp_get_policy(lb), lbomp_get_workers(lb),
                           lbomp_get_period(lb), topo, nodes, cores);
        } else {
                lbomp_report(lb, stdout);
                printf("%s: %ld tasks, %ld iters, load %s, policy %s: total %.3f s, median step "
                       "%.3g s, checksum %.17g\n",
                       k->bench, k->ntasks, o->iters, k->load, lbomp_get_policy(lb), r.total_s,
                       r.step_s_median, r.checksum);
        }
        free(step_s);
        lbomp_destroy(lb);
        return once ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------------
 * Baselines
 */

enum { PAD = 8 }; /* doubles per thread slot: one cache line, no false sharing */

/* One step of a `parallel for` baseline. The loop is `nowait` so that each thread's span ends
 * when its own share ends: that span (capped by the thread's CPU time, so that time stolen by
 * other processes is not counted as work) is its busy time. The CPU time is read only when the
 * step before took 100 µs or more, as lbomp reads it (src/step.c, CPU_READ_MIN_S): a read is a
 * system call of 0.3–0.4 µs here, and two per thread and step were 5–8 % of a 1 MiB memtask's
 * 9–13 µs step, charged to the baselines only. */
#define CPU_READ_MIN_S 100e-6
#define LOOP_STEP(SCHED)                                                                           \
        _Pragma("omp parallel num_threads(T)")                                                     \
        {                                                                                          \
                int t = omp_get_thread_num();                                                      \
                double w0 = bench_now_s(), c0 = cpu_reads ? thread_cpu_s() : 0;                    \
                _Pragma(SCHED) for (long i = 0; i < n; i++)                                        \
                {                                                                                  \
                        __atomic_fetch_add(&runs[i], 1, __ATOMIC_RELAXED);                         \
                        k->step(ptr[i], s);                                                        \
                }                                                                                  \
                double wall = bench_now_s() - w0, cpu = cpu_reads ? thread_cpu_s() - c0 : -1;      \
                busy[t * PAD] += cpu > 0 && cpu < wall ? cpu : wall;                               \
        }

static int run_baseline(const struct bench_opts *o, const struct bench_kernel *k)
{
        int T = o->threads > 0 ? (int)o->threads : omp_get_max_threads();
        int period = o->period > 0 ? (int)o->period : 10;
        long n = k->ntasks, nwin = (o->iters + period - 1) / period;
        void **ptr = malloc((size_t)n * sizeof *ptr);
        double *busy = calloc((size_t)T * PAD, sizeof *busy);
        double *step_s = malloc((size_t)o->iters * sizeof *step_s);
        double *lam = malloc((size_t)nwin * sizeof *lam),
               *wwall = calloc((size_t)nwin, sizeof *wwall);
        long *runs = calloc((size_t)n, sizeof *runs);
        int once = 1;
        double checking = 0;
        if (!ptr || !busy || !step_s || !lam || !wwall || !runs) {
                fprintf(stderr, "%s: out of memory\n", k->bench);
                return 2;
        }
        for (long i = 0; i < n; i++)
                ptr[i] = k->task(k->ctx, i);
        int b = strcmp(o->baseline, "omp-static") == 0    ? 0
                : strcmp(o->baseline, "omp-dynamic") == 0 ? 1
                : strcmp(o->baseline, "omp-guided") == 0  ? 2
                                                          : 3;
        double t0 = bench_now_s();
        for (long s = 0; s < o->iters; s++) {
                double ts = bench_now_s();
                int cpu_reads = s > 0 && step_s[s - 1] >= CPU_READ_MIN_S;
                (void)cpu_reads; /* the tasks baseline times each task instead */
                if (b == 0) {
                        LOOP_STEP("omp for schedule(static) nowait")
                } else if (b == 1) {
                        LOOP_STEP("omp for schedule(dynamic) nowait")
                } else if (b == 2) {
                        LOOP_STEP("omp for schedule(guided) nowait")
                } else {
#pragma omp parallel num_threads(T)
#pragma omp single
                        for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
                                {
                                        double a = bench_now_s();
                                        __atomic_fetch_add(&runs[i], 1, __ATOMIC_RELAXED);
                                        k->step(ptr[i], s);
                                        busy[omp_get_thread_num() * PAD] += bench_now_s() - a;
                                }
                        }
                }
                double te = bench_now_s();
                step_s[s] = te - ts;
                if (once && check_runs(k->bench, runs, n, s + 1) < 0)
                        once = 0;
                checking += bench_now_s() - te;
                long w = s / period;
                wwall[w] += step_s[s];
                if ((s + 1) % period == 0 || s + 1 == o->iters) {
                        double max = 0, sum = 0;
                        for (int t = 0; t < T; t++) {
                                max = busy[t * PAD] > max ? busy[t * PAD] : max;
                                sum += busy[t * PAD];
                                busy[t * PAD] = 0;
                        }
                        lam[w] = sum > 0 ? max / (sum / T) : NAN;
                }
        }
        struct bench_result r = {.total_s = bench_now_s() - t0 - checking,
                                 .exactly_once = once,
                                 .imbalance_first = lam[0],
                                 .imbalance_last = lam[nwin - 1],
                                 .locality_first = NAN,
                                 .locality_last = NAN,
                                 .energy_j = NAN,
                                 .energy_note = "not measured for OpenMP baselines"};
        r.checksum = k->checksum(k->ctx);
        if (o->report_json) {
                FILE *f = fopen(o->report_json, "w");
                if (!f) {
                        fprintf(stderr, "%s: cannot write %s: %s\n", k->bench, o->report_json,
                                strerror(errno));
                        return 2;
                }
                fprintf(f,
                        "{\"policy\":null,\"baseline\":\"%s\",\"period\":%d,\"workers\":%d,"
                        "\"steps\":%ld,\"tasks\":%ld,\"migrations\":0,\"windows\":[",
                        o->baseline, period, T, o->iters, n);
                for (long w = 0; w < nwin; w++) {
                        fprintf(f,
                                "%s{\"first_step\":%ld,\"steps\":%ld,\"imbalance\":", w ? "," : "",
                                w * period,
                                (w + 1) * period > o->iters ? o->iters - w * period : period);
                        fprintf(f, isfinite(lam[w]) ? "%.6g" : "null", lam[w]);
                        fprintf(f, ",\"wall_s\":%.6g}", wwall[w]);
                }
                fprintf(f, "],\"lb_steps\":[]}\n");
                fclose(f);
        }
        r.step_s_median = bench_median(step_s, o->iters);
        if (o->json) {
                /* The topology only labels the result: the handle is created and freed before
                 * anything else, and nothing of lbomp runs during the baseline. */
                lbomp_t *lb = NULL;
                int nodes = 0, cores = 0;
                const char *topo = "host";
                char name[64] = "host";
                if (lbomp_create(&lb) == 0) {
                        snprintf(name, sizeof name, "%s", lbomp_topology(lb, &nodes, &cores));
                        topo = name;
                        lbomp_destroy(lb);
                }
                print_json(stdout, o, k, &r, NULL, T, period, topo, nodes, cores);
        } else {
                printf("%s: %ld tasks, %ld iters, load %s, baseline %s, %d threads: total %.3f s, "
                       "median step %.3g s, λ first window %.3f, last %.3f, checksum %.17g\n",
                       k->bench, n, o->iters, k->load, o->baseline, T, r.total_s, r.step_s_median,
                       r.imbalance_first, r.imbalance_last, r.checksum);
        }
        free(ptr);
        free(busy);
        free(step_s);
        free(lam);
        free(wwall);
        free(runs);
        return once ? 0 : 1;
}

int bench_run(const struct bench_opts *o, const struct bench_kernel *k)
{
        if (o->baseline && o->policy) {
                fprintf(stderr, "%s: --policy and --baseline exclude each other\n", k->bench);
                return 2;
        }
        return o->baseline ? run_baseline(o, k) : run_lbomp(o, k);
}
