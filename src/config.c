/*
 * config.c — the one table of LBOMP_* environment variables and the only getenv() caller.
 *
 * Parsing is strict: whole-string numbers, ranges checked, no clamping. A bad value produces one
 * message naming the variable, the value and what is valid, and lbomp_create() fails: there is no
 * half-configured run. The API setters reuse the same parsers and checks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_POLICY "refine"

int lbomp__parse_int(const char *var, const char *s, long lo, long hi, long *out)
{
        char *end;
        errno = 0;
        long v = s && *s ? strtol(s, &end, 10) : 0;
        if (!s || !*s || *end || errno || v < lo || v > hi) {
                lbomp__set_error(
                        true,
                        "lbomp: %s='%s' is not valid; expected a whole number from %ld to %ld", var,
                        s ? s : "", lo, hi);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int lbomp__parse_u64(const char *var, const char *s, uint64_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = s && *s && *s != '-' ? strtoull(s, &end, 0) : 0;
        if (!s || !*s || *s == '-' || *end || errno) {
                lbomp__set_error(true,
                                 "lbomp: %s='%s' is not valid; expected an unsigned 64-bit integer",
                                 var, s ? s : "");
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int lbomp__parse_double(const char *var, const char *s, double lo, double hi, double *out)
{
        char *end;
        errno = 0;
        double v = s && *s ? strtod(s, &end) : NAN;
        if (!s || !*s || *end || errno || !(v >= lo && v <= hi)) {
                lbomp__set_error(true,
                                 "lbomp: %s='%s' is not valid; expected a number from %g to %g",
                                 var, s ? s : "", lo, hi);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

static int set_policy(struct lbomp__config *c, const char *var, const char *s)
{
        if (s && strcmp(s, "help") == 0) {
                lbomp_policy_help(stdout);
                lbomp__set_error(false, "lbomp: %s=help: listed the policies, nothing runs", var);
                return -ECANCELED;
        }
        const struct lbomp__policy *p = lbomp__policy_find(s);
        if (!p) {
                char names[512];
                lbomp__policy_names(names, sizeof names);
                lbomp__set_error(
                        true, "lbomp: %s='%s' is not a policy; valid: %s (%s=help describes them)",
                        var, s ? s : "", names, var);
                return -ENOENT;
        }
        c->policy = p;
        return 0;
}

static int set_period(struct lbomp__config *c, const char *var, const char *s)
{
        long v;
        int rc = lbomp__parse_int(var, s, 1, 1000000000, &v);
        if (rc == 0)
                c->period = (int)v;
        return rc;
}

static int set_seed(struct lbomp__config *c, const char *var, const char *s)
{
        return lbomp__parse_u64(var, s, &c->seed);
}

static int set_verbose(struct lbomp__config *c, const char *var, const char *s)
{
        long v;
        int rc = lbomp__parse_int(var, s, 0, 2, &v);
        if (rc == 0)
                c->verbose = (int)v;
        return rc;
}

static int set_topology(struct lbomp__config *c, const char *var, const char *s)
{
        if (!*s) {
                lbomp__set_error(true,
                                 "lbomp: %s='' is not valid; expected the path of a hwloc XML file",
                                 var);
                return -EINVAL;
        }
        char *dup = strdup(s);
        if (!dup)
                return -ENOMEM;
        free(c->topology);
        c->topology = dup;
        return 0;
}

static int set_trace(struct lbomp__config *c, const char *var, const char *s)
{
        if (!*s) {
                lbomp__set_error(true,
                                 "lbomp: %s='' is not valid; expected the path of a file to "
                                 "create (the LB trace)",
                                 var);
                return -EINVAL;
        }
        char *dup = strdup(s);
        if (!dup)
                return -ENOMEM;
        free(c->trace);
        c->trace = dup;
        return 0;
}

static int set_steal(struct lbomp__config *c, const char *var, const char *s)
{
        static const char *const names[] = {"off", "node", "all"};
        for (int i = 0; i < 3; i++)
                if (strcmp(s, names[i]) == 0) {
                        c->steal = (enum lbomp__steal)i;
                        return 0;
                }
        lbomp__set_error(true, "lbomp: %s='%s' is not valid; valid: off, node, all", var, s);
        return -EINVAL;
}

static int set_time(struct lbomp__config *c, const char *var, const char *s)
{
        if (strcmp(s, "wall") == 0 || strcmp(s, "cpu") == 0) {
                c->time_wall = strcmp(s, "wall") == 0;
                return 0;
        }
        lbomp__set_error(true, "lbomp: %s='%s' is not valid; valid: cpu, wall", var, s);
        return -EINVAL;
}

static int set_move_pages(struct lbomp__config *c, const char *var, const char *s)
{
        if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0) {
                lbomp__set_error(true, "lbomp: %s='%s' is not valid; valid: on, off", var, s);
                return -EINVAL;
        }
        bool on = strcmp(s, "on") == 0;
        if (on && !lbomp__numa_ok()) {
                lbomp__set_error(true,
                                 "lbomp: %s=on is not possible here: the kernel has no NUMA "
                                 "support (libnuma numa_available() < 0)",
                                 var);
                return -ENOTSUP;
        }
        c->move_pages = on;
        return 0;
}

static int set_powercap_root(struct lbomp__config *c, const char *var, const char *s)
{
        /* Only the text is checked here: a directory that is missing or unreadable makes energy
         * "unavailable, because ..." in the report, it never stops the run. */
        if (!*s || strlen(s) > 3000) {
                lbomp__set_error(true,
                                 "lbomp: %s='%.40s' is not valid; expected the path of a directory "
                                 "laid out like /sys/class/powercap (1 to 3000 characters)",
                                 var, s);
                return -EINVAL;
        }
        char *dup = strdup(s);
        if (!dup)
                return -ENOMEM;
        free(c->powercap_root);
        c->powercap_root = dup;
        return 0;
}

