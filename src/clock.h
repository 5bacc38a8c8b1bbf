/*
 * clock.h — the time base of task measurement.
 *
 * Task timing reads the time-stamp counter where it is invariant (x86-64 with constant_tsc and
 * nonstop_tsc), else CLOCK_MONOTONIC. Ticks become seconds with a rate calibrated against
 * CLOCK_MONOTONIC over the whole run. This part calls nothing else of the library.
 */
#ifndef LBOMP_CLOCK_H
#define LBOMP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct lbomp__clock {
        bool tsc;
        uint64_t tick0;
        double mono0;
        double ticks_per_s;
};
void lbomp__clock_init(struct lbomp__clock *c);
/* Re-estimates ticks_per_s from the time since init (cheap: two clock reads). */
void lbomp__clock_calibrate(struct lbomp__clock *c);
const char *lbomp__clock_name(const struct lbomp__clock *c);
double lbomp__mono_s(void);
uint64_t lbomp__mono_ns(void);
double lbomp__thread_cpu_s(void);

/* Test hook: when set, replaces CLOCK_MONOTONIC as the tick source of runtimes that do not use
 * the TSC, so tests can feed zero or backwards readings. NULL in every real run. */
extern uint64_t (*lbomp__ticks_hook)(void);

static inline uint64_t lbomp__ticks(bool tsc)
{
#if defined(__x86_64__) || defined(__i386__)
        if (tsc)
                return __builtin_ia32_rdtsc();
#endif
        (void)tsc;
        if (__builtin_expect(lbomp__ticks_hook != NULL, 0))
                return lbomp__ticks_hook();
        return lbomp__mono_ns();
}

#endif
