/*
 * energy.h — the energy counters (RAPL) as the rest of lbomp sees them: open the best reader the
 * machine offers, sample it at LB window boundaries, read joules per domain and per package.
 * Three readers sit behind this header, in order of preference: the powercap sysfs tree, the perf
 * `power` PMU, and the MSRs through /dev/cpu/N/msr. "Unavailable" is an answer, not an error: the
 * object then says why in one line and every figure is NAN, so the run goes on and the report can
 * print null with the reason. Internal to the library; not thread-safe (one caller at a time, the
 * thread that closes a step).
 */
#ifndef LBOMP_ENERGY_H
#define LBOMP_ENERGY_H

struct lbomp__energy; /* opaque */

/*
 * Opens the best available reader: powercap tree at `powercap_root` (NULL means
 * /sys/class/powercap), else the perf `power` PMU, else /dev/cpu/N/msr. When `powercap_root` is
 * given, only that tree is tried: a user or a test that names a tree wants that tree, not a
 * silent fallback to the host's counters. The counters are read once here: totals start at 0.
 * Unavailability is NOT an error: returns 0 and an object whose lbomp__energy_available() is 0
 * with a one-line reason. Returns -EINVAL for out == NULL, -ENOMEM only on allocation failure
 * (then *out is NULL).
 */
int lbomp__energy_open(struct lbomp__energy **out, const char *powercap_root);

/* Closes the reader's files and frees the object. Accepts NULL. */
void lbomp__energy_close(struct lbomp__energy *e);

/* 1 when the counters are being read, 0 otherwise (also for NULL). */
int lbomp__energy_available(const struct lbomp__energy *e);

/* "powercap" | "perf" | "msr", or NULL when unavailable (static strings). */
const char *lbomp__energy_reader(const struct lbomp__energy *e);

/*
 * One line, no newline, valid until the next sample or close. When unavailable, the reason, e.g.
 * "unavailable: /sys/class/powercap not present; perf: ...; msr: ..."; when available, which
 * reader and why the preferred ones were not used, e.g. "perf: power PMU, 2 packages (powercap:
 * ...)". Never NULL (a static string for a NULL object).
 */
const char *lbomp__energy_note(const struct lbomp__energy *e);

/*
 * Domains: "package-0", "package-0/core", "package-0/dram", "package-1/uncore", "psys", ...
 * The list is fixed at open; it stays (with NAN totals) if the object turns unavailable later.
 * Out-of-range indexes give NULL / 0 / NAN.
 */
int lbomp__energy_ndomains(const struct lbomp__energy *e);
const char *lbomp__energy_domain_name(const struct lbomp__energy *e, int i);
/* 1 for a whole package (socket or die); 0 for sub-domains, psys and duplicate views. */
int lbomp__energy_domain_is_package(const struct lbomp__energy *e, int i);

/*
 * Reads every counter now and adds the wrap-corrected delta since the previous sample to each
 * domain's running total. If a counter disappears, becomes unreadable or holds garbage (including
 * a jump no processor could make), the object turns unavailable with the reason (totals become
 * NAN): never a negative or a made-up figure. Returns 0 when every counter was read, -ENODATA
 * when the object is unavailable (now or before; the note says why: this is information, not a
 * reason to stop the run), -EINVAL for NULL.
 */
int lbomp__energy_sample(struct lbomp__energy *e);

/* Joules since open, as of the last sample; NAN when unavailable or out of range. */
double lbomp__energy_total_j(const struct lbomp__energy *e, int i);

/* Sum over package domains (never psys nor sub-domains); NAN when unavailable. */
double lbomp__energy_package_j(const struct lbomp__energy *e);

#endif
