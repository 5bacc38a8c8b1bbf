/*
 * preload.c — the part of liblbomp-preload.so that is not an entry point: OMP_SCHEDULE read once
 * before main (and hidden from the OpenMP runtime, which would reject `lbomp`), the one lbomp
 * runtime of the process, the table of the program's loops (call site and range → a persistent
 * chunked loop of loop.h, or a standing decision to leave it to the real runtime), each thread's
 * open run, the fallback messages, and the report at exit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "preload.h"

int lbp__on;
static lbomp_t *lb;
static bool cancellation;
static char policy[64];
/* Set once the constructor has run: from then on OMP_SCHEDULE is the program's to read. */
static _Atomic int env_settled;

extern char **environ;

/* ---------------------------------------------------------------------------------------------
 * The environment
 */

static const char *env(const char *name)
{
        size_t len = strlen(name);
        for (char **e = environ; e && *e; e++)
                if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
                        return *e + len + 1;
        return NULL;
}

/* OMP_SCHEDULE=lbomp or lbomp,<policy> (the kind in any case, like the runtimes' own kinds). */
static bool is_lbomp(const char *v, char *pol, size_t cap)
{
        if (!v || strncasecmp(v, "lbomp", 5) != 0 || (v[5] && v[5] != ','))
                return false;
        if (pol) {
                pol[0] = 0;
                if (v[5] == ',')
                        snprintf(pol, cap, "%s", v + 6);
        }
        return true;
}

/* libgomp reads OMP_SCHEDULE in its own constructor, which runs before this library's, and warns
 * about a kind it does not know; until this library's constructor has run, `lbomp` is not there
 * for it. Every other name, and OMP_SCHEDULE afterwards, reads as in the C library. */
char *getenv(const char *name)
{
        const char *v = env(name);
        if (v && !atomic_load_explicit(&env_settled, memory_order_acquire) &&
            strcmp(name, "OMP_SCHEDULE") == 0 && is_lbomp(v, NULL, 0))
                return NULL;
        return (char *)v;
}

