/* example.c — the README's minimal example: cells with imbalanced costs, balanced by lbomp.
 * Build: cc -fopenmp example.c $(pkg-config --cflags --libs lbomp) */
#include <lbomp.h>
#include <stdio.h>

struct cell {
        double value;
        int cost; /* how much work this cell needs per step */
};

static void update(struct cell *c)
{
        for (int i = 0; i < c->cost * 2000; i++)
                c->value = c->value * 0.999999 + 1e-6;
}

int main(void)
{
        enum { NCELLS = 256, NSTEPS = 40 };
        static struct cell cell[NCELLS];
        lbomp_t *lb;
        int rc = lbomp_create(&lb); /* reads LBOMP_POLICY, LBOMP_PERIOD, ... */
        if (rc < 0) {
                fprintf(stderr, "%s\n", lbomp_strerror(rc));
                return 1;
        }
        for (int i = 0; i < NCELLS; i++) {
                cell[i].cost = i < NCELLS / 4 ? 8 : 1; /* the first quarter is 8x heavier */
                lbomp_task_add(lb, &cell[i], sizeof cell[i], LBOMP_NODE_ANY, NULL);
        }
        for (int step = 0; step < NSTEPS; step++) {
#pragma omp parallel
                LBOMP_FOR_EACH_TASK (lb, struct cell *, c) {
                        update(c);
                }
        }
        lbomp_report(lb, stdout);
        lbomp_destroy(lb);
        return 0;
}
