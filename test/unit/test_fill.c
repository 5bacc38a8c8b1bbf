/*
 * test_fill.c — the workers' arrays after tasks came, went and moved (lbomp__workers_fill): with
 * keep (a step's gathering) each worker's arrays hold exactly its tasks, with their ids and data,
 * and an entry that still holds one of its tasks stays where it was unless a place left empty was
 * filled from the end: at most as many of them move as the worker lost more tasks than it gained;
 * without keep (after an LB step) they are in ascending slot order. Random rounds of removals,
 * additions (recycled slots, some removed again before the fill and their slots given anew) and
 * moves on 3 workers, no step run; a round without moves takes the quick fill (only what came
 * and went is read), the same rules. Every entry's place is where the runtime finds it
 * (ws.pos). One thread, deterministic.
 */
#include <stdlib.h>

#include "runtime.h"
#include "test.h"

#define W      3
#define ROUNDS 400
#define MAXT   600

static int data[MAXT * 4];
static lbomp_id_t live[MAXT * 4];
static int nlive;

/* Each worker holds exactly the table's tasks of that worker, ids and data in step. */
static void check_arrays(lbomp_t *lb, int round)
{
        const struct lbomp__tasks *tk = &lb->tasks;
        uint32_t total = 0;
        static unsigned char hit[MAXT * 4];
        for (uint32_t s = 0; s < tk->nslots; s++)
                hit[s] = 0;
        for (int i = 0; i < lb->ws.n; i++) {
                const struct lbomp__worker *w = &lb->ws.w[i];
                for (uint32_t p = 0; p < w->n; p++) {
                        uint32_t s = w->tasks[p];
                        if (s >= tk->nslots || tk->task[s].worker != (uint32_t)i)
                                FAIL("round %d: worker %d position %u holds slot %u of worker %u",
                                     round, i, p, s, s < tk->nslots ? tk->task[s].worker : 0);
                        if (hit[s]++)
                                FAIL("round %d: slot %u twice in the arrays", round, s);
                        ASSERT_EQ(w->ids[p], tk->task[s].id);
                        ASSERT(w->data[p] == tk->task[s].data);
                        ASSERT_EQ(lb->ws.pos[s], p);
                }
                total += w->n;
        }
        ASSERT_EQ(total, tk->nalive);
}

