/*
 * fuzz_trace.c — libFuzzer target for the LB trace reader (src/trace.c): the input is a trace
 * file whose CRCs the harness recomputes (file header, then each record's header and payload as
 * far as the bytes go), so that the fuzzer reaches the section decoder instead of stopping at the
 * checksums, whose refusals test_trace covers. Beyond "no crash": every record the reader accepts
 * is safe to replay, so greedy runs on it and its plan passes the framework's check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mailbox.h"
#include "policy.h"
#include "trace.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        snprintf(path, sizeof path, "/tmp/lbomp-fuzz-trace-XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0)
                abort();
        close(fd);
        return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 1 << 20)
                return 0;
        uint8_t *b = malloc(size + 1);
        if (!b)
                return 0;
        memcpy(b, data, size);
        if (size >= 32) {
                put_u32(b + 28, lbomp__crc32(0, b, 28));
                for (size_t off = 32; off + 24 <= size;) {
                        put_u32(b + off + 16, lbomp__crc32(0, b + off, 16));
                        uint64_t n = get_u64(b + off + 8);
                        if (n > size - off - 24)
                                break;
                        put_u32(b + off + 20, lbomp__crc32(0, b + off + 24, (size_t)n));
                        off += 24 + (size_t)n;
                }
        }
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b, 1, size, f) != size || fclose(f) != 0)
                abort();
        free(b);

        char err[512];
        struct lbomp__trace_reader *r = NULL;
        if (lbomp__trace_open(&r, path, err, sizeof err) != 0) {
                if (!err[0])
                        abort(); /* a refusal says why */
                return 0;
        }
        /* Small caps: what matters here is that the decoder checks, not how large it goes. */
        lbomp__trace_set_limits(r, 1u << 16, 1u << 12, 1u << 18);
        const struct lbomp__policy *greedy = lbomp__policy_find("greedy");
        struct lbomp__trace_step st;
        int rc;
        for (int k = 0; k < 64 && (rc = lbomp__trace_next(r, &st, err, sizeof err)) == 1; k++) {
                if (st.snap.ntasks > 100000 || st.snap.nworkers > 4096)
                        continue; /* valid, but too slow to replay inside a fuzzer */
                uint32_t *dest = malloc(((size_t)st.snap.ntasks + 1) * sizeof *dest);
                struct lbomp__pstats ps;
                memset(&ps, 0, sizeof ps);
                uint32_t bad;
                if (!dest)
                        break;
                if (lbomp__policy_run_offline(greedy, &st.snap, dest, &ps) == 0 &&
                    lbomp__plan_check(&st.snap, dest, &bad) != 0)
                        abort();
                free(dest);
        }
        if (rc < 0 && !err[0])
                abort();
        lbomp__trace_free(r);
        return 0;
}
