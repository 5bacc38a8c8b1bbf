/*
 * trace.c — writes and reads LB databases (the format is specified in doc/trace-format.md).
 *
 * A record is encoded in memory column by column (each column picks the smallest of three
 * encodings: one repeated value, zig-zag delta varints, raw little-endian), then written with its
 * CRC32 in one go and flushed. The reader trusts nothing: every length is checked against what
 * is left, every checksum is verified before a byte is decoded, and every decoded value is
 * checked against the record's own counts, so that a policy never sees an index out of range.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "trace.c writes little-endian with memcpy; add byte swaps for big-endian hosts"
#endif

#define FILE_HEADER_BYTES   32u
#define RECORD_HEADER_BYTES 24u
#define SECTION_HEADER      16u
#define RECORD_TAG          0x4352424cu /* "LBRC" */
#define BYTE_ORDER_MARK     0x01020304u
#define MAX_PAYLOAD         (1ull << 40) /* no real record comes near; a larger one is corrupt */
#define META_BYTES          96u

enum enc { ENC_RAW = 0, ENC_CONST = 1, ENC_DELTA = 2 };
enum typ { T_U32 = 1, T_I32 = 2, T_U64 = 3, T_F64 = 4, T_BYTES = 5 };
enum sec {
        S_META = 1,
        S_POLICY,
        S_TOPO_NAME,
        S_DIST,
        S_W_BG,
        S_W_NODE,
        S_W_CORE,
        S_T_COST,
        S_T_WORKER,
        S_T_BYTES,
        S_T_HOME,
        S_T_ID,
        S_L_OFF,
        S_L_DST,
        S_L_BYTES,
        S_PLAN,
        S_COUNT
};

static const char *const sec_name[S_COUNT] = {
        "?",      "META",   "POLICY", "TOPO_NAME", "DIST",    "W_BG",
        "W_NODE", "W_CORE", "T_COST", "T_WORKER",  "T_BYTES", "T_HOME",
        "T_ID",   "L_OFF",  "L_DST",  "L_BYTES",   "PLAN",
};

static size_t type_size(unsigned t)
{
        switch (t) {
        case T_U32:
        case T_I32:
                return 4;
        case T_U64:
        case T_F64:
                return 8;
        case T_BYTES:
                return 1;
        default:
                return 0;
        }
}

static void set_err(char *err, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t len, const char *fmt, ...)
{
        if (!err || !len)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
}

/* ---------------------------------------------------------------------------------------------
 * CRC-32, slicing by 8 (about 1 GB/s: checking a million-task record costs milliseconds)
 */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                crc_table[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; i++)
                for (int k = 1; k < 8; k++)
                        crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^
                                          crc_table[0][crc_table[k - 1][i] & 0xff];
}

uint32_t lbomp__crc32(uint32_t crc, const void *p, size_t n)
{
        pthread_once(&crc_once, crc_init);
        const uint8_t *b = p;
        crc = ~crc;
        while (n >= 8) {
                uint32_t lo, hi;
                memcpy(&lo, b, 4);
                memcpy(&hi, b + 4, 4);
                lo ^= crc;
                crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
                      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
                      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
                      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
                b += 8;
                n -= 8;
        }
        while (n--)
                crc = crc_table[0][(crc ^ *b++) & 0xff] ^ (crc >> 8);
        return ~crc;
}

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

static uint32_t get_u32(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}
static uint64_t get_u64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}
static double get_f64(const uint8_t *p)
{
        double v;
        memcpy(&v, p, 8);
        return v;
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
                        int64_t d = (int64_t)(x - prev);
                        put_varint(b, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
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
        double *dist, *bg, *cost, *link_bytes;
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
        } else if (get_u32(h + 8) != LBOMP__TRACE_VERSION) {
                set_err(err, errlen, "%s: trace format version %u; this lbomp reads version %u",
                        path, get_u32(h + 8), LBOMP__TRACE_VERSION);
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

static int grow(void **p, size_t n, size_t size)
{
        void *q = realloc(*p, (n ? n : 1) * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        return 0;
}
#define GROW(ptr, n) grow((void **)&(ptr), (n), sizeof *(ptr))

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
                        continue; /* a section from a later version 1 writer: skipped */
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
                if (GROW(r->dist, (size_t)N * N))
                        goto oom;
                r->cap_n = (size_t)N * N;
        }
        if (P + 1 > r->cap_p) {
                if (GROW(r->bg, P + 1) || GROW(r->wnode, P + 1) || GROW(r->wcore, P + 1) ||
                    GROW(r->wtask_off, P + 1))
                        goto oom;
                r->cap_p = P + 1;
        }
        if ((size_t)T + 1 > r->cap_t) {
                size_t nt = (size_t)T + 1;
                if (GROW(r->cost, nt) || GROW(r->home, nt) || GROW(r->worker, nt) ||
                    GROW(r->id, nt) || GROW(r->link_off, nt) || GROW(r->plan, nt) ||
                    GROW(r->wtask, nt) || GROW(r->bytes, nt))
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
                        if (GROW(r->link_dst, L) || GROW(r->link_bytes, L))
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
                .wnode = r->wnode,
                .dist = r->dist,
                .seed = st->snap.seed,
                .lb_step = st->snap.lb_step,
                .params = &st->params,
        };
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
