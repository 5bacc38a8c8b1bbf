/*
 * test_energy_runtime.c — proves, through the public API only, how the runtime attributes energy:
 * the test raises a fake package counter by 1 J before every step, so each LB window must report
 * exactly the joules of its own steps, the run the joules since lbomp_create(), and the reports
 * must carry them (or null with the reason once the counter disappears, while the run goes on).
 * Also: LBOMP_POWERCAP_ROOT and lbomp_set_powercap_root() checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case.h"
#include "lbomp.h"
#include "report.h"

static const char *test_name;
static char root[256];

static void put(const char *rel, const char *text)
{
        char path[512], tmp[520];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", root, rel);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        if (!(f = fopen(tmp, "w")) || fputs(text, f) < 0 || fclose(f) != 0 ||
            rename(tmp, path) != 0) {
                perror(path);
                exit(2);
        }
}

static void set_energy(uint64_t uj)
{
        char buf[32];

        snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)uj);
        put("intel-rapl:0/energy_uj", buf);
}

static void make_package(uint64_t max, uint64_t start)
{
        char path[512], buf[32];

        snprintf(path, sizeof path, "%s/intel-rapl:0", root);
        if (mkdir(path, 0755) != 0) {
                perror(path);
                exit(2);
        }
        put("intel-rapl:0/name", "package-0\n");
        snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)max);
        put("intel-rapl:0/max_energy_range_uj", buf);
        set_energy(start);
}

static void noop(void *data, lbomp_id_t id, void *arg)
{
        (void)data;
        (void)id;
        (void)arg;
}

static lbomp_t *make_runtime(void)
{
        static int cell[8];
        lbomp_t *lb = NULL;

        if (lbomp_create(&lb) < 0 || lbomp_set_period(lb, 10) < 0)
                return NULL;
        for (int i = 0; i < 8; i++)
                if (lbomp_task_add(lb, &cell[i], sizeof cell[i], LBOMP_NODE_ANY, NULL) < 0)
                        return NULL;
        return lb;
}

/*
 * 1 J before each of 30 steps, the counter wrapping every 15 J (more than a window: a counter
 * that wraps twice between two readings cannot be told from one that wrapped once). The first
 * window starts at the first step (after the first joule), so it holds 9 J; the next two hold
 * 10 J each; the run, which starts at lbomp_create, holds all 30.
 */
static int t_windows_and_run(void)
{
        const uint64_t max = 14999999; /* counter runs 0 .. 14999999: wraps every 15 J */
        uint64_t v = 0;
        lbomp_t *lb;
        lbomp_energy_t en;

        make_package(max, 0);
        ASSERT_TRUE((lb = make_runtime()) != NULL);
        ASSERT_EQ(lbomp_set_powercap_root(lb, root), 0);
        ASSERT_EQ(lbomp_energy_get(lb, &en), 0);
        ASSERT_TRUE(en.reader && strcmp(en.reader, "powercap") == 0);
        for (int s = 0; s < 30; s++) {
                v = (v + 1000000) % (max + 1);
                set_energy(v);
                ASSERT_EQ(lbomp_step(lb, noop, NULL), 0);
        }
        ASSERT_EQ(lbomp_window_count(lb), 3);
        for (size_t i = 0; i < 3; i++) {
                lbomp_window_stats_t w;

                ASSERT_EQ(lbomp_window_get(lb, i, &w, sizeof w), 0);
                ASSERT_NEAR(w.energy_j, i == 0 ? 9.0 : 10.0, 1e-9);
                ASSERT_NEAR(w.power_w, w.energy_j / w.wall_s, 1e-6 * w.power_w);
        }
        ASSERT_EQ(lbomp_energy_get(lb, &en), 0);
        ASSERT_NEAR(en.package_j, 30.0, 1e-9);
        ASSERT_TRUE(en.seconds > 0 && fabs(en.power_w - 30.0 / en.seconds) < 1e-6 * en.power_w);
        ASSERT_CONTAINS(en.note, "powercap: ");

        char *js = read_report(lb, REPORT_JSON), *txt = read_report(lb, REPORT_TEXT);

        ASSERT_CONTAINS(js, "\"energy\":{\"reader\":\"powercap\",\"note\":\"powercap: ");
        ASSERT_CONTAINS(js, "\"package_j\":30,");
        ASSERT_CONTAINS(js, "\"domains_j\":{\"package-0\":30}}");
        ASSERT_CONTAINS(js, "\"energy_j\":9,");
        ASSERT_CONTAINS(js, "\"domains_j\":{\"package-0\":10}");
        ASSERT_CONTAINS(txt, "  energy: powercap: ");
        ASSERT_CONTAINS(txt, "; packages 30 J over ");
        ASSERT_CONTAINS(txt, "; package-0 30 J\n");
        free(js);
        free(txt);
        /* The counters are fixed once the run started. */
        ASSERT_EQ(lbomp_set_powercap_root(lb, NULL), -EBUSY);
        lbomp_destroy(lb);
        return 0;
}

