/*
 * interleave.c — a mapping for loads that move within a window.
 *
 * A hotspot that goes round the tasks faster than the LB period leaves the window's sums balanced
 * (every worker hosted it for a while) while each step is not: the step's λ is high, the window's
 * is not, and no plan made from the window's costs can help, since by those costs the mapping is
 * already balanced. What helps is a mapping where the hotspot, wherever it is, falls on every
 * worker at once: neighbours in the task order (which is the program's order of adding them, most
 * often its domain's order) dealt to the workers in turn. The runtime (lbstep.c, spread_pays) and
 * lbomp-sim judge it on the window's timed steps: what each step took (the runtime: its longest
 * thread, steals included; the simulator: with --steal its modelled schedule's end, else its
 * largest worker's sum) against the largest worker's sum of its tasks' times under the
 * interleaving (lbomp__steps_max).
 */
#include <errno.h>
#include <stdlib.h>

#include "policy.h"

struct key {
        double pos;
        uint32_t worker;
};

static int by_pos(const void *a, const void *b)
{
        const struct key *x = a, *y = b;
        if (x->pos != y->pos)
                return x->pos < y->pos ? -1 : 1;
        return x->worker < y->worker ? -1 : x->worker > y->worker;
}

struct task_id {
        uint32_t id, t;
};

static int by_id(const void *a, const void *b)
{
        const struct task_id *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

int lbomp__interleave(const struct lbomp__snap *s, uint32_t *dest)
{
        uint32_t T = s->ntasks, P = s->nworkers;
        if (!T || !P)
                return 0;
        uint32_t *count = calloc(P, sizeof *count);
        struct task_id *order = malloc((size_t)T * sizeof *order);
        struct key *k = malloc((size_t)T * sizeof *k);
        int rc = -ENOMEM;
        if (!count || !order || !k)
                goto out;
        /* How many each worker gets: its speed's share (lbomp__place_counts: equal speeds, equal
         * counts, the first ones one more). */
        if (lbomp__place_counts(s->speed, NULL, P, T, count) < 0)
                goto out;
        /* Worker w's j-th task sits at (j + ½) / count[w] of the order: merged, the workers take
         * turns, each as often as its count says (round robin for equal counts). */
        uint32_t n = 0;
        for (uint32_t w = 0; w < P; w++)
                for (uint32_t j = 0; j < count[w]; j++)
                        k[n++] = (struct key){((double)j + 0.5) / (double)count[w], w};
        qsort(k, n, sizeof *k, by_pos);
        /* The tasks in the program's order: by runtime id (the slot, in the order they were added
         * where none was removed). */
        for (uint32_t t = 0; t < T; t++)
                order[t] = (struct task_id){s->id[t], t};
        qsort(order, T, sizeof *order, by_id);
        for (uint32_t i = 0; i < T; i++)
                dest[order[i].t] = k[i].worker;
        rc = 0;
out:
        free(count);
        free(order);
        free(k);
        return rc;
}

bool lbomp__interleave_wanted(double step_lambda, double window_lambda, double tolerance)
{
        return step_lambda >= 1.0 + 4.0 * tolerance &&
               step_lambda - 1.0 >= 2.0 * (window_lambda - 1.0);
}

void lbomp__spread_judged(struct lbomp__spread_backoff *b, bool moved)
{
        b->no = moved ? 0 : b->no < 5 ? b->no + 1 : 5;
        b->wait = moved ? 0 : 1u << b->no;
}

bool lbomp__spread_open(struct lbomp__spread_backoff *b)
{
        if (!b->wait)
                return true;
        b->wait--;
        return false;
}

bool lbomp__spread_arm(struct lbomp__spread_backoff *b, bool within, bool suits)
{
        return lbomp__spread_open(b) && within && !suits;
}

bool lbomp__probe_verdict(struct lbomp__probe *p, double after, uint32_t n)
{
        p->pending = false;
        p->after = after;
        bool undo = n >= 2 && p->before > 0 && after > p->before * (1.0 + LBOMP__PROBE_TOL);
        lbomp__spread_judged(&p->backoff, !undo);
        return undo;
}

double lbomp__steps_max(const struct lbomp__snap *s, const uint32_t *map,
                        const double *const *step_cost, uint32_t nsteps, double *load)
{
        double sum = 0;
        for (uint32_t k = 0; k < nsteps; k++) {
                for (uint32_t w = 0; w < s->nworkers; w++)
                        load[w] = 0;
                for (uint32_t t = 0; t < s->ntasks; t++)
                        load[map[t]] += lbomp__time_on(s, map[t], step_cost[k][t]);
                double mx = 0;
                for (uint32_t w = 0; w < s->nworkers; w++)
                        mx = load[w] > mx ? load[w] : mx;
                sum += mx;
        }
        return nsteps ? sum / nsteps : 0;
}
