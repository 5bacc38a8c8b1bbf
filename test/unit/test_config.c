/*
 * test_config.c — every bad LBOMP_* value makes lbomp_create() fail with an error code and one
 * message naming the variable, the value and what is valid; setters override the environment and
 * are checked the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lbomp.h"
#include "report.h"
#include "test.h"

static const char *profile; /* a valid numa-profiles file, from argv */

static const char *const all_vars[] = {
        "LBOMP_POLICY",  "LBOMP_PERIOD",       "LBOMP_TOPOLOGY",      "LBOMP_SEED",
        "LBOMP_VERBOSE", "LBOMP_STEAL",        "LBOMP_TOLERANCE",     "LBOMP_FANOUT",
        "LBOMP_RETRIES", "LBOMP_TIME",         "LBOMP_POWERCAP_ROOT", "LBOMP_MOVE_PAGES",
        "LBOMP_TRACE",   "LBOMP_STEP_TIMEOUT", "LBOMP_SPEEDS",        "LBOMP_HISTORY"};

static void clear_env(void)
{
        for (size_t i = 0; i < sizeof all_vars / sizeof all_vars[0]; i++)
                unsetenv(all_vars[i]);
}

/* Creating with var=value fails with rc and a message containing each of the needles. */
static void bad(const char *var, const char *value, int rc, const char *n1, const char *n2)
{
        clear_env();
        setenv(var, value, 1);
        lbomp_t *lb = (lbomp_t *)0x1;
        int got = lbomp_create(&lb);
        if (got != rc)
                FAIL("%s='%s': lbomp_create returned %d (%s), expected %d", var, value, got,
                     lbomp_strerror(got), rc);
        ASSERT(lb == NULL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), var);
        char quoted[256];
        snprintf(quoted, sizeof quoted, "'%s'", value);
        ASSERT_STR_CONTAINS(lbomp_last_error(), quoted);
        if (n1)
                ASSERT_STR_CONTAINS(lbomp_last_error(), n1);
        if (n2)
                ASSERT_STR_CONTAINS(lbomp_last_error(), n2);
}

static void good(const char *var, const char *value)
{
        clear_env();
        setenv(var, value, 1);
        lbomp_t *lb = NULL;
        int rc = lbomp_create(&lb);
        if (rc != 0)
                FAIL("%s='%s' refused: %s", var, value, lbomp_last_error());
        lbomp_destroy(lb);
}

/* A setter accepts exactly the values its variable accepts; a refusal names the setter and the
 * variable and changes nothing. */
