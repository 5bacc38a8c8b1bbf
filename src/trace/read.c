/*
 * read.c — the LB trace reader (doc/trace-format.md). It trusts nothing: every length is checked
 * against what is left, every checksum is verified before a byte is decoded, every decoded value
 * is checked against the record's own counts (so that a policy never sees an index out of range),
 * and nothing larger than the file or the caps of lbomp__trace_set_limits() is allocated.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util.h"
#include "format.h"

/* ---------------------------------------------------------------------------------------------
 * Reader
 */

struct col {
        const uint8_t *data; /* encoded bytes inside the payload */
        unsigned enc, type;
        uint32_t count;
        uint64_t bytes;
        bool present;
};

struct lbomp__trace_reader {
        FILE *f;
        char *path;
        uint64_t offset; /* of the next record */
        uint64_t index;
        uint8_t *payload;
        size_t payload_cap;
        /* decoded columns */
        double *dist, *bg, *cost, *link_bytes, *speed;
        int32_t *wnode, *wcore, *home;
        uint32_t *worker, *id, *link_off, *link_dst, *plan, *wtask_off, *wtask;
        uint64_t *bytes;
        size_t cap_n, cap_p, cap_t, cap_l;
        /* A small record may declare a huge machine (constant columns are stored once), so the
         * reader caps what it allocates; lbomp__trace_set_limits() changes the caps. */
        uint32_t max_tasks, max_workers, max_links;
};

void lbomp__trace_set_limits(struct lbomp__trace_reader *r, uint32_t max_tasks,
                             uint32_t max_workers, uint32_t max_links)
{
        r->max_tasks = max_tasks;
        r->max_workers = max_workers;
        r->max_links = max_links;
}

