/*
 * churn.c — a long run whose tasks come and go (adaptive codes refine and coarsen all the time):
 * --live tasks alive at every step, --replace of them removed and replaced by new ones (each
 * linked to two live tasks) before every step, --steps steps through lbomp_step() under the
 * configuration of the environment (default: none set). It prints the time of the first and the
 * last --block steps (the churn calls included, as a program would see them), their ratio, the
 * same for the LB steps (decision + apply; of those the bounded history still keeps, LBOMP_HISTORY:
 * 0 when none of a block's is), and how much the process grew between the end of the
 * first block and the end: with slots recycled, all of them follow the live tasks, not the ids
 * ever handed out. With --bytes B each task also owns an array of B bytes that every step adds
 * to (a task that owns data and comes and goes: the one that replaces it takes over its array,
 * as a cell re-registered after a refinement keeps its memory).
 * Usage: churn [--steps N] [--live N] [--replace N] [--block N] [--work-us U] [--bytes B]
 *        [--threads T] [--json] [--report-json FILE]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbomp.h"

struct task {
        lbomp_id_t id;
        double x;
        double *a; /* --bytes of its own, or NULL */
};

static double work_us;
static size_t nbytes; /* --bytes */

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cb(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        struct task *t = data;
        for (size_t i = 0; i < nbytes / sizeof *t->a; i++)
                t->a[i] += 1.0;
        if (work_us > 0) {
                double end = now_s() + work_us * 1e-6;
                while (now_s() < end)
                        t->x += 1e-9;
        } else {
                t->x += 1;
        }
}