void *lbp__real(void **slot, const char *name)
{
        void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (f)
                return f;
        f = dlsym(RTLD_NEXT, name);
        if (!f) {
                fprintf(stderr,
                        "lbomp-preload: the program called %s, which its OpenMP runtime does not "
                        "have\n",
                        name);
                abort();
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
        return f;
}

/* ---------------------------------------------------------------------------------------------
 * What was left to the real runtime, and why: one line per call site and reason
 */

enum { MAX_TOLD = 1024 };
static pthread_mutex_t told_lock = PTHREAD_MUTEX_INITIALIZER;
static struct told {
        const void *site;
        const char *entry;
        char why[200];
        uint64_t runs; /* runs left to the runtime (counted by thread 0 of each team) */
} told[MAX_TOLD];
static size_t ntold;

static void site_name(const void *site, const void *loc, char *buf, size_t cap);

/* One line per call site and reason (the same text), counted in runs by thread 0 of each team. */
static void lbp_refuse_f(const void *site, const char *entry, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void lbp_refuse_f(const void *site, const char *entry, const char *fmt, ...)
{
        char why[sizeof told[0].why];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        bool count = omp_get_thread_num() == 0;
        pthread_mutex_lock(&told_lock);
        size_t i = 0;
        while (i < ntold && (told[i].site != site || strcmp(told[i].why, why) != 0))
                i++;
        if (i == ntold && ntold < MAX_TOLD) {
                struct told *t = &told[ntold++];
                t->site = site;
                t->entry = entry;
                memcpy(t->why, why, sizeof why);
                char where[160];
                site_name(site, NULL, where, sizeof where);
                fprintf(stderr,
                        "lbomp-preload: the loop at %s (%s) %s: the OpenMP runtime runs it\n",
                        where, entry, why);
        }
        if (i < ntold && count)
                told[i].runs++;
        pthread_mutex_unlock(&told_lock);
}

void lbp__refuse(const void *site, const char *entry, const char *why)
{
        lbp_refuse_f(site, entry, "%s", why);
}

/* ---------------------------------------------------------------------------------------------
 * The loops: call site and range → lbomp's loop, or the runtime's
 */

enum {
        BUCKETS = 1024,
        MAX_LOOPS = 4096, /* entries of the table (loops and standing refusals) */
        MAX_PER_SITE = 8, /* ranges balanced per call site; more run on the runtime */
};

struct entry {
        struct entry *next; /* in its bucket, set before it is published */
        const void *site;
        enum lbp_type type;
        uint64_t start, end, incr;
        struct lbomp__loop *loop; /* NULL: the runtime runs it (why) */
        const char *why;
        const char *entry;
        const void *loc;
        int team;              /* threads of the team that made it */
        _Atomic uint64_t runs; /* runs lbomp ran (thread 0 counts) */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *_Atomic bucket[BUCKETS];
static struct entry *all[MAX_LOOPS];
static size_t nall;

static uint64_t hash(const void *site, const struct lbp_range *r)
{
        uint64_t v[5] = {(uint64_t)(uintptr_t)site, r->start, r->end, r->incr, (uint64_t)r->type};
        uint64_t h = 0x9e3779b97f4a7c15ull;
        for (int i = 0; i < 5; i++) {
                h ^= v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
                h *= 0xbf58476d1ce4e5b9ull;
        }
        return h;
}

static struct entry *find(const void *site, const struct lbp_range *r, uint64_t h)
{
        /* Acquire: pairs with the release that published the entry whole. */
        struct entry *e = atomic_load_explicit(&bucket[h % BUCKETS], memory_order_acquire);
        while (e && !(e->site == site && e->start == r->start && e->end == r->end &&
                      e->incr == r->incr && e->type == r->type))
                e = e->next;
        return e;
}

/* The entry of (site, range), made on first use. An entry never changes its decision, so every
 * thread of every team sees the same one. NULL when the table is full (and stays full). */
static struct entry *entry_get(const void *site, const struct lbp_range *r)
{
        uint64_t h = hash(site, r);
        struct entry *e = find(site, r, h);
        if (e)
                return e;
        pthread_mutex_lock(&table_lock);
        e = find(site, r, h);
        if (!e && nall < MAX_LOOPS && (e = calloc(1, sizeof *e))) {
                e->site = site;
                e->type = r->type;
                e->start = r->start;
                e->end = r->end;
                e->incr = r->incr;
                e->entry = r->entry;
                e->loc = r->loc;
                e->team = omp_get_num_threads();
                size_t same = 0;
                for (size_t i = 0; i < nall; i++)
                        same += all[i]->site == site && all[i]->loop;
                if (same >= MAX_PER_SITE) {
                        e->why = "has run over more than 8 ranges (lbomp keeps one loop per "
                                 "call site and range): this range and later new ones";
                } else {
                        struct lbomp__loop_key key = {
                                .site = site, .begin = (int64_t)r->start, .end = (int64_t)r->end};
                        if (lbomp__loop_find(lb, &key, &e->loop) < 0) {
                                e->loop = NULL;
                                e->why = "could not be made (out of memory)";
                        }
                }
                all[nall++] = e;
                struct entry *_Atomic *b = &bucket[h % BUCKETS];
                e->next = atomic_load_explicit(b, memory_order_relaxed);
                atomic_store_explicit(b, e, memory_order_release);
        }
        pthread_mutex_unlock(&table_lock);
        return e;
}

/* ---------------------------------------------------------------------------------------------
 * Each thread's run
 */

struct run {
        bool open;
        bool tail;      /* thread 0 still has the last iteration to run */
        bool tail_done; /* ... and has handed it out */
        lbomp_for_t it;
        struct lbp_range r;
        struct lbp_pending *pending;
};
static __thread struct run T __attribute__((tls_model("initial-exec")));

struct lbp_pending *lbp__take_pending(void)
{
        struct lbp_pending *p = T.pending;
        if (p && omp_get_level() == 1) {
                T.pending = NULL;
                return p;
        }
        return NULL;
}

void lbp__set_pending(struct lbp_pending *p)
{
        T.pending = p;
}

bool lbp__begin(const void *site, const struct lbp_range *r)
{
        int level = omp_get_level();
        if (level != 1) {
                lbp_refuse_f(site, r->entry,
                             level == 0 ? "is outside a parallel region (one thread, nothing to "
                                          "balance)"
                                        : "is in a nested team (lbomp balances the outermost "
                                          "team's loops)");
                return false;
        }
        if (cancellation) {
                lbp_refuse_f(site, r->entry, "may be cancelled (OMP_CANCELLATION=true)");
                return false;
        }
        if (r->count == -2) {
                lbp_refuse_f(site, r->entry, "has a zero increment");
                return false;
        }
        if (r->count == -1) {
                lbp_refuse_f(site, r->entry, "has more iterations than fit in 63 bits");
                return false;
        }
        /* Nothing to balance in an empty or one-iteration loop. */
        if (r->count < 2)
                return false;
        struct entry *e = entry_get(site, r);
        if (!e) {
                lbp_refuse_f(site, r->entry, "is one loop too many (lbomp keeps %d)", MAX_LOOPS);
                return false;
        }
        if (!e->loop) {
                lbp_refuse_f(site, r->entry, "%s", e->why);
                return false;
        }
        int team = omp_get_num_threads();
        if (team != e->team) {
                lbp_refuse_f(site, r->entry,
                             "ran with a team of %d threads where its first run had %d: such runs",
                             team, e->team);
                return false;
        }
        /* lbomp balances iterations 0..count-2; the last one runs on thread 0 after all its
         * chunks, so that the thread that runs the last iteration runs nothing after it, as
         * lastprivate needs (gcc tests the loop variable after the thread's last chunk, clang
         * the flag of the chunk). A thief may take any chunk, so lbomp's own last chunk cannot
         * promise that. */
        T.it = lbomp__loop_begin(e->loop, 0, r->count - 1);
        if (!T.it.active)
                return false; /* lbomp said why, the same on every thread */
        T.open = true;
        T.r = *r;
        T.tail = omp_get_thread_num() == 0;
        T.tail_done = false;
        if (T.tail)
                atomic_fetch_add_explicit(&e->runs, 1, memory_order_relaxed);
        return true;
}

bool lbp__next(int64_t *lo, int64_t *hi)
{
        if (lbomp_for_next(&T.it, lo, hi))
                return true;
        if (T.tail && !T.tail_done) {
                T.tail_done = true;
                *lo = T.r.count - 1;
                *hi = T.r.count;
                return true;
        }
        return false;
}

bool lbp__open(void)
{
        return T.open && omp_get_level() == 1;
}

const struct lbp_range *lbp__range(void)
{
        return &T.r;
}

void lbp__end(void)
{
        T.open = false;
        /* A thread that stops asking before its chunks are done (a cancelled loop: refused up
         * front) would leave chunks; lbomp then reports it and no index runs twice. */
        lbomp_for_end(&T.it);
}

/* ---------------------------------------------------------------------------------------------
 * Names of call sites, and the report
 */

static void site_name(const void *site, const void *loc, char *buf, size_t cap)
{
        /* kmpc: clang's ident_t holds ";file;function;line;column;;" when it knows them. */
        const char *src = loc ? *(const char *const *)((const char *)loc + 16) : NULL;
        if (src && !strstr(src, "unknown")) {
                snprintf(buf, cap, "%s", src[0] == ';' ? src + 1 : src);
                for (char *p = buf; *p; p++)
                        if (*p == ';')
                                *p = p[1] == ';' || !p[1] ? 0 : ':';
                return;
        }
        Dl_info di;
        if (dladdr(site, &di) && di.dli_fname) {
                const char *base = strrchr(di.dli_fname, '/');
                base = base ? base + 1 : di.dli_fname;
                if (di.dli_sname && di.dli_saddr)
                        snprintf(buf, cap, "%s:%s+0x%lx", base[0] ? base : "?", di.dli_sname,
                                 (unsigned long)((const char *)site - (const char *)di.dli_saddr));
                else
                        snprintf(buf, cap, "%s+0x%lx", base[0] ? base : "?",
                                 (unsigned long)((const char *)site - (const char *)di.dli_fbase));
                return;
        }
        snprintf(buf, cap, "%p", site);
}

static void range_text(const struct entry *e, char *buf, size_t cap)
{
        bool sgn = e->type == LBP_LONG || e->type == LBP_I32 || e->type == LBP_I64;
        bool kmpc = e->type != LBP_LONG && e->type != LBP_ULL;
        long long step = (long long)e->incr;
        if (e->type == LBP_I32 || e->type == LBP_U32)
                step = (int32_t)e->incr;
        if (sgn)
                snprintf(buf, cap, "%s%lld, %lld%s step %lld", "[", (long long)e->start,
                         (long long)e->end, kmpc ? "]" : ")", step);
        else
                snprintf(buf, cap, "[%llu, %llu%s step %lld", (unsigned long long)e->start,
                         (unsigned long long)e->end, kmpc ? "]" : ")", step);
}

static void report(FILE *out)
{
        size_t nloops = 0;
        for (size_t i = 0; i < nall; i++)
                nloops += all[i]->loop != NULL;
        fprintf(out,
                "lbomp-preload: OMP_SCHEDULE=lbomp%s%s, policy %s, %d threads; %zu loop(s) "
                "balanced by lbomp, %zu left to the OpenMP runtime\n",
                policy[0] ? "," : "", policy, lbomp_get_policy(lb), lbomp_get_workers(lb), nloops,
                ntold);
        fprintf(out, "%-44s %-30s %8s %7s %7s %10s %10s %10s %8s\n", "call site", "range", "runs",
                "chunks", "LBsteps", "λ first", "λ last", "migrations", "stolen");
        for (size_t i = 0; i < nall; i++) {
                const struct entry *e = all[i];
                if (!e->loop)
                        continue;
                char where[160], rng[96];
                site_name(e->site, e->loc, where, sizeof where);
                range_text(e, rng, sizeof rng);
                const lbomp_t *h = e->loop->rt;
                size_t nw = lbomp_window_count(h), nl = lbomp_lb_count(h);
                lbomp_window_stats_t w0 = {0}, w1 = {0};
                if (nw) {
                        lbomp_window_get(h, 0, &w0, sizeof w0);
                        lbomp_window_get(h, nw - 1, &w1, sizeof w1);
                }
                /* Chunks run by another thread than their owner, over the loop's complete
                 * windows (a last, partial one is not counted): each took its iterations' data
                 * to the thief's core. */
                uint64_t stolen = 0;
                for (size_t k = 0; k < nw; k++) {
                        lbomp_window_stats_t w;
                        if (lbomp_window_get(h, k, &w, sizeof w) == 0)
                                stolen += w.stolen;
                }
                uint64_t mig = 0;
                for (size_t k = 0; k < nl; k++) {
                        lbomp_lb_stats_t s;
                        if (lbomp_lb_get(h, k, &s, sizeof s) == 0)
                                mig += s.migrations;
                }
                fprintf(out, "%-44s %-30s %8llu %7u %7zu %9.3f %9.3f %10llu %8llu\n", where, rng,
                        (unsigned long long)atomic_load(&e->runs), e->loop->ch.n, nl,
                        nw ? w0.imbalance : 0.0, nw ? w1.imbalance : 0.0, (unsigned long long)mig,
                        (unsigned long long)stolen);
        }
        for (size_t i = 0; i < ntold; i++) {
                char where[160];
                site_name(told[i].site, NULL, where, sizeof where);
                fprintf(out, "%-44s runtime (%s): %s; %llu run(s)\n", where, told[i].entry,
                        told[i].why, (unsigned long long)told[i].runs);
        }
}

/* ---------------------------------------------------------------------------------------------
 * Load and exit
 */

__attribute__((constructor)) static void lbp_init(void)
{
        const char *v = env("OMP_SCHEDULE");
        if (!is_lbomp(v, policy, sizeof policy) || !dlsym(RTLD_DEFAULT, "omp_get_max_threads")) {
                atomic_store(&env_settled, 1);
                return; /* not ours, or not an OpenMP program: every call forwards */
        }
        /* LLVM's libomp reads the environment when it first initialises, on the first OpenMP
         * call: make that call now, with OMP_SCHEDULE out of its sight (it would warn about
         * `lbomp`), then give the variable back (children inherit it). libgomp has read it
         * already, through getenv() above. */
        if (dlsym(RTLD_DEFAULT, "__kmpc_global_thread_num")) {
                char *saved = strdup(v);
                unsetenv("OMP_SCHEDULE");
                (void)omp_get_max_threads();
                if (saved)
                        setenv("OMP_SCHEDULE", saved, 1);
                free(saved);
        }
        atomic_store_explicit(&env_settled, 1, memory_order_release);
        cancellation = omp_get_cancellation() != 0;
        int rc = lbomp_create(&lb);
        if (rc == 0 && policy[0])
                rc = lbomp_set_policy(lb, policy);
        /* A worksharing loop is reached by every thread of its team, however late: wait for
         * them (a thread may come seconds later after a `nowait` or a long `single`). */
        if (rc == 0 && !env("LBOMP_STEP_TIMEOUT"))
                rc = lbomp_set_step_timeout(lb, 0);
        if (rc < 0) {
                fprintf(stderr,
                        "lbomp-preload: OMP_SCHEDULE='%s': lbomp could not start (%s); every loop "
                        "runs on the OpenMP runtime\n",
                        v, lbomp_last_error()[0] ? lbomp_last_error() : lbomp_strerror(rc));
                lbomp_destroy(lb);
                lb = NULL;
                return;
        }
        lbp__on = 1;
}

__attribute__((destructor)) static void lbp_fini(void)
{
        if (!lbp__on)
                return;
        const char *verbose = env("LBOMP_VERBOSE"), *path = env("LBOMP_PRELOAD_REPORT");
        pthread_mutex_lock(&table_lock);
        pthread_mutex_lock(&told_lock);
        if (verbose && strcmp(verbose, "0") != 0)
                report(stderr);
        if (path && *path) {
                FILE *f = fopen(path, "w");
                if (f) {
                        report(f);
                        fclose(f);
                } else {
                        fprintf(stderr, "lbomp-preload: LBOMP_PRELOAD_REPORT='%s': %s\n", path,
                                strerror(errno));
                }
        }
        pthread_mutex_unlock(&told_lock);
        pthread_mutex_unlock(&table_lock);
        /* The runtime is not destroyed: a thread of the program may still be inside a loop when
         * the process exits, and the memory goes with the process. */
}
