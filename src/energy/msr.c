/*
 * msr.c — the last-resort energy reader: the RAPL model-specific registers read with pread on
 * /dev/cpu/N/msr (msr module, root with CAP_SYS_RAWIO). Intel: the unit from MSR_RAPL_POWER_UNIT
 * and the package, PP0 (core) and DRAM energy status registers of the first CPU of each package;
 * AMD (family 17h and later) and Hygon: the package register, and the core register of every
 * physical core summed into the package's "core" domain. The counters are 32 bits wide and wrap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "backend.h"

#define MSR_RAPL_POWER_UNIT        0x606
#define MSR_PKG_ENERGY_STATUS      0x611
#define MSR_DRAM_ENERGY_STATUS     0x619
#define MSR_PP0_ENERGY_STATUS      0x639
#define MSR_AMD_RAPL_POWER_UNIT    0xC0010299
#define MSR_AMD_CORE_ENERGY_STATUS 0xC001029A
#define MSR_AMD_PKG_ENERGY_STATUS  0xC001029B
#define ENERGY_STATUS_MASK         0xFFFFFFFFull
#define CPU_DIR                    "/sys/devices/system/cpu"
#define MAX_CPUS                   8192

enum vendor { VENDOR_OTHER, VENDOR_INTEL, VENDOR_AMD };

struct cpu {
        int cpu, pkg, core;
};

static int msr_pread(int fd, uint64_t addr, uint64_t *v)
{
        ssize_t n;

        do
                n = pread(fd, v, sizeof *v, (off_t)addr);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t)sizeof *v)
                return 0;
        return n < 0 ? -errno : -EIO;
}

static int msr_read(const struct lbomp__energy_counter *c, uint64_t *raw, char *why, size_t whylen)
{
        uint64_t v;
        int rc = msr_pread(c->fd, c->addr, &v);

        if (rc < 0) {
                lbomp__energy_msg(why, whylen, "%s: MSR 0x%llx: %s", c->path,
                                  (unsigned long long)c->addr, strerror(-rc));
                return rc;
        }
        *raw = v & ENERGY_STATUS_MASK;
        return 0;
}

static int detect_vendor(int *family, int *model)
{
#if defined(__x86_64__) || defined(__i386__)
        unsigned a, b, c, d;
        char id[13];

        if (!__get_cpuid(0, &a, &b, &c, &d))
                return VENDOR_OTHER;
        memcpy(id, &b, 4);
        memcpy(id + 4, &d, 4);
        memcpy(id + 8, &c, 4);
        id[12] = '\0';
        if (!__get_cpuid(1, &a, &b, &c, &d))
                return VENDOR_OTHER;
        *family = (int)((a >> 8) & 0xf);
        *model = (int)((a >> 4) & 0xf);
        if (*family == 0xf)
                *family += (int)((a >> 20) & 0xff);
        if (*family == 0x6 || *family >= 0xf)
                *model |= (int)((a >> 16) & 0xf) << 4;
        if (strcmp(id, "GenuineIntel") == 0)
                return VENDOR_INTEL;
        if (strcmp(id, "AuthenticAMD") == 0 || strcmp(id, "HygonGenuine") == 0)
                return VENDOR_AMD;
#else
        (void)family;
        (void)model;
#endif
        return VENDOR_OTHER;
}

/*
 * Intel server parts whose DRAM counter uses a fixed 2^-16 J unit instead of the one in
 * MSR_RAPL_POWER_UNIT (the kernel's rapl_defaults_hsw_server list): Haswell-X, Broadwell-X,
 * Skylake-X (and Cascade/Cooper Lake), Ice Lake-X/D, Xeon Phi KNL/KNM.
 */
static int intel_fixed_dram_unit(int family, int model)
{
        static const int models[] = {0x3F, 0x4F, 0x55, 0x6A, 0x6C, 0x57, 0x85};

        if (family != 6)
                return 0;
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
                if (models[i] == model)
                        return 1;
        return 0;
}

static int read_int_file(const char *path, int *out)
{
        char buf[32], why[128];
        uint64_t v;

        if (lbomp__energy_read_text(path, buf, sizeof buf) < 0 ||
            lbomp__energy_parse_u64(buf, INT_MAX, &v, why, sizeof why) < 0)
                return -ENOENT;
        *out = (int)v;
        return 0;
}

