/*
 * perf.c — the second energy reader: the perf `power` PMU (/sys/bus/event_source/devices/power),
 * used when the powercap tree is missing or unreadable. It opens one system-wide counter per event
 * (energy-pkg, energy-cores, energy-ram, energy-gpu, energy-psys) on the CPU the PMU names for each
 * package (its cpumask), and converts with the event's .scale after checking its .unit. The kernel
 * accumulates these counters in 64 bits, so they do not wrap; a step backwards is garbage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

#define PMU_DIR  "/sys/bus/event_source/devices/power"
#define CPU_DIR  "/sys/devices/system/cpu"
#define MAX_CPUS 8192 /* bound on the cpumask we accept: larger is garbage, not a machine */

static const struct {
        const char *event;
        const char *suffix; /* domain name after "package-N" */
        int is_package;
        int once; /* system-wide: read on the first package's CPU only */
} events[] = {
        {"energy-pkg", "", 1, 0},        {"energy-cores", "/core", 0, 0},
        {"energy-gpu", "/uncore", 0, 0}, {"energy-ram", "/dram", 0, 0},
        {"energy-psys", "psys", 0, 1},
};

static int perf_read(const struct lbomp__energy_counter *c, uint64_t *raw, char *why, size_t whylen)
{
        uint64_t v;
        ssize_t n;

        do
                n = read(c->fd, &v, sizeof v);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof v) {
                lbomp__energy_msg(why, whylen, "read of perf counter for %s: %s",
                                  c->path ? c->path : "?", n < 0 ? strerror(errno) : "short read");
                return n < 0 ? -errno : -EIO;
        }
        *raw = v;
        return 0;
}

/* "event=0x02\n" is the only form the power PMU uses; anything else we do not guess at. */
static int parse_event(const char *s, uint64_t *config)
{
        const char *p = s + strlen("event=0x");
        uint64_t v = 0;
        int digits = 0;

        if (strncmp(s, "event=0x", strlen("event=0x")) != 0)
                return -EINVAL;
        for (; *p && *p != '\n'; p++, digits++) {
                int d;

                if (*p >= '0' && *p <= '9')
                        d = *p - '0';
                else if (*p >= 'a' && *p <= 'f')
                        d = *p - 'a' + 10;
                else if (*p >= 'A' && *p <= 'F')
                        d = *p - 'A' + 10;
                else
                        return -EINVAL;
                if (digits >= 8)
                        return -EINVAL;
                v = v * 16 + (uint64_t)d;
        }
        if (digits == 0 || (*p == '\n' && p[1] != '\0'))
                return -EINVAL;
        *config = v;
        return 0;
}

static int parse_scale(const char *s, double *out)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (end == s || errno || (*end != '\0' && strcmp(end, "\n") != 0) || !isfinite(v) ||
            v <= 0.0)
                return -EINVAL;
        *out = v;
        return 0;
}

/* Parses a cpu list ("0", "0,24", "0-3,8") into cpus[], at most `max` entries. */
static int parse_cpulist(const char *s, int *cpus, int max, int *n)
{
        const char *p = s;

        *n = 0;
        while (*p && *p != '\n') {
                char *end;
                long a = strtol(p, &end, 10), b;

                if (end == p || a < 0 || a >= MAX_CPUS)
                        return -EINVAL;
                b = a;
                p = end;
                if (*p == '-') {
                        b = strtol(p + 1, &end, 10);
                        if (end == p + 1 || b < a || b >= MAX_CPUS)
                                return -EINVAL;
                        p = end;
                }
                for (long c = a; c <= b; c++) {
                        if (*n == max)
                                return -E2BIG;
                        cpus[(*n)++] = (int)c;
                }
                if (*p == ',')
                        p++;
                else if (*p && *p != '\n')
                        return -EINVAL;
        }
        return *n > 0 ? 0 : -EINVAL;
}

static int cpu_package(int cpu, int *pkg)
{
        char path[128], buf[32], why[128];
        uint64_t v;

        snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/physical_package_id", cpu);
        if (lbomp__energy_read_text(path, buf, sizeof buf) < 0 ||
            lbomp__energy_parse_u64(buf, INT_MAX, &v, why, sizeof why) < 0)
                return -ENOENT;
        *pkg = (int)v;
        return 0;
}

