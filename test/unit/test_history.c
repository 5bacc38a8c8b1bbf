/*
 * test_history.c — the bounded history (LBOMP_HISTORY, src/history.h):
 *  - the ring alone: the last `keep` records readable with their own contents, every record
 *    handed back exactly once and in order when its slot is reused, a slot begun and abandoned
 *    loses nothing readable;
 *  - the runtime with LBOMP_HISTORY=3: counts over the whole run, the first kept index, -ENOENT
 *    for what is gone, the report's and the JSON's totals equal to the sum of every LB step as it
 *    happened (the dropped ones included), in lbomp_totals_get too, and the lists holding the
 *    kept ones with their run indices.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "lbomp.h"
#include "report.h"
#include "test.h"

struct rec {
        uint64_t i;
        char pad[20];
};

static void ring_alone(void)
{
        for (uint64_t keep = 1; keep <= 17; keep += 4) {
                struct lbomp__history h;
                lbomp__history_init(&h, sizeof(struct rec), keep);
                uint64_t handed = 0;
                for (uint64_t i = 0; i < 100; i++) {
                        struct rec gone;
                        int had;
                        if (i % 10 == 3) { /* begun and abandoned: nothing readable is lost */
                                struct rec *a = lbomp__history_slot(&h, &gone, &had);
                                ASSERT(a != NULL);
                                if (had)
                                        ASSERT_EQ(gone.i, handed++);
                                a->i = 999999;
                                for (uint64_t k = lbomp__history_first(&h); k < h.n; k++)
                                        ASSERT_EQ(((struct rec *)lbomp__history_at(&h, k))->i, k);
                        }
                        struct rec *r = lbomp__history_slot(&h, &gone, &had);
                        ASSERT(r != NULL);
                        ASSERT_EQ(r->i, 0); /* zeroed */
                        if (had)
                                ASSERT_EQ(gone.i, handed++); /* once each, in order */
                        r->i = i;
                        lbomp__history_push(&h);
                        uint64_t first = i + 1 > keep ? i + 1 - keep : 0;
                        ASSERT_EQ(lbomp__history_first(&h), first);
                        for (uint64_t k = first; k <= i; k++)
                                ASSERT_EQ(((struct rec *)lbomp__history_at(&h, k))->i, k);
                        ASSERT(lbomp__history_at(&h, i + 1) == NULL);
                        if (first)
                                ASSERT(lbomp__history_at(&h, first - 1) == NULL);
                        /* what was not handed back is still held, for the totals */
                        ASSERT_EQ(h.dropped, handed);
                        for (uint64_t k = handed; k <= i; k++)
                                ASSERT_EQ(((struct rec *)lbomp__history_held(&h, k))->i, k);
                        ASSERT(h.cap <= h.mask + 1 && h.mask + 1 > keep);
                }
                lbomp__history_free(&h);
        }
}

struct task {
        _Atomic long runs;
        int cost;
        double x;
};

#define NT 32
static struct task task[NT];

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        struct task *t = data;
        atomic_fetch_add_explicit(&t->runs, 1, memory_order_relaxed);
        for (int i = 0; i < t->cost * 50; i++)
                t->x = t->x * 0.999999 + 1e-6;
}

/* The value of "key": in a JSON text, as a number. */
static double json_number(const char *json, const char *key)
{
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\":", key);
        const char *p = strstr(json, pat);
        if (!p)
                FAIL("no %s in the JSON report", key);
        return strtod(p + strlen(pat), NULL);
}

static size_t count(const char *s, const char *pat)
{
        size_t n = 0;
        for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat))
                n++;
        return n;
}