static int cpu_cmp(const void *a, const void *b)
{
        const struct cpu *x = a, *y = b;

        if (x->pkg != y->pkg)
                return x->pkg < y->pkg ? -1 : 1;
        if (x->core != y->core)
                return x->core < y->core ? -1 : 1;
        return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* Every online CPU with its package and core, sorted so that the first of each is the lowest. */
static int list_cpus(struct cpu **out, int *nout)
{
        DIR *d = opendir(CPU_DIR);
        struct cpu *v = NULL;
        int n = 0, cap = 0;

        if (!d)
                return -errno;
        for (struct dirent *de; (de = readdir(d));) {
                char path[PATH_MAX], *end;
                long cpu;
                struct cpu c;

                if (strncmp(de->d_name, "cpu", 3) != 0 || de->d_name[3] < '0' ||
                    de->d_name[3] > '9')
                        continue;
                cpu = strtol(de->d_name + 3, &end, 10);
                if (*end || cpu < 0 || cpu >= MAX_CPUS)
                        continue;
                c.cpu = (int)cpu;
                snprintf(path, sizeof path, CPU_DIR "/cpu%ld/topology/physical_package_id", cpu);
                if (read_int_file(path, &c.pkg) < 0)
                        continue; /* offline CPUs have no topology */
                snprintf(path, sizeof path, CPU_DIR "/cpu%ld/topology/core_id", cpu);
                if (read_int_file(path, &c.core) < 0)
                        c.core = c.cpu;
                if (n == cap) {
                        int ncap = cap ? 2 * cap : 64;
                        struct cpu *nv = realloc(v, (size_t)ncap * sizeof *nv);

                        if (!nv) {
                                free(v);
                                closedir(d);
                                return -ENOMEM;
                        }
                        v = nv;
                        cap = ncap;
                }
                v[n++] = c;
        }
        closedir(d);
        if (n == 0) {
                free(v);
                return -ENOENT;
        }
        qsort(v, (size_t)n, sizeof *v, cpu_cmp);
        *out = v;
        *nout = n;
        return 0;
}

static int open_msr(int cpu, char *why, size_t whylen)
{
        char path[64];
        int fd;

        snprintf(path, sizeof path, "/dev/cpu/%d/msr", cpu);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
                lbomp__energy_msg(why, whylen, "%s not present (msr module not loaded)", path);
        else if (errno == EACCES || errno == EPERM)
                lbomp__energy_msg(why, whylen, "%s: %s (needs root with CAP_SYS_RAWIO)", path,
                                  strerror(errno));
        else
                lbomp__energy_msg(why, whylen, "%s: %s", path, strerror(errno));
        return -errno;
}

/*
 * Adds one counter on `cpu` for register `addr` to domain `dname`. A sub-domain register that
 * cannot be read or reads 0 (the kernel's test for "this domain does not exist") is skipped:
 * returns 1. A package register must work: any failure returns a negative errno with `why`.
 */
static int add_msr(struct lbomp__energy *e, int cpu, uint64_t addr, const char *dname,
                   int is_package, double scale, char *why, size_t whylen)
{
        int fd = open_msr(cpu, why, whylen), d, rc;
        uint64_t v = 0;

        if (fd < 0)
                return fd;
        rc = msr_pread(fd, addr, &v);
        if (rc < 0 || (v & ENERGY_STATUS_MASK) == 0) {
                close(fd);
                if (!is_package)
                        return 1;
                if (rc < 0)
                        lbomp__energy_msg(why, whylen,
                                          "/dev/cpu/%d/msr: MSR 0x%llx: %s (no RAPL here)", cpu,
                                          (unsigned long long)addr, strerror(-rc));
                else
                        lbomp__energy_msg(why, whylen, "/dev/cpu/%d/msr: MSR 0x%llx reads 0", cpu,
                                          (unsigned long long)addr);
                return rc < 0 ? rc : -ENODEV;
        }
        d = lbomp__energy_find_domain(e, dname);
        if (d < 0 && (d = lbomp__energy_add_domain(e, dname, is_package)) < 0) {
                close(fd);
                return d;
        }

        struct lbomp__energy_counter c = {
                .domain = d,
                .read = msr_read,
                .fd = fd,
                .path = (char *)dname,
                .addr = addr,
                .max = ENERGY_STATUS_MASK,
                .wraps = 1,
                .scale = scale,
                .prev = v & ENERGY_STATUS_MASK,
        };

        if ((rc = lbomp__energy_add_counter(e, &c)) < 0)
                close(fd);
        return rc;
}

int lbomp__energy_msr_open(struct lbomp__energy *e, char *why, size_t whylen)
{
        int family = 0, model = 0, vendor = detect_vendor(&family, &model);
        struct cpu *cpus = NULL;
        int ncpu = 0, npkg = 0, rc, fd;
        uint64_t unit_msr, unit;
        double scale, dram_scale;

        if (vendor == VENDOR_OTHER) {
                lbomp__energy_msg(why, whylen, "not an Intel or AMD x86 CPU");
                return -ENODEV;
        }
        if (vendor == VENDOR_AMD && family < 0x17) {
                lbomp__energy_msg(why, whylen, "AMD family 0x%x has no RAPL MSRs", family);
                return -ENODEV;
        }
        rc = list_cpus(&cpus, &ncpu);
        if (rc == -ENOMEM)
                return rc;
        if (rc < 0) {
                lbomp__energy_msg(why, whylen, CPU_DIR ": no CPU topology");
                return -ENODEV;
        }
        if ((fd = open_msr(cpus[0].cpu, why, whylen)) < 0) {
                rc = -ENODEV;
                goto fail;
        }
        unit_msr = vendor == VENDOR_AMD ? MSR_AMD_RAPL_POWER_UNIT : MSR_RAPL_POWER_UNIT;
        rc = msr_pread(fd, unit_msr, &unit);
        close(fd);
        if (rc < 0) {
                lbomp__energy_msg(why, whylen,
                                  "/dev/cpu/%d/msr: MSR 0x%llx (RAPL unit): %s (no RAPL here)",
                                  cpus[0].cpu, (unsigned long long)unit_msr, strerror(-rc));
                rc = -ENODEV;
                goto fail;
        }
        /* Energy status unit: bits 12:8, in 1/2^ESU joules. */
        scale = 1.0 / (double)(1ull << ((unit >> 8) & 0x1f));
        dram_scale = intel_fixed_dram_unit(family, model) ? 1.0 / 65536.0 : scale;

        for (int i = 0; i < ncpu; i++) {
                int first_of_pkg = i == 0 || cpus[i].pkg != cpus[i - 1].pkg;
                int first_of_core = first_of_pkg || cpus[i].core != cpus[i - 1].core;
                char pkg[32], sub[48];

                snprintf(pkg, sizeof pkg, "package-%d", cpus[i].pkg);
                if (first_of_pkg) {
                        uint64_t addr = vendor == VENDOR_AMD ? MSR_AMD_PKG_ENERGY_STATUS
                                                             : MSR_PKG_ENERGY_STATUS;

                        rc = add_msr(e, cpus[i].cpu, addr, pkg, 1, scale, why, whylen);
                        if (rc < 0)
                                goto fail;
                        npkg++;
                        if (vendor == VENDOR_INTEL) {
                                snprintf(sub, sizeof sub, "%s/core", pkg);
                                rc = add_msr(e, cpus[i].cpu, MSR_PP0_ENERGY_STATUS, sub, 0, scale,
                                             why, whylen);
                                if (rc < 0)
                                        goto fail;
                                snprintf(sub, sizeof sub, "%s/dram", pkg);
                                rc = add_msr(e, cpus[i].cpu, MSR_DRAM_ENERGY_STATUS, sub, 0,
                                             dram_scale, why, whylen);
                                if (rc < 0)
                                        goto fail;
                        }
                }
                /* AMD counts core energy per physical core: the package's "core" is their sum. */
                if (vendor == VENDOR_AMD && first_of_core) {
                        snprintf(sub, sizeof sub, "%s/core", pkg);
                        rc = add_msr(e, cpus[i].cpu, MSR_AMD_CORE_ENERGY_STATUS, sub, 0, scale, why,
                                     whylen);
                        if (rc < 0)
                                goto fail;
                }
        }
        free(cpus);
        lbomp__energy_msg(why, whylen, "/dev/cpu/*/msr, %d package%s, %d domain%s", npkg,
                          npkg > 1 ? "s" : "", e->ndom, e->ndom > 1 ? "s" : "");
        return 0;
fail:
        free(cpus);
        lbomp__energy_reset(e);
        return rc == -ENOMEM ? rc : -ENODEV;
}
