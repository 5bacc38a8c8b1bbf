/*
 * test_energy.c — proves the energy arithmetic and its refusals on fake powercap trees built
 * under a mkdtemp directory: packages and sub-domains, psys and MMIO views kept out of the package
 * total, wrap-around, counters that disappear, turn into directories or hold garbage at open or
 * mid-run. Each case gives the right joules or NAN with a reason, never a crash or a negative.
 * The last case opens the real host and checks that "unavailable" names its reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "case.h"
#include "energy.h"

static const char *test_name;
static char root[256];

/* Unavailable means every figure is NAN and the note starts with "unavailable: ". */
#define ASSERT_UNAVAILABLE(e)                                                                      \
        do {                                                                                       \
                ASSERT_EQ(lbomp__energy_available(e), 0);                                          \
                ASSERT_TRUE(lbomp__energy_reader(e) == NULL);                                      \
                ASSERT_TRUE(strncmp(lbomp__energy_note(e), "unavailable: ", 13) == 0);             \
                ASSERT_TRUE(strchr(lbomp__energy_note(e), '\n') == NULL);                          \
                ASSERT_NAN(lbomp__energy_package_j(e));                                            \
                for (int i_ = 0; i_ < lbomp__energy_ndomains(e); i_++)                             \
                        ASSERT_NAN(lbomp__energy_total_j(e, i_));                                  \
                ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);                                      \
        } while (0)

/* Never a negative: every total is NAN or >= 0. */
#define ASSERT_SANE(e)                                                                             \
        do {                                                                                       \
                for (int i_ = 0; i_ < lbomp__energy_ndomains(e); i_++) {                           \
                        double t_ = lbomp__energy_total_j(e, i_);                                  \
                        if (!(isnan(t_) || t_ >= 0.0))                                             \
                                FAIL_AT("domain %d total %.9f is negative", i_, t_);               \
                }                                                                                  \
        } while (0)

static void put(const char *rel, const char *content)
{
        char path[512], tmp[520];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", root, rel);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        f = fopen(tmp, "w");
        if (!f || fputs(content, f) < 0 || fclose(f) != 0) {
                perror(tmp);
                exit(2); /* the test itself cannot run: not a verdict on the library */
        }
        if (rename(tmp, path) != 0) {
                perror(path);
                exit(2);
        }
}

static void put_u64(const char *zone, const char *file, uint64_t v)
{
        char rel[256], buf[32];

        snprintf(rel, sizeof rel, "%s/%s", zone, file);
        snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)v);
        put(rel, buf);
}

static void zone(const char *dir, const char *name, uint64_t max, uint64_t energy)
{
        char path[512], rel[256], buf[80];

        snprintf(path, sizeof path, "%s/%s", root, dir);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
                perror(path);
                exit(2);
        }
        snprintf(rel, sizeof rel, "%s/name", dir);
        snprintf(buf, sizeof buf, "%s\n", name);
        put(rel, buf);
        put_u64(dir, "max_energy_range_uj", max);
        put_u64(dir, "energy_uj", energy);
}

static void energy(const char *dir, uint64_t v)
{
        put_u64(dir, "energy_uj", v);
}

static void energy_text(const char *dir, const char *text)
{
        char rel[256];

        snprintf(rel, sizeof rel, "%s/energy_uj", dir);
        put(rel, text);
}

static void remove_path(const char *rel)
{
        char path[512];

        snprintf(path, sizeof path, "%s/%s", root, rel);
        if (unlink(path) != 0) {
                perror(path);
                exit(2);
        }
}

static int find(const struct lbomp__energy *e, const char *name)
{
        for (int i = 0; i < lbomp__energy_ndomains(e); i++)
                if (strcmp(lbomp__energy_domain_name(e, i), name) == 0)
                        return i;
        return -1;
}

#define RANGE 262143328850ull /* max_energy_range_uj of a real Xeon package */

static int open_ok(struct lbomp__energy **e)
{
        int rc = lbomp__energy_open(e, root);

        if (rc != 0 || !*e) {
                fprintf(stderr, "%s: lbomp__energy_open: %d\n", test_name, rc);
                return 1;
        }
        return 0;
}

/* ------------------------------------------------------------------------------------------- */