static int set_tolerance(struct lbomp__config *c, const char *var, const char *s)
{
        double v;
        int rc = lbomp__parse_double(var, s, 1e-6, 1.0, &v);
        if (rc == 0)
                c->params.tolerance = v;
        return rc;
}

static int set_fanout(struct lbomp__config *c, const char *var, const char *s)
{
        long v;
        int rc = lbomp__parse_int(var, s, 1, 64, &v);
        if (rc == 0)
                c->params.fanout = (int)v;
        return rc;
}

static int set_retries(struct lbomp__config *c, const char *var, const char *s)
{
        long v;
        int rc = lbomp__parse_int(var, s, 0, 64, &v);
        if (rc == 0)
                c->params.retries = (int)v;
        return rc;
}

static const struct var {
        const char *name;
        const char *def;
        const char *help;
        int (*set)(struct lbomp__config *c, const char *var, const char *s);
} vars[] = {
        {"LBOMP_POLICY", DEFAULT_POLICY, "balancing policy; 'help' lists them", set_policy},
        {"LBOMP_PERIOD", "10", "rebalance every N steps (N >= 1)", set_period},
        {"LBOMP_TOPOLOGY", "(host)", "hwloc XML file seen as the machine", set_topology},
        {"LBOMP_SEED", "1", "seed of every random choice", set_seed},
        {"LBOMP_VERBOSE", "0", "0 quiet, 1 a line per LB step on stderr, 2 more", set_verbose},
        {"LBOMP_STEAL", "off", "stealing within a step: off, node, all", set_steal},
        {"LBOMP_TIME", "cpu",
         "task time: cpu (wall time, bounded by the thread's CPU time) or wall", set_time},
        {"LBOMP_MOVE_PAGES", "off",
         "on: a migrating task's registered pages follow it (move_pages)", set_move_pages},
        {"LBOMP_POWERCAP_ROOT", "(host)",
         "read energy from this directory laid out like /sys/class/powercap", set_powercap_root},
        {"LBOMP_TOLERANCE", "0.05", "overload allowed above the average, (0, 1]", set_tolerance},
        {"LBOMP_FANOUT", "2", "gossip fanout of decentralized policies, 1..64", set_fanout},
        {"LBOMP_RETRIES", "2",
         "packdrop: normal offers of a pack before a forced send (2: one retry), 0..64",
         set_retries},
        {"LBOMP_TRACE", "(none)", "file recording every LB step's snapshot and plan (lbomp-sim)",
         set_trace},
};

static void defaults(struct lbomp__config *c)
{
        memset(c, 0, sizeof *c);
        c->policy = lbomp__policy_find(DEFAULT_POLICY);
        c->period = 10;
        c->seed = 1;
        c->params.tolerance = 0.05;
        c->params.refine_factor = 1.05;
        c->params.smart_threshold = 0.05;
        c->params.fanout = 2;
        c->params.retries = 2;
}

int lbomp__config_from_env(struct lbomp__config *c)
{
        defaults(c);
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
                const char *s = getenv(vars[i].name);
                if (!s)
                        continue;
                int rc = vars[i].set(c, vars[i].name, s);
                if (rc < 0) {
                        lbomp__config_free(c);
                        return rc;
                }
        }
        return 0;
}

int lbomp__config_set(struct lbomp__config *c, const char *var, const char *value)
{
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
                if (strcmp(vars[i].name, var) == 0)
                        return vars[i].set(c, var, value);
        return -ENOENT;
}

void lbomp__config_free(struct lbomp__config *c)
{
        free(c->topology);
        c->topology = NULL;
        free(c->powercap_root);
        c->powercap_root = NULL;
        free(c->trace);
        c->trace = NULL;
}

void lbomp__config_print(const struct lbomp__config *c, FILE *out)
{
        (void)c;
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
                fprintf(out, "%-16s %-8s %s\n", vars[i].name, vars[i].def, vars[i].help);
}