static int read_paranoid(void)
{
        char buf[32], why[64];
        uint64_t v;
        int neg;

        if (lbomp__energy_read_text("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) < 0)
                return INT_MIN;
        neg = buf[0] == '-';
        if (lbomp__energy_parse_u64(buf + neg, 100, &v, why, sizeof why) < 0)
                return INT_MIN;
        return neg ? -(int)v : (int)v;
}

/* Opens one event on one CPU. Returns 0, or a negative errno with `why` filled. */
static int open_event(struct lbomp__energy *e, int type, int ev, uint64_t config, double scale,
                      int cpu, int pkg, char *why, size_t whylen)
{
        struct perf_event_attr attr;
        char dname[64];
        int fd, d, rc;

        memset(&attr, 0, sizeof attr);
        attr.type = (uint32_t)type;
        attr.size = sizeof attr;
        attr.config = config;
        fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
                int err = errno, par = read_paranoid();

                if ((err == EACCES || err == EPERM) && par != INT_MIN)
                        lbomp__energy_msg(
                                why, whylen,
                                "perf_event_open(power/%s, cpu %d): %s (perf_event_paranoid=%d; "
                                "needs CAP_PERFMON or paranoid <= 0)",
                                events[ev].event, cpu, strerror(err), par);
                else
                        lbomp__energy_msg(why, whylen, "perf_event_open(power/%s, cpu %d): %s",
                                          events[ev].event, cpu, strerror(err));
                return -err;
        }
        if (events[ev].once)
                snprintf(dname, sizeof dname, "%s", events[ev].suffix);
        else
                snprintf(dname, sizeof dname, "package-%d%s", pkg, events[ev].suffix);

        struct lbomp__energy_counter c = {
                .read = perf_read,
                .fd = fd,
                .path = dname,
                .max = UINT64_MAX,
                .wraps = 0,
                .scale = scale,
        };

        if ((rc = perf_read(&c, &c.prev, why, whylen)) < 0) {
                close(fd);
                return rc;
        }
        d = lbomp__energy_find_domain(e, dname);
        if (d < 0)
                d = lbomp__energy_add_domain(e, dname, events[ev].is_package);
        if (d < 0) {
                close(fd);
                return d;
        }
        c.domain = d;
        if ((rc = lbomp__energy_add_counter(e, &c)) < 0) {
                close(fd);
                return rc;
        }
        return 0;
}

int lbomp__energy_perf_open(struct lbomp__energy *e, char *why, size_t whylen)
{
        char buf[256], path[PATH_MAX], pwhy[256], skipped[512] = "";
        uint64_t type;
        int *cpus = NULL, ncpu = 0, npkg = 0, rc;

        int n = lbomp__energy_read_text(PMU_DIR "/type", buf, sizeof buf);

        if (n == -ENOENT) {
                lbomp__energy_msg(why, whylen, "no power PMU (" PMU_DIR " not present)");
                return -ENODEV;
        }
        if (n < 0 || lbomp__energy_parse_u64(buf, INT32_MAX, &type, pwhy, sizeof pwhy) < 0) {
                lbomp__energy_msg(why, whylen, PMU_DIR "/type: %s", n < 0 ? strerror(-n) : pwhy);
                return -ENODEV;
        }
        if (!(cpus = malloc(MAX_CPUS * sizeof *cpus)))
                return -ENOMEM;
        n = lbomp__energy_read_text(PMU_DIR "/cpumask", buf, sizeof buf);
        if (n < 0 || parse_cpulist(buf, cpus, MAX_CPUS, &ncpu) < 0) {
                lbomp__energy_msg(why, whylen, PMU_DIR "/cpumask: %s",
                                  n < 0 ? strerror(-n) : "not a cpu list");
                rc = -ENODEV;
                goto fail;
        }
        for (int ev = 0; ev < (int)(sizeof events / sizeof events[0]); ev++) {
                uint64_t config;
                double scale;

                /* The PMU lists only the events this CPU has: a missing file is not an error. */
                snprintf(path, sizeof path, PMU_DIR "/events/%s", events[ev].event);
                if (lbomp__energy_read_text(path, buf, sizeof buf) < 0) {
                        if (events[ev].is_package) {
                                lbomp__energy_msg(why, whylen, "%s not readable", path);
                                rc = -ENODEV;
                                goto fail;
                        }
                        continue;
                }
                int bad = parse_event(buf, &config) < 0;

                snprintf(path, sizeof path, PMU_DIR "/events/%s.scale", events[ev].event);
                bad = bad || lbomp__energy_read_text(path, buf, sizeof buf) < 0 ||
                      parse_scale(buf, &scale) < 0;
                snprintf(path, sizeof path, PMU_DIR "/events/%s.unit", events[ev].event);
                bad = bad || lbomp__energy_read_text(path, buf, sizeof buf) < 0 ||
                      strcmp(buf, "Joules\n") != 0;
                if (bad) {
                        lbomp__energy_msg(pwhy, sizeof pwhy,
                                          "%s: encoding, .scale or .unit not understood",
                                          events[ev].event);
                        if (events[ev].is_package) {
                                lbomp__energy_msg(why, whylen, "%s", pwhy);
                                rc = -ENODEV;
                                goto fail;
                        }
                        lbomp__energy_msg(skipped + strlen(skipped),
                                          sizeof skipped - strlen(skipped), "; skipped %s", pwhy);
                        continue;
                }
                for (int k = 0; k < (events[ev].once ? 1 : ncpu); k++) {
                        int pkg = k;

                        if (cpu_package(cpus[k], &pkg) < 0)
                                pkg = k; /* no topology in sysfs: number packages in mask order */
                        rc = open_event(e, (int)type, ev, config, scale, cpus[k], pkg, pwhy,
                                        sizeof pwhy);
                        if (rc == -ENOMEM)
                                goto fail;
                        if (rc < 0 && events[ev].is_package) {
                                lbomp__energy_msg(why, whylen, "%s", pwhy);
                                rc = -ENODEV;
                                goto fail;
                        }
                        if (rc < 0) {
                                lbomp__energy_msg(skipped + strlen(skipped),
                                                  sizeof skipped - strlen(skipped), "; skipped %s",
                                                  pwhy);
                                break;
                        }
                        npkg += events[ev].is_package;
                }
        }
        free(cpus);
        lbomp__energy_msg(why, whylen, "power PMU, %d package%s, %d domain%s%s", npkg,
                          npkg > 1 ? "s" : "", e->ndom, e->ndom > 1 ? "s" : "", skipped);
        return 0;
fail:
        free(cpus);
        lbomp__energy_reset(e);
        return rc;
}
