/*
 * config.c — the one table of LBOMP_* environment variables and the only getenv() caller.
 *
 * Parsing is strict: whole-string numbers, ranges checked, no clamping. A value from the
 * environment is first parsed (syntax), then checked and applied by the same code the setters
 * call with a typed value (range, meaning), so both paths accept the same values and refuse the
 * rest with the same words. A bad environment value makes lbomp_create() fail with one message
 * naming the variable, the value and what is valid: there is no half-configured run.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "lbomp.h"
#include "topology.h"

#define DEFAULT_POLICY "refine"

enum kind { K_INT, K_U64, K_DOUBLE, K_WORD, K_PATH, K_POLICY };

struct var {
        const char *name;
        const char *def;
        const char *help;
        enum kind kind;
        double lo, hi;            /* K_INT, K_DOUBLE */
        const char *const *words; /* K_WORD: the valid words, NULL-terminated */
        const char *expect;       /* K_PATH: what the value must be */
        /* Applies a checked value: numbers in `num`, words as their index, paths and policies in
         * `str`. 0 or a negative errno (with the message set). */
        int (*apply)(struct lbomp__config *c, const struct var *v, double num, const char *str);
};

static const char *const steal_words[] = {"off", "node", "all", NULL};
static const char *const time_words[] = {"cpu", "wall", NULL};
static const char *const onoff_words[] = {"on", "off", NULL};
static const char *const speeds_words[] = {"auto", "prior", "off", NULL};

static int replace(char **field, const char *s)
{
        char *dup = strdup(s);
        if (!dup)
                return -ENOMEM;
        free(*field);
        *field = dup;
        return 0;
}

static int apply_policy(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)num;
        if (strcmp(s, "help") == 0) {
                lbomp__policy_help(stdout);
                lbomp__set_error("lbomp: %s=help: listed the policies, nothing runs", v->name);
                return -ECANCELED;
        }
        const struct lbomp__policy *p = lbomp__policy_find(s);
        if (!p) {
                char names[512];
                lbomp__policy_names(names, sizeof names);
                lbomp__set_error("lbomp: %s='%s' is not a policy; valid: %s (%s=help describes "
                                 "them)",
                                 v->name, s, names, v->name);
                return -ENOENT;
        }
        c->policy = p;
        /* `none` means nothing moves — no plan, no theft — unless LBOMP_STEAL says otherwise:
         * it is the baseline lbomp's balancing is measured against (README "Stealing"). */
        if (!c->steal_set)
                c->steal = strcmp(p->name, "none") == 0 ? LBOMP__STEAL_OFF : LBOMP__STEAL_ALL;
        return 0;
}

static int apply_period(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->period = (int)num;
        c->period_set = true;
        return 0;
}

static int apply_seed(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)num;
        c->seed = strtoull(s, NULL, 0); /* already checked whole */
        return 0;
}

static int apply_verbose(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->verbose = (int)num;
        return 0;
}

static int apply_topology(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)num;
        return replace(&c->topology, s);
}

static int apply_trace(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)num;
        return replace(&c->trace, s);
}

static int apply_steal(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->steal = (enum lbomp__steal)(int)num;
        c->steal_set = true;
        return 0;
}

static int apply_time(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->time_wall = num == 1;
        return 0;
}

static int apply_speeds(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->speeds = (enum lbomp__speeds)num; /* the index of the word: auto, prior, off */
        return 0;
}

static int apply_move_pages(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)s;
        bool on = num == 0; /* the index of the word: on, off */
        if (on && !lbomp__numa_ok()) {
                lbomp__set_error("lbomp: %s=on is not possible here: the kernel has no NUMA "
                                 "support (libnuma numa_available() < 0)",
                                 v->name);
                return -ENOTSUP;
        }
        c->move_pages = on;
        return 0;
}

static int apply_powercap(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)num;
        /* Only the text is checked: a directory that is missing or unreadable makes energy
         * "unavailable, because ..." in the report, it never stops the run. */
        return replace(&c->powercap_root, s);
}

static int apply_tolerance(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->params.tolerance = num;
        return 0;
}

static int apply_fanout(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->params.fanout = (int)num;
        return 0;
}

static int apply_retries(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->params.retries = (int)num;
        return 0;
}

static int apply_history(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->history = (uint32_t)num;
        return 0;
}

static int apply_timeout(struct lbomp__config *c, const struct var *v, double num, const char *s)
{
        (void)v, (void)s;
        c->step_timeout = num;
        return 0;
}

