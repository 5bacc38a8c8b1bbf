/*
 * sim.c — lbomp-sim, the offline balancer (Charm++'s +LBSim): runs policies on LB steps recorded
 * by LBOMP_TRACE, or on a synthetic workload on any topology, through the same code the live
 * library runs (lbomp__policy_run_offline: centralized on this thread, decentralized on virtual
 * workers whose messages and rounds are counted), and reports balance, migrations, locality and
 * decision time per policy. This is how a 2-core machine evaluates policies at 1,000 cores.
 *
 * Nothing here decides: the snapshot is built like the runtime builds it (tasks in worker order,
 * symmetric CSR links in link order) and the metrics use plan.c's helpers, as the report does.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "internal.h"
#include "mailbox.h"
#include "policy.h"
#include "trace.h"

#define MAX_POLICIES 32
#define MAX_TASKS    100000000L
#define MAX_CORES    LBOMP__MAX_WORKERS

enum load { LOAD_UNIFORM, LOAD_LINEAR, LOAD_HOTSPOT, LOAD_LBTEST, LOAD_LBTEST_IID };
enum links { LINKS_NONE, LINKS_RING, LINKS_MESH2D, LINKS_MESH3D };

static const char *const load_names[] = {"uniform", "linear", "hotspot", "lbtest", "lbtest-iid"};

struct opts {
        const char *trace, *profile, *record;
        const char *load_name, *links_name;
        enum load load;
        enum links links;
        long ring_k;
        long tasks, cores, repeat;
        uint64_t seed;
        bool seed_set, json, verify;
        double task_bytes, link_bytes, base_us;
        const struct lbomp__policy *pol[MAX_POLICIES];
        int npol;
};

static void usage(FILE *out)
{
        char names[512];
        lbomp__policy_names(names, sizeof names);
        fprintf(out,
                "usage: lbomp-sim (--trace FILE | --tasks N [--load L] [--links K])\n"
                "                 [--profile XML] [--cores N] [--policy a,b,c] [--seed S]\n"
                "                 [--repeat R] [--record FILE] [--verify] [--json]\n"
                "Runs balancing policies offline, through the library's own policy code.\n"
                "  --trace FILE     replay every LB step recorded with LBOMP_TRACE=FILE\n"
                "  --tasks N        synthetic workload of N tasks, block-mapped onto the workers\n"
                "  --load L         uniform | linear | hotspot | lbtest | lbtest-iid (default\n"
                "                   lbtest). lbtest is Charm++ lb_test built LINEARLY_GRADED: the\n"
                "                   tasks first on worker p of P cost lo + (hi - lo) u^4 with\n"
                "                   lo, hi = 30 + 8970 (p, p+1) / P us (first worker 30 us, last\n"
                "                   9000 us); lbtest-iid is its default build, every task\n"
                "                   30 + 8970 u^4 us (u uniform in [0,1), seeded)\n"
                "  --links K        ring:K | mesh2d | mesh3d | none (default ring:2)\n"
                "  --task-bytes B   data bytes per task (default 4096)\n"
                "  --link-bytes B   bytes per link and step (default 1024)\n"
                "  --profile XML    a numa-profiles/ file: its nodes, distances and cores\n"
                "  --cores N        N workers (spread over the profile's cores; without a\n"
                "                   profile, one node); default: the profile's core count\n"
                "  --policy LIST    comma-separated, from: %s; or all (default greedy)\n"
                "  --seed S         seed of the workload and of the policies (a trace keeps its\n"
                "                   recorded seeds unless --seed is given)\n"
                "  --repeat R       run each policy R times, report the median times (default 1)\n"
                "  --record FILE    write each policy's snapshot and plan as a trace\n"
                "  --verify         with --trace: exit 1 unless replaying the recorded policy\n"
                "                   reproduces every recorded plan\n"
                "  --json           one JSON line per policy (and LB step)\n",
                names);
}

static int bad(const char *opt, const char *val, const char *expected)
{
        fprintf(stderr, "lbomp-sim: %s '%s' is not valid; expected %s\n", opt, val ? val : "",
                expected);
        return -1;
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
        char *end;
        errno = 0;
        long v = s && *s ? strtol(s, &end, 10) : 0;
        if (!s || !*s || *end || errno || v < lo || v > hi) {
                char what[96];
                snprintf(what, sizeof what, "a whole number from %ld to %ld", lo, hi);
                return bad(opt, s, what);
        }
        *out = v;
        return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
        char *end;
        errno = 0;
        double v = s && *s ? strtod(s, &end) : NAN;
        if (!s || !*s || *end || errno || !(v >= lo && v <= hi)) {
                char what[96];
                snprintf(what, sizeof what, "a number from %g to %g", lo, hi);
                return bad(opt, s, what);
        }
        *out = v;
        return 0;
}

static int parse_policies(struct opts *o, const char *s)
{
        char names[512];
        lbomp__policy_names(names, sizeof names);
        o->npol = 0;
        const char *p = s;
        if (!*s) {
                fprintf(stderr, "lbomp-sim: --policy '' names no policy; valid: %s\n", names);
                return -1;
        }
        if (strcmp(s, "all") == 0) { /* every registered policy, in the registry's order */
                for (size_t i = 0; i < lbomp__policy_count() && o->npol < MAX_POLICIES; i++)
                        o->pol[o->npol++] = lbomp__policy_at(i);
                return 0;
        }
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t n = comma ? (size_t)(comma - p) : strlen(p);
                char name[64];
                if (n == 0 || n >= sizeof name) {
                        fprintf(stderr,
                                "lbomp-sim: --policy '%s' has an empty or too long name; "
                                "valid: %s\n",
                                s, names);
                        return -1;
                }
                memcpy(name, p, n);
                name[n] = 0;
                const struct lbomp__policy *pol = lbomp__policy_find(name);
                if (!pol) {
                        fprintf(stderr, "lbomp-sim: --policy: '%s' is not a policy; valid: %s\n",
                                name, names);
                        return -1;
                }
                if (o->npol == MAX_POLICIES) {
                        fprintf(stderr, "lbomp-sim: --policy: more than %d policies\n",
                                MAX_POLICIES);
                        return -1;
                }
                o->pol[o->npol++] = pol;
                if (!comma)
                        return 0;
                p = comma + 1;
        }
}