static void setters_are_the_variables(void)
{
        static const struct {
                const char *var, *setter;
                double values[10];
                int n;
        } cases[] = {
                {"LBOMP_PERIOD", "lbomp_set_period", {0, 1, 10, 1e9, 1e9 + 1, 2e9, -3}, 7},
                {"LBOMP_TOLERANCE", "lbomp_set_tolerance", {1e-9, 1e-6, 0.05, 1, 1.0001, 0, -1}, 7},
                {"LBOMP_FANOUT", "lbomp_set_fanout", {0, 1, 64, 65, -1}, 5},
                {"LBOMP_RETRIES", "lbomp_set_retries", {-1, 0, 2, 64, 65}, 5},
                {"LBOMP_VERBOSE", "lbomp_set_verbose", {-1, 0, 2, 3}, 4},
                {"LBOMP_STEP_TIMEOUT", "lbomp_set_step_timeout", {-1, 0, 0.5, 86400, 86401}, 5},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                for (int i = 0; i < cases[c].n; i++) {
                        double v = cases[c].values[i];
                        char text[64];
                        snprintf(text, sizeof text, "%.17g", v);
                        clear_env();
                        setenv(cases[c].var, text, 1);
                        lbomp_t *lb = NULL;
                        int env_rc = lbomp_create(&lb);
                        lbomp_destroy(lb);
                        clear_env();
                        ASSERT_EQ(lbomp_create(&lb), 0);
                        int rc;
                        const char *var = cases[c].var;
                        if (strcmp(var, "LBOMP_PERIOD") == 0)
                                rc = v > 2147483647.0 ? -EINVAL : lbomp_set_period(lb, (int)v);
                        else if (strcmp(var, "LBOMP_TOLERANCE") == 0)
                                rc = lbomp_set_tolerance(lb, v);
                        else if (strcmp(var, "LBOMP_FANOUT") == 0)
                                rc = lbomp_set_fanout(lb, (int)v);
                        else if (strcmp(var, "LBOMP_RETRIES") == 0)
                                rc = lbomp_set_retries(lb, (int)v);
                        else if (strcmp(var, "LBOMP_VERBOSE") == 0)
                                rc = lbomp_set_verbose(lb, (int)v);
                        else
                                rc = lbomp_set_step_timeout(lb, v);
                        if (rc != env_rc)
                                FAIL("%s(%s) returned %d where %s=%s gives %d", cases[c].setter,
                                     text, rc, var, text, env_rc);
                        if (rc != 0) {
                                ASSERT_STR_CONTAINS(lbomp_last_error(), cases[c].setter);
                                ASSERT_STR_CONTAINS(lbomp_last_error(), var);
                        }
                        lbomp_destroy(lb);
                }
}

/* The report's "steal" word for a run made from the environment, then after the setter. */
static void steal_word(const char *policy_env, const char *steal_env, const char *setter_policy,
                       const char *want)
{
        clear_env();
        if (policy_env)
                setenv("LBOMP_POLICY", policy_env, 1);
        if (steal_env)
                setenv("LBOMP_STEAL", steal_env, 1);
        lbomp_t *lb = NULL;
        ASSERT_EQ(lbomp_create(&lb), 0);
        if (setter_policy)
                ASSERT_EQ(lbomp_set_policy(lb, setter_policy), 0);
        char *buf = read_report(lb, REPORT_TEXT);
        char needle[32];
        snprintf(needle, sizeof needle, "steal %s\n", want);
        if (!strstr(buf, needle))
                FAIL("LBOMP_POLICY=%s LBOMP_STEAL=%s then lbomp_set_policy(%s): report lacks '%s'",
                     policy_env ? policy_env : "(unset)", steal_env ? steal_env : "(unset)",
                     setter_policy ? setter_policy : "-", want);
        free(buf);
        lbomp_destroy(lb);
}

/* Stealing is on by default; `none` means nothing moves unless LBOMP_STEAL says so, whichever
 * way the policy was chosen. */
static void none_steals_nothing_unless_told(void)
{
        steal_word(NULL, NULL, NULL, "all");
        steal_word("none", NULL, NULL, "off");
        steal_word("none", "all", NULL, "all");
        steal_word("none", "node", NULL, "node");
        steal_word("greedy", "off", NULL, "off");
        steal_word(NULL, NULL, "none", "off");
        steal_word("none", NULL, "refine", "all");
        steal_word(NULL, "all", "none", "all");
        steal_word(NULL, "off", "greedy", "off");
}

/* A task of the first half spins 50 µs, one of the second half does nothing: with the tasks
 * placed as schedule(static) would, worker 0 holds the load and worker 1 waits for it. With
 * flip_half, the hot half changes at every step, which no plan can follow. */
static int flip_half, step_nr;

static void spin_first_half(void *task, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        if ((*(const int *)task < 32) != (flip_half ? step_nr % 2 == 0 : 1))
                return;
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
                clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) * 1e-3 < 50);
}

/* Tasks stolen over 10 more steps (one window: the default period). */
static uint64_t stolen_in_steps(lbomp_t *lb)
{
        lbomp_totals_t before, after;
        ASSERT_EQ(lbomp_totals_get(lb, &before, sizeof before), 0);
        for (int s = 0; s < 10; s++, step_nr++)
                ASSERT_EQ(lbomp_step(lb, spin_first_half, NULL), 0);
        ASSERT_EQ(lbomp_totals_get(lb, &after, sizeof after), 0);
        return after.stolen - before.stolen;
}

/* Tasks stolen over windows of 10 steps until some were, at most 30 of them: a victim kept off
 * its core before it set out its tasks cannot be stolen from, and on a machine busy with other
 * work (the tests run two at a time) that can be every step of a window. */
static uint64_t stolen_some(lbomp_t *lb, int *windows)
{
        uint64_t n = 0;
        for (*windows = 1; *windows <= 30; ++*windows)
                if ((n = stolen_in_steps(lb)) > 0)
                        break;
        return n;
}

/* lbomp_set_steal is LBOMP_STEAL: the same words and refusals; it outlasts a policy set after it
 * (whose default would be another), and the next step steals as told — node, on a profile whose
 * two nodes hold one worker each, from no one. */
