/*
 * loop.c — index loops (loop.h): the runtime's table of loops, the task set each loop runs as (a
 * runtime of its own that shares its owner's configuration, topology, clock and time steps), the
 * run of a loop on each thread (begin, next chunk, end: LBOMP_FOR and the internal iterator), the
 * result of a run passed on to the runtime's lbomp_last_step(), and the public calls around them:
 * lbomp_time_step(), lbomp_loop() and the reduction of the callback form, lbomp_step_sum().
 */
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "loop.h"
#include "runtime.h"

/* ---------------------------------------------------------------------------------------------
 * The result of a run, as the runtime's lbomp_last_step() gives it
 */

/* A run refused before its task set was entered: the runtime's result, printed. */
static void refuse(struct lbomp *lb, int rc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void refuse(struct lbomp *lb, int rc, const char *fmt, ...)
{
        pthread_mutex_lock(&lb->team.lock);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lb->step_msg, sizeof lb->step_msg, fmt, ap);
        va_end(ap);
        atomic_store(&lb->step_rc, rc);
        lbomp__fail("%s", lb->step_msg);
        pthread_mutex_unlock(&lb->team.lock);
}

/* The loop's last run becomes the runtime's last step: its code, and its message with the loop's
 * name in it. */
static void publish(struct lbomp__loop *l)
{
        struct lbomp *rt = l->rt, *root = rt->root;
        char msg[sizeof root->step_msg];
        pthread_mutex_lock(&rt->team.lock);
        int rc = atomic_load(&rt->step_rc);
        if (rc == -EINTR) {
                /* The step's own words are about tasks; a loop's user knows indices and chunks. */
                const struct lbomp__steprec *last =
                        lbomp__window_steprec(&rt->win, lbomp__window_nsteps(&rt->win) - 1);
                uint64_t skipped = last ? last->skipped : 0;
                snprintf(
                        msg, sizeof msg,
                        "lbomp: LBOMP_FOR(\"%.64s\"): a break left the body: the rest of that "
                        "chunk "
                        "and %llu more of the run's %u chunks did not run; the run's times are not "
                        "used for balancing",
                        l->ch.name, (unsigned long long)skipped, l->ch.n);
        } else if (rc) {
                const char *m = rt->step_msg;
                if (strncmp(m, "lbomp: ", 7) == 0)
                        m += 7;
                if (strncmp(m, "LBOMP_FOR(", 10) == 0)
                        snprintf(msg, sizeof msg, "lbomp: %.480s", m);
                else
                        snprintf(msg, sizeof msg, "lbomp: LBOMP_FOR(\"%.64s\"): %.400s", l->ch.name,
                                 m);
        }
        pthread_mutex_unlock(&rt->team.lock);
        pthread_mutex_lock(&root->team.lock);
        if (rc)
                memcpy(root->step_msg, msg, sizeof msg);
        atomic_store(&root->step_rc, rc);
        pthread_mutex_unlock(&root->team.lock);
        if (rc)
                lbomp__set_error("%s", msg);
}

/* ---------------------------------------------------------------------------------------------
 * A loop's task set
 */

static void runtime_free(struct lbomp *lb)
{
        if (!lb)
                return;
        /* The topology, configuration strings and time steps are the owner's. */
        lbomp__workers_free(&lb->ws);
        lbomp__tasks_free(&lb->tasks);
        lbomp__window_free(&lb->win);
        lbomp__lbs_free(&lb->lbs);
        lbomp__data_free(&lb->data);
        lbomp__team_destroy(&lb->team);
        free(lb);
}

/* A task set with n workers that shares root's configuration, topology, clock and time steps.
 * It opens no energy counters (a program may have many loops; the runtime's counters cover the
 * whole run, read after the loops' runs too) and writes no trace. */
