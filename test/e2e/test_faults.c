/*
 * test_faults.c — an allocation that fails inside lbomp leaves the runtime usable and honest: no
 * double free, no step stuck "in progress", no step that silently ran nothing.
 *
 * The program interposes the allocator (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * free): once armed with N, the Nth allocation made by liblbomp itself fails (calls from libgomp,
 * hwloc or libc go through, so that OpenMP does not abort). Every pointer is tracked while the test
 * runs, so a pointer freed twice is caught here, deterministically, whatever glibc would notice.
 *   workers   lbomp_set_workers() shrinking and growing, failing at each allocation in turn
 *   step      a step (both forms) failing at each allocation in turn: the step reports -ENOMEM
 *             and runs every task or none, later steps and setters work, every task exactly once
 * Usage: test_faults ITEM. Skipped (77) under the sanitizers, which bring their own allocator.
 */
#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"
#include "test.h"

#ifndef SANITIZED
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static _Atomic long arm_at;  /* 0: off; N: the Nth lbomp allocation fails */
static _Atomic long counted; /* lbomp allocations since armed */
static _Atomic long failed;  /* failures injected */
static _Atomic int tracking;

/* ---- which pointers are live: a small open-addressing table under a lock ---- */
#define SLOTS (1u << 20)
enum { EMPTY, LIVE, FREED };
static struct slot {
        uintptr_t p;
        int state;
} * table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long double_frees;

static struct slot *find(uintptr_t p)
{
        uint32_t h = (uint32_t)((p >> 4) * 2654435761u) & (SLOTS - 1);
        for (uint32_t i = 0; i < SLOTS; i++, h = (h + 1) & (SLOTS - 1))
                if (table[h].state == EMPTY || table[h].p == p)
                        return &table[h];
        return NULL;
}

static void track(void *p, int state)
{
        if (!p || !atomic_load_explicit(&tracking, memory_order_relaxed))
                return;
        pthread_mutex_lock(&lock);
        struct slot *s = find((uintptr_t)p);
        if (s) {
                if (state == FREED && s->state == FREED && s->p == (uintptr_t)p) {
                        atomic_fetch_add(&double_frees, 1);
                        if (getenv("FAULTS_ABORT"))
                                abort();
                }
                s->p = (uintptr_t)p;
                s->state = state;
        }
        pthread_mutex_unlock(&lock);
}

/* Whether the allocation called from `caller` fails: only lbomp's own, only once armed. */
static int fail_now(void *caller)
{
        long a = atomic_load_explicit(&arm_at, memory_order_relaxed);
        if (!a)
                return 0;
        Dl_info info;
        if (!dladdr(caller, &info) || !info.dli_fname || !strstr(info.dli_fname, "liblbomp"))
                return 0;
        if (atomic_fetch_add(&counted, 1) + 1 != a)
                return 0;
        atomic_fetch_add(&failed, 1);
        return 1;
}

void *malloc(size_t n)
{
        if (fail_now(__builtin_return_address(0)))
                return NULL;
        void *p = __libc_malloc(n);
        track(p, LIVE);
        return p;
}

void *calloc(size_t n, size_t m)
{
        if (fail_now(__builtin_return_address(0)))
                return NULL;
        void *p = __libc_calloc(n, m);
        track(p, LIVE);
        return p;
}

void *realloc(void *old, size_t n)
{
        if (fail_now(__builtin_return_address(0)))
                return NULL;
        void *p = __libc_realloc(old, n);
        if (p && old != p)
                track(old, FREED);
        track(p, LIVE);
        return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
        if (fail_now(__builtin_return_address(0)))
                return ENOMEM;
        void *p = __libc_memalign(align, n);
        if (!p)
                return ENOMEM;
        track(p, LIVE);
        *out = p;
        return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
        if (fail_now(__builtin_return_address(0)))
                return NULL;
        void *p = __libc_memalign(align, n);
        track(p, LIVE);
        return p;
}

void *memalign(size_t align, size_t n)
{
        return aligned_alloc(align, n);
}

void *valloc(size_t n)
{
        return aligned_alloc(4096, n);
}

void *pvalloc(size_t n)
{
        return aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
}

void free(void *p)
{
        track(p, FREED);
        __libc_free(p);
}

static void arm(long n)
{
        atomic_store(&counted, 0);
        atomic_store(&arm_at, n);
}

static void disarm(void)
{
        atomic_store(&arm_at, 0);
}

#endif /* SANITIZED */

#define NTASKS 200

#ifndef SANITIZED
static _Atomic long runs[NTASKS + 100];
static int ids[NTASKS + 100];

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id;
        (void)arg;
        atomic_fetch_add_explicit(&runs[*(int *)data], 1, memory_order_relaxed);
}

