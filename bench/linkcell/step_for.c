/*
 * step_for.c — one time step of the linkcell benchmark with lbomp: two parallel loops over
 * the cells, each with a reduction, their indices in chunks that lbomp times and balances.
 * step_omp.c is the same step in plain OpenMP: compare them with
 * `diff bench/linkcell/step_omp.c bench/linkcell/step_for.c`.
 */
#include "md.h"
#include "lbomp.h"

double step_for(lbomp_t *lb, struct md *md, double *ekin)
{
        double epot = 0, ek = 0;
#pragma omp parallel reduction(+ : epot)
        LBOMP_FOR (lb, "force", c, 0, md->ncells)
                epot += force_on_cell(md, c);
#pragma omp parallel reduction(+ : ek)
        LBOMP_FOR (lb, "integrate", c, 0, md->ncells)
                ek += integrate_cell(md, c);
        *ekin = ek;
        return epot;
}
