/*
 * assemble.c — the tasks a worker holds during a phased transfer (transfer.h): who holds what as
 * packs leave and arrive, what it could send back in a swap, and BatchAssembly, the choice of the
 * tasks that leave (lightest first, in packs of about s, or runs of linked tasks with packdrop's
 * locality extension). transfer.c runs the phases and the offers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../mailbox.h"
#include "transfer.h"

#define NOWHERE UINT32_MAX

/* ---------------------------------------------------------------------------------------------
 * Tasks held
 */

int64_t lbomp__xfer_held_index(const struct lbomp__xfer *st, uint32_t t)
{
        if (st->contiguous) { /* the usual case in the first phase: consecutive tasks */
                if (st->ncur && t >= st->cur[0] && t - st->cur[0] < st->ncur)
                        return (int64_t)(t - st->cur[0]);
                return -1;
        }
        uint32_t lo = 0, hi = st->ncur;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (st->cur[mid] < t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < st->ncur && st->cur[lo] == t ? (int64_t)lo : -1;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

/* Lightest first, ties by the higher index (deterministic): the radix sort's heaviest-first order
 * (ties by the lower index), reversed. */
static int lightest_first(const double *cost, uint32_t *t, uint32_t n)
{
        int rc = lbomp__sort_tasks_desc(cost, t, n);
        for (uint32_t i = 0; rc == 0 && i < n / 2; i++) {
                uint32_t x = t[i];
                t[i] = t[n - 1 - i];
                t[n - 1 - i] = x;
        }
        return rc;
}

/* The tasks held now (those of the last phase that stayed, and those received) become cur. */
int lbomp__xfer_hold(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                     const uint32_t *from, uint32_t n)
{
        uint32_t m = 0;
        for (uint32_t i = 0; i < st->ncur; i++)
                m += !st->left[i];
        if (n == 0 && st->nrecv == 0 && m == st->ncur && st->left) {
                st->light = st->cand_back = NULL; /* nothing came or went: the same tasks */
                st->nlight = 0;
                return 0;
        }
        uint32_t *cur = lbomp__dc_alloc(dc, self, ((size_t)m + n + st->nrecv) * sizeof *cur);
        if (!cur)
                return -ENOMEM;
        /* The new tasks, sorted (the first phase's usually are already), merged into those that
         * stayed (sorted): O(tasks held) a phase, not a sort of them all. */
        uint32_t e = n + st->nrecv;
        uint32_t *extra = e ? lbomp__dc_alloc(dc, self, (size_t)e * sizeof *extra) : NULL;
        if (e && !extra)
                return -ENOMEM;
        if (n)
                memcpy(extra, from, (size_t)n * sizeof *extra);
        if (st->nrecv)
                memcpy(extra + n, st->recv, (size_t)st->nrecv * sizeof *extra);
        bool sorted = true;
        for (uint32_t i = 1; i < e && sorted; i++)
                sorted = extra[i - 1] < extra[i];
        if (!sorted)
                qsort(extra, e, sizeof *extra, cmp_u32);
        uint32_t k = 0, i = 0, j = 0;
        while (i < st->ncur || j < e) {
                if (i < st->ncur && st->left[i]) {
                        i++;
                } else if (j == e || (i < st->ncur && st->cur[i] < extra[j])) {
                        cur[k++] = st->cur[i++];
                } else {
                        cur[k++] = extra[j++];
                }
        }
        st->cur = cur;
        st->ncur = k;
        st->nrecv = 0;
        st->left = lbomp__dc_alloc(dc, self, k);
        if (!st->left)
                return -ENOMEM;
        st->light = st->cand_back = NULL; /* rebuilt when a swap needs them */
        st->nlight = 0;
        st->contiguous = k == 0 || cur[k - 1] - cur[0] == k - 1;
        return 0;
}

/* What this worker could send back in a swap, for the senders' views: its tasks held since the
 * phase began, all but the largest (the return value), and the smallest of them in *small. */
double lbomp__xfer_spare(const struct lbomp__xfer *st, struct lbomp__dctx *dc, double *small)
{
        const double *cost = lbomp__dc_snap(dc)->cost;
        double sum = 0, max = 0, min = INFINITY;
        for (uint32_t i = 0; i < st->ncur; i++)
                if (!st->left[i] && cost[st->cur[i]] > 0) {
                        double c = cost[st->cur[i]];
                        sum += c;
                        max = c > max ? c : max;
                        min = c < min ? c : min;
                }
        *small = min;
        return sum - max;
}

int lbomp__xfer_receive(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                        const uint32_t *t, uint32_t n)
{
        if (st->nrecv + n > st->caprecv) {
                uint32_t cap = 2 * (st->nrecv + n);
                uint32_t *r = lbomp__dc_alloc(dc, self, (size_t)cap * sizeof *r);
                if (!r)
                        return -ENOMEM;
                if (st->nrecv)
                        memcpy(r, st->recv, (size_t)st->nrecv * sizeof *r);
                st->recv = r;
                st->caprecv = cap;
        }
        memcpy(st->recv + st->nrecv, t, (size_t)n * sizeof *t);
        st->nrecv += n;
        return 0;
}

/* ---------------------------------------------------------------------------------------------
 * BatchAssembly
 */

/*
 * Connected assembly (the locality extension). A pack grows breadth-first through the links from
 * its first task (a FIFO of neighbours still here), so it is a connected piece; a new pack starts
 * from the task found earliest next to one that left (a second FIFO, over the whole assembly), so
 * that the region that leaves grows breadth-first from the boundary without leaving holes; the
 * first starts from the lightest boundary task (one that talks to another worker). The order inside
 * a run does not look at measured costs: choosing the lightest neighbour each time would ship
 * exactly the tasks whose costs were measured too low (noise on a loaded machine), and the sender
 * would end lighter, the receiver heavier than predicted.
 */
struct assembly {
        struct lbomp__xfer *st;
        const struct lbomp__snap *s;
        uint32_t self;
        bool linked;
        uint32_t *sorted; /* tasks held, lightest first (the paper's order, and the fallback) */
        uint32_t nsorted; /* those that cost something */
        uint32_t next;    /* cursor in sorted */
        uint8_t *taken;   /* [ncur] */
        uint32_t *fifo, fhead, fn;  /* frontier of the open pack */
        uint32_t *seeds, shead, sn; /* where the next pack starts */
};

static bool remaining(const struct assembly *a, uint32_t t)
{
        return !a->taken[lbomp__xfer_held_index(a->st, t)];
}

/* A free task is no load: it never travels. A task heavier than the worker's excess over the
 * average: moving it moves the overload. */
static bool skip(const struct assembly *a, uint32_t t)
{
        return !(a->s->cost[t] > 0) ||
               lbomp__time_on(a->s, a->self, a->s->cost[t]) > a->st->load - a->st->avg;
}

static uint32_t lightest_left(struct assembly *a)
{
        while (a->next < a->nsorted && !remaining(a, a->sorted[a->next]))
                a->next++;
        return a->next < a->nsorted ? a->sorted[a->next] : NOWHERE;
}

/*
 * The next task; sets *fresh when it cannot extend the open pack (a new piece starts). Without
 * links: lightest first (the paper). With links: the open pack's frontier, then the seeds,
 * skipping tasks heavier than the worker's excess over the average (moving one only moves the
 * overload); then the lightest task left, so those come last, as in the paper's order. Skipping
 * on a lower bar (say, tasks heavier than s) would be cherry-picking again: the tasks left behind
 * would be those measured too high.
 */
static uint32_t next_task(struct assembly *a, bool open, bool *fresh)
{
        *fresh = false;
        if (a->linked) {
                while (open && a->fhead < a->fn) {
                        uint32_t t = a->fifo[a->fhead];
                        if (!remaining(a, t)) {
                                a->fhead++;
                                continue;
                        }
                        if (skip(a, t))
                                break;
                        a->fhead++;
                        return t;
                }
                *fresh = open;
                while (a->shead < a->sn) {
                        uint32_t t = a->seeds[a->shead++];
                        if (remaining(a, t) && !skip(a, t))
                                return t;
                }
        }
        return lightest_left(a);
}

/* The task leaves: its neighbours still here join the pack's frontier and the seeds. */
static void take(struct assembly *a, uint32_t t)
{
        const struct lbomp__snap *s = a->s;
        a->taken[lbomp__xfer_held_index(a->st, t)] = 1;
        if (!a->linked)
                return;
        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++) {
                uint32_t b = s->link_dst[k];
                int64_t j = lbomp__xfer_held_index(a->st, b);
                if (j >= 0 && !a->taken[j]) {
                        a->fifo[a->fn++] = b;
                        a->seeds[a->sn++] = b;
                }
        }
}

int lbomp__xfer_assemble(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                         const struct lbomp__xfer_rules *rules)
{
        const struct lbomp__snap *s = lbomp__dc_snap(dc);
        uint32_t m = st->ncur;
        struct assembly a = {.st = st, .s = s, .self = self};
        size_t local_links = 0;
        if (s->link_off)
                for (uint32_t i = 0; i < m; i++)
                        local_links += s->link_off[st->cur[i] + 1] - s->link_off[st->cur[i]];
        a.linked = rules->locality && local_links > 0;
        a.sorted = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *a.sorted);
        a.taken = lbomp__dc_alloc(dc, self, m);
        st->ptask = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *st->ptask);
        st->pk = lbomp__dc_alloc(dc, self, (size_t)m * sizeof *st->pk);
        if (a.linked) {
                a.seeds = lbomp__dc_alloc(dc, self, (m + local_links) * sizeof *a.seeds);
                a.fifo = lbomp__dc_alloc(dc, self, (local_links + 1) * sizeof *a.fifo);
        }
        if (!a.sorted || !a.taken || !st->ptask || !st->pk || (a.linked && (!a.seeds || !a.fifo)))
                return -ENOMEM;
        memcpy(a.sorted, st->cur, (size_t)m * sizeof *a.sorted);
        if (lightest_first(s->cost, a.sorted, m) < 0)
                return -ENOMEM;
        uint32_t free_tasks = 0;
        while (free_tasks < m && !(s->cost[a.sorted[free_tasks]] > 0))
                free_tasks++;
        a.sorted += free_tasks; /* free tasks never travel */
        a.nsorted = m - free_tasks;
        /* The boundary, lightest first. */
        for (uint32_t i = 0; a.linked && i < a.nsorted; i++) {
                uint32_t t = a.sorted[i];
                for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++)
                        if (lbomp__xfer_held_index(st, s->link_dst[k]) < 0) {
                                a.seeds[a.sn++] = t;
                                break;
                        }
        }
        /*
         * The paper's Algorithm 1: lightest task first (runs of linked tasks when there are
         * links, above) into the open pack, the worker's load reduced by it; the pack closes when
         * its cost exceeds s; stop as soon as the load is within ub, and ship the last, partial
         * pack too. (The thesis code takes the heaviest first and never resets its pack
         * accumulator; the policy page calls that a bug and follows the text, and so do we.) One
         * task always stays: moving a worker's last task only moves its overload elsewhere (the
         * rule DistributedLB follows too). Without packs (distributed), each task is its own
         * offer, smallest first, as GrapevineLB sends them; GrapevineLB also stops before a move
         * that would take the sender below the threshold, which leaves a worker holding two tasks
         * larger than its excess overloaded for good, so we stop at the threshold as PackDrop does.
         */
        uint32_t left = a.nsorted, n = 0;
        struct lbomp__xpack *open = NULL;
        st->npk = 0;
        while (st->load > st->ub && left > 1) {
                bool fresh;
                uint32_t t = next_task(&a, open != NULL, &fresh);
                if (t == NOWHERE)
                        break;
                if (fresh && open) /* a connected piece is complete: close it even if small */
                        open = NULL;
                if (!open) {
                        open = &st->pk[st->npk++];
                        *open = (struct lbomp__xpack){.first = n, .target = NOWHERE};
                        a.fhead = a.fn = 0;
                }
                st->ptask[n++] = t;
                open->n++;
                open->cost += s->cost[t];
                st->load -= lbomp__time_on(s, self, s->cost[t]);
                left--;
                take(&a, t);
                if (!rules->packs || open->cost > st->s)
                        open = NULL;
        }
        st->unplaced = st->npk;
        st->pending = 0;
        for (uint32_t i = 0; i < st->npk; i++) {
                lbomp__dc_count_pack(dc, self, st->pk[i].cost);
                st->pending += st->pk[i].cost;
        }
        return 0;
}

/* The tasks held since the phase began, lightest first (free ones left out): what a swap sends
 * back. */
int lbomp__xfer_lightest(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self)
{
        if (st->light)
                return 0;
        const double *cost = lbomp__dc_snap(dc)->cost;
        st->light = lbomp__dc_alloc(dc, self, ((size_t)st->ncur + 1) * sizeof *st->light);
        if (!st->light)
                return -ENOMEM;
        uint32_t n = 0;
        for (uint32_t i = 0; i < st->ncur; i++)
                if (cost[st->cur[i]] > 0)
                        st->light[n++] = st->cur[i];
        if (lightest_first(cost, st->light, n) < 0)
                return -ENOMEM;
        st->nlight = n;
        return 0;
}
