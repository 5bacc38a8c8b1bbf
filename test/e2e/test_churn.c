/*
 * test_churn.c — a long run whose tasks come and go costs what is alive, not what was ever added:
 * 40,000 steps of 1,000 live tasks, 50 of them replaced (and linked to two live tasks) before
 * every step, under the default configuration. Proves: lbomp_task_count() is 1,000 throughout;
 * the process grows by at most 8 MB from step 1,000 to the end (the task table, the workers'
 * arrays, the window and the links follow the live tasks; what grows with the steps is their
 * records, about 70 bytes a step); every live task runs exactly once per step; a removed id is
 * refused with -ESTALE, also long after, and ids are never handed out twice. The time per step is
 * a benchmark's business (bench/churn), not this test's.
 * Usage: test_churn [STEPS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

/* The sanitizers keep freed memory in quarantine: the process size then says nothing of lbomp's
 * (SANITIZED, test.h). */

#define LIVE    1000
#define REPLACE 50

struct task {
        long runs, expect;
        lbomp_id_t id;
};

/* The program's own memory stays that of the live tasks too: a replacement reuses the object of
 * the task it replaces. */
static struct task pool[LIVE];
static long issued; /* ids handed out */

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)arg;
        struct task *t = data;
        if (t->id != id)
                FAIL("task %u ran with id %u", t->id, id);
        t->runs++;
}

/* Resident memory of the process, bytes. */
static long rss(void)
{
        FILE *f = fopen("/proc/self/statm", "r");
        long size = 0, res = 0;
        if (!f || fscanf(f, "%ld %ld", &size, &res) != 2)
                FAIL("cannot read /proc/self/statm");
        fclose(f);
        return res * 4096;
}

static unsigned long long rng = 88172645463325252ull;
static uint32_t below(uint32_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng % n);
}

static void add(lbomp_t *lb, int k)
{
        struct task *t = &pool[k];
        *t = (struct task){0};
        ASSERT_EQ(lbomp_task_add(lb, t, 64, LBOMP_NODE_ANY, &t->id), 0);
        if (t->id != (lbomp_id_t)issued) /* ids in order, never one twice */
                FAIL("task %ld got id %u", issued, t->id);
        issued++;
}

/* Churn with lbomp_task_alloc between bursts of steps in one region. */
static int alloc_case(void)
{
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_period(lb, 5), 0);
        for (int i = 0; i < 64; i++)
                add(lb, i);
        void *mem[64] = {0};
        for (int round = 0; round < 300; round++) {
                for (int j = 0; j < 5; j++) {
                        int k = (int)below(64);
                        ASSERT_EQ(lbomp_task_remove(lb, pool[k].id), 0);
                        if (mem[k])
                                lbomp_free(mem[k], 4096);
                        mem[k] = NULL;
                        add(lb, k);
                        int rc = lbomp_task_alloc(lb, pool[k].id, 4096, &mem[k]);
                        if (rc == -ENOTSUP)
                                mem[k] = NULL; /* no NUMA support: placement still happened */
                        else
                                ASSERT_EQ(rc, 0);
                }
                int burst = 1 + round % 4;
#pragma omp parallel num_threads(2)
                for (int b = 0; b < burst; b++)
                        LBOMP_FOR_EACH_TASK (lb, struct task *, t)
                                cb(t, t->id, NULL);
                ASSERT_EQ(lbomp_last_step(lb), 0);
                for (int k = 0; k < 64; k++) {
                        pool[k].expect += burst;
                        if (pool[k].runs != pool[k].expect)
                                FAIL("round %d: task %u ran %ld times, expected %ld", round,
                                     pool[k].id, pool[k].runs, pool[k].expect);
                }
        }
        printf("churn alloc: 300 rounds of 5 tasks replaced and allocated, %llu steps, %zu LB "
               "steps\n",
               (unsigned long long)lbomp_steps(lb), lbomp_lb_count(lb));
        for (int k = 0; k < 64; k++)
                lbomp_free(mem[k], 4096);
        lbomp_destroy(lb);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc > 1 && strcmp(argv[1], "alloc") == 0)
                return alloc_case();
        long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 40000;
        ASSERT_GT(steps, 1000);
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        for (int i = 0; i < LIVE; i++)
                add(lb, i);
        long rss0 = 0;
        for (long s = 0; s < steps; s++) {
                if (s == 1000)
                        rss0 = rss();
                /* 50 replaced: removed, and new ones linked to two live tasks. */
                for (int j = 0; j < REPLACE; j++) {
                        int k = (int)below(LIVE);
                        lbomp_id_t old = pool[k].id;
                        ASSERT_EQ(lbomp_task_remove(lb, old), 0);
                        add(lb, k);
                        ASSERT_EQ(lbomp_link(lb, pool[k].id, pool[(k + 1) % LIVE].id, 1024), 0);
                        int r = (int)below(LIVE);
                        ASSERT_EQ(lbomp_link(lb, pool[k].id, pool[r == k ? (k + 2) % LIVE : r].id,
                                             512),
                                  0);
                        if (j == 0) /* a removed id stays refused, also one removed long ago */
                                ASSERT_EQ(lbomp_task_remove(lb, old), -ESTALE);
                }
                if (lbomp_task_count(lb) != LIVE)
                        FAIL("step %ld: lbomp_task_count %u, expected %d", s, lbomp_task_count(lb),
                             LIVE);
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                for (int k = 0; k < LIVE; k++) {
                        struct task *t = &pool[k];
                        if (t->runs != ++t->expect)
                                FAIL("step %ld: task %u ran %ld times, expected %ld", s, t->id,
                                     t->runs, t->expect);
                }
        }
        ASSERT_EQ(lbomp_task_worker(lb, 0), -ESTALE); /* the first task is long gone */
        ASSERT_EQ(lbomp_task_worker(lb, (lbomp_id_t)(issued + 5)), -ENOENT);
        ASSERT_EQ(lbomp_link(lb, 0, pool[0].id, 8), -ESTALE);
        long grown = rss() - rss0;
        printf("churn: %ld steps of %d live tasks, %d replaced per step (%ld ids handed out); "
               "%zu LB steps; memory grew %.2f MB from step 1000 to the end\n",
               steps, LIVE, REPLACE, issued, lbomp_lb_count(lb), grown / 1048576.0);
        ASSERT_GT(lbomp_lb_count(lb), 0); /* churn does not stop the balancer */
#ifndef SANITIZED
        ASSERT_LE(grown, 8l << 20);
#else
        printf("churn: (sanitized build: the memory bound is checked in the plain build)\n");
#endif
        lbomp_destroy(lb);
        return 0;
}