int lbomp__trace_open(struct lbomp__trace_reader **out, const char *path, char *err, size_t errlen)
{
        *out = NULL;
        struct lbomp__trace_reader *r = calloc(1, sizeof *r);
        if (!r || !(r->path = strdup(path))) {
                free(r);
                set_err(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
        }
        /* 2^27 tasks is 134 million, far beyond a million-task trace yet a bounded allocation. */
        lbomp__trace_set_limits(r, 1u << 27, 1u << 20, 1u << 30);
        r->f = fopen(path, "rb");
        if (!r->f) {
                int e = errno;
                set_err(err, errlen, "%s: cannot open the trace: %s", path, strerror(e));
                lbomp__trace_free(r);
                return e == ENOENT ? -ENOENT : -EIO;
        }
        uint8_t h[FILE_HEADER_BYTES];
        size_t got = fread(h, 1, sizeof h, r->f);
        int rc = -EINVAL;
        if (got >= 8 && memcmp(h, LBOMP__TRACE_MAGIC, 8) != 0) {
                set_err(err, errlen,
                        "%s: not an lbomp trace: the file does not start with \"%s\" (written by "
                        "LBOMP_TRACE)",
                        path, LBOMP__TRACE_MAGIC);
        } else if (got < sizeof h) {
                set_err(err, errlen,
                        "%s: truncated: the file header needs %u bytes, the file has %zu", path,
                        FILE_HEADER_BYTES, got);
        } else if (get_u32(h + 28) != lbomp__crc32(0, h, 28)) {
                set_err(err, errlen,
                        "%s: corrupt file header: checksum 0x%08x stored, 0x%08x computed", path,
                        get_u32(h + 28), lbomp__crc32(0, h, 28));
        } else if (get_u32(h + 12) != BYTE_ORDER_MARK) {
                set_err(err, errlen,
                        "%s: byte-order mark 0x%08x: written by a big-endian host, this reader "
                        "reads little-endian traces only",
                        path, get_u32(h + 12));
        } else if (get_u32(h + 8) < LBOMP__TRACE_VERSION_MIN ||
                   get_u32(h + 8) > LBOMP__TRACE_VERSION) {
                set_err(err, errlen,
                        "%s: trace format version %u; this lbomp reads versions %u to %u", path,
                        get_u32(h + 8), LBOMP__TRACE_VERSION_MIN, LBOMP__TRACE_VERSION);
        } else if (get_u32(h + 16) < FILE_HEADER_BYTES ||
                   fseek(r->f, (long)get_u32(h + 16), SEEK_SET) != 0) {
                set_err(err, errlen, "%s: corrupt file header: header length %u", path,
                        get_u32(h + 16));
        } else {
                r->offset = get_u32(h + 16);
                *out = r;
                return 0;
        }
        lbomp__trace_free(r);
        return rc;
}

void lbomp__trace_free(struct lbomp__trace_reader *r)
{
        if (!r)
                return;
        if (r->f)
                fclose(r->f);
        free(r->path);
        free(r->payload);
        free(r->dist);
        free(r->bg);
        free(r->speed);
        free(r->cost);
        free(r->link_bytes);
        free(r->wnode);
        free(r->wcore);
        free(r->home);
        free(r->worker);
        free(r->id);
        free(r->link_off);
        free(r->link_dst);
        free(r->plan);
        free(r->wtask_off);
        free(r->wtask);
        free(r->bytes);
        free(r);
}

/* The reader's context for messages: "FILE: record N at byte OFF: ". */
struct rctx {
        struct lbomp__trace_reader *r;
        char *err;
        size_t errlen;
        uint64_t rec_off;
};

static int fail(const struct rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(const struct rctx *c, const char *fmt, ...)
{
        char what[384];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        set_err(c->err, c->errlen, "%s: record %llu at byte %llu: %s", c->r->path,
                (unsigned long long)c->r->index, (unsigned long long)c->rec_off, what);
        return -EINVAL;
}

/* Decodes an integer or f64 column into `out` (count elements of `type`'s width). */
static int decode(const struct rctx *c, unsigned id, const struct col *k, unsigned type,
                  uint64_t want, void *out)
{
        const char *name = sec_name[id];
        if (!k->present)
                return fail(c, "section %s is missing", name);
        if (k->type != type)
                return fail(c, "section %s has element type %u, expected %u", name, k->type, type);
        if (k->count != want)
                return fail(c, "section %s has %u elements, expected %llu", name, k->count,
                            (unsigned long long)want);
        size_t es = type_size(type);
        switch (k->enc) {
        case ENC_RAW:
                if (k->bytes != (uint64_t)k->count * es)
                        return fail(c, "section %s: %llu bytes for %u raw elements", name,
                                    (unsigned long long)k->bytes, k->count);
                if (k->count)
                        memcpy(out, k->data, k->bytes);
                return 0;
        case ENC_CONST: {
                if (k->bytes != 8)
                        return fail(c, "section %s: constant column of %llu bytes", name,
                                    (unsigned long long)k->bytes);
                uint64_t v = get_u64(k->data);
                for (uint32_t i = 0; i < k->count; i++) {
                        if (es == 8)
                                memcpy((uint8_t *)out + 8 * (size_t)i, &v, 8);
                        else {
                                uint32_t v32 = (uint32_t)v;
                                memcpy((uint8_t *)out + 4 * (size_t)i, &v32, 4);
                        }
                }
                return 0;
        }
        case ENC_DELTA: {
                if (type == T_F64)
                        return fail(c, "section %s: delta encoding of a float column", name);
                const uint8_t *p = k->data, *end = k->data + k->bytes;
                uint64_t prev = 0;
                for (uint32_t i = 0; i < k->count; i++) {
                        uint64_t z = 0;
                        int shift = 0;
                        for (;;) {
                                if (p == end)
                                        return fail(c,
                                                    "section %s: varints end after %u of %u "
                                                    "elements",
                                                    name, i, k->count);
                                uint8_t byte = *p++;
                                if (shift == 63 && byte > 1)
                                        return fail(c, "section %s: varint %u overflows", name, i);
                                z |= (uint64_t)(byte & 0x7f) << shift;
                                if (!(byte & 0x80))
                                        break;
                                shift += 7;
                                if (shift > 63)
                                        return fail(c, "section %s: varint %u overflows", name, i);
                        }
                        uint64_t d = (z >> 1) ^ (0 - (z & 1));
                        prev += d;
                        if (es == 8)
                                memcpy((uint8_t *)out + 8 * (size_t)i, &prev, 8);
                        else {
                                uint32_t v32 = (uint32_t)prev;
                                memcpy((uint8_t *)out + 4 * (size_t)i, &v32, 4);
                        }
                }
                if (p != end)
                        return fail(c, "section %s: %zu bytes left after %u elements", name,
                                    (size_t)(end - p), k->count);
                return 0;
        }
        default:
                return fail(c, "section %s: unknown encoding %u", name, k->enc);
        }
}

static int read_payload(struct rctx *c, uint64_t n)
{
        struct lbomp__trace_reader *r = c->r;
        /* Allocate only what the file can hold: a header is 24 bytes and may lie. */
        struct stat sb;
        long here = ftell(r->f);
        if (here >= 0 && fstat(fileno(r->f), &sb) == 0 && S_ISREG(sb.st_mode) &&
            n > (uint64_t)(sb.st_size - here))
                return fail(c,
                            "truncated: the record header announces %llu bytes of payload, only "
                            "%lld follow",
                            (unsigned long long)n, (long long)(sb.st_size - here));
        if (n > r->payload_cap) {
                uint8_t *q = realloc(r->payload, n);
                if (!q) {
                        set_err(c->err, c->errlen, "%s: record %llu: out of memory for %llu bytes",
                                r->path, (unsigned long long)r->index, (unsigned long long)n);
                        return -ENOMEM;
                }
                r->payload = q;
                r->payload_cap = n;
        }
        size_t got = n ? fread(r->payload, 1, n, r->f) : 0;
        if (got != n) {
                if (ferror(r->f))
                        return fail(c, "read error: %s", strerror(errno));
                return fail(c,
                            "truncated: the record header announces %llu bytes of payload, only "
                            "%zu follow",
                            (unsigned long long)n, got);
        }
        return 0;
}

int lbomp__trace_next(struct lbomp__trace_reader *r, struct lbomp__trace_step *st, char *err,
                      size_t errlen)
{
        struct rctx c = {.r = r, .err = err, .errlen = errlen, .rec_off = r->offset};
        uint8_t h[RECORD_HEADER_BYTES];
        size_t got = fread(h, 1, sizeof h, r->f);
        if (got == 0 && feof(r->f))
                return 0;
        if (got != sizeof h) {
                if (ferror(r->f))
                        return fail(&c, "read error: %s", strerror(errno));
                return fail(&c, "truncated: the record header needs %u bytes, the file has %zu",
                            RECORD_HEADER_BYTES, got);
        }
        if (get_u32(h) != RECORD_TAG)
                return fail(&c, "corrupt: no record tag (0x%08x) where a record should start",
                            get_u32(h));
        if (get_u32(h + 16) != lbomp__crc32(0, h, 16))
                return fail(&c, "corrupt record header: checksum 0x%08x stored, 0x%08x computed",
                            get_u32(h + 16), lbomp__crc32(0, h, 16));
        uint32_t nsec = get_u32(h + 4);
        uint64_t n = get_u64(h + 8);
        if (n > MAX_PAYLOAD || n % 8)
                return fail(&c, "corrupt record header: payload length %llu",
                            (unsigned long long)n);
        int rc = read_payload(&c, n);
        if (rc < 0)
                return rc;
        uint32_t crc = lbomp__crc32(0, r->payload, n);
        if (crc != get_u32(h + 20))
                return fail(&c,
                            "corrupt: payload checksum 0x%08x stored, 0x%08x computed over %llu "
                            "bytes",
                            get_u32(h + 20), crc, (unsigned long long)n);

        /* Sections: bounds first, then contents. */
        struct col col[S_COUNT] = {{0}};
        uint64_t pos = 0;
        for (uint32_t i = 0; i < nsec; i++) {
                if (n - pos < SECTION_HEADER)
                        return fail(&c, "section %u of %u: header past the end of the payload", i,
                                    nsec);
                const uint8_t *sh = r->payload + pos;
                unsigned id = (unsigned)sh[0] | (unsigned)sh[1] << 8;
                struct col k = {.enc = sh[2],
                                .type = sh[3],
                                .count = get_u32(sh + 4),
                                .bytes = get_u64(sh + 8),
                                .present = true};
                pos += SECTION_HEADER;
                uint64_t padded = (k.bytes + 7) & ~7ull;
                if (k.bytes > n - pos || padded > n - pos)
                        return fail(&c,
                                    "section %u (id %u): %llu bytes, the payload has %llu "
                                    "left",
                                    i, id, (unsigned long long)k.bytes,
                                    (unsigned long long)(n - pos));
                k.data = r->payload + pos;
                pos += padded;
                if (id == 0 || id >= S_COUNT)
                        continue; /* a section from a later writer of this version: skipped */
                if (col[id].present)
                        return fail(&c, "section %s appears twice", sec_name[id]);
                if (!type_size(k.type))
                        return fail(&c, "section %s: unknown element type %u", sec_name[id],
                                    k.type);
                col[id] = k;
        }
        if (pos != n)
                return fail(&c, "%llu bytes after the last section", (unsigned long long)(n - pos));
        struct col *m = &col[S_META];
        if (!m->present || m->type != T_BYTES || m->enc != ENC_RAW || m->bytes < META_BYTES)
                return fail(&c, "section META is missing or shorter than %u bytes", META_BYTES);
        const uint8_t *mp = m->data;
        memset(st, 0, sizeof *st);
        uint32_t T = get_u32(mp + 24), P = get_u32(mp + 28), N = get_u32(mp + 32);
        if (P == 0 || N == 0)
                return fail(&c, "META: %u workers and %u nodes; both must be at least 1", P, N);
        if ((uint64_t)N * N > 1u << 24)
                return fail(&c, "META: %u nodes is not credible", N);
        if (T > r->max_tasks || P > r->max_workers)
                return fail(&c,
                            "META: %u tasks on %u workers is beyond this reader's limits (%u "
                            "tasks, %u workers)",
                            T, P, r->max_tasks, r->max_workers);
        st->snap.lb_step = get_u64(mp);
        st->step = get_u64(mp + 8);
        st->snap.seed = get_u64(mp + 16);
        st->ncores = get_u32(mp + 36);
        memcpy(&st->error, mp + 40, 4);
        st->rounds = get_u32(mp + 44);
        st->messages = get_u64(mp + 48);
        st->decision_s = get_f64(mp + 56);
        st->params.tolerance = get_f64(mp + 64);
        st->params.refine_factor = get_f64(mp + 72);
        st->params.smart_threshold = get_f64(mp + 80);
        memcpy(&st->params.fanout, mp + 88, 4);
        memcpy(&st->params.retries, mp + 92, 4);
        for (unsigned id = S_POLICY; id <= S_TOPO_NAME; id++) {
                struct col *k = &col[id];
                char *dst = id == S_POLICY ? st->policy : st->topo_name;
                size_t cap = id == S_POLICY ? sizeof st->policy : sizeof st->topo_name;
                if (!k->present || k->type != T_BYTES || k->bytes >= cap ||
                    memchr(k->data, 0, k->bytes))
                        return fail(&c, "section %s is missing or not a name", sec_name[id]);
                memcpy(dst, k->data, k->bytes);
                dst[k->bytes] = 0;
        }

        /* Buffers sized for this record. */
        uint32_t L = 0;
        if (N * N > r->cap_n) {
                if (LBOMP__GROW(r->dist, (size_t)N * N))
                        goto oom;
                r->cap_n = (size_t)N * N;
        }
        if (P + 1 > r->cap_p) {
                if (LBOMP__GROW(r->bg, P + 1) || LBOMP__GROW(r->speed, P + 1) ||
                    LBOMP__GROW(r->wnode, P + 1) || LBOMP__GROW(r->wcore, P + 1) ||
                    LBOMP__GROW(r->wtask_off, P + 1))
                        goto oom;
                r->cap_p = P + 1;
        }
        if ((size_t)T + 1 > r->cap_t) {
                size_t nt = (size_t)T + 1;
                if (LBOMP__GROW(r->cost, nt) || LBOMP__GROW(r->home, nt) ||
                    LBOMP__GROW(r->worker, nt) || LBOMP__GROW(r->id, nt) ||
                    LBOMP__GROW(r->link_off, nt) || LBOMP__GROW(r->plan, nt) ||
                    LBOMP__GROW(r->wtask, nt) || LBOMP__GROW(r->bytes, nt))
                        goto oom;
                r->cap_t = nt;
        }
        if ((rc = decode(&c, S_DIST, &col[S_DIST], T_F64, (uint64_t)N * N, r->dist)) ||
            (rc = decode(&c, S_W_NODE, &col[S_W_NODE], T_I32, P, r->wnode)) ||
            (rc = decode(&c, S_T_COST, &col[S_T_COST], T_F64, T, r->cost)) ||
            (rc = decode(&c, S_T_WORKER, &col[S_T_WORKER], T_U32, T, r->worker)) ||
            (rc = decode(&c, S_PLAN, &col[S_PLAN], T_U32, T, r->plan)))
                return rc;
        /* Optional columns take their neutral value when absent. */
        if (col[S_W_BG].present) {
                if ((rc = decode(&c, S_W_BG, &col[S_W_BG], T_F64, P, r->bg)))
                        return rc;
        } else {
                memset(r->bg, 0, P * sizeof *r->bg);
        }
        if (col[S_W_SPEED].present) { /* version 2; version 1: every speed 1.0 */
                if ((rc = decode(&c, S_W_SPEED, &col[S_W_SPEED], T_F64, P, r->speed)))
                        return rc;
        } else {
                for (uint32_t w = 0; w < P; w++)
                        r->speed[w] = 1.0;
        }
        if (col[S_W_CORE].present) {
                if ((rc = decode(&c, S_W_CORE, &col[S_W_CORE], T_I32, P, r->wcore)))
                        return rc;
        } else {
                for (uint32_t w = 0; w < P; w++)
                        r->wcore[w] = -1;
        }
        if (col[S_T_BYTES].present) {
                if ((rc = decode(&c, S_T_BYTES, &col[S_T_BYTES], T_U64, T, r->bytes)))
                        return rc;
        } else {
                memset(r->bytes, 0, (size_t)T * sizeof *r->bytes);
        }
        if (col[S_T_HOME].present) {
                if ((rc = decode(&c, S_T_HOME, &col[S_T_HOME], T_I32, T, r->home)))
                        return rc;
        } else {
                for (uint32_t t = 0; t < T; t++)
                        r->home[t] = -1;
        }
        if (col[S_T_ID].present) {
                if ((rc = decode(&c, S_T_ID, &col[S_T_ID], T_U32, T, r->id)))
                        return rc;
        } else {
                for (uint32_t t = 0; t < T; t++)
                        r->id[t] = t;
        }
        if (col[S_L_OFF].present) {
                if ((rc = decode(&c, S_L_OFF, &col[S_L_OFF], T_U32, (uint64_t)T + 1, r->link_off)))
                        return rc;
                if (r->link_off[0] != 0)
                        return fail(&c, "section L_OFF does not start at 0");
                for (uint32_t t = 0; t < T; t++)
                        if (r->link_off[t + 1] < r->link_off[t])
                                return fail(&c, "section L_OFF decreases at task %u", t);
                L = r->link_off[T];
                if (L > r->max_links)
                        return fail(&c,
                                    "section L_OFF: %u links is beyond this reader's limit (%u)", L,
                                    r->max_links);
                if (L > r->cap_l) {
                        if (LBOMP__GROW(r->link_dst, L) || LBOMP__GROW(r->link_bytes, L))
                                goto oom;
                        r->cap_l = L;
                }
                if ((rc = decode(&c, S_L_DST, &col[S_L_DST], T_U32, L, r->link_dst)) ||
                    (rc = decode(&c, S_L_BYTES, &col[S_L_BYTES], T_F64, L, r->link_bytes)))
                        return rc;
        } else {
                memset(r->link_off, 0, ((size_t)T + 1) * sizeof *r->link_off);
        }

        /* Values: every index in range, every number a number a policy can use. */
        for (uint32_t i = 0; i < N * N; i++)
                if (!(r->dist[i] > 0) || !isfinite(r->dist[i]))
                        return fail(&c, "DIST[%u][%u] = %g is not a positive distance", i / N,
                                    i % N, r->dist[i]);
        for (uint32_t w = 0; w < P; w++) {
                if (r->wnode[w] < 0 || (uint32_t)r->wnode[w] >= N)
                        return fail(&c, "worker %u is on node %d; the record has %u nodes", w,
                                    r->wnode[w], N);
                if (!(r->bg[w] >= 0) || !isfinite(r->bg[w]))
                        return fail(&c, "worker %u has background load %g", w, r->bg[w]);
                if (!(r->speed[w] > 0) || !isfinite(r->speed[w]))
                        return fail(&c, "worker %u has speed %g", w, r->speed[w]);
        }
        for (uint32_t t = 0; t < T; t++) {
                if (!(r->cost[t] >= 0) || !isfinite(r->cost[t]))
                        return fail(&c, "task %u has cost %g", t, r->cost[t]);
                if (r->worker[t] >= P)
                        return fail(&c, "task %u is on worker %u; the record has %u workers", t,
                                    r->worker[t], P);
                if (r->plan[t] >= P)
                        return fail(&c,
                                    "the plan sends task %u to worker %u; the record has %u "
                                    "workers",
                                    t, r->plan[t], P);
                if (r->home[t] < -1 || r->home[t] >= (int32_t)N)
                        return fail(&c, "task %u has home node %d; the record has %u nodes", t,
                                    r->home[t], N);
        }
        for (uint32_t k = 0; k < L; k++) {
                if (r->link_dst[k] >= T)
                        return fail(&c, "link %u points to task %u; the record has %u tasks", k,
                                    r->link_dst[k], T);
                if (!(r->link_bytes[k] >= 0) || !isfinite(r->link_bytes[k]))
                        return fail(&c, "link %u carries %g bytes", k, r->link_bytes[k]);
        }

        /* Tasks of each worker, in task order: what the live snapshot has too. */
        memset(r->wtask_off, 0, ((size_t)P + 1) * sizeof *r->wtask_off);
        for (uint32_t t = 0; t < T; t++)
                r->wtask_off[r->worker[t] + 1]++;
        for (uint32_t w = 0; w < P; w++)
                r->wtask_off[w + 1] += r->wtask_off[w];
        uint32_t *cursor = malloc(((size_t)P + 1) * sizeof *cursor);
        if (!cursor)
                goto oom;
        memcpy(cursor, r->wtask_off, ((size_t)P + 1) * sizeof *cursor);
        for (uint32_t t = 0; t < T; t++)
                r->wtask[cursor[r->worker[t]]++] = t;
        free(cursor);

        st->snap = (struct lbomp__snap){
                .ntasks = T,
                .nworkers = P,
                .nnodes = N,
                .cost = r->cost,
                .worker = r->worker,
                .bytes = r->bytes,
                .home = r->home,
                .id = r->id,
                .link_off = r->link_off,
                .link_dst = r->link_dst,
                .link_bytes = r->link_bytes,
                .wtask_off = r->wtask_off,
                .wtask = r->wtask,
                .bg = r->bg,
                .speed = r->speed,
                .wnode = r->wnode,
                .dist = r->dist,
                .seed = st->snap.seed,
                .lb_step = st->snap.lb_step,
                .params = &st->params,
        };
        lbomp__snap_speeds(&st->snap);
        st->plan = r->plan;
        st->wcore = r->wcore;
        st->index = r->index;
        st->offset = c.rec_off;
        r->offset += RECORD_HEADER_BYTES + n;
        r->index++;
        return 1;
oom:
        set_err(err, errlen, "%s: record %llu: out of memory (%u tasks)", r->path,
                (unsigned long long)r->index, T);
        return -ENOMEM;
}