static int t_one_package(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl:0", "package-0", RANGE, 1000000);
        if (open_ok(&e))
                return 1;
        ASSERT_EQ(lbomp__energy_available(e), 1);
        ASSERT_STREQ(lbomp__energy_reader(e), "powercap");
        ASSERT_TRUE(strncmp(lbomp__energy_note(e), "powercap: ", 10) == 0);
        ASSERT_CONTAINS(lbomp__energy_note(e), "1 package");
        ASSERT_EQ(lbomp__energy_ndomains(e), 1);
        ASSERT_STREQ(lbomp__energy_domain_name(e, 0), "package-0");
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 0), 1);
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 0.0, 0.0);
        ASSERT_NEAR(lbomp__energy_package_j(e), 0.0, 0.0);

        energy("intel-rapl:0", 3500000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 2.5, 1e-12);
        ASSERT_EQ(lbomp__energy_sample(e), 0); /* nothing moved: nothing added */
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 2.5, 1e-12);
        energy("intel-rapl:0", 4000000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_package_j(e), 3.0, 1e-12);
        /* out of range asks get neutral answers */
        ASSERT_TRUE(lbomp__energy_domain_name(e, 1) == NULL);
        ASSERT_TRUE(lbomp__energy_domain_name(e, -1) == NULL);
        ASSERT_NAN(lbomp__energy_total_j(e, 1));
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 7), 0);
        ASSERT_SANE(e);
        lbomp__energy_close(e);
        return 0;
}

static int t_two_packages_dram(void)
{
        struct lbomp__energy *e;

        /* Created out of order: readdir order must not matter. */
        zone("intel-rapl:1", "package-1", RANGE, 7000000);
        zone("intel-rapl:1:0", "dram", RANGE, 100);
        zone("intel-rapl:0:1", "dram", RANGE, 200);
        zone("intel-rapl:0", "package-0", RANGE, 5000000);
        zone("intel-rapl:0:0", "core", RANGE, 300);
        if (open_ok(&e))
                return 1;
        ASSERT_EQ(lbomp__energy_available(e), 1);
        ASSERT_EQ(lbomp__energy_ndomains(e), 5);
        ASSERT_STREQ(lbomp__energy_domain_name(e, 0), "package-0");
        ASSERT_STREQ(lbomp__energy_domain_name(e, 1), "package-0/core");
        ASSERT_STREQ(lbomp__energy_domain_name(e, 2), "package-0/dram");
        ASSERT_STREQ(lbomp__energy_domain_name(e, 3), "package-1");
        ASSERT_STREQ(lbomp__energy_domain_name(e, 4), "package-1/dram");
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 0), 1);
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 1), 0);
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 2), 0);
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 3), 1);
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 4), 0);
        ASSERT_CONTAINS(lbomp__energy_note(e), "2 packages, 5 domains");

        for (int w = 1; w <= 3; w++) {                                    /* three LB windows */
                energy("intel-rapl:0", 5000000 + (uint64_t)w * 10000000); /* 10 J per window */
                energy("intel-rapl:0:0", 300 + (uint64_t)w * 6000000);    /* 6 J */
                energy("intel-rapl:0:1", 200 + (uint64_t)w * 2000000);    /* 2 J */
                energy("intel-rapl:1", 7000000 + (uint64_t)w * 20000000); /* 20 J */
                energy("intel-rapl:1:0", 100 + (uint64_t)w * 3000000);    /* 3 J */
                ASSERT_EQ(lbomp__energy_sample(e), 0);
                ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "package-0")), 10.0 * w, 1e-9);
                ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "package-0/core")), 6.0 * w, 1e-9);
                ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "package-0/dram")), 2.0 * w, 1e-9);
                ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "package-1")), 20.0 * w, 1e-9);
                ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "package-1/dram")), 3.0 * w, 1e-9);
                /* dram is a sub-domain: not added into the package total */
                ASSERT_NEAR(lbomp__energy_package_j(e), 30.0 * w, 1e-9);
        }
        ASSERT_SANE(e);
        lbomp__energy_close(e);
        return 0;
}