static int runtime_new(struct lbomp *root, int n, struct lbomp **out)
{
        struct lbomp *lb = calloc(1, sizeof *lb);
        if (!lb)
                return -ENOMEM;
        if (lbomp__team_init(&lb->team) < 0) {
                lbomp__team_destroy(&lb->team);
                free(lb);
                return -ENOMEM;
        }
        lb->root = root;
        lb->ts = root->ts;
        lb->cfg = root->cfg;
        lb->cfg.topology = lb->cfg.trace = lb->cfg.powercap_root = NULL;
        lb->topo = root->topo;
        lb->clock = root->clock;
        lb->omp_binds = root->omp_binds;
        lbomp__window_init(&lb->win, lb->cfg.history);
        int rc = lbomp__lbs_init(&lb->lbs, NULL, lb->cfg.history);
        if (rc == 0)
                rc = lbomp__workers_resize(&lb->ws, n, &lb->tasks, &lb->topo, lb->cfg.steal);
        if (rc < 0) {
                runtime_free(lb);
                return rc;
        }
        lbomp__window_restart(&lb->win, &lb->ws, 0, 0, true);
        *out = lb;
        return 0;
}

/* What one reading of the task clock costs here: part of lbomp's cost per chunk. */
static double tick_cost_s(const struct lbomp__clock *clock)
{
        enum { N = 256 };
        uint64_t sink = 0;
        double t0 = lbomp__mono_s();
        for (int i = 0; i < N; i++)
                sink += lbomp__ticks(clock->tsc);
        double dt = lbomp__mono_s() - t0;
        __asm__ volatile("" : : "r"(sink));
        return dt > 0 ? dt / N : 0;
}

/* ---------------------------------------------------------------------------------------------
 * The table of loops
 */

static uint64_t key_hash(const struct lbomp__loop_key *k)
{
        uint64_t h = 0xcbf29ce484222325ull;
        if (k->name) {
                for (const unsigned char *p = (const unsigned char *)k->name; *p; p++)
                        h = (h ^ *p) * 0x100000001b3ull;
                return h;
        }
        uint64_t v[3] = {(uint64_t)(uintptr_t)k->site, (uint64_t)k->begin, (uint64_t)k->end};
        for (int i = 0; i < 3; i++) {
                h ^= v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
                h *= 0xbf58476d1ce4e5b9ull;
        }
        return h;
}

static bool key_match(const struct lbomp__loop *l, const struct lbomp__loop_key *k, uint64_t h)
{
        if (l->hash != h)
                return false;
        if (k->name)
                return !l->by_site && strcmp(l->ch.name, k->name) == 0;
        return l->by_site && l->site == k->site && l->key_begin == k->begin && l->key_end == k->end;
}

static struct lbomp__loop *lookup(struct lbomp__loops *r, const struct lbomp__loop_key *k,
                                  uint64_t h)
{
        /* Acquire: a loop seen here is whole (its maker published it with release). */
        struct lbomp__loop *l =
                atomic_load_explicit(&r->bucket[h % LBOMP__LOOP_BUCKETS], memory_order_acquire);
        while (l && !key_match(l, k, h))
                l = l->next;
        return l;
}