static const struct var vars[] = {
        {"LBOMP_POLICY", DEFAULT_POLICY, "balancing policy; 'help' lists them", K_POLICY, 0, 0,
         NULL, NULL, apply_policy},
        {"LBOMP_PERIOD", "10",
         "rebalance every N steps (N >= 1); unset: 10, up to 80 while nothing pays", K_INT, 1, 1e9,
         NULL, NULL, apply_period},
        {"LBOMP_TOPOLOGY", "(host)", "hwloc XML file seen as the machine", K_PATH, 0, 0, NULL,
         "the path of a hwloc XML file", apply_topology},
        {"LBOMP_SEED", "1", "seed of every random choice", K_U64, 0, 0, NULL, NULL, apply_seed},
        {"LBOMP_VERBOSE", "0", "0 quiet, 1 a line per LB step on stderr, 2 more", K_INT, 0, 2, NULL,
         NULL, apply_verbose},
        {"LBOMP_STEAL", "all",
         "stealing within a step, by a worker with nothing left: off, node (its NUMA node), all "
         "(nearest first); unset under LBOMP_POLICY=none: off",
         K_WORD, 0, 0, steal_words, NULL, apply_steal},
        {"LBOMP_TIME", "cpu",
         "task time: cpu (CPU time; the share of wall time a thread gets is its worker's speed) "
         "or wall (wall time; speeds from tasks run on several workers)",
         K_WORD, 0, 0, time_words, NULL, apply_time},
        {"LBOMP_SPEEDS", "auto",
         "worker speeds: auto (CPU kinds × measured), prior (CPU kinds only), off (all 1.0)",
         K_WORD, 0, 0, speeds_words, NULL, apply_speeds},
        {"LBOMP_MOVE_PAGES", "off",
         "on: a migrating task's registered pages follow it (move_pages)", K_WORD, 0, 0,
         onoff_words, NULL, apply_move_pages},
        {"LBOMP_POWERCAP_ROOT", "(host)",
         "read energy from this directory laid out like /sys/class/powercap", K_PATH, 0, 0, NULL,
         "the path of a directory laid out like /sys/class/powercap (1 to 3000 characters)",
         apply_powercap},
        {"LBOMP_TOLERANCE", "0.05", "overload allowed above the average, 1e-6 to 1", K_DOUBLE, 1e-6,
         1.0, NULL, NULL, apply_tolerance},
        {"LBOMP_FANOUT", "2", "gossip fanout of decentralized policies, 1..64", K_INT, 1, 64, NULL,
         NULL, apply_fanout},
        {"LBOMP_RETRIES", "2",
         "packdrop: normal offers of a pack before a forced send (2: one retry), 0..64", K_INT, 0,
         64, NULL, NULL, apply_retries},
        {"LBOMP_TRACE", "(none)", "file recording every LB step's snapshot and plan (lbomp-sim)",
         K_PATH, 0, 0, NULL, "the path of a file to create (the LB trace)", apply_trace},
        {"LBOMP_STEP_TIMEOUT", "5",
         "seconds a step waits for a thread of its team that has not entered it before the step "
         "is refused (0: forever)",
         K_DOUBLE, 0, 86400, NULL, NULL, apply_timeout},
        {"LBOMP_HISTORY", "128",
         "LB steps and windows the report and the getters keep (the last N; and the last 16 N "
         "steps); totals cover the whole run",
         K_INT, 1, 1e7, NULL, NULL, apply_history},
};
#define NVARS (sizeof vars / sizeof vars[0])

static const struct var *find(const char *name)
{
        for (size_t i = 0; name && i < NVARS; i++)
                if (strcmp(vars[i].name, name) == 0)
                        return &vars[i];
        return NULL;
}

/* "LBOMP_X='v'" or "lbomp_set_x(v) (as LBOMP_X)": how a message names what was given. */
static void given(char *buf, size_t len, const struct var *v, const char *value, const char *who)
{
        if (who)
                snprintf(buf, len, "%s(%.200s) (as %s)", who, value, v->name);
        else
                snprintf(buf, len, "%s='%.200s'", v->name, value);
}

