/*
 * format.h — what the trace writer and reader share (src/trace/): the file's constants, section
 * ids and types (doc/trace-format.md), little-endian reads, and the CRC. Not installed.
 */
#ifndef LBOMP_TRACE_FORMAT_H
#define LBOMP_TRACE_FORMAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../trace.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace is written little-endian with memcpy; add byte swaps for big-endian hosts"
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
        S_W_SPEED, /* version 2 */
        S_COUNT
};

extern const char *const lbomp__trace_sec_name[S_COUNT];
#define sec_name lbomp__trace_sec_name

static inline size_t type_size(unsigned t)
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

/* snprintf into a caller's message buffer (NULL or empty: nothing). */
void lbomp__trace_set_err(char *err, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
#define set_err lbomp__trace_set_err

static inline uint32_t get_u32(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}
static inline uint64_t get_u64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}
static inline double get_f64(const uint8_t *p)
{
        double v;
        memcpy(&v, p, 8);
        return v;
}

#endif
