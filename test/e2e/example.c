/* example.c — the README's minimal example: cells with imbalanced costs, balanced by lbomp.
 * Build: cc -fopenmp example.c $(pkg-config --cflags --libs lbomp) */
#include <lbomp.h>
#include <stdio.h>

enum { NCELLS = 256, NSTEPS = 40 };
static double value[NCELLS];

/* One step of cell i; the first quarter of the cells is 8x heavier. */
static double update(int64_t i)
{
        int cost = i < NCELLS / 4 ? 8 : 1;
        for (int k = 0; k < cost * 2000; k++)
                value[i] = value[i] * 0.999999 + 1e-6;
        return value[i];
}

int main(void)
{
        lbomp_t *lb;
        int rc = lbomp_create(&lb); /* reads LBOMP_POLICY, LBOMP_PERIOD, ... */
        if (rc < 0) {
                fprintf(stderr, "%s\n", lbomp_strerror(rc));
                return 1;
        }
        double total = 0;
        for (int step = 0; step < NSTEPS; step++) {
                total = 0;
                /* was: #pragma omp parallel for reduction(+ : total)
                 *      for (int64_t i = 0; i < NCELLS; i++) */
#pragma omp parallel reduction(+ : total)
                LBOMP_FOR (lb, "update", i, 0, NCELLS)
                        total += update(i);
        }
        printf("sum of the cells: %.6f\n", total);
        lbomp_report(lb, stdout);
        lbomp_destroy(lb);
        return 0;
}
