/*
 * energy.c — the energy object: chooses a reader (powercap, then perf, then msr), keeps the
 * domains and running totals, and owns the arithmetic every reader shares: wrap-around, scaling
 * to joules, and the sanity checks that turn garbage into "unavailable, because ..." instead of a
 * wrong figure. The building blocks the readers share are in backend.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

/*
 * No package, DRAM or platform domain draws 10 kW: a larger implied power between two samples
 * means the counter was reset or holds garbage, and is reported as such rather than summed. The
 * interval is floored at 10 ms so that two samples taken back to back (as in tests) still allow
 * a genuine wrap of up to 100 J.
 */
#define ENERGY_PLAUSIBLE_W      10000.0
#define ENERGY_MIN_INTERVAL_S   0.01
#define ENERGY_DEFAULT_POWERCAP "/sys/class/powercap"

static double now_s(void)
{
        struct timespec ts;

        /* BOOTTIME keeps counting through a suspend, so a resumed run never looks too fast. */
#ifdef CLOCK_BOOTTIME
        if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
                return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Turns the object unavailable: totals become NAN and the note says why, in one line. */
static void energy_fail(struct lbomp__energy *e, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void energy_fail(struct lbomp__energy *e, const char *fmt, ...)
{
        char why[LBOMP__ENERGY_WHY];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        lbomp__energy_msg(e->note, sizeof e->note, "unavailable: %s", why);
        e->available = 0;
        e->reader = NULL;
        for (int i = 0; i < e->ndom; i++)
                e->dom[i].total_j = NAN;
}

int lbomp__energy_open(struct lbomp__energy **out, const char *powercap_root)
{
        if (!out)
                return -EINVAL;
        *out = NULL;

        struct lbomp__energy *e = calloc(1, sizeof *e);
        char *why_pc = malloc(LBOMP__ENERGY_WHY);
        char *why_perf = malloc(LBOMP__ENERGY_WHY);
        char *why_msr = malloc(LBOMP__ENERGY_WHY);
        int rc = -ENOMEM;

        if (!e || !why_pc || !why_perf || !why_msr)
                goto fail;
        why_pc[0] = why_perf[0] = why_msr[0] = '\0';

        const char *root = powercap_root ? powercap_root : ENERGY_DEFAULT_POWERCAP;

        rc = lbomp__energy_powercap_open(e, root, why_pc, LBOMP__ENERGY_WHY);
        if (rc == 0) {
                e->reader = "powercap";
                lbomp__energy_msg(e->note, sizeof e->note, "powercap: %s", why_pc);
                goto ok;
        }
        if (rc == -ENOMEM)
                goto fail;
        if (powercap_root) {
                lbomp__energy_msg(e->note, sizeof e->note,
                                  "unavailable: %s (powercap root given: perf and msr not tried)",
                                  why_pc);
                goto ok;
        }
        rc = lbomp__energy_perf_open(e, why_perf, LBOMP__ENERGY_WHY);
        if (rc == 0) {
                e->reader = "perf";
                lbomp__energy_msg(e->note, sizeof e->note, "perf: %s (powercap: %s)", why_perf,
                                  why_pc);
                goto ok;
        }
        if (rc == -ENOMEM)
                goto fail;
        rc = lbomp__energy_msr_open(e, why_msr, LBOMP__ENERGY_WHY);
        if (rc == 0) {
                e->reader = "msr";
                lbomp__energy_msg(e->note, sizeof e->note, "msr: %s (powercap: %s; perf: %s)",
                                  why_msr, why_pc, why_perf);
                goto ok;
        }
        if (rc == -ENOMEM)
                goto fail;
        lbomp__energy_msg(e->note, sizeof e->note, "unavailable: %s; perf: %s; msr: %s", why_pc,
                          why_perf, why_msr);
ok:
        e->available = e->reader != NULL;
        e->last_sample_s = now_s();
        free(why_msr);
        free(why_perf);
        free(why_pc);
        *out = e;
        return 0;
fail:
        free(why_msr);
        free(why_perf);
        free(why_pc);
        lbomp__energy_close(e);
        return -ENOMEM;
}

void lbomp__energy_close(struct lbomp__energy *e)
{
        if (!e)
                return;
        lbomp__energy_reset(e);
        free(e);
}

int lbomp__energy_available(const struct lbomp__energy *e)
{
        return e ? e->available : 0;
}

const char *lbomp__energy_reader(const struct lbomp__energy *e)
{
        return e && e->available ? e->reader : NULL;
}

const char *lbomp__energy_note(const struct lbomp__energy *e)
{
        return e ? e->note : "unavailable: no energy object";
}

int lbomp__energy_ndomains(const struct lbomp__energy *e)
{
        return e ? e->ndom : 0;
}

const char *lbomp__energy_domain_name(const struct lbomp__energy *e, int i)
{
        return e && i >= 0 && i < e->ndom ? e->dom[i].name : NULL;
}

int lbomp__energy_domain_is_package(const struct lbomp__energy *e, int i)
{
        return e && i >= 0 && i < e->ndom ? e->dom[i].is_package : 0;
}

int lbomp__energy_sample(struct lbomp__energy *e)
{
        if (!e)
                return -EINVAL;
        if (!e->available)
                return -ENODATA;

        const char *reader = e->reader;
        double now = now_s();
        double interval = now - e->last_sample_s;
        double budget_j = ENERGY_PLAUSIBLE_W *
                          (interval > ENERGY_MIN_INTERVAL_S ? interval : ENERGY_MIN_INTERVAL_S);
        char why[LBOMP__ENERGY_WHY];

        for (int i = 0; i < e->nctr; i++) {
                struct lbomp__energy_counter *c = &e->ctr[i];
                const char *dname = e->dom[c->domain].name;
                uint64_t raw = 0, delta;

                why[0] = '\0';
                if (c->read(c, &raw, why, sizeof why) < 0) {
                        energy_fail(e, "%s: %s (read fine at open; %lu samples since)", reader, why,
                                    e->nsamples);
                        return -ENODATA;
                }
                if (raw > c->max) {
                        energy_fail(e, "%s: %s: raw value %llu above the counter's maximum %llu",
                                    reader, dname, (unsigned long long)raw,
                                    (unsigned long long)c->max);
                        return -ENODATA;
                }
                if (raw >= c->prev) {
                        delta = raw - c->prev;
                } else if (c->wraps) {
                        /*
                         * The counter runs from 0 to max and starts again at 0. powercap gives
                         * max (max_energy_range_uj) but not the step, so one wrap may be off by
                         * one hardware unit (~15-61 uJ): far below anything we report.
                         */
                        delta = (c->max - c->prev) + raw + 1;
                } else {
                        energy_fail(e, "%s: %s: counter went backwards (%llu -> %llu)", reader,
                                    dname, (unsigned long long)c->prev, (unsigned long long)raw);
                        return -ENODATA;
                }
                double j = (double)delta * c->scale;

                if (!(j >= 0.0) || j > budget_j) {
                        energy_fail(e,
                                    "%s: %s: counter moved %llu -> %llu, %.6g J in %.3f s, more "
                                    "than %.0f W: reset or garbage, not energy",
                                    reader, dname, (unsigned long long)c->prev,
                                    (unsigned long long)raw, j, interval, ENERGY_PLAUSIBLE_W);
                        return -ENODATA;
                }
                c->prev = raw;
                e->dom[c->domain].total_j += j;
        }
        e->last_sample_s = now;
        e->nsamples++;
        return 0;
}

double lbomp__energy_total_j(const struct lbomp__energy *e, int i)
{
        if (!e || !e->available || i < 0 || i >= e->ndom)
                return NAN;
        return e->dom[i].total_j;
}

double lbomp__energy_package_j(const struct lbomp__energy *e)
{
        if (!e || !e->available)
                return NAN;
        double sum = 0.0;
        int npkg = 0;

        for (int i = 0; i < e->ndom; i++) {
                if (e->dom[i].is_package) {
                        sum += e->dom[i].total_j;
                        npkg++;
                }
        }
        /* Readers refuse to open without a package, but a sum over nothing must not read 0 J. */
        return npkg ? sum : NAN;
}