/* The counter disappears after the first window: the run goes on, figures become null. */
static int t_counter_disappears_run_goes_on(void)
{
        lbomp_t *lb;
        lbomp_energy_t en;
        char path[512];

        make_package(262143328850ull, 0);
        ASSERT_EQ(setenv("LBOMP_POWERCAP_ROOT", root, 1), 0);
        lb = make_runtime();
        unsetenv("LBOMP_POWERCAP_ROOT");
        ASSERT_TRUE(lb != NULL);
        /* Missing from step 15 to the end of window 1 (step 19), where it is read for sure. */
        snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
        for (int s = 0; s < 30; s++) {
                if (s == 15)
                        ASSERT_EQ(unlink(path), 0);
                else if (s < 15 || s >= 20)
                        set_energy((uint64_t)(s + 1) * 1000000); /* back: must stay ignored */
                ASSERT_EQ(lbomp_step(lb, noop, NULL), 0);
        }
        ASSERT_EQ(lbomp_steps(lb), 30);
        lbomp_window_stats_t w;

        ASSERT_EQ(lbomp_window_get(lb, 0, &w, sizeof w), 0);
        ASSERT_NEAR(w.energy_j, 9.0, 1e-9);
        ASSERT_EQ(lbomp_window_get(lb, 1, &w, sizeof w), 0);
        ASSERT_NAN(w.energy_j);
        ASSERT_NAN(w.power_w);
        ASSERT_EQ(lbomp_energy_get(lb, &en), 0);
        ASSERT_TRUE(en.reader == NULL);
        ASSERT_NAN(en.package_j);
        ASSERT_NAN(en.power_w);
        ASSERT_CONTAINS(en.note, "unavailable: powercap: ");
        ASSERT_CONTAINS(en.note, "intel-rapl:0/energy_uj: No such file or directory");

        char *js = read_report(lb, REPORT_JSON), *txt = read_report(lb, REPORT_TEXT);

        ASSERT_CONTAINS(js, "\"energy\":{\"reader\":null,\"note\":\"unavailable: powercap: ");
        ASSERT_CONTAINS(js, "\"package_j\":null,\"seconds\":null,\"power_w\":null,"
                            "\"domains_j\":null}}");
        ASSERT_CONTAINS(js, "\"energy_j\":9,");    /* window 0 was measured */
        ASSERT_CONTAINS(js, "\"energy_j\":null,"); /* window 1 was not */
        ASSERT_CONTAINS(txt, "  energy: unavailable: powercap: ");
        free(js);
        free(txt);
        lbomp_destroy(lb);
        return 0;
}

static int t_configuration(void)
{
        lbomp_t *lb = NULL;
        lbomp_energy_t en;
        char missing[300];

        ASSERT_EQ(setenv("LBOMP_POWERCAP_ROOT", "", 1), 0);
        ASSERT_EQ(lbomp_create(&lb), -EINVAL);
        ASSERT_TRUE(lb == NULL);
        ASSERT_CONTAINS(lbomp_last_error(), "LBOMP_POWERCAP_ROOT=''");
        /* A missing directory is an answer, not an error. */
        snprintf(missing, sizeof missing, "%s/none", root);
        ASSERT_EQ(setenv("LBOMP_POWERCAP_ROOT", missing, 1), 0);
        ASSERT_EQ(lbomp_create(&lb), 0);
        unsetenv("LBOMP_POWERCAP_ROOT");
        ASSERT_EQ(lbomp_energy_get(lb, &en), 0);
        ASSERT_TRUE(en.reader == NULL);
        ASSERT_CONTAINS(en.note, "/none not present (powercap root given");
        ASSERT_EQ(lbomp_set_powercap_root(lb, ""), -EINVAL);
        make_package(262143328850ull, 5);
        ASSERT_EQ(lbomp_set_powercap_root(lb, root), 0);
        ASSERT_EQ(lbomp_energy_get(lb, &en), 0);
        ASSERT_TRUE(en.reader != NULL);
        ASSERT_NEAR(en.package_j, 0.0, 0.0);
        ASSERT_EQ(lbomp_energy_get(lb, NULL), -EINVAL);
        ASSERT_EQ(lbomp_energy_get(NULL, &en), -EINVAL);
        lbomp_destroy(lb);
        return 0;
}

int main(void)
{
        static const struct {
                const char *name;
                int (*fn)(void);
        } tests[] = {
                {"windows_and_run", t_windows_and_run},
                {"counter_disappears_run_goes_on", t_counter_disappears_run_goes_on},
                {"configuration", t_configuration},
        };
        const char *tmpdir = getenv("TMPDIR");
        int failed = 0;

        unsetenv("LBOMP_POWERCAP_ROOT");
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
                test_name = tests[i].name;
                snprintf(root, sizeof root, "%s/lbomp-energy-rt-XXXXXX", tmpdir ? tmpdir : "/tmp");
                if (!mkdtemp(root)) {
                        perror("mkdtemp");
                        return 2;
                }
                int rc = tests[i].fn();

                printf("%s %s\n", rc ? "FAIL" : "ok  ", test_name);
                failed += rc != 0;
                case_rm_tree(root);
        }
        printf("%d of %zu energy runtime tests failed\n", failed, sizeof tests / sizeof tests[0]);
        return failed ? 1 : 0;
}
