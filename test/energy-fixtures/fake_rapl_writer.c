/*
 * fake_rapl_writer.c — a stand-in for a RAPL package: builds a one-package powercap tree and
 * raises its energy_uj steadily (by default 1 J every 10 ms, i.e. 100 W), wrapping at
 * max_energy_range_uj as the kernel's counter does, until SIGTERM. After every tick it records the
 * total it has written (never wrapping) in a log file, so that a test can compare what lbomp
 * measured with what was really "consumed" between two moments. Files are replaced with rename()
 * so that a reader never sees a half-written value.
 *
 * usage: fake_rapl_writer --root DIR --log FILE [--max UJ] [--start UJ] [--step UJ]
 *                         [--period-ms MS] [--timeout-s S]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

static int put(const char *path, const char *text)
{
        char tmp[4200];
        FILE *f;

        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        f = fopen(tmp, "w");
        if (!f)
                return -1;
        fputs(text, f);
        if (fclose(f) != 0)
                return -1;
        return rename(tmp, path);
}

static int put_u64(const char *path, unsigned long long v)
{
        char buf[32];

        snprintf(buf, sizeof buf, "%llu\n", v);
        return put(path, buf);
}

static int parse_u64(const char *s, unsigned long long *out)
{
        char *end;

        errno = 0;
        if (!s || *s < '0' || *s > '9')
                return -1;
        *out = strtoull(s, &end, 10);
        return errno || *end ? -1 : 0;
}

static void usage(void)
{
        fprintf(stderr, "usage: fake_rapl_writer --root DIR --log FILE [--max UJ] [--start UJ] "
                        "[--step UJ] [--period-ms MS] [--timeout-s S]\n");
}

int main(int argc, char **argv)
{
        const char *root = NULL, *log = NULL;
        unsigned long long max = 262143328850ull, start = 0, step = 1000000, period_ms = 10,
                           timeout_s = 300;
        char zone[3072], path[4096];

        for (int i = 1; i < argc; i += 2) { /* every option takes a value */
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                int bad = 0;

                if (strcmp(argv[i], "--root") == 0)
                        bad = !(root = v);
                else if (strcmp(argv[i], "--log") == 0)
                        bad = !(log = v);
                else if (strcmp(argv[i], "--max") == 0)
                        bad = parse_u64(v, &max) < 0 || max == 0;
                else if (strcmp(argv[i], "--start") == 0)
                        bad = parse_u64(v, &start) < 0;
                else if (strcmp(argv[i], "--step") == 0)
                        bad = parse_u64(v, &step) < 0;
                else if (strcmp(argv[i], "--period-ms") == 0)
                        bad = parse_u64(v, &period_ms) < 0 || period_ms == 0;
                else if (strcmp(argv[i], "--timeout-s") == 0)
                        bad = parse_u64(v, &timeout_s) < 0;
                else
                        bad = 1;
                if (bad) {
                        usage();
                        return 2;
                }
        }
        if (!root || !log || start > max || strlen(root) > 3000) {
                usage();
                return 2;
        }
        snprintf(zone, sizeof zone, "%s/intel-rapl:0", root);
        if ((mkdir(root, 0755) != 0 && errno != EEXIST) ||
            (mkdir(zone, 0755) != 0 && errno != EEXIST)) {
                perror(zone);
                return 1;
        }
        snprintf(path, sizeof path, "%s/name", zone);
        if (put(path, "package-0\n") != 0)
                goto io;
        snprintf(path, sizeof path, "%s/max_energy_range_uj", zone);
        if (put_u64(path, max) != 0)
                goto io;
        snprintf(path, sizeof path, "%s/energy_uj", zone);
        if (put_u64(path, start) != 0 || put_u64(log, 0) != 0)
                goto io;

        struct sigaction sa;

        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);

        /* Ticks on an absolute schedule: a late wake-up writes the same total, just later. */
        struct timespec next;
        unsigned long long counter = start, written = 0, ticks = 0;
        unsigned long long max_ticks = timeout_s * 1000 / period_ms;

        clock_gettime(CLOCK_MONOTONIC, &next);
        while (!stop && ticks < max_ticks) {
                next.tv_nsec += (long)(period_ms * 1000000ull);
                while (next.tv_nsec >= 1000000000L) {
                        next.tv_nsec -= 1000000000L;
                        next.tv_sec++;
                }
                if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0 && stop)
                        break;
                counter = (counter + step) % (max + 1); /* the counter runs 0 .. max */
                written += step;
                ticks++;
                /* energy_uj first, then the log: the log never claims more than was shown. */
                if (put_u64(path, counter) != 0 || put_u64(log, written) != 0)
                        goto io;
        }
        return 0;
io:
        perror("fake_rapl_writer");
        return 1;
}
