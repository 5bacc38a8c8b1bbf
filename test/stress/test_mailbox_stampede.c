/*
 * test_mailbox_stampede.c — the mailbox layer on real threads (plain pthreads, so that
 * ThreadSanitizer sees every synchronization; libgomp is not instrumented): every worker floods
 * random workers, itself included, with messages of random sizes for many rounds. Proves that no
 * message is lost, duplicated, corrupted or delivered out of (sender, sequence) order, that the
 * per-pair counts agree between senders and receivers, that a reused engine starts clean, and
 * that packdrop on real threads gives the plan of the virtual run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mailbox.h"
#include "synth.h"
#include "test.h"

#define P       8
#define ROUNDS  40
#define PER     48 /* messages per worker per round, at most */
#define MAXBODY 256

struct flood {
        uint64_t sent_to[P];  /* row of the sender: written by it only */
        uint64_t got_from[P]; /* row of the receiver: written by it only */
        uint64_t bytes_sent, bytes_got;
};
static struct flood res[P];

struct hdr {
        uint32_t from, round, k, len;
};

static uint8_t byte_at(const struct hdr *h, uint32_t i)
{
        return (uint8_t)(h->from * 29 + h->round * 7 + h->k * 3 + i);
}

static int flood_round(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state)
{
        (void)state;
        struct flood *f = &res[self];
        if (round == 0)
                memset(f, 0, sizeof *f);
        const struct lbomp__msg *m;
        size_t n = lbomp__dc_inbox(dc, self, &m);
        for (size_t i = 0; i < n; i++) {
                if (i && (m[i].from < m[i - 1].from ||
                          (m[i].from == m[i - 1].from && m[i].seq <= m[i - 1].seq)))
                        FAIL("worker %u round %u: message %zu out of order", self, round, i);
                const struct hdr *h = m[i].data;
                if (m[i].len < sizeof *h || h->len != m[i].len || h->from != m[i].from ||
                    h->round + 1 != round)
                        FAIL("worker %u round %u: bad header from %u", self, round, m[i].from);
                const uint8_t *b = (const uint8_t *)(h + 1);
                for (uint32_t j = 0; j < h->len - sizeof *h; j++)
                        if (b[j] != byte_at(h, j))
                                FAIL("worker %u: corrupt byte %u from %u", self, j, h->from);
                f->got_from[m[i].from]++;
                f->bytes_got += m[i].len;
        }
        if (round < ROUNDS) {
                struct lbomp__rng *r = lbomp__dc_rng(dc, self);
                uint32_t k = lbomp__rng_below(r, PER + 1);
                for (uint32_t j = 0; j < k; j++) {
                        union {
                                struct hdr h;
                                uint8_t raw[sizeof(struct hdr) + MAXBODY];
                        } u;
                        uint32_t to = lbomp__rng_below(r, P);
                        u.h = (struct hdr){.from = self, .round = round, .k = j};
                        u.h.len = (uint32_t)sizeof u.h + lbomp__rng_below(r, MAXBODY + 1);
                        for (uint32_t b = 0; b < u.h.len - sizeof u.h; b++)
                                u.raw[sizeof u.h + b] = byte_at(&u.h, b);
                        int rc = lbomp__dc_send(dc, self, to, j & 1, &u, u.h.len);
                        if (rc < 0)
                                return rc;
                        f->sent_to[to]++;
                        f->bytes_sent += u.h.len;
                }
        }
        return round >= ROUNDS ? LBOMP__ROUND_DONE : LBOMP__ROUND_BUSY;
}

static const char *const flood_kinds[] = {"even", "odd", NULL};
static const struct lbomp__policy flood_policy = {
        .name = "flood",
        .kind = LBOMP__DECENTRAL,
        .round = flood_round,
        .msg_kinds = flood_kinds,
};

struct thr {
        struct lbomp__dec *d;
        pthread_barrier_t *bar;
        uint32_t self;
        int rc;
};

static void barrier(void *arg)
{
        pthread_barrier_wait(arg);
}

static void *thread_main(void *arg)
{
        struct thr *t = arg;
        t->rc = lbomp__dec_run_threads(t->d, t->self, barrier, t->bar);
        return NULL;
}