static void steal_setter(void)
{
        clear_env();
        setenv("LBOMP_STEAL", "off", 1);
        lbomp_t *lb = NULL;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_steal(lb, "all"), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        char *buf = read_report(lb, REPORT_TEXT);
        ASSERT_STR_CONTAINS(buf, "steal all\n");
        free(buf);
        ASSERT_EQ(lbomp_set_steal(lb, "sometimes"), -EINVAL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "lbomp_set_steal");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "LBOMP_STEAL");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "sometimes");
        ASSERT_STR_CONTAINS(lbomp_last_error(), "off, node, all");
        ASSERT_EQ(lbomp_set_steal(lb, NULL), -EINVAL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "lbomp_set_steal");
        ASSERT_EQ(lbomp_set_steal(NULL, "off"), -EINVAL);
        buf = read_report(lb, REPORT_TEXT);
        ASSERT_STR_CONTAINS(buf, "steal all\n"); /* refusals changed nothing */
        free(buf);

        ASSERT_EQ(lbomp_set_topology(lb, profile), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        static int nr[64];
        lbomp_id_t id[64];
        for (int i = 0; i < 64; i++) {
                nr[i] = i;
                ASSERT_EQ(lbomp_task_add(lb, &nr[i], 0, LBOMP_NODE_ANY, &id[i]), 0);
        }
        int wall, wagain;
        uint64_t all = stolen_some(lb, &wall);
        for (int i = 0; i < 64; i++) /* policy none: where they were placed */
                ASSERT_EQ(lbomp_task_worker(lb, id[i]), i < 32 ? 0 : 1);
        ASSERT_EQ(lbomp_set_steal(lb, "node"), 0);
        uint64_t node = stolen_in_steps(lb);
        ASSERT_EQ(lbomp_set_steal(lb, "off"), 0);
        uint64_t off = stolen_in_steps(lb);
        ASSERT_EQ(lbomp_set_steal(lb, "all"), 0);
        uint64_t again = stolen_some(lb, &wagain);
        printf("steal setter: stolen: all %llu (window %d), node %llu, off %llu (10 steps each), "
               "all again %llu (window %d)\n",
               (unsigned long long)all, wall, (unsigned long long)node, (unsigned long long)off,
               (unsigned long long)again, wagain);
        ASSERT_GT(all, 0);
        ASSERT_EQ(node, 0);
        ASSERT_EQ(off, 0);
        ASSERT_GT(again, 0);
        lbomp_destroy(lb);
}

/* lbomp_set_policy between steps: a switch to none, whose default is no stealing, holds from the
 * next step, though the last step's end published it with stealing armed. */
static void policy_switch_steal(void)
{
        clear_env();
        lbomp_t *lb = NULL;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "refine"), 0);
        ASSERT_EQ(lbomp_set_period(lb, 10), 0); /* windows of exactly 10 steps */
        static int nr[64];
        for (int i = 0; i < 64; i++) {
                nr[i] = i;
                ASSERT_EQ(lbomp_task_add(lb, &nr[i], 0, LBOMP_NODE_ANY, NULL), 0);
        }
        flip_half = 1;
        int windows;
        uint64_t refine = stolen_some(lb, &windows);
        ASSERT_EQ(lbomp_set_policy(lb, "none"), 0);
        uint64_t none = stolen_in_steps(lb);
        flip_half = 0;
        printf("policy switch: stolen under refine %llu (window %d), then under none %llu\n",
               (unsigned long long)refine, windows, (unsigned long long)none);
        ASSERT_GT(refine, 0);
        ASSERT_EQ(none, 0);
        lbomp_destroy(lb);
}

