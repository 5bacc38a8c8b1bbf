/*
 * powercap.c — the preferred energy reader: the Linux powercap tree (/sys/class/powercap, or any
 * directory laid out like it). It maps the zones intel-rapl:N (packages, also used by AMD) and
 * intel-rapl:N:M (core, uncore, dram), plus intel-rapl-mmio:* and psys where present, to domains,
 * and decides which of them are packages so that psys and a second (MMIO) view of the same
 * package are never added into the package total. Deeper zones (N:M:K) are not read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

enum zone_kind {
        ZONE_RAPL, /* intel-rapl: the MSR-backed driver, one zone per package */
        ZONE_MMIO, /* intel-rapl-mmio: the same package counters seen through MMIO */
};

struct zone {
        enum zone_kind kind;
        unsigned n;
        int m;        /* sub-zone index, -1 for a top-level zone */
        char dir[48]; /* entry name under the root */
        char *dname;  /* domain name once probed, NULL if skipped */
};

/* Accepts exactly "<prefix>N" and "<prefix>N:M" with decimal N, M: nothing else is a RAPL zone. */
static int parse_index(const char *s, unsigned *out, const char **end)
{
        unsigned long v = 0;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
                v = v * 10 + (unsigned long)(*p - '0');
                if (v > 65535)
                        return -1;
        }
        *out = (unsigned)v;
        *end = p;
        return 0;
}

static int parse_zone(const char *name, struct zone *z)
{
        static const struct {
                const char *prefix;
                enum zone_kind kind;
        } kinds[] = {{"intel-rapl:", ZONE_RAPL}, {"intel-rapl-mmio:", ZONE_MMIO}};
        const char *p = NULL;

        if (strlen(name) >= sizeof z->dir)
                return -1;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
                size_t len = strlen(kinds[k].prefix);

                if (strncmp(name, kinds[k].prefix, len) == 0) {
                        z->kind = kinds[k].kind;
                        p = name + len;
                }
        }
        if (!p || parse_index(p, &z->n, &p) < 0)
                return -1;
        z->m = -1;
        if (*p == ':') {
                unsigned m;

                if (parse_index(p + 1, &m, &p) < 0)
                        return -1;
                z->m = (int)m;
        }
        if (*p != '\0')
                return -1;
        strcpy(z->dir, name);
        z->dname = NULL;
        return 0;
}

static int zone_cmp(const void *a, const void *b)
{
        const struct zone *x = a, *y = b;

        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        if (x->n != y->n)
                return x->n < y->n ? -1 : 1;
        if (x->m != y->m)
                return x->m < y->m ? -1 : 1;
        return 0;
}

static const char *eacces_hint(int err)
{
        /* Since the PLATYPUS side channel (CVE-2020-8694) kernels make energy_uj root-only. */
        return err == -EACCES || err == -EPERM ? " (energy_uj is root-only since the 2020 "
                                                 "PLATYPUS fix, CVE-2020-8694)"
                                               : "";
}

static int read_u64_file(const char *path, uint64_t max, uint64_t *out, char *why, size_t whylen)
{
        char buf[64], pwhy[256];
        int n = lbomp__energy_read_text(path, buf, sizeof buf);

        if (n == -EFBIG) {
                lbomp__energy_msg(why, whylen, "%s: longer than %zu bytes, not a counter", path,
                                  sizeof buf - 1);
                return n;
        }
        if (n < 0) {
                lbomp__energy_msg(why, whylen, "%s: %s%s", path, strerror(-n), eacces_hint(n));
                return n;
        }
        if (lbomp__energy_parse_u64(buf, max, out, pwhy, sizeof pwhy) < 0) {
                lbomp__energy_msg(why, whylen, "%s: %s", path, pwhy);
                return -EINVAL;
        }
        return 0;
}

static int pc_read(const struct lbomp__energy_counter *c, uint64_t *raw, char *why, size_t whylen)
{
        /*
         * Reopened by path each time rather than kept open: sysfs would allow pread on one fd,
         * but a tree that is replaced or removed (a fake one, a hot-unplugged zone) must be seen.
         * Cost: one open/read/close per domain per LB window.
         */
        return read_u64_file(c->path, c->max, raw, why, whylen);
}

