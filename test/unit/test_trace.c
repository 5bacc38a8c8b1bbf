/*
 * test_trace.c — proves the LB trace format: every field of a snapshot and its plan comes back
 * bit for bit (extreme values included), a million-task-like record is compact, every prefix of a
 * file that does not end on a record boundary is refused as truncated, every single changed byte
 * is refused as corrupt, and records that pass their checksum but hold out-of-range indices are
 * refused too. Every refusal names the file and, past the file header, the record.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "test.h"
#include "trace.h"

static char dir[] = "/tmp/lbomp-test-trace-XXXXXX";
static char path[256];

static void meta_for(struct lbomp__trace_meta *m, const char *policy, uint64_t step)
{
        static int32_t wcore[4096];
        for (int i = 0; i < 4096; i++)
                wcore[i] = 3 * i;
        *m = (struct lbomp__trace_meta){.policy = policy,
                                        .topo_name = "sgi-uv2000-24n.xml",
                                        .ncores = 192,
                                        .wcore = wcore,
                                        .step = step,
                                        .error = -95,
                                        .decision_s = 1.25e-3,
                                        .messages = 123456789012ull,
                                        .rounds = 17};
}

/* A snapshot whose columns need every encoding: constants, small deltas, wrapping deltas, raw. */
static void make(struct synth *y, uint32_t T, uint32_t P, uint32_t nodes, uint32_t k, uint64_t seed)
{
        ASSERT_EQ(synth_make(y, T, P, nodes, SYNTH_LBTEST, k, seed), 0);
        struct lbomp__rng r;
        lbomp__rng_seed(&r, seed + 7);
        for (uint32_t t = 0; t < T; t++) {
                y->bytes[t] = t % 5 == 0 ? UINT64_MAX - t : (t % 5 == 1 ? 0 : 4096 + t);
                y->home[t] = (int32_t)(t % (nodes + 1)) - 1; /* -1 .. nodes-1 */
                y->id[t] = t % 3 == 0 ? UINT32_MAX - t : t * 7u;
                y->dest[t] = lbomp__rng_below(&r, P);
        }
        if (T > 2) {
                y->cost[0] = 0.0;
                y->cost[1] = 4.9e-324; /* denormal */
                y->cost[2] = 1e300;
        }
        for (uint32_t w = 0; w < P; w++)
                y->bg[w] = w * 1e-4;
        double speeds[] = {1.0, 0.535, 2.0, 0.25};
        synth_speeds(y, speeds, 4);
        for (uint32_t e = 0; e < (T ? y->link_off[T] : 0); e++)
                y->link_bytes[e] = e % 2 ? 1000.5 : 3.0;
        y->s.seed = seed * 0x9e3779b97f4a7c15ull;
        y->s.lb_step = seed;
}