/* Runs the prepared engine on P pthreads; every thread must return the same code. */
static int run_threads(struct lbomp__dec *d)
{
        pthread_barrier_t bar;
        pthread_t th[P];
        struct thr t[P];
        ASSERT_EQ(pthread_barrier_init(&bar, NULL, P), 0);
        for (uint32_t i = 0; i < P; i++) {
                t[i] = (struct thr){.d = d, .bar = &bar, .self = i};
                ASSERT_EQ(pthread_create(&th[i], NULL, thread_main, &t[i]), 0);
        }
        for (uint32_t i = 0; i < P; i++)
                pthread_join(th[i], NULL);
        for (uint32_t i = 1; i < P; i++)
                ASSERT_EQ(t[i].rc, t[0].rc);
        pthread_barrier_destroy(&bar);
        return t[0].rc;
}

static void test_flood(void)
{
        struct synth y;
        ASSERT_EQ(synth_make(&y, 64, P, 1, SYNTH_UNIFORM, 0, 3), 0);
        uint32_t dest[64];
        struct lbomp__dec *d = lbomp__dec_create(P);
        ASSERT(d != NULL);
        for (int rep = 0; rep < 4; rep++) { /* the same engine, reused */
                y.s.seed = 1000 + (uint64_t)rep;
                ASSERT_EQ(lbomp__dec_prepare(d, &flood_policy, &y.s, dest), 0);
                ASSERT_EQ(run_threads(d), 0);
                struct lbomp__pstats st = {0};
                lbomp__dec_stats(d, &st);
                uint64_t sent = 0, got = 0, bs = 0, bg = 0;
                for (uint32_t a = 0; a < P; a++) {
                        for (uint32_t b = 0; b < P; b++) {
                                if (res[a].sent_to[b] != res[b].got_from[a])
                                        FAIL("rep %d: %u sent %llu to %u, which got %llu", rep, a,
                                             (unsigned long long)res[a].sent_to[b], b,
                                             (unsigned long long)res[b].got_from[a]);
                                sent += res[a].sent_to[b];
                                got += res[b].got_from[a];
                        }
                        bs += res[a].bytes_sent;
                        bg += res[a].bytes_got;
                }
                ASSERT_EQ(sent, got);
                ASSERT_EQ(bs, bg);
                ASSERT_EQ(st.messages, sent);
                ASSERT_EQ(st.msg_by_kind[0] + st.msg_by_kind[1], sent);
                ASSERT_GT(sent, (uint64_t)P * ROUNDS * PER / 4);
                printf("flood rep %d: %llu messages, %llu bytes, %u rounds, exactly once\n", rep,
                       (unsigned long long)sent, (unsigned long long)bs, st.rounds);
        }
        lbomp__dec_destroy(d);
        synth_free(&y);
}

static void test_packdrop_threads(void)
{
        const struct lbomp__policy *pd = lbomp__policy_find("packdrop");
        ASSERT(pd != NULL);
        struct synth y;
        ASSERT_EQ(synth_make(&y, 20000, P, 2, SYNTH_HOTSPOT, 3, 8), 0);
        uint32_t *v = calloc(20000, sizeof *v), *q = calloc(20000, sizeof *q);
        struct lbomp__pstats sv = {0}, sq = {0};
        ASSERT_EQ(lbomp__policy_run_offline(pd, &y.s, v, &sv), 0);
        ASSERT_GT(synth_moves(&y, v), 0);
        struct lbomp__dec *d = lbomp__dec_create(P);
        for (int rep = 0; rep < 3; rep++) {
                ASSERT_EQ(lbomp__dec_prepare(d, pd, &y.s, q), 0);
                ASSERT_EQ(run_threads(d), 0);
                lbomp__dec_stats(d, &sq);
                ASSERT(memcmp(q, v, 20000 * sizeof *q) == 0);
                ASSERT_EQ(sq.messages, sv.messages);
        }
        printf("packdrop on %u threads: %u moves, %llu messages, the virtual plan\n", P,
               synth_moves(&y, q), (unsigned long long)sq.messages);
        lbomp__dec_destroy(d);
        free(v);
        free(q);
        synth_free(&y);
}

int main(void)
{
        test_flood();
        test_packdrop_threads();
        printf("ok\n");
        return 0;
}