static int refuse(const struct var *v, const char *value, const char *who)
{
        char g[300], what[400] = "";
        given(g, sizeof g, v, value, who);
        switch (v->kind) {
        case K_INT:
                snprintf(what, sizeof what, "a whole number from %.0f to %.0f", v->lo, v->hi);
                break;
        case K_U64:
                snprintf(what, sizeof what, "an unsigned 64-bit integer");
                break;
        case K_DOUBLE:
                snprintf(what, sizeof what, "a number from %g to %g", v->lo, v->hi);
                break;
        case K_WORD: {
                size_t used = 0;
                for (int i = 0; v->words[i] && used < sizeof what; i++)
                        used += (size_t)snprintf(what + used, sizeof what - used, "%s%s",
                                                 i ? ", " : "valid: ", v->words[i]);
                break;
        }
        case K_PATH:
                snprintf(what, sizeof what, "%s", v->expect);
                break;
        case K_POLICY:
                break;
        }
        lbomp__set_error("lbomp: %s is not valid; %s%s", g, v->kind == K_WORD ? "" : "expected ",
                         what);
        return -EINVAL;
}

/* Range and meaning of a number, shared by both paths. */
static int check_num(const struct var *v, double num, const char *text, const char *who)
{
        if (!(num >= v->lo && num <= v->hi) || (v->kind == K_INT && num != floor(num)))
                return refuse(v, text, who);
        return 0;
}

static int set(struct lbomp__config *c, const struct var *v, const char *s, const char *who)
{
        char *end;
        double num = 0;
        errno = 0;
        switch (v->kind) {
        case K_INT: {
                long x = *s ? strtol(s, &end, 10) : 0;
                if (!*s || *end || errno)
                        return refuse(v, s, who);
                num = (double)x;
                break;
        }
        case K_U64:
                if (!*s || *s == '-')
                        return refuse(v, s, who);
                (void)strtoull(s, &end, 0);
                if (*end || errno)
                        return refuse(v, s, who);
                break;
        case K_DOUBLE:
                num = *s ? strtod(s, &end) : NAN;
                if (!*s || *end || errno)
                        return refuse(v, s, who);
                break;
        case K_WORD: {
                int i = 0;
                while (v->words[i] && strcmp(v->words[i], s) != 0)
                        i++;
                if (!v->words[i])
                        return refuse(v, s, who);
                num = i;
                break;
        }
        case K_PATH:
                if (!*s || strlen(s) > 3000)
                        return refuse(v, s, who);
                break;
        case K_POLICY:
                break;
        }
        if ((v->kind == K_INT || v->kind == K_DOUBLE) && check_num(v, num, s, who) < 0)
                return -EINVAL;
        return v->apply(c, v, num, s);
}

int lbomp__config_set(struct lbomp__config *c, const char *var, const char *value, const char *who)
{
        const struct var *v = find(var);
        if (!v) {
                lbomp__set_error("lbomp: %s is not a variable of lbomp", var ? var : "(null)");
                return -ENOENT;
        }
        if (!value)
                return refuse(v, "", who);
        return set(c, v, value, who);
}

int lbomp__config_set_num(struct lbomp__config *c, const char *var, double value, const char *who)
{
        const struct var *v = find(var);
        if (!v || (v->kind != K_INT && v->kind != K_DOUBLE))
                return -ENOENT;
        char text[64];
        snprintf(text, sizeof text, v->kind == K_INT ? "%.0f" : "%g", value);
        if (check_num(v, value, text, who) < 0)
                return -EINVAL;
        return v->apply(c, v, value, text);
}

void lbomp__config_defaults(struct lbomp__config *c)
{
        memset(c, 0, sizeof *c);
        c->policy = lbomp__policy_find(DEFAULT_POLICY);
        c->period = 10;
        c->seed = 1;
        c->step_timeout = 5;
        c->history = 128;
        /* Measured against off on every bench workload (README, Stealing): it only acts when a
         * worker has nothing left, and takes its victim's tail (its next task once no plan
         * follows the load: deque.h). */
        c->steal = LBOMP__STEAL_ALL;
        c->params = lbomp__params_default();
}

int lbomp__config_from_env(struct lbomp__config *c)
{
        lbomp__config_defaults(c);
        for (size_t i = 0; i < NVARS; i++) {
                const char *s = getenv(vars[i].name);
                if (!s)
                        continue;
                int rc = set(c, &vars[i], s, NULL);
                if (rc < 0) {
                        if (rc != -ECANCELED)
                                lbomp__log("%s", lbomp_last_error());
                        lbomp__config_free(c);
                        return rc;
                }
        }
        return 0;
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

void lbomp__config_print(FILE *out)
{
        for (size_t i = 0; i < NVARS; i++)
                fprintf(out, "%-19s %-8s %s\n", vars[i].name, vars[i].def, vars[i].help);
}