static lbomp_t *create(int ntasks)
{
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        ASSERT_EQ(lbomp_set_period(lb, 1), 0); /* an LB step after every step */
        for (int i = 0; i < ntasks; i++) {
                ids[i] = i;
                ASSERT_EQ(lbomp_task_add(lb, &ids[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        return lb;
}

/* Every task in [0, n) ran `expect` times. */
static void expect_runs(int n, long expect, const char *when)
{
        for (int i = 0; i < n; i++)
                if (atomic_load(&runs[i]) != expect)
                        FAIL("%s: task %d ran %ld times, expected %ld", when, i,
                             atomic_load(&runs[i]), expect);
}

static void t_workers(void)
{
        long injected = 0;
        for (long n = 1; n <= 64; n++) {
                for (int target = 1; target <= 5; target += 4) { /* shrink to 1, grow to 5 */
                        lbomp_t *lb = create(NTASKS);
                        ASSERT_EQ(lbomp_set_workers(lb, 3), 0);
                        arm(n);
                        int rc = lbomp_set_workers(lb, target);
                        disarm();
                        injected += atomic_load(&failed) > 0;
                        atomic_store(&failed, 0);
                        if (rc != 0 && rc != -ENOMEM)
                                FAIL("set_workers(%d) failing at allocation %ld: rc %d", target, n,
                                     rc);
                        ASSERT_EQ(lbomp_get_workers(lb), rc == 0 ? target : 3);
                        /* The runtime still works: a step runs every task once. */
                        memset(runs, 0, sizeof runs);
                        ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                        expect_runs(NTASKS, 1, "after a failed set_workers");
                        lbomp_destroy(lb);
                        if (atomic_load(&double_frees))
                                FAIL("set_workers(%d) failing at allocation %ld: a double free",
                                     target, n);
                }
        }
        printf("workers: %ld failures injected, no double free\n", injected);
        ASSERT_GT(injected, 0);
}

static void t_step(void)
{
        long injected = 0, refused = 0;
        for (long n = 1; n <= 80; n++) {
                for (int form = 0; form < 2; form++) {
                        memset(runs, 0, sizeof runs);
                        lbomp_t *lb = create(NTASKS / 2);
                        ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);     /* OpenMP's team exists now */
                        for (int i = NTASKS / 2; i < NTASKS; i++) { /* the arrays must grow */
                                ids[i] = i;
                                ASSERT_EQ(lbomp_task_add(lb, &ids[i], 64, LBOMP_NODE_ANY, NULL), 0);
                        }
                        memset(runs, 0, sizeof runs);
                        int rc;
                        arm(n);
                        if (form == 0) {
                                rc = lbomp_step(lb, cb, NULL);
                        } else {
#pragma omp parallel num_threads(2)
                                LBOMP_FOR_EACH_TASK (lb, int *, id)
                                        atomic_fetch_add(&runs[*id], 1);
                                rc = lbomp_last_step(lb);
                        }
                        disarm();
                        injected += atomic_load(&failed) > 0;
                        atomic_store(&failed, 0);
                        if (rc != 0 && rc != -ENOMEM)
                                FAIL("form %d failing at allocation %ld: rc %d (%s)", form, n, rc,
                                     lbomp_last_error());
                        /* All or nothing: a step that could not start ran no task, and says so. */
                        long ran = atomic_load(&runs[0]);
                        if (rc == -ENOMEM && ran == 0) {
                                refused++;
                                ASSERT_STR_CONTAINS(lbomp_last_error(), "no task ran");
                        }
                        expect_runs(NTASKS, ran, "the failed step");
                        /* Nothing is stuck: setters and later steps work. */
                        ASSERT_EQ(lbomp_set_period(lb, 2), 0);
                        for (int s = 1; s <= 3; s++) {
                                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                                expect_runs(NTASKS, ran + s, "a later step");
                        }
                        lbomp_destroy(lb);
                        if (atomic_load(&double_frees))
                                FAIL("form %d failing at allocation %ld: a double free", form, n);
                }
        }
        printf("step: %ld failures injected, %ld steps refused whole, no stuck runtime\n", injected,
               refused);
        ASSERT_GT(injected, 0);
        ASSERT_GT(refused, 0);
}

#endif /* SANITIZED */

int main(int argc, char **argv)
{
#ifdef SANITIZED
        (void)argc;
        (void)argv;
        SKIP("the sanitizers bring their own allocator; this test interposes it");
#else
        ASSERT(argc > 1);
        table = __libc_calloc(SLOTS, sizeof *table);
        ASSERT(table != NULL);
        atomic_store(&tracking, 1);
        if (strcmp(argv[1], "workers") == 0)
                t_workers();
        else if (strcmp(argv[1], "step") == 0)
                t_step();
        else
                FAIL("unknown item %s", argv[1]);
        printf("%s: ok\n", argv[1]);
        return 0;
#endif
}
