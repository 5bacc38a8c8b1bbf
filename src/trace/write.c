/*
 * write.c — the LB trace writer (doc/trace-format.md): a record is encoded in memory column by
 * column (each column picks the smallest of three encodings: one repeated value, zig-zag delta
 * varints, raw little-endian), then written with its CRC32 in one go and flushed, so that a crash
 * leaves only whole records behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

/* ---------------------------------------------------------------------------------------------
 * Byte buffers and little-endian fields
 */

struct buf {
        uint8_t *p;
        size_t n, cap;
        bool oom;
};

static bool reserve(struct buf *b, size_t more)
{
        if (b->oom)
                return false;
        if (b->n + more <= b->cap)
                return true;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + more)
                cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
                b->oom = true;
                return false;
        }
        b->p = q;
        b->cap = cap;
        return true;
}

static void put(struct buf *b, const void *src, size_t n)
{
        if (reserve(b, n)) {
                memcpy(b->p + b->n, src, n);
                b->n += n;
        }
}

static void put_u16(struct buf *b, uint16_t v)
{
        put(b, &v, 2);
}
static void put_u32(struct buf *b, uint32_t v)
{
        put(b, &v, 4);
}
static void put_u64(struct buf *b, uint64_t v)
{
        put(b, &v, 8);
}

