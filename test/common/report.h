/*
 * report.h — what the library writes to a FILE (its reports, its policy list), read back into a
 * string for a test to search. Header-only, with no assertion framework of its own (tests use
 * test.h or case.h): a failure to capture ends the test with a message.
 */
#ifndef LBOMP_TEST_REPORT_H
#define LBOMP_TEST_REPORT_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbomp.h"

static inline void report_fail(const char *what, int rc)
{
        fprintf(stderr, "%s failed (%d)\n", what, rc);
        exit(1);
}

enum report_kind { REPORT_TEXT, REPORT_JSON };

/* The runtime's report (lbomp_report or lbomp_report_json) as a string; the caller frees it. */
static inline char *read_report(const lbomp_t *lb, enum report_kind kind)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                report_fail("open_memstream", 0);
        int rc = kind == REPORT_JSON ? lbomp_report_json(lb, f) : lbomp_report(lb, f);
        fclose(f);
        if (rc != 0)
                report_fail(kind == REPORT_JSON ? "lbomp_report_json" : "lbomp_report", rc);
        return buf;
}

/* The registered policies' names, as lbomp_policy_help lists them (its one list); how many. */
static inline int test_policy_names(char names[][32], int max)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                report_fail("open_memstream", 0);
        lbomp_policy_help(f);
        fclose(f);
        int n = 0;
        for (char *line = strtok(buf, "\n"); line && n < max; line = strtok(NULL, "\n"))
                if (sscanf(line, "%31s", names[n]) == 1)
                        n++;
        free(buf);
        return n;
}

/* Window i's record (into *ws) against what the threads did: stolen_in_step[k] tasks run by a
 * thread other than their owner's in step k. Returns their sum over the window's steps; a window
 * that reports another count ends the test. */
static inline long window_stolen_checked(const lbomp_t *lb, size_t i, const long *stolen_in_step,
                                         lbomp_window_stats_t *ws)
{
        int rc = lbomp_window_get(lb, i, ws, sizeof *ws);
        if (rc != 0)
                report_fail("lbomp_window_get", rc);
        long seen = 0;
        for (uint64_t k = ws->first_step; k < ws->first_step + ws->steps; k++)
                seen += stolen_in_step[k];
        if ((long)ws->stolen != seen) {
                fprintf(stderr, "window %zu reports %llu stolen, the threads stole %ld\n", i,
                        (unsigned long long)ws->stolen, seen);
                exit(1);
        }
        return seen;
}
#endif
