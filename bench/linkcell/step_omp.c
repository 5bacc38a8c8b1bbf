/*
 * step_omp.c — one time step of the linkcell benchmark in plain OpenMP: two parallel loops over
 * the cells, each with a reduction, their schedule taken at run time (omp_set_schedule, or
 * OMP_SCHEDULE). step_for.c is the same step with lbomp: compare them with
 * `diff bench/linkcell/step_omp.c bench/linkcell/step_for.c`.
 */
#include "md.h"

double step_omp(struct md *md, double *ekin)
{
        double epot = 0, ek = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : epot)
        for (int64_t c = 0; c < md->ncells; c++)
                epot += force_on_cell(md, c);
#pragma omp parallel for schedule(runtime) reduction(+ : ek)
        for (int64_t c = 0; c < md->ncells; c++)
                ek += integrate_cell(md, c);
        *ekin = ek;
        return epot;
}