static void put_varint(struct buf *b, uint64_t v)
{
        if (!reserve(b, 10))
                return;
        uint8_t *q = b->p + b->n;
        while (v >= 0x80) {
                *q++ = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        *q++ = (uint8_t)v;
        b->n = (size_t)(q - b->p);
}

/* ---------------------------------------------------------------------------------------------
 * Columns
 */

/* Element i of an integer column, widened so that deltas work for every type. */
static uint64_t int_at(const void *v, unsigned t, size_t i)
{
        switch (t) {
        case T_U32:
                return ((const uint32_t *)v)[i];
        case T_I32:
                return (uint64_t)(int64_t)((const int32_t *)v)[i];
        default:
                return ((const uint64_t *)v)[i];
        }
}

static void section_header(struct buf *b, unsigned id, unsigned enc, unsigned type, uint32_t count,
                           uint64_t bytes)
{
        put_u16(b, (uint16_t)id);
        uint8_t e = (uint8_t)enc, t = (uint8_t)type;
        put(b, &e, 1);
        put(b, &t, 1);
        put_u32(b, count);
        put_u64(b, bytes);
}

static void pad8(struct buf *b)
{
        static const uint8_t zero[8];
        if (b->n % 8)
                put(b, zero, 8 - b->n % 8);
}

/* Writes a column, choosing the smallest encoding. *nsec counts the sections written. */
static void put_column(struct buf *b, unsigned id, unsigned type, const void *v, uint32_t count,
                       uint32_t *nsec)
{
        size_t es = type_size(type);
        size_t raw = (size_t)count * es;
        size_t start = b->n;
        (*nsec)++;
        if (type == T_BYTES) {
                section_header(b, id, ENC_RAW, type, count, raw);
                put(b, v, raw);
                pad8(b);
                return;
        }
        bool same = count > 1;
        if (type == T_F64) {
                const uint64_t *bits = v; /* compare bit patterns: exact, and NaN-safe */
                for (uint32_t i = 1; i < count && same; i++)
                        same = bits[i] == bits[0];
        } else {
                for (uint32_t i = 1; i < count && same; i++)
                        same = int_at(v, type, i) == int_at(v, type, 0);
        }
        if (same) {
                section_header(b, id, ENC_CONST, type, count, 8);
                put_u64(b, type == T_F64 ? ((const uint64_t *)v)[0] : int_at(v, type, 0));
                pad8(b);
                return;
        }
        if (type != T_F64 && count > 0) {
                section_header(b, id, ENC_DELTA, type, count, 0);
                size_t data = b->n;
                uint64_t prev = 0;
                for (uint32_t i = 0; i < count; i++) {
                        uint64_t x = int_at(v, type, i);
                        /* Zig-zag on the unsigned difference: its top bit is the sign, spread over
                         * every bit without shifting a negative number (implementation-defined). */
                        uint64_t d = x - prev;
                        put_varint(b, (d << 1) ^ (0 - (d >> 63)));
                        prev = x;
                        if (b->n - data >= raw)
                                break; /* no gain: fall back to raw */
                }
                if (!b->oom && b->n - data < raw) {
                        uint64_t nbytes = b->n - data;
                        memcpy(b->p + start + 8, &nbytes, 8);
                        pad8(b);
                        return;
                }
                b->n = start;
        }
        section_header(b, id, ENC_RAW, type, count, raw);
        put(b, v, raw);
        pad8(b);
}

/* ---------------------------------------------------------------------------------------------
 * Writer
 */

struct lbomp__trace_writer {
        FILE *f;
        char *path;
        struct buf rec;
        uint64_t records;
};

int lbomp__trace_create(struct lbomp__trace_writer **out, const char *path, char *err,
                        size_t errlen)
{
        *out = NULL;
        struct lbomp__trace_writer *w = calloc(1, sizeof *w);
        if (!w || !(w->path = strdup(path))) {
                free(w);
                set_err(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
        }
        w->f = fopen(path, "wb");
        if (!w->f) {
                int e = errno;
                set_err(err, errlen, "%s: cannot create the trace: %s", path, strerror(e));
                free(w->path);
                free(w);
                return -e;
        }
        uint8_t h[FILE_HEADER_BYTES] = {0};
        memcpy(h, LBOMP__TRACE_MAGIC, 8);
        uint32_t v = LBOMP__TRACE_VERSION, bom = BYTE_ORDER_MARK, hb = FILE_HEADER_BYTES;
        memcpy(h + 8, &v, 4);
        memcpy(h + 12, &bom, 4);
        memcpy(h + 16, &hb, 4);
        uint32_t crc = lbomp__crc32(0, h, 28);
        memcpy(h + 28, &crc, 4);
        if (fwrite(h, 1, sizeof h, w->f) != sizeof h || fflush(w->f) != 0) {
                int e = errno ? errno : EIO;
                set_err(err, errlen, "%s: cannot write the trace header: %s", path, strerror(e));
                lbomp__trace_close(w);
                return -e;
        }
        *out = w;
        return 0;
}

uint64_t lbomp__trace_records(const struct lbomp__trace_writer *w)
{
        return w ? w->records : 0;
}

int lbomp__trace_write(struct lbomp__trace_writer *w, const struct lbomp__trace_meta *m,
                       const struct lbomp__snap *s, const uint32_t *plan, char *err, size_t errlen)
{
        struct buf *b = &w->rec;
        uint32_t T = s->ntasks, P = s->nworkers, N = s->nnodes, nsec = 0;
        uint32_t L = s->link_off ? s->link_off[T] : 0;
        b->n = 0;
        b->oom = false;
        if (!reserve(b, RECORD_HEADER_BYTES))
                goto oom;
        b->n = RECORD_HEADER_BYTES; /* filled last */

        uint8_t meta[META_BYTES] = {0};
        uint64_t u64;
        uint32_t u32;
        int32_t i32;
        double f;
#define META(off, var, val) (var = (val), memcpy(meta + (off), &var, sizeof var))
        META(0, u64, s->lb_step);
        META(8, u64, m->step);
        META(16, u64, s->seed);
        META(24, u32, T);
        META(28, u32, P);
        META(32, u32, N);
        META(36, u32, m->ncores);
        META(40, i32, m->error);
        META(44, u32, m->rounds);
        META(48, u64, m->messages);
        META(56, f, m->decision_s);
        if (s->params) {
                META(64, f, s->params->tolerance);
                META(72, f, s->params->refine_factor);
                META(80, f, s->params->smart_threshold);
                META(88, i32, s->params->fanout);
                META(92, i32, s->params->retries);
        }
#undef META
        put_column(b, S_META, T_BYTES, meta, META_BYTES, &nsec);
        const char *pol = m->policy ? m->policy : "";
        const char *topo = m->topo_name ? m->topo_name : "";
        put_column(b, S_POLICY, T_BYTES, pol, (uint32_t)strlen(pol), &nsec);
        put_column(b, S_TOPO_NAME, T_BYTES, topo, (uint32_t)strlen(topo), &nsec);
        put_column(b, S_DIST, T_F64, s->dist, N * N, &nsec);
        if (s->bg)
                put_column(b, S_W_BG, T_F64, s->bg, P, &nsec);
        put_column(b, S_W_NODE, T_I32, s->wnode, P, &nsec);
        if (m->wcore)
                put_column(b, S_W_CORE, T_I32, m->wcore, P, &nsec);
        put_column(b, S_T_COST, T_F64, s->cost, T, &nsec);
        put_column(b, S_T_WORKER, T_U32, s->worker, T, &nsec);
        if (s->bytes)
                put_column(b, S_T_BYTES, T_U64, s->bytes, T, &nsec);
        if (s->home)
                put_column(b, S_T_HOME, T_I32, s->home, T, &nsec);
        if (s->id)
                put_column(b, S_T_ID, T_U32, s->id, T, &nsec);
        if (s->link_off) {
                put_column(b, S_L_OFF, T_U32, s->link_off, T + 1, &nsec);
                put_column(b, S_L_DST, T_U32, s->link_dst, L, &nsec);
                put_column(b, S_L_BYTES, T_F64, s->link_bytes, L, &nsec);
        }
        put_column(b, S_PLAN, T_U32, plan, T, &nsec);
        if (s->speed)
                put_column(b, S_W_SPEED, T_F64, s->speed, P, &nsec);
        if (b->oom)
                goto oom;

        uint64_t payload = b->n - RECORD_HEADER_BYTES;
        uint8_t *h = b->p;
        uint32_t tag = RECORD_TAG;
        memcpy(h, &tag, 4);
        memcpy(h + 4, &nsec, 4);
        memcpy(h + 8, &payload, 8);
        uint32_t hcrc = lbomp__crc32(0, h, 16);
        uint32_t pcrc = lbomp__crc32(0, h + RECORD_HEADER_BYTES, payload);
        memcpy(h + 16, &hcrc, 4);
        memcpy(h + 20, &pcrc, 4);
        if (fwrite(b->p, 1, b->n, w->f) != b->n || fflush(w->f) != 0) {
                int e = errno ? errno : EIO;
                set_err(err, errlen, "%s: cannot write trace record %llu: %s", w->path,
                        (unsigned long long)w->records, strerror(e));
                return -e;
        }
        w->records++;
        return 0;
oom:
        set_err(err, errlen, "%s: out of memory encoding trace record %llu (%u tasks)", w->path,
                (unsigned long long)w->records, T);
        return -ENOMEM;
}

int lbomp__trace_close(struct lbomp__trace_writer *w)
{
        if (!w)
                return 0;
        int rc = 0;
        if (w->f && fclose(w->f) != 0)
                rc = -(errno ? errno : EIO);
        free(w->rec.p);
        free(w->path);
        free(w);
        return rc;
}