static long rss_bytes(void)
{
        FILE *f = fopen("/proc/self/statm", "r");
        long size = 0, res = 0;
        if (f && fscanf(f, "%ld %ld", &size, &res) != 2)
                res = 0;
        if (f)
                fclose(f);
        return res * 4096;
}

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, long n)
{
        qsort(v, (size_t)n, sizeof *v, cmp);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
        long steps = 40000, live = 1000, replace = 50, block = 8000, threads = 0;
        int json = 0;
        const char *report = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--json") == 0) {
                        json = 1;
                        continue;
                }
                if (i + 1 >= argc)
                        goto usage;
                if (strcmp(argv[i], "--report-json") == 0) {
                        report = argv[++i];
                        continue;
                }
                char *end;
                double v = strtod(argv[i + 1], &end);
                if (*end || v < 0)
                        goto usage;
                if (strcmp(argv[i], "--steps") == 0)
                        steps = (long)v;
                else if (strcmp(argv[i], "--live") == 0)
                        live = (long)v;
                else if (strcmp(argv[i], "--replace") == 0)
                        replace = (long)v;
                else if (strcmp(argv[i], "--block") == 0)
                        block = (long)v;
                else if (strcmp(argv[i], "--work-us") == 0)
                        work_us = v;
                else if (strcmp(argv[i], "--bytes") == 0)
                        nbytes = (size_t)v;
                else if (strcmp(argv[i], "--threads") == 0)
                        threads = (long)v;
                else
                        goto usage;
                i++;
        }
        if (live < 3 || replace > live || block < 1 || 2 * block > steps)
                goto usage;
        struct task *task = calloc((size_t)live, sizeof *task);
        double *step_s = malloc((size_t)steps * sizeof *step_s);
        lbomp_t *lb;
        if (!task || !step_s || lbomp_create(&lb) < 0 ||
            (threads && lbomp_set_workers(lb, (int)threads) < 0)) {
                fprintf(stderr, "churn: setup failed: %s\n", lbomp_last_error());
                return 2;
        }
        for (long k = 0; k < live && nbytes; k++)
                if (!(task[k].a = calloc(1, nbytes))) {
                        fprintf(stderr, "churn: no memory for --bytes %zu\n", nbytes);
                        return 2;
                }
        for (long k = 0; k < live; k++)
                if (lbomp_task_add(lb, &task[k], sizeof task[k] + nbytes, LBOMP_NODE_ANY,
                                   &task[k].id) < 0)
                        goto fail;
        unsigned long long rng = 88172645463325252ull;
        long rss_block = 0;
        size_t lb_first = 0;
        for (long s = 0; s < steps; s++) {
                double t0 = now_s();
                for (long j = 0; j < replace; j++) {
                        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                        long k = (long)(rng % (unsigned long long)live);
                        if (lbomp_task_remove(lb, task[k].id) < 0 ||
                            lbomp_task_add(lb, &task[k], sizeof task[k] + nbytes, LBOMP_NODE_ANY,
                                           &task[k].id) < 0 ||
                            lbomp_link(lb, task[k].id, task[(k + 1) % live].id, 1024) < 0 ||
                            lbomp_link(lb, task[k].id, task[(k + 2) % live].id, 512) < 0)
                                goto fail;
                }
                if (lbomp_step(lb, cb, NULL) < 0)
                        goto fail;
                step_s[s] = now_s() - t0;
                if (s == block - 1) {
                        rss_block = rss_bytes();
                        lb_first = lbomp_lb_count(lb);
                }
                if (lbomp_task_count(lb) != (uint32_t)live) {
                        fprintf(stderr, "churn: step %ld: lbomp_task_count %u, expected %ld\n", s,
                                lbomp_task_count(lb), live);
                        return 1;
                }
        }
        double first = 0, last = 0;
        for (long s = 0; s < block; s++) {
                first += step_s[s];
                last += step_s[steps - block + s];
        }
        /* LB steps of the first and the last block. */
        size_t nlb = lbomp_lb_count(lb), lb_last0 = nlb;
        double lbf = 0, lbl = 0;
        long nlbf = 0, nlbl = 0;
        /* Only those still kept (LBOMP_HISTORY, default 128): the first block's may be gone, and
         * then its figure is 0, not what an uncopied record held. */
        for (size_t i = lbomp_lb_first(lb); i < nlb; i++) {
                lbomp_lb_stats_t st;
                if (lbomp_lb_get(lb, i, &st, sizeof st) < 0)
                        continue;
                if (i < lb_first) {
                        lbf += st.decision_s + st.apply_s;
                        nlbf++;
                } else if (st.step >= (uint64_t)(steps - block)) {
                        if (lb_last0 == nlb)
                                lb_last0 = i;
                        lbl += st.decision_s + st.apply_s;
                        nlbl++;
                }
        }
        double grown = (double)(rss_bytes() - rss_block) / 1048576.0;
        double mf = median(step_s, block), ml = median(step_s + steps - block, block);
        lbomp_totals_t tot = {0};
        if (lbomp_totals_get(lb, &tot, sizeof tot) < 0)
                goto fail;
        if (report) {
                FILE *f = fopen(report, "w");
                if (!f || lbomp_report_json(lb, f) < 0 || fclose(f) != 0) {
                        fprintf(stderr, "churn: --report-json %s: cannot write it\n", report);
                        return 1;
                }
        }
        if (json)
                printf("{\"bench\":\"churn\",\"policy\":\"%s\",\"threads\":%d,\"steps\":%ld,"
                       "\"live\":%ld,\"replace\":%ld,\"block\":%ld,\"first_block_s\":%.6g,"
                       "\"last_block_s\":%.6g,\"ratio\":%.4g,\"median_ratio\":%.4g,"
                       "\"lb_first_ms\":%.6g,\"lb_last_ms\":%.6g,\"rss_growth_mb\":%.4g,"
                       "\"lb_steps\":%llu,\"migrations\":%llu,\"stolen\":%llu,"
                       "\"steal_steps\":%llu,\"bytes\":%zu}\n",
                       lbomp_get_policy(lb), lbomp_get_workers(lb), steps, live, replace, block,
                       first, last, last / first, ml / mf, nlbf ? lbf / nlbf * 1e3 : 0,
                       nlbl ? lbl / nlbl * 1e3 : 0, grown, (unsigned long long)tot.lb_steps,
                       (unsigned long long)tot.migrations, (unsigned long long)tot.stolen,
                       (unsigned long long)tot.steal_steps, nbytes);
        else
                printf("churn: %ld steps of %ld live tasks, %ld replaced per step, policy %s, %d "
                       "threads:\n"
                       "  first %ld steps %.3f s, last %ld steps %.3f s: ratio %.3f (median step "
                       "%.1f us -> %.1f us, ratio %.3f)\n"
                       "  LB step (decision + apply) %.3f ms -> %.3f ms on average\n"
                       "  memory grew %.2f MB after the first %ld steps\n",
                       steps, live, replace, lbomp_get_policy(lb), lbomp_get_workers(lb), block,
                       first, block, last, last / first, mf * 1e6, ml * 1e6, ml / mf,
                       nlbf ? lbf / nlbf * 1e3 : 0, nlbl ? lbl / nlbl * 1e3 : 0, grown, block);
        lbomp_destroy(lb);
        for (long k = 0; k < live; k++)
                free(task[k].a);
        free(task);
        free(step_s);
        return 0;
fail:
        fprintf(stderr, "churn: %s\n", lbomp_last_error());
        return 1;
usage:
        fprintf(stderr, "usage: churn [--steps N] [--live N] [--replace N] [--block N] "
                        "[--work-us U] [--bytes B] [--threads T] [--json] [--report-json FILE]\n");
        return 2;
}
