/*
 * test_abi.c — the statistics getters keep working for programs compiled against another lbomp.h:
 * an older caller passes a smaller struct (only the fields it knows are written, nothing beyond
 * it), a newer one a larger struct (the fields this library lacks come back as zeros). Also: the
 * header documents every return code of the error map.
 * Usage: test_abi LBOMP_H ERROR_H
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        volatile double *x = data;
        for (int i = 0; i < 2000 * (int)(*x); i++)
                *x = *x + 0.0;
}

/* The public struct as a program compiled against lbomp 0.1.0 saw it: up to data_error. */
#define OLD_LB_SIZE  offsetof(lbomp_lb_stats_t, gossip_rounds)
#define OLD_WIN_SIZE offsetof(lbomp_window_stats_t, imbalance_run)

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "r");
        if (!f)
                FAIL("cannot open %s", path);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
        return buf;
}

int main(int argc, char **argv)
{
        ASSERT(argc > 2);
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_period(lb, 2), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "greedy"), 0);
        static double w[64];
        for (int i = 0; i < 64; i++) {
                w[i] = i < 8 ? 8 : 1;
                ASSERT_EQ(lbomp_task_add(lb, &w[i], 8, LBOMP_NODE_ANY, NULL), 0);
        }
        for (int s = 0; s < 6; s++)
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
        ASSERT_GT(lbomp_lb_count(lb), 0);

        lbomp_lb_stats_t full;
        ASSERT_EQ(lbomp_lb_get(lb, 0, &full, sizeof full), 0);
        /* An older caller: its struct ends early, followed here by canary bytes. */
        unsigned char old[OLD_LB_SIZE + 64];
        memset(old, 0xA5, sizeof old);
        ASSERT_EQ(lbomp_lb_get(lb, 0, (lbomp_lb_stats_t *)old, OLD_LB_SIZE), 0);
        ASSERT(memcmp(old, &full, OLD_LB_SIZE) == 0);
        for (size_t i = OLD_LB_SIZE; i < sizeof old; i++)
                if (old[i] != 0xA5)
                        FAIL("lbomp_lb_get wrote byte %zu beyond the caller's %zu", i,
                             (size_t)OLD_LB_SIZE);
        /* A newer caller: a larger struct; the tail comes back zeroed. */
        unsigned char big[sizeof full + 32];
        memset(big, 0xA5, sizeof big);
        ASSERT_EQ(lbomp_lb_get(lb, 0, (lbomp_lb_stats_t *)big, sizeof big), 0);
        ASSERT(memcmp(big, &full, sizeof full) == 0);
        for (size_t i = sizeof full; i < sizeof big; i++)
                ASSERT_EQ(big[i], 0);
        ASSERT_EQ(lbomp_lb_get(lb, 0, &full, 0), -EINVAL);

        lbomp_window_stats_t wf;
        ASSERT_EQ(lbomp_window_get(lb, 0, &wf, sizeof wf), 0);
        unsigned char wold[OLD_WIN_SIZE + 16];
        memset(wold, 0xA5, sizeof wold);
        ASSERT_EQ(lbomp_window_get(lb, 0, (lbomp_window_stats_t *)wold, OLD_WIN_SIZE), 0);
        ASSERT(memcmp(wold, &wf, OLD_WIN_SIZE) == 0);
        for (size_t i = OLD_WIN_SIZE; i < sizeof wold; i++)
                ASSERT_EQ(wold[i], 0xA5);
        lbomp_destroy(lb);

        /* lbomp.h lists every code of the one error map (error.h). */
        char header[1 << 16];
        snprintf(header, sizeof header, "%s", slurp(argv[1]));
        const char *map = slurp(argv[2]);
        int found = 0;
        for (const char *p = map; (p = strstr(p, "X(E")) != NULL; p += 3) {
                char name[32];
                if (sscanf(p + 2, "%31[A-Z]", name) != 1)
                        continue;
                char needle[40];
                snprintf(needle, sizeof needle, "-%s ", name);
                if (!strstr(header, needle))
                        FAIL("lbomp.h does not document -%s", name);
                found++;
        }
        ASSERT_GT(found, 10);
        printf("abi: ok (%d codes documented)\n", found);
        return 0;
}
