/*
 * md.h — the physics of the linkcell benchmark, written the way short-range MD codes write it:
 * particles sorted by cell (one array, each cell's particles contiguous, `first[c]` ..
 * `first[c + 1]`), a periodic C×C×C box of cells as wide as the cutoff, and a time step made of two
 * loops over the cells: forces on each cell's particles from the 27 cells around it (soft
 * repulsion plus a spring to the particle's lattice site; returns the cell's potential energy),
 * then a damped kick-and-drift of each cell's particles (returns their kinetic energy). A cell
 * writes only its own particles in each loop and reads what the loop before wrote, so the result
 * does not depend on which thread runs which cell, nor in what order. A dense droplet near the
 * start of the index range makes some cells far costlier than others, differently in each loop
 * (pairs there, particles here).
 */
#ifndef LBOMP_BENCH_MD_H
#define LBOMP_BENCH_MD_H

#include <math.h>
#include <stdint.h>

struct particle {
        double x, y, z;    /* position in the box [0, C)^3 */
        double vx, vy, vz; /* velocity */
        double fx, fy, fz; /* force of the last force loop */
        double sx, sy, sz; /* the lattice site it is tied to */
};

struct md {
        long C, ncells, npart;
        double dt, eps, spring, damping;
        int64_t *first;     /* [ncells + 1] */
        struct particle *p; /* [npart], sorted by cell */
        long *visits;       /* [2 * ncells]: runs of each cell in the force and integrate loops */
};

/* Forces on the particles of cell c; its potential energy. */
static inline double force_on_cell(struct md *md, int64_t c)
{
        long C = md->C;
        long cx = (long)(c % C), cy = (long)(c / C % C), cz = (long)(c / (C * C));
        double epot = 0, bx = (double)C;
        md->visits[c]++;
        for (int64_t i = md->first[c]; i < md->first[c + 1]; i++) {
                struct particle *a = &md->p[i];
                double fx = 0, fy = 0, fz = 0;
                for (int dz = -1; dz <= 1; dz++)
                        for (int dy = -1; dy <= 1; dy++)
                                for (int dx = -1; dx <= 1; dx++) {
                                        /* the neighbour cell, and where its image sits */
                                        long nx = cx + dx, ny = cy + dy, nz = cz + dz;
                                        double ox = nx < 0 ? -bx : nx >= C ? bx : 0;
                                        double oy = ny < 0 ? -bx : ny >= C ? bx : 0;
                                        double oz = nz < 0 ? -bx : nz >= C ? bx : 0;
                                        nx = (nx + C) % C, ny = (ny + C) % C, nz = (nz + C) % C;
                                        int64_t n = (nz * C + ny) * C + nx;
                                        for (int64_t j = md->first[n]; j < md->first[n + 1]; j++) {
                                                if (j == i)
                                                        continue;
                                                const struct particle *b = &md->p[j];
                                                double rx = a->x - (b->x + ox),
                                                       ry = a->y - (b->y + oy),
                                                       rz = a->z - (b->z + oz);
                                                double r2 = rx * rx + ry * ry + rz * rz;
                                                if (r2 >= 1.0 || r2 == 0.0)
                                                        continue;
                                                double r = sqrt(r2), w = 1.0 - r;
                                                double f = 2.0 * md->eps * w / r;
                                                fx += f * rx, fy += f * ry, fz += f * rz;
                                                epot += 0.5 * md->eps * w * w;
                                        }
                                }
                double sx = a->x - a->sx, sy = a->y - a->sy, sz = a->z - a->sz;
                fx -= md->spring * sx, fy -= md->spring * sy, fz -= md->spring * sz;
                epot += 0.5 * md->spring * (sx * sx + sy * sy + sz * sz);
                a->fx = fx, a->fy = fy, a->fz = fz;
        }
        return epot;
}

/* Keeps a particle within a quarter cell of its site, so that the cell lists stay valid. */
static inline double md_clamp(double x, double site)
{
        return x < site - 0.25 ? site - 0.25 : x > site + 0.25 ? site + 0.25 : x;
}

/* Kick and drift of the particles of cell c; their kinetic energy. */
static inline double integrate_cell(struct md *md, int64_t c)
{
        double ekin = 0, keep = 1.0 - md->damping, dt = md->dt;
        md->visits[md->ncells + c]++;
        for (int64_t i = md->first[c]; i < md->first[c + 1]; i++) {
                struct particle *a = &md->p[i];
                a->vx = (a->vx + a->fx * dt) * keep;
                a->vy = (a->vy + a->fy * dt) * keep;
                a->vz = (a->vz + a->fz * dt) * keep;
                a->x = md_clamp(a->x + a->vx * dt, a->sx);
                a->y = md_clamp(a->y + a->vy * dt, a->sy);
                a->z = md_clamp(a->z + a->vz * dt, a->sz);
                ekin += 0.5 * (a->vx * a->vx + a->vy * a->vy + a->vz * a->vz);
        }
        return ekin;
}

/* The three forms of one time step (step_omp.c, step_for.c, step_tasks.c); each returns the
 * potential energy and leaves the kinetic energy in *ekin. */
struct lbomp;
double step_omp(struct md *md, double *ekin);
double step_for(struct lbomp *lb, struct md *md, double *ekin);
double step_tasks(struct lbomp *force, struct lbomp *integrate, struct md *md, double *ekin);

#endif