static int t_psys_and_mmio_not_double_counted(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl:0", "package-0", RANGE, 0);
        zone("intel-rapl:0:0", "core", RANGE, 0);
        zone("intel-rapl:1", "psys", RANGE, 0);
        zone("intel-rapl-mmio:0", "package-0", RANGE, 0);
        zone("intel-rapl", "not-a-zone", RANGE, 0); /* the control type directory is ignored */
        if (open_ok(&e))
                return 1;
        ASSERT_EQ(lbomp__energy_available(e), 1);
        ASSERT_EQ(lbomp__energy_ndomains(e), 4);
        ASSERT_STREQ(lbomp__energy_domain_name(e, 2), "psys");
        ASSERT_STREQ(lbomp__energy_domain_name(e, 3), "mmio:package-0");
        ASSERT_EQ(lbomp__energy_domain_is_package(e, find(e, "psys")), 0);
        ASSERT_EQ(lbomp__energy_domain_is_package(e, find(e, "mmio:package-0")), 0);
        energy("intel-rapl:0", 10000000);
        energy("intel-rapl:0:0", 4000000);
        energy("intel-rapl:1", 15000000);
        energy("intel-rapl-mmio:0", 10000000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "psys")), 15.0, 1e-9);
        ASSERT_NEAR(lbomp__energy_total_j(e, find(e, "mmio:package-0")), 10.0, 1e-9);
        ASSERT_NEAR(lbomp__energy_package_j(e), 10.0, 1e-9);
        lbomp__energy_close(e);
        return 0;
}

static int t_mmio_only_is_the_package(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl-mmio:0", "package-0", RANGE, 0);
        if (open_ok(&e))
                return 1;
        ASSERT_EQ(lbomp__energy_available(e), 1);
        ASSERT_STREQ(lbomp__energy_domain_name(e, 0), "package-0");
        ASSERT_EQ(lbomp__energy_domain_is_package(e, 0), 1);
        energy("intel-rapl-mmio:0", 1234567);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_package_j(e), 1.234567, 1e-12);
        lbomp__energy_close(e);
        return 0;
}

static int t_wrap_during_window(void)
{
        struct lbomp__energy *e;
        const uint64_t max = 10000000; /* 10 J range: counter values 0 .. 10000000 */

        zone("intel-rapl:0", "package-0", max, max - 1000000); /* 1 J before the end */
        if (open_ok(&e))
                return 1;
        energy("intel-rapl:0", 500000); /* wrapped: 1 J to max, 1 uJ to 0, 0.5 J after */
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 1.500001, 1e-9);
        energy("intel-rapl:0", 2500000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 3.500001, 1e-9);
        /* landing exactly on max, then exactly on 0 */
        energy("intel-rapl:0", max);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        energy("intel-rapl:0", 0);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_total_j(e, 0), 11.000002, 1e-9);
        ASSERT_SANE(e);
        lbomp__energy_close(e);
        return 0;
}

static int t_many_wraps_accumulate(void)
{
        struct lbomp__energy *e;
        const uint64_t max = 49999999; /* modulus 50 J: wraps every 50 windows */
        uint64_t v = 0;

        zone("intel-rapl:0", "package-0", max, 0);
        if (open_ok(&e))
                return 1;
        for (int w = 0; w < 500; w++) {
                v = (v + 1000000) % (max + 1); /* what a counter with this range does */
                energy("intel-rapl:0", v);
                ASSERT_EQ(lbomp__energy_sample(e), 0);
        }
        ASSERT_NEAR(lbomp__energy_package_j(e), 500.0, 1e-6);
        lbomp__energy_close(e);
        return 0;
}

static int t_file_disappears(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl:0", "package-0", RANGE, 0);
        zone("intel-rapl:0:0", "dram", RANGE, 0);
        if (open_ok(&e))
                return 1;
        energy("intel-rapl:0", 2000000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_package_j(e), 2.0, 1e-12);
        remove_path("intel-rapl:0:0/energy_uj");
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:0:0/energy_uj");
        ASSERT_CONTAINS(lbomp__energy_note(e), "No such file or directory");
        ASSERT_EQ(lbomp__energy_ndomains(e), 2); /* names stay for the report */
        ASSERT_STREQ(lbomp__energy_domain_name(e, 1), "package-0/dram");
        /* coming back does not resurrect made-up totals */
        energy("intel-rapl:0:0", 5);
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_NAN(lbomp__energy_package_j(e));
        lbomp__energy_close(e);
        return 0;
}

static int t_file_becomes_directory(void)
{
        struct lbomp__energy *e;
        char path[512];

        zone("intel-rapl:0", "package-0", RANGE, 0);
        if (open_ok(&e))
                return 1;
        remove_path("intel-rapl:0/energy_uj");
        snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
        ASSERT_EQ(mkdir(path, 0755), 0);
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "Is a directory");
        ASSERT_EQ(rmdir(path), 0);
        lbomp__energy_close(e);
        return 0;
}