static struct lbomp__loops *registry(struct lbomp *lb)
{
        struct lbomp__loops *r = atomic_load_explicit(&lb->loops, memory_order_acquire);
        if (r)
                return r;
        struct lbomp__loops *mine = calloc(1, sizeof *mine);
        if (!mine)
                return NULL;
        pthread_mutex_init(&mine->lock, NULL);
        if (atomic_compare_exchange_strong_explicit(&lb->loops, &r, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
                return mine;
        pthread_mutex_destroy(&mine->lock); /* another thread made it first */
        free(mine);
        return r;
}

static void loop_free(struct lbomp__loop *l)
{
        if (!l)
                return;
        runtime_free(l->rt);
        lbomp__chunks_free(&l->ch);
        free(l);
}

static int loop_new(struct lbomp *lb, const struct lbomp__loop_key *k, uint64_t h,
                    struct lbomp__loop **out)
{
        struct lbomp__loop *l = calloc(1, sizeof *l);
        if (!l)
                return -ENOMEM;
        char site_name[96];
        if (!k->name)
                snprintf(site_name, sizeof site_name, "site %p [%lld, %lld)", k->site,
                         (long long)k->begin, (long long)k->end);
        int team = omp_get_level() > 0 ? omp_get_num_threads() : lb->ws.n;
        int rc = lbomp__chunks_init(&l->ch, k->name ? k->name : site_name, (uint32_t)team,
                                    tick_cost_s(&lb->clock));
        if (rc == 0)
                rc = runtime_new(lb, team, &l->rt);
        if (rc < 0) {
                loop_free(l);
                return rc;
        }
        l->rt->chunks = &l->ch;
        l->hash = h;
        l->by_site = !k->name;
        l->site = k->site;
        l->key_begin = k->begin;
        l->key_end = k->end;
        *out = l;
        return 0;
}

int lbomp__loop_find(struct lbomp *lb, const struct lbomp__loop_key *key, struct lbomp__loop **out)
{
        if (!lb || !key || !out || (!key->name && !key->site))
                return -EINVAL;
        struct lbomp__loops *r = registry(lb);
        if (!r)
                return -ENOMEM;
        uint64_t h = key_hash(key);
        struct lbomp__loop *l = lookup(r, key, h);
        if (l) {
                *out = l;
                return 0;
        }
        int rc = 0;
        pthread_mutex_lock(&r->lock);
        l = lookup(r, key, h);
        if (!l) {
                if (r->n == r->cap) {
                        size_t cap = r->cap ? 2 * r->cap : 8;
                        rc = LBOMP__GROW(r->all, cap);
                        if (rc == 0)
                                r->cap = cap;
                }
                if (rc == 0)
                        rc = loop_new(lb, key, h, &l);
                if (rc == 0) {
                        struct lbomp__loop *_Atomic *b = &r->bucket[h % LBOMP__LOOP_BUCKETS];
                        r->all[r->n++] = l;
                        l->next = atomic_load_explicit(b, memory_order_relaxed);
                        atomic_store_explicit(b, l, memory_order_release);
                }
        }
        pthread_mutex_unlock(&r->lock);
        if (rc == 0)
                *out = l;
        return rc;
}

bool lbomp__loops_busy(const struct lbomp *lb)
{
        struct lbomp__loops *r =
                atomic_load_explicit(&((struct lbomp *)lb)->loops, memory_order_acquire);
        for (size_t i = 0; r && i < r->n; i++)
                if (lbomp__team_busy(&r->all[i]->rt->team))
                        return true;
        return false;
}

void lbomp__loops_free(struct lbomp *lb)
{
        struct lbomp__loops *r = atomic_load(&lb->loops);
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++)
                loop_free(r->all[i]);
        free(r->all);
        pthread_mutex_destroy(&r->lock);
        free(r);
        atomic_store(&lb->loops, NULL);
}

const lbomp_t *lbomp_loop(const lbomp_t *lb, const char *name)
{
        if (!lb || !name)
                return NULL;
        struct lbomp__loops *r =
                atomic_load_explicit(&((struct lbomp *)lb)->loops, memory_order_acquire);
        if (!r)
                return NULL;
        struct lbomp__loop_key k = {.name = name};
        struct lbomp__loop *l = lookup(r, &k, key_hash(&k));
        return l ? l->rt : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * A run, on each thread of the team
 */

lbomp_for_t lbomp__loop_begin(struct lbomp__loop *l, int64_t begin, int64_t end)
{
        lbomp_for_t f = {.it = {.pos = -1}};
        struct lbomp *rt = l->rt;
        if (omp_get_level() == 0) {
                refuse(rt->root, -EPERM,
                       "lbomp: LBOMP_FOR(\"%s\") was called outside a parallel region: it runs "
                       "inside the program's `#pragma omp parallel`, by every thread of the team",
                       l->ch.name);
                return f;
        }
        int team = omp_get_num_threads(), self = omp_get_thread_num();
        if (team > LBOMP__MAX_WORKERS) {
                refuse(rt->root, -EINVAL,
                       "lbomp: LBOMP_FOR(\"%s\"): a team of %d threads entered it; lbomp runs at "
                       "most %d workers",
                       l->ch.name, team, LBOMP__MAX_WORKERS);
                return f;
        }
        lbomp__chunks_ask(&l->ch, (uint32_t)self, begin, end);
        f.it = lbomp_iter_begin(rt);
        if (!f.it.active) {
                publish(l);
                return f;
        }
        f.loop = l;
        f.active = 1;
        return f;
}

lbomp_for_t lbomp_for_begin(lbomp_t *lb, const char *name, int64_t begin, int64_t end)
{
        lbomp_for_t f = {.it = {.pos = -1}};
        if (!lb)
                return f;
        if (lb->root) {
                refuse(lb->root, -EPERM,
                       "lbomp: LBOMP_FOR(\"%s\") was given a loop's handle (lbomp_loop()); it "
                       "takes the runtime's",
                       name ? name : "(null)");
                return f;
        }
        if (!name || !*name) {
                refuse(lb, -EINVAL,
                       "lbomp: LBOMP_FOR: the loop's name is %s; every loop needs a name of its "
                       "own (it keys the loop's chunks and balance)",
                       name ? "empty" : "NULL");
                return f;
        }
        if (omp_get_level() == 0) {
                refuse(lb, -EPERM,
                       "lbomp: LBOMP_FOR(\"%s\") was called outside a parallel region: it runs "
                       "inside the program's `#pragma omp parallel`, by every thread of the team",
                       name);
                return f;
        }
        struct lbomp__loop_key key = {.name = name};
        struct lbomp__loop *l;
        int rc = lbomp__loop_find(lb, &key, &l);
        if (rc < 0) {
                refuse(lb, rc, "lbomp: LBOMP_FOR(\"%s\"): the loop could not be made: %s", name,
                       lbomp_strerror(rc));
                return f;
        }
        return lbomp__loop_begin(l, begin, end);
}

int lbomp_for_next(lbomp_for_t *f, int64_t *lo, int64_t *hi)
{
        const struct lbomp__chunk *c = lbomp_iter_next(&f->it);
        if (!c)
                return 0;
        *lo = c->lo;
        *hi = c->hi;
        return 1;
}

void lbomp_for_end(lbomp_for_t *f)
{
        if (!f->active)
                return;
        f->active = 0;
        /* A break out of the body's last chunk leaves no chunk undone for lbomp_iter_end to
         * count: the chunk it left counts, so that the run still reports -EINTR. */
        if (f->left && f->it.active)
                lbomp__barrier_add(&f->it.lb->team.bar, 1);
        lbomp_iter_end(&f->it);
        if (omp_get_thread_num() == 0) {
                struct lbomp__loop *l = f->loop;
                publish(l);
                /* The runtime's energy totals follow the run, whichever task set runs it. */
                lbomp__window_energy_tick(&l->rt->root->win);
        }
}

/* ---------------------------------------------------------------------------------------------
 * Time steps and the callback form's reduction
 */

int lbomp_time_step(lbomp_t *lb)
{
        if (!lb)
                return -EINVAL;
        lbomp__tsteps_mark(lb->ts);
        return 0;
}

enum { PAD = LBOMP__CACHELINE / sizeof(double) };

struct sum_arg {
        lbomp_task_sum_fn fn;
        void *arg;
        double *part; /* [threads * PAD]: one cache line per thread */
};

static void sum_task(void *data, lbomp_id_t id, void *arg)
{
        struct sum_arg *s = arg;
        s->part[(size_t)omp_get_thread_num() * PAD] += s->fn(data, id, s->arg);
}

int lbomp_step_sum(lbomp_t *lb, lbomp_task_sum_fn fn, void *arg, double *sum)
{
        if (!lb || !fn || !sum)
                return -EINVAL;
        *sum = 0;
        int n = lb->ws.n;
        struct sum_arg s = {.fn = fn, .arg = arg, .part = calloc((size_t)n * PAD, sizeof(double))};
        if (!s.part)
                return -ENOMEM;
        int rc = lbomp_step(lb, sum_task, &s);
        for (int t = 0; t < n; t++)
                *sum += s.part[(size_t)t * PAD];
        free(s.part);
        return rc;
}
