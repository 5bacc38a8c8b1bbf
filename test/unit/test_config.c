/*
 * test_config.c — every bad LBOMP_* value makes lbomp_create() fail with an error code and one
 * message naming the variable, the value and what is valid; setters override the environment and
 * are checked the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "lbomp.h"
#include "test.h"

static const char *profile; /* a valid numa-profiles file, from argv */

static const char *const all_vars[] = {"LBOMP_POLICY",    "LBOMP_PERIOD",        "LBOMP_TOPOLOGY",
                                       "LBOMP_SEED",      "LBOMP_VERBOSE",       "LBOMP_STEAL",
                                       "LBOMP_TOLERANCE", "LBOMP_FANOUT",        "LBOMP_RETRIES",
                                       "LBOMP_TIME",      "LBOMP_POWERCAP_ROOT", "LBOMP_MOVE_PAGES",
                                       "LBOMP_TRACE"};

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
        bad("LBOMP_TOPOLOGY", "/nonexistent/machine.xml", -ENOENT, "does not exist", NULL);
        bad("LBOMP_SEED", "-1", -EINVAL, NULL, NULL);
        bad("LBOMP_VERBOSE", "3", -EINVAL, NULL, NULL);
        bad("LBOMP_STEAL", "maybe", -EINVAL, "off, node, all", NULL);
        bad("LBOMP_TOLERANCE", "0", -EINVAL, NULL, NULL);
        bad("LBOMP_TOLERANCE", "nan", -EINVAL, NULL, NULL);
        bad("LBOMP_TOLERANCE", "1.5", -EINVAL, NULL, NULL);
        bad("LBOMP_TIME", "tsc", -EINVAL, "cpu, wall", NULL);
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

        good("LBOMP_POLICY", "refine");
        good("LBOMP_PERIOD", "1");
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
        printf("config: ok\n");
        return 0;
}
