/*
 * test_two_runtimes.c — two runtimes balance at the same time: two pthreads, each with its own
 * lbomp runtime and its own OpenMP team, run steps with stealing and the balancer after every
 * step. Every task of each runtime runs exactly once per step and every plan passes its check;
 * under ThreadSanitizer (build-tsan) any state the two LB steps share would be reported.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbomp.h"
#include "test.h"

#define NT     200
#define NSTEPS 40

struct rt {
        const char *policy;
        _Atomic long runs[NT];
        double x[NT];
        int cost[NT];
        int failed;
};

static void cb(void *data, lbomp_id_t id, void *arg)
{
        struct rt *r = arg;
        (void)data;
        atomic_fetch_add_explicit(&r->runs[id], 1, memory_order_relaxed);
        for (int i = 0; i < r->cost[id] * 40; i++)
                r->x[id] = r->x[id] * 0.999999 + 1e-6;
}

static void *run(void *arg)
{
        struct rt *r = arg;
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0 || lbomp_set_policy(lb, r->policy) != 0 ||
            lbomp_set_period(lb, 1) != 0 || lbomp_set_workers(lb, 2) != 0) {
                r->failed = 1;
                return NULL;
        }
        for (int i = 0; i < NT; i++) {
                r->cost[i] = i < NT / 5 ? 12 : 1;
                lbomp_task_add(lb, &r->x[i], 64, LBOMP_NODE_ANY, NULL);
        }
        for (long s = 1; s <= NSTEPS && !r->failed; s++) {
                if (lbomp_step(lb, cb, r) != 0)
                        r->failed = 2;
                for (int i = 0; i < NT; i++)
                        if (atomic_load(&r->runs[i]) != s) {
                                fprintf(stderr, "%s: step %ld: task %d ran %ld times\n", r->policy,
                                        s, i, atomic_load(&r->runs[i]));
                                r->failed = 3;
                        }
        }
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                lbomp_lb_get(lb, i, &st, sizeof st);
                if (st.error != 0)
                        r->failed = 4;
        }
        if (lbomp_lb_count(lb) != NSTEPS)
                r->failed = 5;
        lbomp_destroy(lb);
        return NULL;
}

int main(void)
{
        setenv("LBOMP_STEAL", "all", 1);
        static struct rt a = {.policy = "greedy"}, b = {.policy = "refine"};
        pthread_t ta, tb;
        ASSERT_EQ(pthread_create(&ta, NULL, run, &a), 0);
        ASSERT_EQ(pthread_create(&tb, NULL, run, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        ASSERT_EQ(a.failed, 0);
        ASSERT_EQ(b.failed, 0);
        printf("two runtimes: ok\n");
        return 0;
}
