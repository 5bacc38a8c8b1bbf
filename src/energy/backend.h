/*
 * backend.h — what the three energy readers (powercap.c, perf.c, msr.c) share with energy.c, and
 * nothing else includes. A reader turns the machine into a list of domains and a list of raw
 * counters, each counter feeding one domain; energy.c owns the arithmetic (wrap, scale, sanity)
 * so that it is written and tested once for every reader.
 */
#ifndef LBOMP_ENERGY_BACKEND_H
#define LBOMP_ENERGY_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../energy.h"

/* Long enough for a path under a long LBOMP_POWERCAP_ROOT plus a reason. */
#define LBOMP__ENERGY_WHY 1024

struct lbomp__energy_counter;

/* Reads the raw value of one counter. Returns 0, or a negative errno with `why` filled. */
typedef int (*lbomp__energy_read_fn)(const struct lbomp__energy_counter *c, uint64_t *raw,
                                     char *why, size_t whylen);

struct lbomp__energy_counter {
        int domain;                 /* index in e->dom */
        lbomp__energy_read_fn read; /* reader-specific */
        int fd;                     /* perf, msr: kept open; powercap: -1 */
        char *path;    /* powercap: energy_uj, reopened at every sample (see powercap.c) */
        uint64_t addr; /* msr: register address */
        uint64_t max;  /* largest valid raw value; above it is garbage */
        int wraps;     /* the counter goes from max back to 0 */
        double scale;  /* joules per raw unit */
        uint64_t prev; /* raw value at the previous sample */
};

struct lbomp__energy_domain {
        char *name;
        int is_package;
        double total_j;
};

struct lbomp__energy {
        int available;
        const char *reader; /* static; NULL when unavailable */
        char note[LBOMP__ENERGY_WHY];
        struct lbomp__energy_domain *dom;
        int ndom, domcap;
        struct lbomp__energy_counter *ctr;
        int nctr, ctrcap;
        double last_sample_s; /* CLOCK_BOOTTIME of the previous sample, for the sanity check */
        unsigned long nsamples;
};

/* backend.c: building blocks for the readers. */

/* Appends a domain; returns its index or -ENOMEM. */
int lbomp__energy_add_domain(struct lbomp__energy *e, const char *name, int is_package);
/* Appends a counter (copied; `path` is duplicated when non-NULL); returns 0 or -ENOMEM. */
int lbomp__energy_add_counter(struct lbomp__energy *e, const struct lbomp__energy_counter *c);
/* Index of the domain called `name`, or -1. */
int lbomp__energy_find_domain(const struct lbomp__energy *e, const char *name);
/* Drops every domain and counter (closing fds): a reader that fails half-way leaves no trace. */
void lbomp__energy_reset(struct lbomp__energy *e);

/*
 * Reads a small text file (sysfs attribute) into buf, NUL-terminated. Returns 0, or a negative
 * errno: -EFBIG if it does not fit, the open/read errno otherwise (-EISDIR for a directory).
 */
int lbomp__energy_read_text(const char *path, char *buf, size_t size);

/*
 * Strict parse of a sysfs number: the whole string is one unsigned decimal, optionally followed by
 * one newline, and at most `max`. Returns 0, or -EINVAL with `why` saying what was wrong
 * ("empty", "'-5' is negative", "'12ab' is not an unsigned decimal", "... exceeds ...").
 */
int lbomp__energy_parse_u64(const char *s, uint64_t max, uint64_t *out, char *why, size_t whylen);

/*
 * snprintf for messages: a reason longer than its buffer is cut, on purpose (a note is one line,
 * not a dump). Going through vsnprintf keeps -Wformat checks without -Wformat-truncation noise.
 */
void lbomp__energy_msg(char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Copies `s` into a one-line, bounded quote for a message (control characters become '?'). */
void lbomp__energy_quote(const char *s, char *out, size_t size);

/*
 * The readers. Each fills e->dom and e->ctr and takes the first reading into ctr->prev.
 * Return 0 on success; -ENODEV (or another negative errno) with `why` saying why this reader
 * cannot be used; -ENOMEM on allocation failure. On failure e has no domains or counters.
 */
int lbomp__energy_powercap_open(struct lbomp__energy *e, const char *root, char *why,
                                size_t whylen);
int lbomp__energy_perf_open(struct lbomp__energy *e, char *why, size_t whylen);
int lbomp__energy_msr_open(struct lbomp__energy *e, char *why, size_t whylen);

#endif