static int t_whole_zone_removed(void)
{
        struct lbomp__energy *e;
        char path[512];

        zone("intel-rapl:0", "package-0", RANGE, 0);
        zone("intel-rapl:1", "package-1", RANGE, 0);
        if (open_ok(&e))
                return 1;
        remove_path("intel-rapl:1/energy_uj");
        remove_path("intel-rapl:1/name");
        remove_path("intel-rapl:1/max_energy_range_uj");
        snprintf(path, sizeof path, "%s/intel-rapl:1", root);
        ASSERT_EQ(rmdir(path), 0);
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:1/energy_uj");
        lbomp__energy_close(e);
        return 0;
}

static const struct {
        const char *text;
        const char *reason;
        size_t len; /* 0: strlen(text); set where the text holds a NUL */
} garbage[] = {
        {"", "empty", 0},
        {"\n", "empty", 0},
        {"-5\n", "is negative", 0},
        {"abc\n", "not an unsigned decimal", 0},
        {"12abc\n", "not an unsigned decimal", 0},
        {" 12\n", "not an unsigned decimal", 0},
        {"12\n\n", "not an unsigned decimal", 0},
        {"1.5\n", "not an unsigned decimal", 0},
        {"0x10\n", "not an unsigned decimal", 0},
        {"+7\n", "not an unsigned decimal", 0},
        {"12\0\n", "not an unsigned decimal", 4}, /* an embedded NUL is not the end */
        {"99999999999999999999999\n", "does not fit in 64 bits", 0},
        {"18446744073709551616\n", "does not fit in 64 bits", 0},
        {"18446744073709551615\n", "exceeds 262143328850", 0}, /* fits, above the range */
        {"262143328851\n", "exceeds 262143328850", 0},
        {"1234567890123456789012345678901234567890123456789012345678901234567890\n", "longer than",
         0},
};

static void energy_bytes(const char *dir, const char *text, size_t len)
{
        char path[512];
        int fd;

        snprintf(path, sizeof path, "%s/%s/energy_uj", root, dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0) {
                perror(path);
                exit(2);
        }
}

static size_t garbage_len(size_t k)
{
        return garbage[k].len ? garbage[k].len : strlen(garbage[k].text);
}

static int t_malformed_at_open(void)
{
        for (size_t k = 0; k < sizeof garbage / sizeof garbage[0]; k++) {
                struct lbomp__energy *e;

                zone("intel-rapl:0", "package-0", RANGE, 0);
                energy_bytes("intel-rapl:0", garbage[k].text, garbage_len(k));
                if (open_ok(&e))
                        return 1;
                ASSERT_UNAVAILABLE(e);
                ASSERT_EQ(lbomp__energy_ndomains(e), 0);
                ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:0/energy_uj");
                ASSERT_CONTAINS(lbomp__energy_note(e), garbage[k].reason);
                ASSERT_CONTAINS(lbomp__energy_note(e), "perf and msr not tried");
                lbomp__energy_close(e);
        }
        return 0;
}

static int t_malformed_mid_run(void)
{
        for (size_t k = 0; k < sizeof garbage / sizeof garbage[0]; k++) {
                struct lbomp__energy *e;

                zone("intel-rapl:0", "package-0", RANGE, 0);
                zone("intel-rapl:0:0", "dram", RANGE, 0);
                if (open_ok(&e))
                        return 1;
                energy("intel-rapl:0", 1000000);
                ASSERT_EQ(lbomp__energy_sample(e), 0);
                ASSERT_NEAR(lbomp__energy_package_j(e), 1.0, 1e-12);
                energy_bytes("intel-rapl:0:0", garbage[k].text, garbage_len(k));
                ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
                ASSERT_UNAVAILABLE(e);
                ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:0:0/energy_uj");
                ASSERT_CONTAINS(lbomp__energy_note(e), garbage[k].reason);
                ASSERT_SANE(e);
                lbomp__energy_close(e);
        }
        return 0;
}

static int t_bad_range_or_name(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl:0", "package-0", RANGE, 0);
        put("intel-rapl:0/max_energy_range_uj", "0\n");
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "max_energy_range_uj: 0, a counter with no range");
        lbomp__energy_close(e);

        remove_path("intel-rapl:0/max_energy_range_uj");
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "max_energy_range_uj: No such file or directory");
        lbomp__energy_close(e);

        put("intel-rapl:0/max_energy_range_uj", "lots\n");
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "'lots' is not an unsigned decimal");
        lbomp__energy_close(e);

        put("intel-rapl:0/max_energy_range_uj", "1000\n");
        put("intel-rapl:0/name", "pack\"age\n");
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "is not a zone name");
        lbomp__energy_close(e);

        remove_path("intel-rapl:0/name");
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:0/name: No such file or directory");
        lbomp__energy_close(e);
        return 0;
}