/* A topology file that is not a regular file, or far too large, is refused at once. */
static void topology_files(void)
{
        double t0 = (double)clock() / CLOCKS_PER_SEC;
        bad("LBOMP_TOPOLOGY", "/dev/zero", -EINVAL, "not a regular file", "character device");
        bad("LBOMP_TOPOLOGY", "/tmp", -EINVAL, "not a regular file", "directory");
        char fifo[] = "/tmp/lbomp-fifo-XXXXXX";
        int fd = mkstemp(fifo);
        ASSERT(fd >= 0);
        close(fd);
        unlink(fifo);
        ASSERT_EQ(mkfifo(fifo, 0600), 0);
        bad("LBOMP_TOPOLOGY", fifo, -EINVAL, "pipe", NULL);
        unlink(fifo);
        char big[] = "/tmp/lbomp-big-XXXXXX";
        fd = mkstemp(big);
        ASSERT(fd >= 0);
        ASSERT_EQ(ftruncate(fd, 100L << 20), 0); /* sparse: 100 MB of nothing */
        close(fd);
        bad("LBOMP_TOPOLOGY", big, -EFBIG, "bytes", NULL);
        unlink(big);
        ASSERT_DLE((double)clock() / CLOCKS_PER_SEC - t0, 2.0);
        clear_env();
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_topology(lb, "/dev/zero"), -EINVAL);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "not a regular file");
        lbomp_destroy(lb);
}

/* One code, one meaning: every code has its own text and name; task placement and a failed
 * policy are told apart. */
static void error_map(void)
{
        static const int codes[] = {EINVAL,    ENOMEM, ENOENT,    ENOTSUP, EBUSY, EPERM,
                                    ETIMEDOUT, EINTR,  ECANCELED, EAGAIN,  ELOOP, EINPROGRESS,
                                    ESTALE,    EFBIG,  EIO,       EFAULT};
        size_t n = sizeof codes / sizeof codes[0];
        for (size_t i = 0; i < n; i++) {
                ASSERT(strcmp(lbomp_strerror(-codes[i]), "unknown error") != 0);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(lbomp_strerror(-codes[i]), lbomp_strerror(-codes[j])) == 0)
                                FAIL("codes %d and %d share the text \"%s\"", codes[i], codes[j],
                                     lbomp_strerror(-codes[i]));
        }
        ASSERT(strcmp(lbomp_err_name(-EINPROGRESS), "EINPROGRESS") == 0);
        ASSERT(strcmp(lbomp_err_name(0), "OK") == 0);
        ASSERT(strcmp(lbomp_strerror(-EACCES), "unknown error") != 0); /* a file errno */
        clear_env();
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        int x = 0;
        lbomp_id_t id;
        ASSERT_EQ(lbomp_task_add(lb, &x, 8, LBOMP_NODE_ANY, &id), 0);
        ASSERT_EQ(lbomp_task_worker(lb, id), -EINPROGRESS);
        lbomp_destroy(lb);
}

