/*
 * main.c — the linkcell benchmark: short-range molecular dynamics over a link-cell grid (md.h),
 * two loops over the cells per time step, each with a reduction, and a dense droplet near the
 * start of the index range. The same time step in three forms:
 *   --baseline omp-static|omp-dynamic|omp-guided   plain OpenMP, `parallel for schedule(runtime)`
 *                                                  with that schedule (step_omp.c)
 *   --form for (the default)                       `parallel` + LBOMP_FOR, one runtime serving
 *                                                  both loops (step_for.c)
 *   --form tasks                                   every cell a task in two runtimes, one per
 *                                                  loop, LBOMP_FOR_EACH_TASK (step_tasks.c)
 * Options: those of bench.h (--size, --policy, --iters, --period, --threads, --seed, --json).
 * The JSON line has the keys bench, form, policy, baseline, threads, tasks (cells), particles,
 * iters, period, load, total_s, step_s_median, lb_steps, imbalance_first, imbalance_last (the
 * force loop's windows), migrations, chunks_force, chunks_integrate, epot, ekin, exactly_once,
 * checksum (positions summed in a fixed order: the same for every form, schedule and thread
 * count). The exit code is 1 when a cell did not run exactly once per loop and step.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lbomp.h"
#include "md.h"

/* tiny, small, default, large: cells per side, particles per cell outside / inside the droplet,
 * time steps */
static const long presets[4][4] = {{6, 2, 8, 6}, {10, 3, 16, 30}, {16, 4, 24, 60}, {24, 4, 24, 60}};

static int setup(struct md *md, int size, unsigned long long seed)
{
        long C = presets[size][0], base = presets[size][1], dense = presets[size][2];
        md->C = C;
        md->ncells = C * C * C;
        md->dt = 0.02;
        md->eps = 5.0;
        md->spring = 20.0;
        md->damping = 0.01;
        md->first = malloc(((size_t)md->ncells + 1) * sizeof *md->first);
        md->visits = calloc(2 * (size_t)md->ncells, sizeof *md->visits);
        if (!md->first || !md->visits)
                return -1;
        /* the droplet: a ball of radius 0.3 C around (C/2, C/2, 0.3 C), i.e. in the first half of
         * the cells' index range, where a static split gives it all to the first threads */
        double bx = 0.5 * (double)C, by = 0.5 * (double)C, bz = 0.3 * (double)C,
               br = 0.3 * (double)C;
        md->npart = 0;
        for (long c = 0; c < md->ncells; c++) {
                double dx = (double)(c % C) + 0.5 - bx, dy = (double)(c / C % C) + 0.5 - by,
                       dz = (double)(c / (C * C)) + 0.5 - bz;
                md->first[c] = md->npart;
                md->npart += dx * dx + dy * dy + dz * dz <= br * br ? dense : base;
        }
        md->first[md->ncells] = md->npart;
        md->p = malloc((size_t)md->npart * sizeof *md->p);
        if (!md->p)
                return -1;
        for (long c = 0; c < md->ncells; c++)
                for (int64_t i = md->first[c]; i < md->first[c + 1]; i++) {
                        unsigned long long k = (seed * 1000003ull + (unsigned long long)i) * 4;
                        /* a site inside the cell, away from its walls by the clamp (0.25) */
                        double sx = (double)(c % C) + 0.25 + 0.5 * bench_u01(k),
                               sy = (double)(c / C % C) + 0.25 + 0.5 * bench_u01(k + 1),
                               sz = (double)(c / (C * C)) + 0.25 + 0.5 * bench_u01(k + 2);
                        double j = 0.1 * (bench_u01(k + 3) - 0.5);
                        md->p[i] = (struct particle){.x = sx + j,
                                                     .y = sy - j,
                                                     .z = sz + 0.5 * j,
                                                     .sx = sx,
                                                     .sy = sy,
                                                     .sz = sz};
                }
        return 0;
}

static double checksum(const struct md *md)
{
        double s = 0;
        for (long i = 0; i < md->npart; i++)
                s += (md->p[i].x + 2 * md->p[i].y + 3 * md->p[i].z) * (double)(1 + i % 7);
        return s;
}