static int t_bad_subzone_skipped_at_open(void)
{
        struct lbomp__energy *e;

        zone("intel-rapl:0", "package-0", RANGE, 0);
        zone("intel-rapl:0:0", "core", RANGE, 0);
        zone("intel-rapl:0:1", "dram", RANGE, 0);
        energy_text("intel-rapl:0:1", "n/a\n");
        zone("intel-rapl:2:0", "core", RANGE, 0); /* orphan: no intel-rapl:2 */
        zone("intel-rapl:1", "psys", RANGE, 0);
        remove_path("intel-rapl:1/energy_uj");
        if (open_ok(&e))
                return 1;
        ASSERT_EQ(lbomp__energy_available(e), 1);
        ASSERT_EQ(lbomp__energy_ndomains(e), 2);
        ASSERT_STREQ(lbomp__energy_domain_name(e, 1), "package-0/core");
        ASSERT_CONTAINS(lbomp__energy_note(e), "skipped package-0/dram: ");
        ASSERT_CONTAINS(lbomp__energy_note(e), "'n/a' is not an unsigned decimal");
        ASSERT_CONTAINS(lbomp__energy_note(e), "skipped psys: ");
        ASSERT_CONTAINS(lbomp__energy_note(e), "intel-rapl:2:0: no readable parent zone");
        energy("intel-rapl:0", 1000000);
        ASSERT_EQ(lbomp__energy_sample(e), 0);
        ASSERT_NEAR(lbomp__energy_package_j(e), 1.0, 1e-12);
        lbomp__energy_close(e);
        return 0;
}

static int t_counter_reset_is_not_energy(void)
{
        struct lbomp__energy *e;

        /* 5 kJ in, then back to almost 0: a "wrap" of 257 kJ in milliseconds is a reset. */
        zone("intel-rapl:0", "package-0", RANGE, 5000000000ull);
        if (open_ok(&e))
                return 1;
        energy("intel-rapl:0", 1000);
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "reset or garbage");
        lbomp__energy_close(e);

        /* the same for a forward jump no package can make */
        zone("intel-rapl:0", "package-0", RANGE, 0);
        if (open_ok(&e))
                return 1;
        energy("intel-rapl:0", 200000000000ull);
        ASSERT_EQ(lbomp__energy_sample(e), -ENODATA);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "package-0: counter moved 0 -> 200000000000");
        lbomp__energy_close(e);
        return 0;
}

static int t_empty_or_missing_tree(void)
{
        struct lbomp__energy *e;
        char missing[300];

        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "has no intel-rapl zones");
        lbomp__energy_close(e);

        zone("intel-rapl:0", "psys", RANGE, 0);
        if (open_ok(&e))
                return 1;
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "no package zone among 1 intel-rapl zones");
        lbomp__energy_close(e);

        snprintf(missing, sizeof missing, "%s/nowhere", root);
        ASSERT_EQ(lbomp__energy_open(&e, missing), 0);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "/nowhere not present");
        lbomp__energy_close(e);

        snprintf(missing, sizeof missing, "%s/intel-rapl:0/name", root);
        ASSERT_EQ(lbomp__energy_open(&e, missing), 0);
        ASSERT_UNAVAILABLE(e);
        ASSERT_CONTAINS(lbomp__energy_note(e), "is not a directory");
        lbomp__energy_close(e);
        return 0;
}

/*
 * energy_uj is root-only on current kernels. Root reads through chmod 000, so the refusal is
 * proven in a child that drops to nobody (65534) against a tree whose energy_uj is 0400 root.
 */
static int t_root_only_counter(void)
{
        char path[512];
        pid_t pid;
        int status;

        zone("intel-rapl:0", "package-0", RANGE, 0);
        snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
        if (geteuid() != 0) {
                ASSERT_EQ(chmod(path, 0), 0);
        } else {
                ASSERT_EQ(chmod(path, 0400), 0);
                ASSERT_EQ(chmod(root, 0755), 0);
        }
        fflush(NULL);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                struct lbomp__energy *e;

                if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
                        _exit(77);
                if (lbomp__energy_open(&e, root) != 0)
                        _exit(3);
                const char *note = lbomp__energy_note(e);
                int ok = !lbomp__energy_available(e) && strstr(note, "Permission denied") &&
                         strstr(note, "root-only") && isnan(lbomp__energy_package_j(e));

                if (!ok)
                        fprintf(stderr, "%s: child note: %s\n", test_name, note);
                lbomp__energy_close(e);
                _exit(ok ? 0 : 4);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
                printf("  (cannot drop privileges here: EACCES case not exercised)\n");
                return 0;
        }
        ASSERT_EQ(WEXITSTATUS(status), 0);
        return 0;
}

