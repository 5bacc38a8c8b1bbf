/*
 * clock.c — the time base of task measurement.
 *
 * Every task is timed with one counter read at its start (the previous task's end), so the read
 * must cost a few nanoseconds: the invariant TSC where the CPU has one, else CLOCK_MONOTONIC
 * through the vDSO. Ticks are turned into seconds with a rate re-estimated against
 * CLOCK_MONOTONIC over the whole run, so no start-up calibration delay is needed.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

uint64_t (*lbomp__ticks_hook)(void);

uint64_t lbomp__mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double lbomp__mono_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double lbomp__thread_cpu_s(void)
{
        struct timespec ts;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
                return 0.0;
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The TSC is only a clock when it ticks at a constant rate and keeps ticking in deep C-states. */
static bool tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
        FILE *f = fopen("/proc/cpuinfo", "r");
        if (!f)
                return false;
        char line[4096];
        bool constant = false, nonstop = false;
        while (fgets(line, sizeof line, f)) {
                if (strncmp(line, "flags", 5) != 0)
                        continue;
                constant = strstr(line, " constant_tsc") != NULL;
                nonstop = strstr(line, " nonstop_tsc") != NULL;
                break;
        }
        fclose(f);
        return constant && nonstop;
#else
        return false;
#endif
}

void lbomp__clock_init(struct lbomp__clock *c)
{
        c->tsc = tsc_invariant();
        double m0 = lbomp__mono_s();
        c->tick0 = lbomp__ticks(c->tsc);
        c->mono0 = m0;
        c->ticks_per_s = c->tsc ? 0.0 : 1e9;
        if (c->tsc) {
                /* A first estimate over ~200 µs; refined at every window end. */
                double m;
                do
                        m = lbomp__mono_s();
                while (m - m0 < 200e-6);
                c->ticks_per_s = (double)(lbomp__ticks(true) - c->tick0) / (m - m0);
                if (!(c->ticks_per_s > 0))
                        c->tsc = false, c->ticks_per_s = 1e9, c->tick0 = lbomp__mono_ns();
        }
}

void lbomp__clock_calibrate(struct lbomp__clock *c)
{
        if (!c->tsc)
                return;
        double dt = lbomp__mono_s() - c->mono0;
        uint64_t dk = lbomp__ticks(true) - c->tick0;
        if (dt > 1e-3 && dk > 0)
                c->ticks_per_s = (double)dk / dt;
}

const char *lbomp__clock_name(const struct lbomp__clock *c)
{
        return c->tsc ? "tsc" : "clock_monotonic";
}
