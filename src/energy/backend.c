/*
 * backend.c — the building blocks every energy reader (powercap.c, perf.c, msr.c) uses: the
 * domain and counter lists of the energy object, and the strict text helpers for sysfs files. It
 * calls nothing of the readers nor of energy.c, which chooses among them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

int lbomp__energy_add_domain(struct lbomp__energy *e, const char *name, int is_package)
{
        if (e->ndom == e->domcap) {
                int cap = e->domcap ? 2 * e->domcap : 8;
                struct lbomp__energy_domain *d = realloc(e->dom, (size_t)cap * sizeof *d);

                if (!d)
                        return -ENOMEM;
                e->dom = d;
                e->domcap = cap;
        }
        char *copy = strdup(name);

        if (!copy)
                return -ENOMEM;
        e->dom[e->ndom].name = copy;
        e->dom[e->ndom].is_package = is_package;
        e->dom[e->ndom].total_j = 0.0;
        return e->ndom++;
}

int lbomp__energy_add_counter(struct lbomp__energy *e, const struct lbomp__energy_counter *c)
{
        if (e->nctr == e->ctrcap) {
                int cap = e->ctrcap ? 2 * e->ctrcap : 8;
                struct lbomp__energy_counter *n = realloc(e->ctr, (size_t)cap * sizeof *n);

                if (!n)
                        return -ENOMEM;
                e->ctr = n;
                e->ctrcap = cap;
        }
        struct lbomp__energy_counter copy = *c;

        copy.path = NULL;
        if (c->path && !(copy.path = strdup(c->path)))
                return -ENOMEM;
        e->ctr[e->nctr++] = copy;
        return 0;
}

int lbomp__energy_find_domain(const struct lbomp__energy *e, const char *name)
{
        for (int i = 0; i < e->ndom; i++)
                if (strcmp(e->dom[i].name, name) == 0)
                        return i;
        return -1;
}

void lbomp__energy_reset(struct lbomp__energy *e)
{
        for (int i = 0; i < e->nctr; i++) {
                if (e->ctr[i].fd >= 0)
                        close(e->ctr[i].fd);
                free(e->ctr[i].path);
        }
        for (int i = 0; i < e->ndom; i++)
                free(e->dom[i].name);
        free(e->ctr);
        free(e->dom);
        e->ctr = NULL;
        e->dom = NULL;
        e->nctr = e->ctrcap = e->ndom = e->domcap = 0;
}

int lbomp__energy_read_text(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        size_t len = 0;
        int rc = 0;

        for (;;) {
                if (len == size - 1) {
                        char extra;
                        ssize_t r = read(fd, &extra, 1);

                        if (r > 0)
                                rc = -EFBIG;
                        else if (r < 0)
                                rc = -errno;
                        break;
                }
                ssize_t r = read(fd, buf + len, size - 1 - len);

                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        rc = -errno;
                        break;
                }
                if (r == 0)
                        break;
                len += (size_t)r;
        }
        close(fd);
        if (rc < 0)
                return rc;
        /* A NUL inside a sysfs value is garbage: make it visible so that the strict parsers
         * reject it instead of stopping at it. */
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '\0')
                        buf[i] = '?';
        buf[len] = '\0';
        return (int)len;
}

void lbomp__energy_msg(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;

        if (size == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

void lbomp__energy_quote(const char *s, char *out, size_t size)
{
        const size_t keep = 40; /* a message names the value, it does not dump a file */
        size_t n = 0;

        if (size == 0)
                return;
        for (; s[n] && n < keep && n + 1 < size; n++)
                out[n] = isprint((unsigned char)s[n]) ? s[n] : '?';
        out[n] = '\0';
        if (s[n] && n + 4 <= size)
                memcpy(out + n, "...", 4);
}

int lbomp__energy_parse_u64(const char *s, uint64_t max, uint64_t *out, char *why, size_t whylen)
{
        size_t n = strlen(s);
        char q[64];

        /* sysfs ends every value with exactly one newline; anything else is not a sysfs number. */
        if (n > 0 && s[n - 1] == '\n')
                n--;
        if (n == 0) {
                lbomp__energy_msg(why, whylen, "empty");
                return -EINVAL;
        }
        {
                char tmp[64];
                size_t k = n < sizeof tmp - 1 ? n : sizeof tmp - 1;

                memcpy(tmp, s, k);
                tmp[k] = '\0';
                lbomp__energy_quote(tmp, q, sizeof q);
        }
        if (s[0] == '-') {
                lbomp__energy_msg(why, whylen, "'%s' is negative", q);
                return -EINVAL;
        }
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9') {
                        lbomp__energy_msg(why, whylen, "'%s' is not an unsigned decimal", q);
                        return -EINVAL;
                }
                unsigned d = (unsigned)(s[i] - '0');

                if (v > (UINT64_MAX - d) / 10) {
                        lbomp__energy_msg(why, whylen, "'%s' does not fit in 64 bits", q);
                        return -EINVAL;
                }
                v = v * 10 + d;
        }
        if (v > max) {
                lbomp__energy_msg(why, whylen, "'%s' exceeds %llu", q, (unsigned long long)max);
                return -EINVAL;
        }
        *out = v;
        return 0;
}