static int exactly_once(const struct md *md, long steps)
{
        for (long c = 0; c < 2 * md->ncells; c++)
                if (md->visits[c] != steps) {
                        fprintf(stderr,
                                "linkcell: cell %ld ran %ld times in the %s loop in %ld "
                                "steps: exactly-once violated\n",
                                c % md->ncells, md->visits[c],
                                c < md->ncells ? "force" : "integrate", steps);
                        return 0;
                }
        return 1;
}

struct lbstats {
        unsigned long long lb_steps, migrations;
        double first, last;
};

/* LB steps and migrations of one task set; λ of its first and last window. */
static void add_stats(struct lbstats *st, const lbomp_t *h, int is_force)
{
        if (!h)
                return;
        lbomp_totals_t t; /* the whole run, whatever LBOMP_HISTORY keeps */
        if (lbomp_totals_get(h, &t, sizeof t) != 0)
                return;
        st->lb_steps += t.lb_steps;
        st->migrations += t.migrations;
        if (is_force && t.windows) {
                st->first = t.imbalance_first;
                st->last = t.imbalance_last;
        }
}

static void num(const char *key, double v)
{
        if (isfinite(v))
                printf(",\"%s\":%.9g", key, v);
        else
                printf(",\"%s\":null", key);
}

int main(int argc, char **argv)
{
        struct bench_opts o;
        bench_opts_init(&o);
        const char *form = "for";
        for (int i = 1; i < argc; i++) {
                int r = bench_opt(&o, "linkcell", argc, argv, &i);
                if (r < 0)
                        return 2;
                if (r > 0)
                        continue;
                if (strcmp(argv[i], "--form") == 0 && i + 1 < argc &&
                    (strcmp(argv[i + 1], "for") == 0 || strcmp(argv[i + 1], "tasks") == 0)) {
                        form = argv[++i];
                        continue;
                }
                fprintf(stderr,
                        "usage: linkcell [--form for|tasks | --baseline omp-static|omp-dynamic|"
                        "omp-guided] [common options]\n");
                bench_usage_common(stderr);
                return 2;
        }
        if (o.baseline && strcmp(o.baseline, "omp-tasks") == 0) {
                fprintf(stderr, "linkcell: --baseline omp-tasks is not a form of this benchmark; "
                                "valid: omp-static, omp-dynamic, omp-guided\n");
                return 2;
        }
        if (o.baseline && o.policy) {
                fprintf(stderr, "linkcell: --policy and --baseline exclude each other\n");
                return 2;
        }
        int size = bench_size_index(o.size);
        long iters = o.iters > 0 ? o.iters : presets[size][3];
        int threads = o.threads > 0 ? (int)o.threads : omp_get_max_threads();
        omp_set_num_threads(threads);
        struct md md;
        if (setup(&md, size, (unsigned long long)o.seed) < 0) {
                fprintf(stderr, "linkcell: out of memory\n");
                return 2;
        }
        lbomp_t *lb = NULL, *lbi = NULL;
        int rc = 0;
        if (o.baseline) {
                omp_set_schedule(strcmp(o.baseline, "omp-static") == 0    ? omp_sched_static
                                 : strcmp(o.baseline, "omp-dynamic") == 0 ? omp_sched_dynamic
                                                                          : omp_sched_guided,
                                 strcmp(o.baseline, "omp-dynamic") == 0 ? 1 : 0);
        } else {
                rc = lbomp_create(&lb);
                if (rc == 0 && strcmp(form, "tasks") == 0)
                        rc = lbomp_create(&lbi);
                for (lbomp_t *h = lb; rc == 0 && h; h = h == lb ? lbi : NULL) {
                        if (o.policy)
                                rc = lbomp_set_policy(h, o.policy);
                        if (rc == 0 && o.period > 0)
                                rc = lbomp_set_period(h, (int)o.period);
                        if (rc == 0)
                                rc = lbomp_set_workers(h, threads);
                }
                /* the task form: every cell a task of each runtime (its pointer is never NULL) */
                for (long c = 0; rc == 0 && lbi && c < md.ncells; c++) {
                        size_t bytes = (size_t)(md.first[c + 1] - md.first[c]) * sizeof *md.p;
                        rc = lbomp_task_add(lb, &md.first[c], bytes, LBOMP_NODE_ANY, NULL);
                        if (rc == 0)
                                rc = lbomp_task_add(lbi, &md.first[c], bytes, LBOMP_NODE_ANY, NULL);
                }
                if (rc < 0) {
                        fprintf(stderr, "linkcell: %s\n", lbomp_last_error());
                        return 2;
                }
        }
        double *step_s = malloc((size_t)iters * sizeof *step_s), epot = 0, ekin = 0;
        if (!step_s)
                return 2;
        double t0 = bench_now_s();
        for (long s = 0; s < iters; s++) {
                double ts = bench_now_s();
                if (o.baseline)
                        epot = step_omp(&md, &ekin);
                else if (lbi)
                        epot = step_tasks(lb, lbi, &md, &ekin);
                else
                        epot = step_for(lb, &md, &ekin);
                step_s[s] = bench_now_s() - ts;
                if (lb && (rc = lbomp_last_step(lb)) != 0) {
                        fprintf(stderr, "linkcell: step %ld: %s\n", s, lbomp_last_error());
                        return 2;
                }
        }
        double total = bench_now_s() - t0;
        int once = exactly_once(&md, iters);
        struct lbstats st = {.first = NAN, .last = NAN};
        unsigned chunks_f = 0, chunks_i = 0;
        if (lbi) {
                add_stats(&st, lb, 1);
                add_stats(&st, lbi, 0);
        } else if (lb) {
                add_stats(&st, lbomp_loop(lb, "force"), 1);
                add_stats(&st, lbomp_loop(lb, "integrate"), 0);
                lbomp_loop_stats_t ls;
                for (size_t i = 0; i < lbomp_loop_count(lb); i++)
                        if (lbomp_loop_get(lb, i, &ls, sizeof ls) == 0)
                                *(strcmp(ls.name, "force") == 0 ? &chunks_f : &chunks_i) =
                                        ls.chunks;
        }
        if (o.json) {
                printf("{\"bench\":\"linkcell\",\"form\":\"%s\"", o.baseline ? "omp" : form);
                if (o.baseline)
                        printf(",\"policy\":null,\"baseline\":\"%s\"", o.baseline);
                else
                        printf(",\"policy\":\"%s\",\"baseline\":null", lbomp_get_policy(lb));
                printf(",\"threads\":%d,\"tasks\":%ld,\"particles\":%ld,\"iters\":%ld,\"period\":%"
                       "d,"
                       "\"load\":\"droplet\"",
                       threads, md.ncells, md.npart, iters, lb ? lbomp_get_period(lb) : 10);
                num("total_s", total);
                num("step_s_median", bench_median(step_s, iters));
                printf(",\"lb_steps\":%llu", st.lb_steps);
                num("imbalance_first", st.first);
                num("imbalance_last", st.last);
                printf(",\"migrations\":%llu,\"chunks_force\":%u,\"chunks_integrate\":%u",
                       st.migrations, chunks_f, chunks_i);
                num("epot", epot);
                num("ekin", ekin);
                printf(",\"exactly_once\":%s,\"checksum\":%.17g}\n", once ? "true" : "false",
                       checksum(&md));
        } else {
                if (lb)
                        lbomp_report(lb, stdout);
                if (lbi)
                        lbomp_report(lbi, stdout);
                printf("linkcell: %ld cells, %ld particles, %ld steps, %s: total %.3f s, median "
                       "step %.3g s, epot %.6g, ekin %.6g, checksum %.17g\n",
                       md.ncells, md.npart, iters, o.baseline ? o.baseline : form, total,
                       bench_median(step_s, iters), epot, ekin, checksum(&md));
        }
        lbomp_destroy(lbi);
        lbomp_destroy(lb);
        free(step_s);
        free(md.first);
        free(md.visits);
        free(md.p);
        return once ? 0 : 1;
}