static void runtime_keeps_three(void)
{
        setenv("LBOMP_HISTORY", "3", 1);
        setenv("LBOMP_TOLERANCE", "0.01", 1);
        lbomp_t *lb;
        if (lbomp_create(&lb) != 0)
                FAIL("lbomp_create: %s", lbomp_last_error());
        ASSERT_EQ(lbomp_set_policy(lb, "greedy"), 0);
        ASSERT_EQ(lbomp_set_period(lb, 2), 0);
        ASSERT_EQ(lbomp_set_workers(lb, 2), 0);
        for (int i = 0; i < NT; i++) {
                task[i].cost = 1;
                ASSERT_EQ(lbomp_task_add(lb, &task[i], 64, LBOMP_NODE_ANY, NULL), 0);
        }
        uint64_t migrations = 0, stolen = 0, steal_steps = 0;
        double first_lambda = 0;
        size_t seen = 0, wseen = 0;
        const int nsteps = 60;
        for (int s = 0; s < nsteps; s++) {
                /* a heavy quarter that changes every 10 steps: greedy moves tasks more than once */
                for (int i = 0; i < NT; i++)
                        task[i].cost = (i / 8) == (s / 10) % 4 ? 400 : 1;
                ASSERT_EQ(lbomp_step(lb, cb, NULL), 0);
                for (; seen < lbomp_lb_count(lb); seen++) {
                        lbomp_lb_stats_t st;
                        ASSERT_EQ(lbomp_lb_get(lb, seen, &st, sizeof st), 0);
                        migrations += st.migrations;
                }
                for (; wseen < lbomp_window_count(lb); wseen++) {
                        lbomp_window_stats_t ws;
                        ASSERT_EQ(lbomp_window_get(lb, wseen, &ws, sizeof ws), 0);
                        stolen += ws.stolen;
                        steal_steps += ws.steal_steps;
                        if (wseen == 0)
                                first_lambda = ws.imbalance;
                }
        }
        for (int i = 0; i < NT; i++)
                ASSERT_EQ(atomic_load(&task[i].runs), nsteps);
        size_t n = lbomp_lb_count(lb);
        ASSERT_EQ(n, nsteps / 2);
        ASSERT_EQ(lbomp_lb_first(lb), n - 3);
        ASSERT_EQ(lbomp_window_count(lb), n);
        ASSERT_EQ(lbomp_window_first(lb), n - 3);
        lbomp_lb_stats_t st;
        lbomp_window_stats_t ws;
        ASSERT_EQ(lbomp_lb_get(lb, n - 4, &st, sizeof st), -ENOENT);
        ASSERT_EQ(lbomp_lb_get(lb, n - 3, &st, sizeof st), 0);
        ASSERT_EQ(st.step, (uint64_t)(nsteps - 5));
        ASSERT_EQ(lbomp_lb_get(lb, n, &st, sizeof st), -ENOENT);
        ASSERT_EQ(lbomp_window_get(lb, n - 4, &ws, sizeof ws), -ENOENT);
        ASSERT_EQ(lbomp_window_get(lb, n - 1, &ws, sizeof ws), 0);
        ASSERT_EQ(ws.first_step, (uint64_t)(nsteps - 2));
        /* the last 16 × 3 steps */
        lbomp_step_stats_t ss;
        ASSERT_EQ(lbomp_step_get(lb, nsteps - 48 - 1, &ss, sizeof ss), -ENOENT);
        ASSERT_EQ(lbomp_step_get(lb, nsteps - 48, &ss, sizeof ss), 0);
        ASSERT_EQ(lbomp_step_get(lb, nsteps - 1, &ss, sizeof ss), 0);

        lbomp_totals_t t;
        ASSERT_EQ(lbomp_totals_get(lb, &t, sizeof t), 0);
        ASSERT_EQ(t.lb_steps, n);
        ASSERT_EQ(t.windows, n);
        ASSERT_EQ(t.migrations, migrations);
        ASSERT_EQ(t.stolen, stolen);
        ASSERT_EQ(t.steal_steps, steal_steps);
        ASSERT_GT(steal_steps, 0); /* the first step at least (README, "Stealing") */
        ASSERT_EQ(t.migrated_bytes, 64 * migrations); /* every task has 64 bytes */
        ASSERT(t.imbalance_first == first_lambda);
        ASSERT_EQ(lbomp_totals_get(lb, NULL, sizeof t), -EINVAL);
        ASSERT_EQ(lbomp_totals_get(NULL, &t, sizeof t), -EINVAL);
        printf("LBOMP_HISTORY=3: %zu LB steps, %llu migrations, %llu stolen over the run\n", n,
               (unsigned long long)migrations, (unsigned long long)stolen);
        ASSERT_GT(migrations, 0);
        char *text = read_report(lb, REPORT_TEXT);
        char want[160];
        snprintf(want, sizeof want, "(the last 3 LB steps of %zu: LBOMP_HISTORY)", n);
        ASSERT_STR_CONTAINS(text, want);
        snprintf(want, sizeof want, "total: %zu LB steps, %llu migrations", n,
                 (unsigned long long)migrations);
        ASSERT_STR_CONTAINS(text, want);
        snprintf(want, sizeof want, "%llu tasks stolen", (unsigned long long)stolen);
        ASSERT_STR_CONTAINS(text, want);
        free(text);
        char *json = read_report(lb, REPORT_JSON);
        ASSERT_EQ((uint64_t)json_number(json, "migrations"), migrations);
        ASSERT_EQ((size_t)json_number(json, "lb_count"), n);
        ASSERT_EQ((size_t)json_number(json, "window_count"), n);
        ASSERT_EQ((size_t)json_number(json, "lb"), n - 3); /* the first listed */
        ASSERT_EQ((size_t)json_number(json, "window"), n - 3);
        ASSERT_EQ(count(json, "\"lb\":"), 3);
        ASSERT_EQ(count(json, "\"window\":"), 3);
        free(json);
        lbomp_destroy(lb);
        unsetenv("LBOMP_HISTORY");
        unsetenv("LBOMP_TOLERANCE");
}

int main(void)
{
        ring_alone();
        runtime_keeps_three();
        printf("test_history: ok\n");
        return 0;
}
