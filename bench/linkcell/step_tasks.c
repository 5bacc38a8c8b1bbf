/*
 * step_tasks.c — one time step of the linkcell benchmark with lbomp's task form: every cell is a
 * task registered in each of two runtimes (one per loop, so that each loop keeps its own costs
 * and mapping), run with LBOMP_FOR_EACH_TASK; LBOMP_TASK_ID is the cell's number.
 */
#include "md.h"
#include "lbomp.h"

double step_tasks(lbomp_t *force, lbomp_t *integrate, struct md *md, double *ekin)
{
        double epot = 0, ek = 0;
#pragma omp parallel reduction(+ : epot)
        LBOMP_FOR_EACH_TASK (force, int64_t *, cell)
                epot += force_on_cell(md, LBOMP_TASK_ID);
#pragma omp parallel reduction(+ : ek)
        LBOMP_FOR_EACH_TASK (integrate, int64_t *, cell)
                ek += integrate_cell(md, LBOMP_TASK_ID);
        *ekin = ek;
        return epot;
}