int main(int argc, char **argv)
{
        ASSERT(argc > 1);
        profile = argv[1];
        bad("LBOMP_POLICY", "bogus", -ENOENT, "greedy", "refine");
        bad("LBOMP_POLICY", "", -ENOENT, "none", NULL);
        bad("LBOMP_PERIOD", "0", -EINVAL, "from 1", NULL);
        bad("LBOMP_PERIOD", "abc", -EINVAL, "whole number", NULL);
        bad("LBOMP_PERIOD", "10x", -EINVAL, NULL, NULL);
        bad("LBOMP_PERIOD", "-3", -EINVAL, NULL, NULL);
        bad("LBOMP_PERIOD", "99999999999999999999", -EINVAL, NULL, NULL);
        bad("LBOMP_HISTORY", "0", -EINVAL, "a whole number from 1 to 10000000", NULL);
        bad("LBOMP_HISTORY", "many", -EINVAL, "whole number", NULL);
        bad("LBOMP_HISTORY", "20000000", -EINVAL, NULL, NULL);
        bad("LBOMP_TOPOLOGY", "/nonexistent/machine.xml", -ENOENT, "does not exist", NULL);
        bad("LBOMP_SEED", "-1", -EINVAL, NULL, NULL);
        bad("LBOMP_VERBOSE", "3", -EINVAL, NULL, NULL);
        bad("LBOMP_STEAL", "maybe", -EINVAL, "off, node, all", NULL);
        bad("LBOMP_TOLERANCE", "0", -EINVAL, NULL, NULL);
        bad("LBOMP_TOLERANCE", "nan", -EINVAL, NULL, NULL);
        bad("LBOMP_TOLERANCE", "1.5", -EINVAL, NULL, NULL);
        bad("LBOMP_TIME", "tsc", -EINVAL, "cpu, wall", NULL);
        bad("LBOMP_SPEEDS", "fast", -EINVAL, "auto, prior, off", NULL);
        bad("LBOMP_TRACE", "", -EINVAL, "path", NULL);
        bad("LBOMP_TRACE", "/nonexistent/dir/run.trc", -ENOENT, "cannot be created",
            "No such file");
        bad("LBOMP_POWERCAP_ROOT", "", -EINVAL, "/sys/class/powercap", NULL);
        bad("LBOMP_MOVE_PAGES", "yes", -EINVAL, "on, off", NULL);
        bad("LBOMP_MOVE_PAGES", "ON", -EINVAL, "on, off", NULL);

        /* A file that is not a topology. */
        char path[] = "/tmp/lbomp-bad-topo-XXXXXX";
        int fd = mkstemp(path);
        ASSERT(fd >= 0);
        ASSERT(write(fd, "<not-a-topology>", 16) == 16);
        close(fd);
        bad("LBOMP_TOPOLOGY", path, -EINVAL, "hwloc", NULL);
        unlink(path);

        none_steals_nothing_unless_told();
        steal_setter();
        policy_switch_steal();
        good("LBOMP_POLICY", "refine");
        good("LBOMP_PERIOD", "1");
        good("LBOMP_HISTORY", "1");
        good("LBOMP_SEED", "0x10");
        good("LBOMP_STEAL", "node");
        good("LBOMP_TOPOLOGY", profile);
        good("LBOMP_POWERCAP_ROOT", "/nonexistent/powercap"); /* energy unavailable, not an error */
        good("LBOMP_MOVE_PAGES", "off");

        /* on: accepted, or refused with its reason where the kernel has no NUMA support */
        clear_env();
        setenv("LBOMP_MOVE_PAGES", "on", 1);
        lbomp_t *lb = NULL;
        int rc = lbomp_create(&lb);
        if (rc == -ENOTSUP)
                ASSERT_STR_CONTAINS(lbomp_last_error(), "NUMA support");
        else
                ASSERT_EQ(rc, 0);
        lbomp_destroy(lb);
        lb = NULL;

        /* help lists and cancels */
        clear_env();
        setenv("LBOMP_POLICY", "help", 1);
        ASSERT_EQ(lbomp_create(&lb), -ECANCELED);
        ASSERT(lb == NULL);

        /* setters override the environment, with the same checks */
        clear_env();
        setenv("LBOMP_PERIOD", "5", 1);
        setenv("LBOMP_POLICY", "none", 1);
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_get_period(lb), 5);
        ASSERT_EQ(lbomp_set_period(lb, 7), 0);
        ASSERT_EQ(lbomp_get_period(lb), 7);
        ASSERT_EQ(lbomp_set_period(lb, 0), -EINVAL);
        ASSERT_EQ(lbomp_get_period(lb), 7);
        ASSERT_EQ(lbomp_set_policy(lb, "bogus"), -ENOENT);
        ASSERT_STR_CONTAINS(lbomp_last_error(), "greedy");
        ASSERT(strcmp(lbomp_get_policy(lb), "none") == 0);
        ASSERT_EQ(lbomp_set_policy(lb, "refine"), 0);
        ASSERT(strcmp(lbomp_get_policy(lb), "refine") == 0);
        ASSERT_EQ(lbomp_set_workers(lb, 0), -EINVAL);
        ASSERT_EQ(lbomp_set_workers(lb, 3), 0);
        ASSERT_EQ(lbomp_get_workers(lb), 3);
        ASSERT_EQ(lbomp_set_tolerance(lb, 0.0), -EINVAL);
        ASSERT_EQ(lbomp_set_topology(lb, "/nonexistent.xml"), -ENOENT);
        ASSERT_EQ(lbomp_set_topology(lb, profile), 0);
        int nodes = 0, cores = 0;
        lbomp_topology(lb, &nodes, &cores);
        ASSERT_GT(nodes, 1);
        ASSERT_EQ(lbomp_task_add(lb, &cores, 0, nodes, NULL), -EINVAL); /* node out of range */
        ASSERT_EQ(lbomp_link(lb, 0, 1, 8), -ENOENT);
        ASSERT_EQ(lbomp_step(lb, NULL, NULL), -EINVAL);
        lbomp_destroy(lb);
        lbomp_destroy(NULL);
        ASSERT(strcmp(lbomp_strerror(-ENOENT), "unknown error") != 0);
        setters_are_the_variables();
        topology_files();
        error_map();
        printf("config: ok\n");
        return 0;
}
