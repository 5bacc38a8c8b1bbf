/*
 * test_profiles.c — each of the six numa-profiles, given to the library (LBOMP_TOPOLOGY, then
 * lbomp_set_topology), is the machine lbomp_topology() reports: its file name, NUMA node count and
 * core count. Workers are placed as OMP_PROC_BIND=spread would place them: 16 workers on an 8-node
 * profile cover every node, two per node, and a profile's nodes keep their distance matrix.
 * Usage: test_profiles PROFILES_DIR
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "test.h"

static const struct {
        const char *file;
        int nodes, cores;
        double remote; /* normalised distance node 0 -> last node */
} profiles[] = {
        {"xeon-x3440.xml", 1, 4, 1.0},          {"xeon-e5-2695v2-2s.xml", 2, 24, 2.1},
        {"xeon-e5-2640v4-2s.xml", 2, 20, 2.1},  {"sgi-uv2000-24n.xml", 24, 192, 7.9},
        {"epyc-7742-2s-nps4.xml", 8, 128, 3.2}, {"xeon-8480-2s-snc4.xml", 8, 112, 2.1},
};

int main(int argc, char **argv)
{
        if (argc < 2)
                FAIL("usage: test_profiles PROFILES_DIR");
        for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[1], profiles[i].file);
                for (int how = 0; how < 2; how++) {
                        lbomp_t *lb;
                        if (how == 0) { /* the environment variable */
                                setenv("LBOMP_TOPOLOGY", path, 1);
                                ASSERT_EQ(lbomp_create(&lb), 0);
                                unsetenv("LBOMP_TOPOLOGY");
                        } else { /* the setter */
                                ASSERT_EQ(lbomp_create(&lb), 0);
                                ASSERT_EQ(lbomp_set_topology(lb, path), 0);
                        }
                        ASSERT_EQ(lbomp_set_workers(lb, 16), 0);
                        int nodes = -1, cores = -1;
                        const char *name = lbomp_topology(lb, &nodes, &cores);
                        if (!name || strcmp(name, profiles[i].file) != 0)
                                FAIL("topology name '%s', expected '%s'", name ? name : "(null)",
                                     profiles[i].file);
                        ASSERT_EQ(nodes, profiles[i].nodes);
                        ASSERT_EQ(cores, profiles[i].cores);
                        /* spread: with at least as many workers as nodes, every node is used, and
                         * evenly when the count divides */
                        int used[64] = {0};
                        for (int w = 0; w < lb->ws.n; w++)
                                used[lb->ws.w[w].node]++;
                        int covered = 0;
                        for (int n = 0; n < nodes; n++)
                                covered += used[n] > 0;
                        ASSERT_EQ(covered, nodes < 16 ? nodes : 16);
                        if (16 % nodes == 0)
                                for (int n = 0; n < nodes; n++)
                                        ASSERT_EQ(used[n], 16 / nodes);
                        double d = lb->topo.dist[nodes - 1];
                        if (d < profiles[i].remote - 1e-9 || d > profiles[i].remote + 1e-9)
                                FAIL("%s: distance 0 -> %d is %g, expected %g", profiles[i].file,
                                     nodes - 1, d, profiles[i].remote);
                        lbomp_destroy(lb);
                }
                printf("%-24s %2d nodes, %3d cores\n", profiles[i].file, profiles[i].nodes,
                       profiles[i].cores);
        }
        printf("profiles: ok\n");
        return 0;
}