static void expect_same(const struct lbomp__trace_step *st, const struct synth *y,
                        const char *policy, uint64_t step)
{
        const struct lbomp__snap *a = &st->snap, *b = &y->s;
        uint32_t T = b->ntasks, P = b->nworkers, N = b->nnodes;
        ASSERT_EQ(a->ntasks, T);
        ASSERT_EQ(a->nworkers, P);
        ASSERT_EQ(a->nnodes, N);
        ASSERT_EQ(a->seed, b->seed);
        ASSERT_EQ(a->lb_step, b->lb_step);
        ASSERT_EQ(st->step, step);
        ASSERT(strcmp(st->policy, policy) == 0);
        ASSERT(strcmp(st->topo_name, "sgi-uv2000-24n.xml") == 0);
        ASSERT_EQ(st->ncores, 192);
        ASSERT_EQ(st->error, -95);
        ASSERT_EQ(st->messages, 123456789012ull);
        ASSERT_EQ(st->rounds, 17);
        ASSERT_DEQ(st->decision_s, 1.25e-3);
        ASSERT_DEQ(a->params->tolerance, b->params->tolerance);
        ASSERT_DEQ(a->params->refine_factor, b->params->refine_factor);
        ASSERT_EQ(a->params->fanout, b->params->fanout);
        ASSERT_EQ(a->params->retries, b->params->retries);
        ASSERT(memcmp(a->dist, b->dist, (size_t)N * N * sizeof *a->dist) == 0);
        ASSERT(memcmp(a->bg, b->bg, P * sizeof *a->bg) == 0);
        ASSERT(memcmp(a->speed, b->speed, P * sizeof *a->speed) == 0); /* version 2 */
        ASSERT_DEQ(a->speed_sum, b->speed_sum);
        ASSERT(memcmp(a->wnode, b->wnode, P * sizeof *a->wnode) == 0);
        for (uint32_t w = 0; w < P; w++)
                ASSERT_EQ(st->wcore[w], 3 * (int)w);
        ASSERT(memcmp(a->wtask_off, b->wtask_off, (P + 1) * sizeof *a->wtask_off) == 0);
        if (T) {
                ASSERT(memcmp(a->cost, b->cost, T * sizeof *a->cost) == 0);
                ASSERT(memcmp(a->worker, b->worker, T * sizeof *a->worker) == 0);
                ASSERT(memcmp(a->bytes, b->bytes, T * sizeof *a->bytes) == 0);
                ASSERT(memcmp(a->home, b->home, T * sizeof *a->home) == 0);
                ASSERT(memcmp(a->id, b->id, T * sizeof *a->id) == 0);
                ASSERT(memcmp(a->wtask, b->wtask, T * sizeof *a->wtask) == 0);
                ASSERT(memcmp(st->plan, y->dest, T * sizeof *st->plan) == 0);
                ASSERT(memcmp(a->link_off, b->link_off, (T + 1) * sizeof *a->link_off) == 0);
                uint32_t L = b->link_off[T];
                ASSERT(memcmp(a->link_dst, b->link_dst, L * sizeof *a->link_dst) == 0);
                ASSERT(memcmp(a->link_bytes, b->link_bytes, L * sizeof *a->link_bytes) == 0);
        }
}

static long file_size(const char *p)
{
        FILE *f = fopen(p, "rb");
        ASSERT(f);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fclose(f);
        return n;
}

static unsigned char *slurp(const char *p, long *n)
{
        *n = file_size(p);
        unsigned char *b = malloc((size_t)*n + 1);
        FILE *f = fopen(p, "rb");
        ASSERT(b && f && fread(b, 1, (size_t)*n, f) == (size_t)*n);
        fclose(f);
        return b;
}