static int parse_links(struct opts *o, const char *s)
{
        o->links_name = s;
        if (strcmp(s, "none") == 0)
                o->links = LINKS_NONE;
        else if (strcmp(s, "mesh2d") == 0)
                o->links = LINKS_MESH2D;
        else if (strcmp(s, "mesh3d") == 0)
                o->links = LINKS_MESH3D;
        else if (strncmp(s, "ring:", 5) == 0) {
                o->links = LINKS_RING;
                char *end;
                errno = 0;
                long k = strtol(s + 5, &end, 10);
                if (!s[5] || *end || errno || k < 1 || k > 1000)
                        return bad("--links", s,
                                   "ring:K with K from 1 to 1000, mesh2d, mesh3d "
                                   "or none");
                o->ring_k = k;
        } else {
                return bad("--links", s, "ring:K, mesh2d, mesh3d or none");
        }
        return 0;
}

static int parse(struct opts *o, int argc, char **argv)
{
        *o = (struct opts){.load_name = "lbtest",
                           .load = LOAD_LBTEST,
                           .links_name = "ring:2",
                           .links = LINKS_RING,
                           .ring_k = 2,
                           .repeat = 1,
                           .seed = 1,
                           .task_bytes = 4096,
                           .link_bytes = 1024,
                           .base_us = 100};
        bool have_load = false, have_links = false;
        const char *policies = "greedy";
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        exit(0);
                }
                if (strcmp(a, "--json") == 0) {
                        o->json = true;
                        continue;
                }
                if (strcmp(a, "--verify") == 0) {
                        o->verify = true;
                        continue;
                }
                static const char *const with_value[] = {
                        "--trace",      "--tasks",      "--load", "--links",  "--profile",
                        "--cores",      "--policy",     "--seed", "--repeat", "--record",
                        "--task-bytes", "--link-bytes", NULL};
                bool known = false;
                for (int k = 0; with_value[k]; k++)
                        known |= strcmp(a, with_value[k]) == 0;
                if (!known) {
                        fprintf(stderr, "lbomp-sim: unknown option '%s' (--help lists them)\n", a);
                        return -1;
                }
                if (i + 1 >= argc) {
                        fprintf(stderr, "lbomp-sim: %s needs a value (--help lists them)\n", a);
                        return -1;
                }
                const char *v = argv[++i];
                if (strcmp(a, "--trace") == 0) {
                        o->trace = v;
                } else if (strcmp(a, "--record") == 0) {
                        o->record = v;
                } else if (strcmp(a, "--profile") == 0) {
                        o->profile = v;
                } else if (strcmp(a, "--policy") == 0) {
                        policies = v;
                } else if (strcmp(a, "--tasks") == 0) {
                        if (parse_long(a, v, 1, MAX_TASKS, &o->tasks) < 0)
                                return -1;
                } else if (strcmp(a, "--cores") == 0) {
                        if (parse_long(a, v, 1, MAX_CORES, &o->cores) < 0)
                                return -1;
                } else if (strcmp(a, "--repeat") == 0) {
                        if (parse_long(a, v, 1, 1000, &o->repeat) < 0)
                                return -1;
                } else if (strcmp(a, "--seed") == 0) {
                        if (lbomp__parse_u64("--seed", v, &o->seed) < 0)
                                return -1; /* lbomp__parse_u64 printed why */
                        o->seed_set = true;
                } else if (strcmp(a, "--task-bytes") == 0) {
                        if (parse_double(a, v, 0, 1e15, &o->task_bytes) < 0)
                                return -1;
                        o->task_bytes = floor(o->task_bytes);
                } else if (strcmp(a, "--link-bytes") == 0) {
                        if (parse_double(a, v, 0, 1e15, &o->link_bytes) < 0)
                                return -1;
                } else if (strcmp(a, "--load") == 0) {
                        have_load = true;
                        o->load_name = v;
                        int found = -1;
                        for (int k = 0; k < 5; k++)
                                if (strcmp(v, load_names[k]) == 0)
                                        found = k;
                        if (found < 0)
                                return bad(a, v, "uniform, linear, hotspot, lbtest or lbtest-iid");
                        o->load = (enum load)found;
                } else if (strcmp(a, "--links") == 0) {
                        have_links = true;
                        if (parse_links(o, v) < 0)
                                return -1;
                }
        }
        if (parse_policies(o, policies) < 0)
                return -1;
        if (o->trace) {
                const char *clash = o->tasks     ? "--tasks"
                                    : have_load  ? "--load"
                                    : have_links ? "--links"
                                    : o->profile ? "--profile"
                                    : o->cores   ? "--cores"
                                                 : NULL;
                if (clash) {
                        fprintf(stderr,
                                "lbomp-sim: %s cannot be combined with --trace: a trace carries "
                                "its own tasks, links and topology\n",
                                clash);
                        return -1;
                }
                return 0;
        }
        if (o->verify) {
                fprintf(stderr, "lbomp-sim: --verify compares with recorded plans: it needs "
                                "--trace\n");
                return -1;
        }
        if (!o->tasks) {
                fprintf(stderr,
                        "lbomp-sim: no input: give --trace FILE, or --tasks N for a synthetic "
                        "workload (--help lists the options)\n");
                return -1;
        }
        if (!o->profile && !o->cores) {
                fprintf(stderr, "lbomp-sim: no machine: give --profile XML (a numa-profiles/ "
                                "file) or --cores N\n");
                return -1;
        }
        if (o->links == LINKS_RING && 2 * o->ring_k >= o->tasks) {
                fprintf(stderr,
                        "lbomp-sim: --links ring:%ld needs more than %ld tasks (each task links "
                        "to %ld on each side)\n",
                        o->ring_k, 2 * o->ring_k, o->ring_k);
                return -1;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The synthetic snapshot
 */

struct world {
        struct lbomp__snap s;
        struct lbomp__params params;
        char topo_name[256];
        uint32_t ncores;
        double *cost, *bg, *dist, *link_bytes;
        uint32_t *worker, *id, *link_off, *link_dst, *wtask_off, *wtask;
        uint64_t *bytes;
        int32_t *home, *wnode, *wcore;
};

static void world_free(struct world *w)
{
        free(w->cost);
        free(w->bg);
        free(w->dist);
        free(w->link_bytes);
        free(w->worker);
        free(w->id);
        free(w->link_off);
        free(w->link_dst);
        free(w->wtask_off);
        free(w->wtask);
        free(w->bytes);
        free(w->home);
        free(w->wnode);
        free(w->wcore);
}

static void default_params(struct lbomp__params *p)
{
        /* The library's defaults (config.c); a trace brings its own. */
        *p = (struct lbomp__params){.tolerance = 0.05,
                                    .refine_factor = 1.05,
                                    .smart_threshold = 0.05,
                                    .fanout = 2,
                                    .retries = 2};
}

/* Forward links of task i (to tasks > i, or wrapping on the ring), in the order a program would
 * declare them: kneighbor links i to i+1..i+K. Returns how many were written to out. */
static uint32_t links_of(const struct opts *o, uint32_t T, uint32_t side, uint32_t i, uint32_t *out)
{
        uint32_t n = 0;
        switch (o->links) {
        case LINKS_NONE:
                break;
        case LINKS_RING:
                for (long j = 1; j <= o->ring_k; j++)
                        out[n++] = (uint32_t)((i + (uint64_t)j) % T);
                break;
        case LINKS_MESH2D: /* side × side grid filled row by row; the last row may be partial */
                if (i % side + 1 < side && i + 1 < T)
                        out[n++] = i + 1;
                if ((uint64_t)i + side < T)
                        out[n++] = i + side;
                break;
        case LINKS_MESH3D: {
                uint64_t plane = (uint64_t)side * side;
                if (i % side + 1 < side && i + 1 < T)
                        out[n++] = i + 1;
                if ((i / side) % side + 1 < side && i + side < T)
                        out[n++] = i + side;
                if (i + plane < T)
                        out[n++] = (uint32_t)(i + plane);
                break;
        }
        }
        return n;
}

static uint32_t mesh_side(const struct opts *o, uint32_t T)
{
        if (o->links == LINKS_MESH2D) {
                uint32_t s = (uint32_t)ceil(sqrt((double)T));
                while ((uint64_t)s * s < T)
                        s++;
                return s;
        }
        if (o->links == LINKS_MESH3D) {
                uint32_t s = (uint32_t)ceil(cbrt((double)T));
                while ((uint64_t)s * s * s < T)
                        s++;
                return s;
        }
        return 1;
}

/* Cost of task i of T, first placed on worker wk of P, in seconds per step. */
static double task_cost_s(const struct opts *o, struct lbomp__rng *rng, uint32_t i, uint32_t T,
                          uint32_t wk, uint32_t P)
{
        double us = o->base_us;
        switch (o->load) {
        case LOAD_UNIFORM:
                break;
        case LOAD_LINEAR:
                us *= 2.0 * (double)(i + 1) / (double)T;
                break;
        case LOAD_HOTSPOT:
                us *= i < (T + 9) / 10 ? 10.0 : 1.0;
                break;
        case LOAD_LBTEST: { /* lb_test LINEARLY_GRADED: worker wk's range is its 1/P slice */
                double u = lbomp__rng_unit(rng);
                double lo = 30.0 + 8970.0 * wk / P, hi = 30.0 + 8970.0 * (wk + 1.0) / P;
                us = lo + (hi - lo) * u * u * u * u;
                break;
        }
        case LOAD_LBTEST_IID: { /* lb_test's default: min + (max - min) u^4, 30 to 9000 us */
                double u = lbomp__rng_unit(rng);
                us = 30.0 + 8970.0 * u * u * u * u;
                break;
        }
        }
        return us * 1e-6;
}

static int load_machine(struct world *w, const struct opts *o)
{
        uint32_t P;
        if (o->profile) {
                struct stat st;
                if (stat(o->profile, &st) != 0) {
                        fprintf(stderr, "lbomp-sim: --profile '%s': %s\n", o->profile,
                                strerror(errno));
                        return -1;
                }
                struct lbomp__topo t;
                if (lbomp__topo_load(&t, o->profile) < 0) {
                        fprintf(stderr,
                                "lbomp-sim: --profile '%s' is not a hwloc XML topology (see "
                                "numa-profiles/)\n",
                                o->profile);
                        return -1;
                }
                P = o->cores ? (uint32_t)o->cores : (uint32_t)t.ncores;
                w->dist = malloc((size_t)t.nnodes * t.nnodes * sizeof *w->dist);
                w->wnode = malloc(P * sizeof *w->wnode);
                w->wcore = malloc(P * sizeof *w->wcore);
                if (!w->dist || !w->wnode || !w->wcore) {
                        lbomp__topo_free(&t);
                        return -ENOMEM;
                }
                memcpy(w->dist, t.dist, (size_t)t.nnodes * t.nnodes * sizeof *w->dist);
                for (uint32_t k = 0; k < P; k++) {
                        /* Workers are placed like the runtime places its threads. */
                        int c = lbomp__topo_spread_core(&t, (int)k, (int)P);
                        w->wcore[k] = c;
                        w->wnode[k] = t.core_node[c];
                }
                w->s.nnodes = (uint32_t)t.nnodes;
                w->ncores = (uint32_t)t.ncores;
                snprintf(w->topo_name, sizeof w->topo_name, "%s", t.name);
                lbomp__topo_free(&t);
        } else {
                P = (uint32_t)o->cores;
                w->dist = malloc(sizeof *w->dist);
                w->wnode = calloc(P, sizeof *w->wnode);
                w->wcore = malloc(P * sizeof *w->wcore);
                if (!w->dist || !w->wnode || !w->wcore)
                        return -ENOMEM;
                w->dist[0] = 1.0;
                for (uint32_t k = 0; k < P; k++)
                        w->wcore[k] = (int32_t)k;
                w->s.nnodes = 1;
                w->ncores = P;
                snprintf(w->topo_name, sizeof w->topo_name, "flat-%u", P);
        }
        w->s.nworkers = P;
        return 0;
}

static int build_world(struct world *w, const struct opts *o)
{
        memset(w, 0, sizeof *w);
        int rc = load_machine(w, o);
        if (rc < 0)
                return rc;
        uint32_t T = (uint32_t)o->tasks, P = w->s.nworkers, side = mesh_side(o, T);
        w->cost = malloc((size_t)T * sizeof *w->cost);
        w->worker = malloc((size_t)T * sizeof *w->worker);
        w->id = malloc((size_t)T * sizeof *w->id);
        w->wtask = malloc((size_t)T * sizeof *w->wtask);
        w->bytes = malloc((size_t)T * sizeof *w->bytes);
        w->home = malloc((size_t)T * sizeof *w->home);
        w->link_off = calloc((size_t)T + 1, sizeof *w->link_off);
        w->wtask_off = calloc((size_t)P + 1, sizeof *w->wtask_off);
        w->bg = calloc(P, sizeof *w->bg);
        if (!w->cost || !w->worker || !w->id || !w->wtask || !w->bytes || !w->home ||
            !w->link_off || !w->wtask_off || !w->bg)
                return -ENOMEM;
        struct lbomp__rng rng;
        lbomp__rng_seed(&rng, o->seed);
        for (uint32_t i = 0; i < T; i++) {
                /* Block mapping, as the runtime gives new tasks out (schedule(static)); data
                 * first touched by that worker lives on its node. */
                uint32_t wk = (uint32_t)((uint64_t)i * P / T);
                w->worker[i] = wk;
                w->id[i] = i;
                w->wtask[i] = i;
                w->wtask_off[wk + 1]++;
                w->cost[i] = task_cost_s(o, &rng, i, T, wk, P);
                w->bytes[i] = (uint64_t)o->task_bytes;
                w->home[i] = w->wnode[wk];
        }
        for (uint32_t k = 0; k < P; k++)
                w->wtask_off[k + 1] += w->wtask_off[k];
        /* Links: a symmetric CSR filled in declaration order, as snapshot.c does. */
        uint32_t fw[1024];
        for (uint32_t i = 0; i < T; i++) {
                uint32_t n = links_of(o, T, side, i, fw);
                w->link_off[i + 1] += n;
                for (uint32_t j = 0; j < n; j++)
                        w->link_off[fw[j] + 1]++;
        }
        for (uint32_t i = 0; i < T; i++) {
                if (w->link_off[i + 1] > UINT32_MAX - w->link_off[i]) {
                        fprintf(stderr, "lbomp-sim: more than 2^32 link ends\n");
                        return -EINVAL;
                }
                w->link_off[i + 1] += w->link_off[i];
        }
        size_t L = w->link_off[T];
        w->link_dst = malloc((L ? L : 1) * sizeof *w->link_dst);
        w->link_bytes = malloc((L ? L : 1) * sizeof *w->link_bytes);
        uint32_t *fill = malloc(((size_t)T + 1) * sizeof *fill);
        if (!w->link_dst || !w->link_bytes || !fill) {
                free(fill);
                return -ENOMEM;
        }
        memcpy(fill, w->link_off, (size_t)T * sizeof *fill);
        for (uint32_t i = 0; i < T; i++) {
                uint32_t n = links_of(o, T, side, i, fw);
                for (uint32_t j = 0; j < n; j++) {
                        uint32_t b = fw[j];
                        w->link_dst[fill[i]] = b;
                        w->link_bytes[fill[i]++] = o->link_bytes;
                        w->link_dst[fill[b]] = i;
                        w->link_bytes[fill[b]++] = o->link_bytes;
                }
        }
        free(fill);
        default_params(&w->params);
        w->s = (struct lbomp__snap){
                .ntasks = T,
                .nworkers = P,
                .nnodes = w->s.nnodes,
                .cost = w->cost,
                .worker = w->worker,
                .bytes = w->bytes,
                .home = w->home,
                .id = w->id,
                .link_off = w->link_off,
                .link_dst = w->link_dst,
                .link_bytes = w->link_bytes,
                .wtask_off = w->wtask_off,
                .wtask = w->wtask,
                .bg = w->bg,
                .wnode = w->wnode,
                .dist = w->dist,
                .seed = o->seed ^ (0x9e3779b97f4a7c15ull * 1), /* as the runtime's LB step 0 */
                .lb_step = 0,
                .params = &w->params,
        };
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Running and reporting
 */

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mb(void)
{
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) != 0)
                return NAN;
        return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What one snapshot is, before any policy. */
struct before {
        double imbalance, max, avg, lstar, locality;
        double *load;
};

static int measure_before(const struct lbomp__snap *s, struct before *b)
{
        b->load = malloc(s->nworkers * sizeof *b->load);
        if (!b->load)
                return -ENOMEM;
        lbomp__loads(s, s->worker, b->load);
        b->imbalance = lbomp__imbalance(b->load, s->nworkers, &b->max, &b->avg);
        double maxtask = 0;
        for (uint32_t t = 0; t < s->ntasks; t++)
                if (s->cost[t] > maxtask)
                        maxtask = s->cost[t];
        b->lstar = b->avg > maxtask ? b->avg : maxtask;
        b->locality = lbomp__locality_cost(s, s->worker);
        return 0;
}

static void jnum(const char *key, double v)
{
        if (isfinite(v))
                printf(",\"%s\":%.6g", key, v);
        else
                printf(",\"%s\":null", key);
}

static void jstr(const char *key, const char *v)
{
        printf(",\"%s\":\"", key);
        for (const char *p = v; *p; p++) {
                if (*p == '"' || *p == '\\')
                        printf("\\%c", *p);
                else if ((unsigned char)*p < 0x20)
                        printf("\\u%04x", *p);
                else
                        putchar(*p);
        }
        putchar('"');
}

/* Where a run came from, for the report. */
struct origin {
        const char *input; /* "synthetic" or "trace" */
        const char *topo_name;
        const char *load, *links;
        uint32_t ncores;
        const int32_t *wcore;
        const struct lbomp__trace_step *rec; /* trace: the record, else NULL */
};

struct sim {
        const struct opts *o;
        struct lbomp__trace_writer *rec_out;
        uint32_t *dest;
        size_t dest_cap;
        double *load;
        size_t load_cap;
        int failures, mismatches, compared, text_header;
};

static int run_policy(struct sim *sm, const struct lbomp__policy *p, const struct lbomp__snap *s,
                      const struct before *b, const struct origin *org, double setup_s)
{
        const struct opts *o = sm->o;
        uint32_t T = s->ntasks, P = s->nworkers;
        if ((size_t)T + 1 > sm->dest_cap) {
                uint32_t *d = realloc(sm->dest, ((size_t)T + 1) * sizeof *d);
                if (!d)
                        return -ENOMEM;
                sm->dest = d;
                sm->dest_cap = (size_t)T + 1;
        }
        if (P > sm->load_cap) {
                double *l = realloc(sm->load, P * sizeof *l);
                if (!l)
                        return -ENOMEM;
                sm->load = l;
                sm->load_cap = P;
        }
        double times[1000], spans[1000];
        struct lbomp__pstats st;
        int rc = 0;
        for (long r = 0; r < o->repeat; r++) {
                memset(&st, 0, sizeof st);
                double t0 = now_s();
                rc = lbomp__policy_run_offline(p, s, sm->dest, &st);
                times[r] = now_s() - t0;
                spans[r] = p->kind == LBOMP__DECENTRAL ? st.span_s : times[r];
                if (rc < 0)
                        break;
        }
        long nrun = rc < 0 ? 1 : o->repeat;
        /* Noise on a shared machine only adds time: the minimum is the better estimate, the
         * median the more familiar one; both are reported. */
        double decision = median(times, nrun), span = median(spans, nrun);
        double decision_min = times[0], span_min = spans[0];
        uint32_t badt = 0;
        if (rc == 0 && lbomp__plan_check(s, sm->dest, &badt) != 0) {
                fprintf(stderr,
                        "lbomp-sim: policy %s produced an invalid plan: task %u -> worker %u "
                        "(%u workers)\n",
                        p->name, badt, sm->dest[badt], P);
                rc = -EFAULT;
        }
        double imb_after = NAN, eff = NAN, loc_after = NAN;
        uint64_t migrations = 0, mig_bytes = 0;
        long plan_diff = -1;
        if (rc == 0) {
                double max_after, avg_after;
                lbomp__loads(s, sm->dest, sm->load);
                imb_after = lbomp__imbalance(sm->load, P, &max_after, &avg_after);
                eff = max_after > 0 ? b->lstar / max_after : 1.0;
                loc_after = lbomp__locality_cost(s, sm->dest);
                for (uint32_t t = 0; t < T; t++)
                        if (sm->dest[t] != s->worker[t]) {
                                migrations++;
                                mig_bytes += s->bytes ? s->bytes[t] : 0;
                        }
                if (org->rec) {
                        plan_diff = 0;
                        for (uint32_t t = 0; t < T; t++)
                                plan_diff += sm->dest[t] != org->rec->plan[t];
                }
        } else {
                sm->failures++;
        }
        bool same_policy = org->rec && strcmp(org->rec->policy, p->name) == 0;
        bool plan_equal = same_policy && rc == 0 && plan_diff == 0;
        sm->compared += same_policy;
        if (same_policy && !plan_equal)
                sm->mismatches++;
        if (sm->rec_out && rc == 0) {
                const struct lbomp__trace_meta m = {
                        .policy = p->name,
                        .topo_name = org->topo_name,
                        .ncores = org->ncores,
                        .wcore = org->wcore,
                        .step = org->rec ? org->rec->step : 0,
                        .error = rc,
                        .decision_s = decision,
                        .messages = st.messages,
                        .rounds = st.rounds,
                };
                char msg[400];
                if (lbomp__trace_write(sm->rec_out, &m, s, sm->dest, msg, sizeof msg) < 0) {
                        fprintf(stderr, "lbomp-sim: --record: %s\n", msg);
                        return -EIO;
                }
        }
        double rss = peak_rss_mb();
        const char *err = rc ? lbomp_strerror(rc) : NULL;
        if (o->json) {
                printf("{\"policy\":\"%s\"", p->name);
                jstr("kind", p->kind == LBOMP__DECENTRAL ? "decentralized" : "centralized");
                jstr("input", org->input);
                printf(",\"lb_step\":%llu", (unsigned long long)s->lb_step);
                jstr("topology", org->topo_name);
                printf(",\"cores\":%u,\"nodes\":%u,\"tasks\":%u,\"links\":%u", P, s->nnodes, T,
                       s->link_off ? s->link_off[T] / 2 : 0);
                if (org->load)
                        jstr("load", org->load);
                if (org->links)
                        jstr("link_pattern", org->links);
                jnum("imbalance_before", b->imbalance);
                jnum("imbalance_after", imb_after);
                jnum("efficiency", eff);
                printf(",\"migrations\":%llu,\"migrated_bytes\":%llu",
                       (unsigned long long)migrations, (unsigned long long)mig_bytes);
                jnum("locality_cost_before", b->locality);
                jnum("locality_cost_after", loc_after);
                printf(",\"messages\":%llu,\"rounds\":%u", (unsigned long long)st.messages,
                       st.rounds);
                if (st.msg_kind_names) {
                        printf(",\"messages_by_kind\":{");
                        for (int k = 0; k < 8 && st.msg_kind_names[k]; k++)
                                printf("%s\"%s\":%llu", k ? "," : "", st.msg_kind_names[k],
                                       (unsigned long long)st.msg_by_kind[k]);
                        printf("}");
                }
                if (p->kind == LBOMP__DECENTRAL)
                        printf(",\"packs\":%u,\"rejected\":%u,\"forced\":%u", st.packs, st.rejected,
                               st.forced);
                jnum("decision_s", decision);
                jnum("decision_span_s", span);
                jnum("decision_min_s", decision_min);
                jnum("decision_span_min_s", span_min);
                printf(",\"repeat\":%ld", nrun);
                jnum("setup_s", setup_s);
                jnum("peak_rss_mb", rss);
                printf(",\"seed\":%llu", (unsigned long long)s->seed);
                if (org->rec) {
                        jstr("recorded_policy", org->rec->policy);
                        printf(",\"record\":%llu,\"step\":%llu",
                               (unsigned long long)org->rec->index,
                               (unsigned long long)org->rec->step);
                        if (plan_diff >= 0)
                                printf(",\"plan_diff\":%ld", plan_diff);
                        if (same_policy)
                                printf(",\"plan_equal\":%s", plan_equal ? "true" : "false");
                }
                if (err)
                        jstr("error", err);
                else
                        printf(",\"error\":null");
                printf("}\n");
        } else {
                if (!sm->text_header++)
                        printf("%-12s %6s %5s %9s %8s %8s %6s %9s %12s %12s %9s %6s %11s %11s "
                               "%8s%s\n",
                               "policy", "lbstep", "cores", "tasks", "λ-before", "λ-after", "eff",
                               "moves", "locality-0", "locality-1", "messages", "rounds",
                               "decision-s", "span-s", "rss-MB", org->rec ? "  plan" : "");
                printf("%-12s %6llu %5u %9u %8.4f %8.4f %6.3f %9llu %12.4g %12.4g %9llu %6u "
                       "%11.4g %11.4g %8.1f",
                       p->name, (unsigned long long)s->lb_step, P, T, b->imbalance, imb_after, eff,
                       (unsigned long long)migrations, b->locality, loc_after,
                       (unsigned long long)st.messages, st.rounds, decision, span, rss);
                if (org->rec && plan_diff >= 0)
                        printf("  %s %ld differ", same_policy ? "same policy," : "", plan_diff);
                if (err)
                        printf("  error: %s", err);
                printf("\n");
        }
        fflush(stdout);
        return 0;
}

static int run_all(struct sim *sm, const struct lbomp__snap *s, const struct origin *org,
                   double setup_s)
{
        struct before b;
        if (measure_before(s, &b) < 0)
                return -ENOMEM;
        int rc = 0;
        for (int i = 0; i < sm->o->npol && rc == 0; i++)
                rc = run_policy(sm, sm->o->pol[i], s, &b, org, setup_s);
        free(b.load);
        return rc;
}

static int replay(struct sim *sm)
{
        const struct opts *o = sm->o;
        struct lbomp__trace_reader *r;
        char err[600];
        if (lbomp__trace_open(&r, o->trace, err, sizeof err) < 0) {
                fprintf(stderr, "lbomp-sim: %s\n", err);
                return 2;
        }
        struct lbomp__trace_step st;
        int rc, n = 0;
        double t0 = now_s();
        while ((rc = lbomp__trace_next(r, &st, err, sizeof err)) == 1) {
                double setup = now_s() - t0;
                if (o->seed_set) /* the runtime's rule: LBOMP_SEED mixed with the LB step */
                        st.snap.seed = o->seed ^ (0x9e3779b97f4a7c15ull * (st.snap.lb_step + 1));
                struct origin org = {.input = "trace",
                                     .topo_name = st.topo_name,
                                     .ncores = st.ncores,
                                     .wcore = st.wcore,
                                     .rec = &st};
                if (run_all(sm, &st.snap, &org, setup) < 0) {
                        fprintf(stderr, "lbomp-sim: out of memory\n");
                        lbomp__trace_free(r);
                        return 1;
                }
                n++;
                t0 = now_s();
        }
        lbomp__trace_free(r);
        if (rc < 0) {
                fprintf(stderr, "lbomp-sim: %s\n", err);
                return 2;
        }
        if (n == 0) {
                fprintf(stderr, "lbomp-sim: %s: the trace holds no LB step\n", o->trace);
                return o->verify ? 1 : 0;
        }
        if (o->verify) {
                if (sm->mismatches) {
                        fprintf(stderr,
                                "lbomp-sim: --verify: %d of %d replayed plans differ from the "
                                "recorded ones\n",
                                sm->mismatches, sm->compared);
                        return 1;
                }
                if (!sm->compared) {
                        fprintf(stderr, "lbomp-sim: --verify: no --policy is the policy the trace "
                                        "recorded: nothing was compared\n");
                        return 1;
                }
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct opts o;
        if (parse(&o, argc, argv) < 0)
                return 2;
        struct sim sm = {.o = &o};
        if (o.record) {
                char err[400];
                if (lbomp__trace_create(&sm.rec_out, o.record, err, sizeof err) < 0) {
                        fprintf(stderr, "lbomp-sim: --record: %s\n", err);
                        return 2;
                }
        }
        int ret;
        if (o.trace) {
                ret = replay(&sm);
        } else {
                struct world w;
                double t0 = now_s();
                int rc = build_world(&w, &o);
                if (rc < 0) {
                        if (rc == -ENOMEM)
                                fprintf(stderr, "lbomp-sim: out of memory building %ld tasks\n",
                                        o.tasks);
                        world_free(&w);
                        lbomp__trace_close(sm.rec_out);
                        return 2;
                }
                double setup = now_s() - t0;
                struct origin org = {.input = "synthetic",
                                     .topo_name = w.topo_name,
                                     .load = o.load_name,
                                     .links = o.links_name,
                                     .ncores = w.ncores,
                                     .wcore = w.wcore};
                rc = run_all(&sm, &w.s, &org, setup);
                world_free(&w);
                ret = rc < 0 ? 1 : 0;
                if (rc == -ENOMEM)
                        fprintf(stderr, "lbomp-sim: out of memory\n");
        }
        if (lbomp__trace_close(sm.rec_out) < 0) {
                fprintf(stderr, "lbomp-sim: --record '%s': closing failed\n", o.record);
                ret = ret ? ret : 1;
        }
        free(sm.dest);
        free(sm.load);
        if (ret == 0 && sm.failures)
                ret = 1;
        return ret;
}
