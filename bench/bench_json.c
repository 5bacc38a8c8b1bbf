/*
 * bench_json.c — the one-line JSON result every benchmark prints last with --json. Its keys are a
 * contract read by bench/run, the tests and the issues: bench, policy, threads, tasks, k, iters,
 * period, load, total_s, step_s_median, lb_steps, imbalance_first, imbalance_last, migrations,
 * decision_s, messages, topology, nodes, cores, locality_cost_first, locality_cost_last, energy_j
 * (joules of all packages over the run, null when the counters cannot be read), energy_note (then
 * the reader: "powercap: ...", "perf: ...", "msr: ..."), move_cost (Σ data bytes × distance of the
 * migrations), stolen (tasks run by another worker than their owner), exactly_once (every task ran
 * once in every step), checksum.
 */
#include <math.h>

#include "kneighbor.h"

void kn_result_from_lbomp(struct kn_result *r, const lbomp_t *lb)
{
        r->lb_steps = lbomp_lb_count(lb);
        r->imbalance_first = r->imbalance_last = NAN;
        r->locality_first = r->locality_last = NAN;
        size_t nw = lbomp_window_count(lb);
        lbomp_window_stats_t w;
        if (nw && lbomp_window_get(lb, 0, &w) == 0)
                r->imbalance_first = w.imbalance;
        if (nw && lbomp_window_get(lb, nw - 1, &w) == 0)
                r->imbalance_last = w.imbalance;
        lbomp_energy_t en;
        lbomp_energy_get(lb, &en);
        r->energy_j = en.package_j;
        r->energy_note = en.note;
        r->migrations = r->messages = r->stolen = 0;
        r->decision_s = r->move_cost = 0;
        for (size_t i = 0; i < nw; i++)
                if (lbomp_window_get(lb, i, &w) == 0)
                        r->stolen += w.stolen;
        for (size_t i = 0; i < r->lb_steps; i++) {
                lbomp_lb_stats_t s;
                lbomp_lb_get(lb, i, &s);
                r->migrations += s.migrations;
                r->messages += s.messages;
                r->decision_s += s.decision_s;
                r->move_cost += s.move_cost;
                if (i == 0)
                        r->locality_first = s.locality_before;
                r->locality_last = s.locality_after;
        }
}

/* A JSON string value: the note may carry a path, and a path may hold quotes or control bytes. */
static void str(FILE *out, const char *key, const char *v)
{
        fprintf(out, ",\"%s\":", key);
        if (!v) {
                fputs("null", out);
                return;
        }
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(out, "\\%c", *p);
                else if (*p < 0x20)
                        fprintf(out, "\\u%04x", *p);
                else
                        fputc(*p, out);
        }
        fputc('"', out);
}

static void num(FILE *out, const char *key, double v)
{
        if (isfinite(v))
                fprintf(out, ",\"%s\":%.6g", key, v);
        else
                fprintf(out, ",\"%s\":null", key);
}

void kn_print_json(FILE *out, const char *bench, const struct kn_opts *o, const struct kn_result *r,
                   const lbomp_t *lb)
{
        int nodes = 0, cores = 0;
        const char *topo = lbomp_topology(lb, &nodes, &cores);
        fprintf(out,
                "{\"bench\":\"%s\",\"policy\":\"%s\",\"threads\":%d,\"tasks\":%ld,\"k\":%ld,"
                "\"iters\":%ld,\"period\":%d,\"load\":\"%s\"",
                bench, lbomp_get_policy(lb), lbomp_get_workers(lb), o->tasks, o->k, o->iters,
                lbomp_get_period(lb), o->load);
        num(out, "total_s", r->total_s);
        num(out, "step_s_median", r->step_s_median);
        fprintf(out, ",\"lb_steps\":%llu", r->lb_steps);
        num(out, "imbalance_first", r->imbalance_first);
        num(out, "imbalance_last", r->imbalance_last);
        fprintf(out, ",\"migrations\":%llu", r->migrations);
        num(out, "decision_s", r->decision_s);
        fprintf(out, ",\"messages\":%llu", r->messages);
        str(out, "topology", topo);
        fprintf(out, ",\"nodes\":%d,\"cores\":%d", nodes, cores);
        num(out, "locality_cost_first", r->locality_first);
        num(out, "locality_cost_last", r->locality_last);
        num(out, "move_cost", r->move_cost);
        fprintf(out, ",\"stolen\":%llu,\"exactly_once\":%s", r->stolen,
                r->exactly_once ? "true" : "false");
        num(out, "energy_j", r->energy_j);
        str(out, "energy_note", r->energy_note);
        fprintf(out, ",\"checksum\":%.17g}\n", r->checksum);
}