static void spit(const char *p, const unsigned char *b, long n)
{
        FILE *f = fopen(p, "wb");
        ASSERT(f && fwrite(b, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
}

/* Reads a whole file: the number of records, or -1 with the message in err. */
static long read_all(const char *p, char *err, size_t len)
{
        struct lbomp__trace_reader *r;
        err[0] = 0;
        if (lbomp__trace_open(&r, p, err, len) < 0)
                return -1;
        struct lbomp__trace_step st;
        long n = 0;
        int rc;
        while ((rc = lbomp__trace_next(r, &st, err, len)) == 1)
                n++;
        lbomp__trace_free(r);
        return rc < 0 ? -1 : n;
}

static void write_file(const char *p, struct synth *ys, int n, uint64_t *ends)
{
        struct lbomp__trace_writer *w;
        char err[400];
        ASSERT_EQ(lbomp__trace_create(&w, p, err, sizeof err), 0);
        for (int i = 0; i < n; i++) {
                struct lbomp__trace_meta m;
                meta_for(&m, i % 2 ? "refine" : "greedy", 10u * (unsigned)i + 9);
                if (ys[i].s.ntasks == 1) /* a record without links */
                        ys[i].s.link_off = ys[i].s.link_dst = NULL, ys[i].s.link_bytes = NULL;
                ASSERT_EQ(lbomp__trace_write(w, &m, &ys[i].s, ys[i].dest, err, sizeof err), 0);
                if (ends)
                        ends[i] = (uint64_t)file_size(p);
        }
        ASSERT_EQ(lbomp__trace_records(w), (uint64_t)n);
        ASSERT_EQ(lbomp__trace_close(w), 0);
}

static void test_crc(void)
{
        ASSERT_EQ(lbomp__crc32(0, "123456789", 9), 0xcbf43926u);
        /* continuing a CRC over pieces gives the CRC of the whole */
        ASSERT_EQ(lbomp__crc32(lbomp__crc32(0, "12345", 5), "6789", 4), 0xcbf43926u);
}

static void test_round_trip(void)
{
        struct synth y[4];
        make(&y[0], 1000, 8, 2, 2, 1);
        make(&y[1], 257, 64, 24, 3, 2);
        make(&y[2], 1, 1, 1, 0, 3);
        make(&y[3], 0, 3, 1, 0, 4); /* an LB step with no task at all */
        write_file(path, y, 4, NULL);
        struct lbomp__trace_reader *r;
        char err[600];
        ASSERT_EQ(lbomp__trace_open(&r, path, err, sizeof err), 0);
        struct lbomp__trace_step st;
        for (int i = 0; i < 4; i++) {
                int rc = lbomp__trace_next(r, &st, err, sizeof err);
                if (rc != 1)
                        FAIL("record %d: rc %d: %s", i, rc, err);
                ASSERT_EQ(st.index, (uint64_t)i);
                if (y[i].s.ntasks == 1) { /* no links written: the reader gives empty lists */
                        ASSERT_EQ(st.snap.link_off[0], 0);
                        ASSERT_EQ(st.snap.link_off[1], 0);
                        y[i].s.link_off = y[i].link_off;
                        y[i].link_off[1] = 0;
                }
                expect_same(&st, &y[i], i % 2 ? "refine" : "greedy", 10u * (unsigned)i + 9);
        }
        ASSERT_EQ(lbomp__trace_next(r, &st, err, sizeof err), 0);
        ASSERT_EQ(lbomp__trace_next(r, &st, err, sizeof err), 0);
        lbomp__trace_free(r);
        for (int i = 0; i < 4; i++)
                synth_free(&y[i]);
}

/* 200k tasks with ring:3 links: raw columns would take ~108 bytes per task. */
static void test_compact(void)
{
        struct synth y;
        uint32_t T = 200000, P = 192;
        ASSERT_EQ(synth_make(&y, T, P, 24, SYNTH_LBTEST, 3, 5), 0);
        for (uint32_t t = 0; t < T; t++)
                y.dest[t] = (t * 7919u) % P; /* a plan that moves nearly every task */
        write_file(path, &y, 1, NULL);
        double per_task = (double)file_size(path) / T;
        fprintf(stderr, "compact: %.1f bytes per task (200k tasks, 6 link ends each)\n", per_task);
        ASSERT_DLE(per_task, 24.0);
        char err[600];
        ASSERT_EQ(read_all(path, err, sizeof err), 1);
        synth_free(&y);
}

static void test_truncated(void)
{
        struct synth y[2];
        make(&y[0], 40, 4, 2, 1, 11);
        make(&y[1], 30, 4, 2, 2, 12);
        uint64_t ends[2];
        write_file(path, y, 2, ends);
        long n;
        unsigned char *all = slurp(path, &n);
        char cut[300], err[600];
        snprintf(cut, sizeof cut, "%s/cut.trc", dir);
        long refused = 0;
        for (long len = 0; len < n; len++) {
                spit(cut, all, len);
                long got = read_all(cut, err, sizeof err);
                if (len == 32 || len == (long)ends[0]) { /* whole records: a shorter trace */
                        ASSERT_EQ(got, len == 32 ? 0 : 1);
                        continue;
                }
                if (got != -1)
                        FAIL("a %ld-byte prefix of a %ld-byte trace read as %ld records", len, n,
                             got);
                ASSERT_STR_CONTAINS(err, cut);
                ASSERT_STR_CONTAINS(err, "truncated");
                if (len > 32)
                        ASSERT_STR_CONTAINS(err, len < (long)ends[0] ? "record 0 at byte 32"
                                                                     : "record 1 at byte");
                refused++;
        }
        ASSERT_EQ(refused, n - 2);
        fprintf(stderr, "truncated: all %ld cut points refused, e.g. %s\n", refused, err);
        free(all);
        synth_free(&y[0]);
        synth_free(&y[1]);
}

static void test_corrupt(void)
{
        struct synth y[2];
        make(&y[0], 20, 4, 2, 1, 21);
        make(&y[1], 25, 4, 2, 2, 22);
        uint64_t ends[2];
        write_file(path, y, 2, ends);
        long n;
        unsigned char *all = slurp(path, &n);
        char bad[300], err[600];
        snprintf(bad, sizeof bad, "%s/bad.trc", dir);
        for (long pos = 0; pos < n; pos++) {
                for (int flip = 0; flip < 2; flip++) {
                        unsigned char keep = all[pos];
                        all[pos] ^= flip ? 0xff : 0x10;
                        spit(bad, all, n);
                        all[pos] = keep;
                        long got = read_all(bad, err, sizeof err);
                        if (got != -1)
                                FAIL("byte %ld changed (^0x%x), yet the trace read as %ld "
                                     "records",
                                     pos, flip ? 0xff : 0x10, got);
                        ASSERT_STR_CONTAINS(err, bad);
                        if (!strstr(err, "corrupt") && !strstr(err, "not an lbomp trace"))
                                FAIL("byte %ld: unexpected message: %s", pos, err);
                        if (pos >= (long)ends[0])
                                ASSERT_STR_CONTAINS(err, "record 1");
                }
        }
        fprintf(stderr, "corrupt: all %ld changed bytes refused, e.g. %s\n", 2 * n, err);

        /* A header that is intact but from another version or byte order. */
        unsigned char h[32];
        memcpy(h, all, 32);
        uint32_t v = 3, crc;
        memcpy(h + 8, &v, 4);
        crc = lbomp__crc32(0, h, 28);
        memcpy(h + 28, &crc, 4);
        spit(bad, h, 32);
        ASSERT_EQ(read_all(bad, err, sizeof err), -1);
        ASSERT_STR_CONTAINS(err, "version 3");
        v = 0;
        memcpy(h + 8, &v, 4);
        crc = lbomp__crc32(0, h, 28);
        memcpy(h + 28, &crc, 4);
        spit(bad, h, 32);
        ASSERT_EQ(read_all(bad, err, sizeof err), -1);
        ASSERT_STR_CONTAINS(err, "reads versions 1 to 2");
        memcpy(h, all, 32);
        uint32_t bom = 0x04030201u;
        memcpy(h + 12, &bom, 4);
        crc = lbomp__crc32(0, h, 28);
        memcpy(h + 28, &crc, 4);
        spit(bad, h, 32);
        ASSERT_EQ(read_all(bad, err, sizeof err), -1);
        ASSERT_STR_CONTAINS(err, "big-endian");
        spit(bad, (const unsigned char *)"#!/bin/sh\necho this is a script\n", 33);
        ASSERT_EQ(read_all(bad, err, sizeof err), -1);
        ASSERT_STR_CONTAINS(err, "not an lbomp trace");
        snprintf(bad, sizeof bad, "%s/missing.trc", dir);
        struct lbomp__trace_reader *r;
        ASSERT_EQ(lbomp__trace_open(&r, bad, err, sizeof err), -ENOENT);
        ASSERT_STR_CONTAINS(err, "missing.trc");
        free(all);
        synth_free(&y[0]);
        synth_free(&y[1]);
}

/* A record the writer was handed garbage for has a valid checksum: the reader must still refuse
 * it, or a policy would index out of its arrays. */
static void test_out_of_range(void)
{
        char err[600];
        static const char *const expect[] = {
                "task 5 is on worker 4", "sends task 6 to worker 9",
                "points to task 77",     "is on node 2",
                "home node 5",           "has cost nan",
        };
        for (int c = 0; c < 6; c++) {
                struct synth y;
                make(&y, 40, 4, 2, 1, 31);
                switch (c) {
                case 0:
                        y.worker[5] = 4;
                        break;
                case 1:
                        y.dest[6] = 9;
                        break;
                case 2:
                        y.link_dst[3] = 77;
                        break;
                case 3:
                        y.wnode[1] = 2;
                        break;
                case 4:
                        y.home[7] = 5;
                        break;
                case 5:
                        y.cost[8] = NAN;
                        break;
                }
                write_file(path, &y, 1, NULL);
                ASSERT_EQ(read_all(path, err, sizeof err), -1);
                ASSERT_STR_CONTAINS(err, expect[c]);
                ASSERT_STR_CONTAINS(err, "record 0");
                synth_free(&y);
        }
}

int main(void)
{
        if (!mkdtemp(dir))
                SKIP("cannot create a temporary directory under /tmp");
        snprintf(path, sizeof path, "%s/t.trc", dir);
        test_crc();
        test_round_trip();
        test_compact();
        test_truncated();
        test_corrupt();
        test_out_of_range();
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return 0;
}
