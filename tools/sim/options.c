/*
 * options.c — lbomp-sim's command line: every option parsed strictly, every bad value named with
 * what is valid (exit 2).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "window.h"

const char *const sim_load_names[] = {"uniform", "linear", "hotspot", "lbtest", "lbtest-iid"};

static void usage(FILE *out)
{
        char names[512];
        lbomp__policy_names(names, sizeof names);
        fprintf(out,
                "usage: lbomp-sim (--trace FILE | --tasks N [--load L] [--links K])\n"
                "                 [--profile XML] [--cores N] [--policy a,b,c] [--seed S]\n"
                "                 [--repeat R] [--steps N] [--tolerance V] [--round-us U]\n"
                "                 [--record FILE] [--speeds S1,S2,...]\n"
                "                 [--verify] [--json]\n"
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
                "  --cores N        N workers, 1 to 65536 (spread over the profile's cores;\n"
                "                   without a profile, one node); default: the profile's cores\n"
                "  --policy LIST    comma-separated, from: %s; or all (default greedy)\n"
                "  --seed S         seed of the workload and of the policies (a trace keeps its\n"
                "                   recorded seeds unless --seed is given)\n"
                "  --repeat R       run each policy R times, report the median times (default 1)\n"
                "  --steps N        synthetic: N LB steps on the same costs, each from the "
                "mapping\n"
                "                   the previous one applied; one line per policy and step\n"
                "                   (default 1)\n"
                "  --tolerance V    overload the policies allow above the bound, in (0, 1]\n"
                "                   (default 0.05, as LBOMP_TOLERANCE)\n"
                "  --round-us U     time of one message round of a decentralized policy, added\n"
                "                   per round to its decision span (default 1 us)\n"
                "  --record FILE    write each policy's snapshot and plan as a trace\n"
                "  --speeds LIST    synthetic: worker speeds, the list repeated over the workers\n"
                "                   (default: the profile's CPU kinds, else 1.0); new tasks are\n"
                "                   placed by capacity. With unequal speeds each policy also\n"
                "                   runs speed-blind: step_s (max predicted time), blind_step_s\n"
                "                   (the speed-blind plan's time on these workers), ideal_s\n"
                "                   (capacity-weighted ideal), step_if_equal_s (step_s's plan\n"
                "                   if the speeds were ignored)\n"
                "  --verify         with --trace: exit 1 unless replaying the recorded policy\n"
                "                   reproduces every recorded plan\n"
                "  --json           one JSON line per policy (and LB step)\n"
                "  --ranks R        the workers are R MPI ranks (liblbomp-mpi): each --policy\n"
                "                   is the rank level, then every rank balances its own\n"
                "                   --rank-threads T threads (default 1) with --inner NAME\n"
                "                   (default refine); instead of --cores and --profile\n"
                "  --evolve KIND    synthetic costs that change every time step: static |\n"
                "                   drift | cycle | walk | hotspot; runs every --policy over\n"
                "                   --time-steps N (default 200) with an LB step every --period\n"
                "                   K (default 10; auto: when it arms one, K at most), each\n"
                "                   step as long as its most loaded worker; the total time\n"
                "                   (an LB step whose timed steps are balanced within the\n"
                "                   tolerance, or where a fixed policy's plan cannot pay,\n"
                "                   plans nothing, as in the runtime: 'skipped')\n"
                "  --amp A          hotspot cost multiplier (default 4)\n"
                "  --width W        hotspot width, share of the tasks (default 0.1)\n"
                "  --drift-speed V  drift: share of the tasks the hotspot moves per step;\n"
                "                   walk: sigma of each task's log cost per step (default 0.01)\n"
                "  --cycle C        cycle: steps between two hotspot places (default 20)\n"
                "  --hot-at S       hotspot: the step it appears at (default 0)\n"
                "  --noise N        per-step cost noise, +-N relative (default 0.02)\n"
                "  --byte-ns B      cost of moving one byte one unit of distance (default 0.1)\n"
                "  --steal K        with --evolve: the runtime's stealing, modelled: a worker\n"
                "                   out of tasks takes the last task of the worker with the\n"
                "                   most work left, and a stolen task costs 1 + K times its\n"
                "                   cost (its data refilled elsewhere); a step lasts until\n"
                "                   the last worker is done (default: no stealing, a step as\n"
                "                   long as its most loaded worker)\n"
                "  --auto-data      with --evolve or --trace: auto's training rows\n"
                "                   (tools/auto/train.py); a trace's costs are taken to\n"
                "                   persist over the next --period steps\n",
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

static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = s && *s && *s != '-' ? strtoull(s, &end, 0) : 0;
        if (!s || !*s || *s == '-' || *end || errno)
                return bad(opt, s, "an unsigned 64-bit integer");
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

int sim_parse(struct opts *o, int argc, char **argv)
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
                           .base_us = 100,
                           .steps = 1,
                           .round_us = 1.0,
                           .ev_amp = 4,
                           .ev_width = 0.1,
                           .ev_speed = 0.01,
                           .ev_noise = 0.02,
                           .byte_ns = 0.1,
                           .steal = -1,
                           .ev_cycle = 20,
                           .time_steps = 200,
                           .period = 10};
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
                if (strcmp(a, "--auto-data") == 0) {
                        o->auto_data = true;
                        continue;
                }
                /* clang-format off */
                static const char *const with_value[] = {
                        "--trace",      "--tasks",        "--load",
                        "--links",      "--profile",      "--cores",
                        "--policy",     "--seed",         "--repeat",
                        "--record",     "--task-bytes",   "--link-bytes",
                        "--ranks",      "--rank-threads", "--inner",
                        "--steps",      "--round-us",     "--tolerance",
                        "--speeds",     "--evolve",       "--amp",
                        "--width",      "--drift-speed",  "--cycle",
                        "--hot-at",     "--noise",        "--byte-ns",
                        "--time-steps", "--period",       "--steal",
                        NULL};
                /* clang-format on */
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
                } else if (strcmp(a, "--steps") == 0) {
                        if (parse_long(a, v, 1, 1000, &o->steps) < 0)
                                return -1;
                } else if (strcmp(a, "--tolerance") == 0) {
                        if (parse_double(a, v, 1e-6, 1, &o->tolerance) < 0)
                                return -1;
                } else if (strcmp(a, "--round-us") == 0) {
                        if (parse_double(a, v, 0, 1e6, &o->round_us) < 0)
                                return -1;
                } else if (strcmp(a, "--seed") == 0) {
                        if (parse_u64(a, v, &o->seed) < 0)
                                return -1;
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
                                if (strcmp(v, sim_load_names[k]) == 0)
                                        found = k;
                        if (found < 0)
                                return bad(a, v, "uniform, linear, hotspot, lbtest or lbtest-iid");
                        o->load = (enum load)found;
                } else if (strcmp(a, "--ranks") == 0) {
                        if (parse_long(a, v, 1, 1 << 20, &o->ranks) < 0)
                                return -1;
                } else if (strcmp(a, "--rank-threads") == 0) {
                        if (parse_long(a, v, 1, MAX_CORES, &o->rank_threads) < 0)
                                return -1;
                } else if (strcmp(a, "--inner") == 0) {
                        if (!(o->inner = lbomp__policy_find(v))) {
                                char names[512];
                                lbomp__policy_names(names, sizeof names);
                                fprintf(stderr,
                                        "lbomp-sim: --inner: '%s' is not a policy; valid: %s\n", v,
                                        names);
                                return -1;
                        }
                } else if (strcmp(a, "--speeds") == 0) {
                        const char *p = v;
                        o->nspeeds = 0;
                        while (*p) {
                                char *end;
                                double x = strtod(p, &end);
                                if (end == p || !(x >= 1e-3 && x <= 1e3) || o->nspeeds == 64 ||
                                    (*end && *end != ','))
                                        return bad(a, v,
                                                   "1 to 64 comma-separated speeds from 0.001 to "
                                                   "1000, e.g. 2,1");
                                o->speeds[o->nspeeds++] = x;
                                p = *end ? end + 1 : end;
                        }
                        if (!o->nspeeds)
                                return bad(a, v, "1 to 64 comma-separated speeds, e.g. 2,1");
                } else if (strcmp(a, "--evolve") == 0) {
                        int found = -1;
                        for (int k = 0; sim_evolve_names[k]; k++)
                                if (strcmp(v, sim_evolve_names[k]) == 0)
                                        found = k;
                        if (found < 0)
                                return bad(a, v, "static, drift, cycle, walk or hotspot");
                        o->evolve = (enum evolve)found;
                        o->evolve_set = true;
                } else if (strcmp(a, "--amp") == 0) {
                        if (parse_double(a, v, 1, 1000, &o->ev_amp) < 0)
                                return -1;
                } else if (strcmp(a, "--width") == 0) {
                        if (parse_double(a, v, 1e-4, 1, &o->ev_width) < 0)
                                return -1;
                } else if (strcmp(a, "--drift-speed") == 0) {
                        if (parse_double(a, v, 0, 1, &o->ev_speed) < 0)
                                return -1;
                } else if (strcmp(a, "--noise") == 0) {
                        if (parse_double(a, v, 0, 0.9, &o->ev_noise) < 0)
                                return -1;
                } else if (strcmp(a, "--byte-ns") == 0) {
                        if (parse_double(a, v, 0, 1e6, &o->byte_ns) < 0)
                                return -1;
                } else if (strcmp(a, "--steal") == 0) {
                        if (parse_double(a, v, 0, 100, &o->steal) < 0)
                                return -1;
                } else if (strcmp(a, "--cycle") == 0) {
                        if (parse_long(a, v, 1, 1000000, &o->ev_cycle) < 0)
                                return -1;
                } else if (strcmp(a, "--hot-at") == 0) {
                        if (parse_long(a, v, 0, 100000000, &o->ev_hot_at) < 0)
                                return -1;
                } else if (strcmp(a, "--time-steps") == 0) {
                        if (parse_long(a, v, 1, 100000000, &o->time_steps) < 0)
                                return -1;
                } else if (strcmp(a, "--period") == 0) {
                        if (parse_long(a, v, LBOMP__TIMED + 1, 1000000, &o->period) < 0)
                                return -1;
                } else if (strcmp(a, "--links") == 0) {
                        have_links = true;
                        if (parse_links(o, v) < 0)
                                return -1;
                }
        }
        if (parse_policies(o, policies) < 0)
                return -1;
        if (o->steal >= 0 && !o->evolve_set) {
                fprintf(stderr, "lbomp-sim: --steal models the steps of --evolve's runs: it needs "
                                "--evolve KIND\n");
                return -1;
        }
        if ((o->rank_threads || o->inner) && !o->ranks) {
                fprintf(stderr, "lbomp-sim: %s needs --ranks\n",
                        o->inner ? "--inner" : "--rank-threads");
                return -1;
        }
        if (o->ranks) {
                const char *clash = o->trace     ? "--trace"
                                    : o->profile ? "--profile"
                                    : o->cores   ? "--cores"
                                    : o->record  ? "--record"
                                    : o->verify  ? "--verify"
                                                 : NULL;
                if (clash) {
                        fprintf(stderr,
                                "lbomp-sim: %s cannot be combined with --ranks: the ranks are the "
                                "workers of the synthetic workload\n",
                                clash);
                        return -1;
                }
                if (!o->tasks) {
                        fprintf(stderr, "lbomp-sim: --ranks needs --tasks N\n");
                        return -1;
                }
                if (!o->rank_threads)
                        o->rank_threads = 1;
                if (!o->inner)
                        o->inner = lbomp__policy_find("refine");
                if (o->links == LINKS_RING && 2 * o->ring_k >= o->tasks) {
                        fprintf(stderr, "lbomp-sim: --links ring:%ld needs more than %ld tasks\n",
                                o->ring_k, 2 * o->ring_k);
                        return -1;
                }
                return 0;
        }
        if (o->trace) {
                const char *clash = o->tasks        ? "--tasks"
                                    : have_load     ? "--load"
                                    : have_links    ? "--links"
                                    : o->profile    ? "--profile"
                                    : o->cores      ? "--cores"
                                    : o->steps > 1  ? "--steps"
                                    : o->evolve_set ? "--evolve"
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
        if (o->auto_data && !o->evolve_set && !o->trace) {
                fprintf(stderr, "lbomp-sim: --auto-data needs --evolve KIND or --trace FILE\n");
                return -1;
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