static int zone_path(char *out, const char *root, const struct zone *z, const char *file, char *why,
                     size_t whylen)
{
        int n = snprintf(out, PATH_MAX, "%s/%s/%s", root, z->dir, file);

        if (n < 0 || n >= PATH_MAX) {
                lbomp__energy_msg(why, whylen, "%s/%s: path too long", root, z->dir);
                return -ENAMETOOLONG;
        }
        return 0;
}

static int read_zone_name(const char *root, const struct zone *z, char *name, size_t size,
                          char *why, size_t whylen)
{
        char path[PATH_MAX], buf[64], q[64];
        int rc = zone_path(path, root, z, "name", why, whylen);

        if (rc < 0)
                return rc;
        int n = lbomp__energy_read_text(path, buf, sizeof buf);

        if (n < 0) {
                lbomp__energy_msg(why, whylen, "%s: %s", path,
                                  n == -EFBIG ? "too long" : strerror(-n));
                return n;
        }
        if (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        /* The name becomes part of a domain name and of JSON keys: keep it plain. */
        int ok = n > 0 && (size_t)n < size;

        for (int i = 0; ok && i < n; i++)
                ok = buf[i] > ' ' && buf[i] < 127 && buf[i] != '/' && buf[i] != '"' &&
                     buf[i] != '\\';
        if (!ok) {
                lbomp__energy_quote(buf, q, sizeof q);
                lbomp__energy_msg(why, whylen, "%s: '%s' is not a zone name", path, q);
                return -EINVAL;
        }
        memcpy(name, buf, (size_t)n + 1);
        return 0;
}

/*
 * Reads one zone's counter range and first value into `c` (its path in `path`, PATH_MAX bytes).
 * The counter is validated here the same way it will be at every sample, so that a zone that
 * cannot be sampled is refused at open rather than failing the first window.
 */
static int probe_zone(const char *root, const struct zone *z, struct lbomp__energy_counter *c,
                      char *path, char *why, size_t whylen)
{
        uint64_t max, v;
        int rc = zone_path(path, root, z, "max_energy_range_uj", why, whylen);

        if (rc < 0 || (rc = read_u64_file(path, UINT64_MAX, &max, why, whylen)) < 0)
                return rc;
        if (max == 0) {
                lbomp__energy_msg(why, whylen, "%s: 0, a counter with no range", path);
                return -EINVAL;
        }
        if ((rc = zone_path(path, root, z, "energy_uj", why, whylen)) < 0 ||
            (rc = read_u64_file(path, max, &v, why, whylen)) < 0)
                return rc;
        memset(c, 0, sizeof *c);
        c->read = pc_read;
        c->fd = -1;
        c->path = path;
        c->max = max;
        c->wraps = 1;
        c->scale = 1e-6;
        c->prev = v;
        return 0;
}

static int list_zones(const char *root, struct zone **out, int *nout, char *why, size_t whylen)
{
        DIR *d = opendir(root);
        struct zone *z = NULL;
        int n = 0, cap = 0;

        if (!d) {
                int err = errno;

                if (err == ENOENT)
                        lbomp__energy_msg(why, whylen, "%s not present", root);
                else if (err == ENOTDIR)
                        lbomp__energy_msg(why, whylen, "%s is not a directory", root);
                else
                        lbomp__energy_msg(why, whylen, "%s: %s", root, strerror(err));
                return -ENODEV;
        }
        for (struct dirent *de; (de = readdir(d));) {
                struct zone tmp;

                if (parse_zone(de->d_name, &tmp) < 0)
                        continue;
                if (n == cap) {
                        int ncap = cap ? 2 * cap : 16;
                        struct zone *nz = realloc(z, (size_t)ncap * sizeof *nz);

                        if (!nz) {
                                closedir(d);
                                free(z);
                                return -ENOMEM;
                        }
                        z = nz;
                        cap = ncap;
                }
                z[n++] = tmp;
        }
        closedir(d);
        if (n == 0) {
                lbomp__energy_msg(why, whylen, "%s has no intel-rapl zones", root);
                free(z);
                return -ENODEV;
        }
        /* readdir order is arbitrary; domains come out as package-0, its subzones, package-1... */
        qsort(z, (size_t)n, sizeof *z, zone_cmp);
        *out = z;
        *nout = n;
        return 0;
}

/* Appends "; skipped <what>: <reason>" to the list of zones left out, as long as it fits. */
static void note_skip(char *skipped, size_t size, const char *what, const char *reason)
{
        size_t len = strlen(skipped);

        if (len + 1 < size)
                lbomp__energy_msg(skipped + len, size - len, "; skipped %s: %s", what, reason);
}

int lbomp__energy_powercap_open(struct lbomp__energy *e, const char *root, char *why, size_t whylen)
{
        struct zone *z = NULL;
        int nz = 0, npkg = 0, rc;
        char *path = malloc(PATH_MAX);
        char *zwhy = malloc(LBOMP__ENERGY_WHY);
        char *skipped = calloc(1, LBOMP__ENERGY_WHY);

        if (!path || !zwhy || !skipped) {
                rc = -ENOMEM;
                goto out;
        }
        rc = list_zones(root, &z, &nz, why, whylen);
        if (rc < 0)
                goto out;
        for (int i = 0; i < nz; i++) {
                char zname[64], dname[160];
                struct lbomp__energy_counter c;
                int is_package = 0, top = z[i].m < 0;

                zwhy[0] = '\0';
                dname[0] = '\0';
                rc = read_zone_name(root, &z[i], zname, sizeof zname, zwhy, LBOMP__ENERGY_WHY);
                int name_ok = rc == 0;

                if (name_ok && top) {
                        int known =
                                z[i].kind == ZONE_MMIO && lbomp__energy_find_domain(e, zname) >= 0;

                        /*
                         * intel-rapl-mmio repeats a package that intel-rapl already gave: keep
                         * it as its own domain but never add it into the package total twice.
                         */
                        is_package = strncmp(zname, "package-", 8) == 0 && !known;
                        snprintf(dname, sizeof dname, "%s%s", known ? "mmio:" : "", zname);
                } else if (name_ok) {
                        const char *parent = NULL;

                        for (int p = 0; p < i; p++)
                                if (z[p].m < 0 && z[p].kind == z[i].kind && z[p].n == z[i].n)
                                        parent = z[p].dname;
                        if (!parent) {
                                lbomp__energy_msg(zwhy, LBOMP__ENERGY_WHY,
                                                  "%s/%s: no readable parent zone", root, z[i].dir);
                                rc = -ENOENT;
                        } else {
                                snprintf(dname, sizeof dname, "%s/%s", parent, zname);
                        }
                }
                if (rc == 0)
                        rc = probe_zone(root, &z[i], &c, path, zwhy, LBOMP__ENERGY_WHY);
                if (rc == -ENOMEM)
                        goto fail;
                if (rc < 0) {
                        /*
                         * A package we cannot read (or a top-level zone whose name we cannot
                         * even read, which may be one) leaves the package total meaningless:
                         * refuse the reader. A sub-zone or psys that fails at open is left out
                         * and named in the note instead.
                         */
                        if (top && (!name_ok || is_package)) {
                                lbomp__energy_msg(why, whylen, "%s", zwhy);
                                rc = -ENODEV;
                                goto fail;
                        }
                        note_skip(skipped, LBOMP__ENERGY_WHY, dname[0] ? dname : z[i].dir, zwhy);
                        continue;
                }
                int d = lbomp__energy_add_domain(e, dname, is_package);

                if (d < 0) {
                        rc = d;
                        goto fail;
                }
                c.domain = d;
                if ((rc = lbomp__energy_add_counter(e, &c)) < 0)
                        goto fail;
                z[i].dname = e->dom[d].name;
                npkg += is_package;
        }
        if (npkg == 0) {
                lbomp__energy_msg(why, whylen, "%s: no package zone among %d intel-rapl zones%s",
                                  root, nz, skipped);
                rc = -ENODEV;
                goto fail;
        }
        lbomp__energy_msg(why, whylen, "%s, %d package%s, %d domain%s%s", root, npkg,
                          npkg > 1 ? "s" : "", e->ndom, e->ndom > 1 ? "s" : "", skipped);
        rc = 0;
        goto out;
fail:
        lbomp__energy_reset(e);
out:
        free(z);
        free(skipped);
        free(zwhy);
        free(path);
        return rc;
}
