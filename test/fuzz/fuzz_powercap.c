/*
 * fuzz_powercap.c — libFuzzer target for the powercap reader (src/energy/powercap.c and the
 * arithmetic of energy.c): the input describes a tree laid out like /sys/class/powercap, which is
 * written into a private temporary folder and opened, sampled twice and closed. Input: lines
 * "entry/file=content" (entry and file from [A-Za-z0-9:._-], no "..", content with "\n" for a
 * newline); a line "@" rewrites the files written so far with the next lines' contents between the
 * two samples, so counters can move, wrap or turn to garbage. Checks beyond "no crash": an
 * available reader gives finite totals >= 0, an unavailable one says why.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "energy.h"

static char root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        if (ftw->level > 0)
                remove(path);
        return 0;
}

static void clear_root(void)
{
        nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int name_ok(const char *s, size_t n)
{
        if (n == 0 || n > 40 || (n <= 2 && s[0] == '.'))
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || strchr(":._-", s[i])))
                        return 0;
        return 1;
}

/* Writes one "entry/file=content" line; ignores lines that do not have that shape. */
static void write_line(const char *line, size_t n)
{
        const char *eq = memchr(line, '=', n), *sl = memchr(line, '/', n);
        if (!eq || !sl || sl > eq || !name_ok(line, (size_t)(sl - line)) ||
            !name_ok(sl + 1, (size_t)(eq - sl - 1)))
                return;
        char dir[128], path[192];
        snprintf(dir, sizeof dir, "%s/%.*s", root, (int)(sl - line), line);
        mkdir(dir, 0700);
        snprintf(path, sizeof path, "%s/%.*s", dir, (int)(eq - sl - 1), sl + 1);
        FILE *f = fopen(path, "w");
        if (!f)
                return;
        const char *c = eq + 1, *end = line + n;
        for (; c < end; c++) {
                if (c + 1 < end && c[0] == '\\' && c[1] == 'n') {
                        fputc('\n', f);
                        c++;
                } else {
                        fputc(*c, f);
                }
        }
        fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        snprintf(root, sizeof root, "/tmp/lbomp-fuzz-powercap-XXXXXX");
        if (!mkdtemp(root))
                abort();
        return 0;
}

static void check(const struct lbomp__energy *e)
{
        if (!lbomp__energy_available(e)) {
                if (!*lbomp__energy_note(e))
                        abort(); /* unavailable must say why */
                return;
        }
        for (int i = 0; i < lbomp__energy_ndomains(e); i++) {
                double j = lbomp__energy_total_j(e, i);
                if (!lbomp__energy_domain_name(e, i) || !(j >= 0) || !isfinite(j))
                        abort();
        }
        double p = lbomp__energy_package_j(e);
        if (!(p >= 0) || !isfinite(p))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 8192)
                return 0;
        clear_root();
        const char *s = (const char *)data, *end = s + size, *second = NULL;
        for (const char *line = s; line < end;) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
                if (n == 1 && line[0] == '@') {
                        second = nl ? nl + 1 : end;
                        break;
                }
                write_line(line, n);
                line += n + 1;
        }
        struct lbomp__energy *e = NULL;
        if (lbomp__energy_open(&e, root) != 0 || !e)
                abort(); /* unavailability is an answer, not an error */
        check(e);
        lbomp__energy_sample(e);
        check(e);
        for (const char *line = second; line && line < end;) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
                write_line(line, n);
                line += n + 1;
        }
        lbomp__energy_sample(e);
        check(e);
        lbomp__energy_close(e);
        return 0;
}