static int t_null_and_bad_arguments(void)
{
        ASSERT_EQ(lbomp__energy_open(NULL, root), -EINVAL);
        lbomp__energy_close(NULL);
        ASSERT_EQ(lbomp__energy_available(NULL), 0);
        ASSERT_TRUE(lbomp__energy_reader(NULL) == NULL);
        ASSERT_CONTAINS(lbomp__energy_note(NULL), "unavailable");
        ASSERT_EQ(lbomp__energy_ndomains(NULL), 0);
        ASSERT_TRUE(lbomp__energy_domain_name(NULL, 0) == NULL);
        ASSERT_EQ(lbomp__energy_sample(NULL), -EINVAL);
        ASSERT_NAN(lbomp__energy_total_j(NULL, 0));
        ASSERT_NAN(lbomp__energy_package_j(NULL));
        return 0;
}

/* The real machine, whatever it is: available with a reader, or unavailable with its reason. */
static int t_host(void)
{
        struct lbomp__energy *e;
        struct stat st;

        ASSERT_EQ(lbomp__energy_open(&e, NULL), 0);
        printf("  host: available=%d note: %s\n", lbomp__energy_available(e),
               lbomp__energy_note(e));
        if (lbomp__energy_available(e)) {
                const char *reader = lbomp__energy_reader(e);

                ASSERT_TRUE(reader != NULL);
                ASSERT_TRUE(strncmp(lbomp__energy_note(e), reader, strlen(reader)) == 0);
                ASSERT_TRUE(lbomp__energy_sample(e) == 0 || !lbomp__energy_available(e));
                ASSERT_SANE(e);
        } else {
                ASSERT_UNAVAILABLE(e);
                ASSERT_CONTAINS(lbomp__energy_note(e), "; perf: ");
                ASSERT_CONTAINS(lbomp__energy_note(e), "; msr: ");
                if (stat("/sys/class/powercap", &st) != 0)
                        ASSERT_CONTAINS(lbomp__energy_note(e),
                                        "unavailable: /sys/class/powercap not present");
        }
        lbomp__energy_close(e);
        return 0;
}

/* ------------------------------------------------------------------------------------------- */

int main(void)
{
        static const struct {
                const char *name;
                int (*fn)(void);
        } tests[] = {
                {"one_package", t_one_package},
                {"two_packages_dram", t_two_packages_dram},
                {"psys_and_mmio_not_double_counted", t_psys_and_mmio_not_double_counted},
                {"mmio_only_is_the_package", t_mmio_only_is_the_package},
                {"wrap_during_window", t_wrap_during_window},
                {"many_wraps_accumulate", t_many_wraps_accumulate},
                {"file_disappears", t_file_disappears},
                {"file_becomes_directory", t_file_becomes_directory},
                {"whole_zone_removed", t_whole_zone_removed},
                {"malformed_at_open", t_malformed_at_open},
                {"malformed_mid_run", t_malformed_mid_run},
                {"bad_range_or_name", t_bad_range_or_name},
                {"bad_subzone_skipped_at_open", t_bad_subzone_skipped_at_open},
                {"counter_reset_is_not_energy", t_counter_reset_is_not_energy},
                {"empty_or_missing_tree", t_empty_or_missing_tree},
                {"root_only_counter", t_root_only_counter},
                {"null_and_bad_arguments", t_null_and_bad_arguments},
                {"host", t_host},
        };
        const char *tmpdir = getenv("TMPDIR");
        int failed = 0;

        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
                test_name = tests[i].name;
                snprintf(root, sizeof root, "%s/lbomp-energy-XXXXXX", tmpdir ? tmpdir : "/tmp");
                if (!mkdtemp(root)) {
                        perror("mkdtemp");
                        return 2;
                }
                int rc = tests[i].fn();

                printf("%s %s\n", rc ? "FAIL" : "ok  ", test_name);
                failed += rc != 0;
                case_rm_tree(root);
        }
        printf("%d of %zu energy tests failed\n", failed, sizeof tests / sizeof tests[0]);
        return failed ? 1 : 0;
}