int main(void)
{
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        ASSERT_EQ(lbomp_set_workers(lb, W), 0);
        srand(12345);
        for (int i = 0; i < MAXT / 2; i++, nlive++)
                ASSERT_EQ(lbomp_task_add(lb, &data[i], 8, LBOMP_NODE_ANY, &live[nlive]), 0);
        ASSERT_EQ(lbomp__workers_fill(&lb->ws, &lb->tasks, true), 0);
        check_arrays(lb, -1);
        long kept = 0, moved_total = 0, nquick = 0;
        for (int r = 0; r < ROUNDS; r++) {
                /* where each live slot was */
                static int32_t pos_before[MAXT * 4], worker_before[MAXT * 4];
                static uint32_t id_before[MAXT * 4];
                for (uint32_t s = 0; s < lb->tasks.nslots; s++)
                        worker_before[s] = -1;
                for (int i = 0; i < W; i++)
                        for (uint32_t p = 0; p < lb->ws.w[i].n; p++) {
                                uint32_t s = lb->ws.w[i].tasks[p];
                                worker_before[s] = i;
                                pos_before[s] = (int32_t)p;
                                id_before[s] = lb->ws.w[i].ids[p];
                        }
                int lost[W] = {0}, gained[W] = {0};
                /* removals */
                int nrem = rand() % 12;
                for (int k = 0; k < nrem && nlive > 1; k++) {
                        int j = rand() % nlive;
                        uint32_t s = lbomp__tasks_slot(&lb->tasks, live[j]);
                        lost[lb->tasks.task[s].worker]++;
                        ASSERT_EQ(lbomp_task_remove(lb, live[j]), 0);
                        live[j] = live[--nlive];
                }
                /* additions: pending, placed by the fill */
                int nadd = rand() % 12;
                for (int k = 0; k < nadd && nlive < MAXT; k++, nlive++)
                        ASSERT_EQ(lbomp_task_add(lb, &data[rand() % (MAXT * 4)], 8, LBOMP_NODE_ANY,
                                                 &live[nlive]),
                                  0);
                /* one of them gone again before any fill, its slot given to the next */
                if (nadd > 0 && r % 4 == 1 && nlive > 1) {
                        ASSERT_EQ(lbomp_task_remove(lb, live[nlive - 1]), 0);
                        ASSERT_EQ(lbomp_task_add(lb, &data[rand() % (MAXT * 4)], 8, LBOMP_NODE_ANY,
                                                 &live[nlive - 1]),
                                  0);
                }
                /* moves, as a plan would set them */
                int nmove = r % 3 == 0 ? rand() % 6 : 0;
                for (int k = 0; k < nmove; k++) {
                        uint32_t s = lbomp__tasks_slot(&lb->tasks, live[rand() % nlive]);
                        uint32_t from = lb->tasks.task[s].worker;
                        if (from >= W)
                                continue; /* added this round: not placed yet */
                        uint32_t to = (from + 1 + (uint32_t)(rand() % (W - 1))) % W;
                        lb->tasks.task[s].worker = to;
                        lost[from]++;
                        lb->tasks.dirty = true;
                        lb->tasks.reshaped = true;
                }
                bool keep = r % 10 != 9;
                bool quick = keep && !lb->tasks.reshaped && lb->ws.pos_ok;
                uint64_t quick_before = lb->ws.quick_fills;
                ASSERT_EQ(lbomp__workers_fill(&lb->ws, &lb->tasks, keep), 0);
                ASSERT_EQ(lb->ws.quick_fills - quick_before, quick);
                nquick += quick;
                check_arrays(lb, r);
                for (uint32_t s = 0; s < lb->tasks.nslots; s++) {
                        uint32_t wi = lb->tasks.task[s].worker;
                        if (wi < W && (worker_before[s] != (int32_t)wi ||
                                       id_before[s] != lb->tasks.task[s].id))
                                gained[wi]++;
                }
                if (!keep) {
                        for (int i = 0; i < W; i++)
                                for (uint32_t p = 1; p < lb->ws.w[i].n; p++)
                                        ASSERT(lb->ws.w[i].tasks[p - 1] < lb->ws.w[i].tasks[p]);
                        continue;
                }
                /* a task that stayed keeps its place, but for those moved into places left
                 * empty: no more than the worker lost beyond what it gained */
                for (int i = 0; i < W; i++) {
                        const struct lbomp__worker *w = &lb->ws.w[i];
                        int moved = 0;
                        for (uint32_t p = 0; p < w->n; p++) {
                                uint32_t s = w->tasks[p];
                                if (worker_before[s] != i || id_before[s] != w->ids[p])
                                        continue;
                                if (pos_before[s] != (int32_t)p)
                                        moved++;
                                else
                                        kept++;
                        }
                        int bound = lost[i] > gained[i] ? lost[i] - gained[i] : 0;
                        if (moved > bound)
                                FAIL("round %d: worker %d: %d tasks that stayed changed place, "
                                     "it lost %d and gained %d",
                                     r, i, moved, lost[i], gained[i]);
                        moved_total += moved;
                }
        }
        printf("fill: %d rounds (%ld quick), every worker's arrays exact; %ld entries kept in "
               "place, %ld moved into places left empty\n",
               ROUNDS, nquick, kept, moved_total);
        ASSERT_GT(kept, 0);
        ASSERT_GT(nquick, ROUNDS / 2);
        lbomp_destroy(lb);
        return 0;
}
