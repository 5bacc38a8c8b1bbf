/*
 * format.c — the pieces of the trace format both the writer and the reader use: section names for
 * messages, the message helper, and CRC-32.
 */
#include <pthread.h>
#include <stdio.h>

#include "format.h"

const char *const lbomp__trace_sec_name[S_COUNT] = {
        "?",      "META",   "POLICY", "TOPO_NAME", "DIST",    "W_BG",
        "W_NODE", "W_CORE", "T_COST", "T_WORKER",  "T_BYTES", "T_HOME",
        "T_ID",   "L_OFF",  "L_DST",  "L_BYTES",   "PLAN",    "W_SPEED",
};

void lbomp__trace_set_err(char *err, size_t len, const char *fmt, ...)
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
