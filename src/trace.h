/*
 * trace.h — LB databases on disk: what every LB step's policy saw (the snapshot, with the
 * topology's identity and distances) and what it decided (the plan), like Charm++'s +LBDump.
 *
 * The format (doc/trace-format.md) is versioned, little-endian, one self-contained record per LB
 * step with a CRC32 per record, and compact at a million tasks (integer columns are stored as
 * zig-zag delta varints, columns of one repeated value as that value once). The writer is used by
 * the runtime at the master between barriers (LBOMP_TRACE); the reader by the simulator and the
 * tests. Neither reads the environment.
 */
#ifndef LBOMP_TRACE_H
#define LBOMP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define LBOMP__TRACE_MAGIC       "LBOMPTRC"
#define LBOMP__TRACE_VERSION     2u /* 2: worker speeds (W_SPEED); version 1 still reads */
#define LBOMP__TRACE_VERSION_MIN 1u

/* What a record stores beyond the snapshot and the plan. */
struct lbomp__trace_meta {
        const char *policy;    /* the policy that made the plan */
        const char *topo_name; /* topology identity: "host" or the profile's file name */
        uint32_t ncores;       /* cores of that topology */
        const int32_t *wcore;  /* [nworkers] core of each worker, or NULL */
        uint64_t step;         /* program step after which the LB step ran */
        int32_t error;         /* the policy's return code (0, or the mapping was kept) */
        double decision_s;     /* as measured live */
        uint64_t messages;     /* decentralized: as counted live */
        uint32_t rounds;
};

/* ---- writer ---- */
struct lbomp__trace_writer;

/*
 * Creates (truncates) `path` and writes the file header. 0, or a negative errno with a message
 * naming the file in `err` (always NUL-terminated when errlen > 0).
 */
int lbomp__trace_create(struct lbomp__trace_writer **out, const char *path, char *err,
                        size_t errlen);
/* Appends one record and flushes it, so that a crash leaves only whole records behind. */
int lbomp__trace_write(struct lbomp__trace_writer *w, const struct lbomp__trace_meta *m,
                       const struct lbomp__snap *s, const uint32_t *plan, char *err, size_t errlen);
/* 0, or a negative errno when the last bytes could not be written. Accepts NULL. */
int lbomp__trace_close(struct lbomp__trace_writer *w);
/* Records written so far. */
uint64_t lbomp__trace_records(const struct lbomp__trace_writer *w);

/* ---- reader ---- */

/* One record read back: a snapshot ready for a policy, the recorded plan and metadata. Every
 * pointer refers to buffers owned by the reader, valid until the next lbomp__trace_next(). */
struct lbomp__trace_step {
        struct lbomp__snap snap;
        struct lbomp__params params;
        const uint32_t *plan; /* [ntasks] the plan recorded */
        const int32_t *wcore; /* [nworkers], -1 where unknown */
        char policy[64];
        char topo_name[256];
        uint32_t ncores;
        uint64_t step;
        int32_t error;
        double decision_s;
        uint64_t messages;
        uint32_t rounds;
        uint64_t index;  /* 0 for the first record of the file */
        uint64_t offset; /* byte offset of the record in the file */
};

struct lbomp__trace_reader;

/* Opens `path` and checks its header. -ENOENT, -EIO, -EINVAL (not a trace, bad version,
 * corrupt header) with a message naming the file in `err`. */
int lbomp__trace_open(struct lbomp__trace_reader **out, const char *path, char *err, size_t errlen);
/*
 * Reads and checks the next record into *st. Returns 1 when a record was read, 0 at the end of
 * the file, or a negative errno (-EINVAL truncated or corrupt, -ENOMEM, -EIO) with a message that
 * names the file, the record and what is wrong.
 */
int lbomp__trace_next(struct lbomp__trace_reader *r, struct lbomp__trace_step *st, char *err,
                      size_t errlen);
void lbomp__trace_free(struct lbomp__trace_reader *r); /* accepts NULL */
/* Largest record the reader will allocate for (defaults: 2^27 tasks, 2^20 workers, 2^30 links);
 * a record beyond them is refused with a message, like a corrupt one. */
void lbomp__trace_set_limits(struct lbomp__trace_reader *r, uint32_t max_tasks,
                             uint32_t max_workers, uint32_t max_links);

/* CRC-32 (IEEE 802.3, the zlib one) of n bytes, continuing from crc (0 to start). */
uint32_t lbomp__crc32(uint32_t crc, const void *p, size_t n);

#endif
