/* example_mpi.c — the README's MPI example: cells spread over the ranks, the heavy ones on rank 0,
 * balanced across ranks by liblbomp-mpi and inside each rank by lbomp.
 * Build: mpicc -fopenmp example_mpi.c $(pkg-config --cflags --libs lbomp-mpi) */
#include <lbomp_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cell {
        double value;
        int cost; /* how much work this cell needs per step */
};

static void update(void *data, lbomp_id_t id, void *arg)
{
        struct cell *c = data;
        (void)id, (void)arg;
        for (int i = 0; i < c->cost * 20000; i++)
                c->value = c->value * 0.999999 + 1e-6;
}

/* How a cell travels to another rank: its bytes, copied out and back in. */
static size_t cell_size(const void *data, lbomp_gid_t gid, void *arg)
{
        (void)data, (void)gid, (void)arg;
        return sizeof(struct cell);
}
static int cell_pack(const void *data, lbomp_gid_t gid, void *buf, size_t len, void *arg)
{
        (void)gid, (void)arg;
        memcpy(buf, data, len);
        return 0;
}
static void *cell_unpack(lbomp_gid_t gid, const void *buf, size_t len, void *arg)
{
        (void)gid, (void)arg;
        struct cell *c = malloc(sizeof *c);
        if (c)
                memcpy(c, buf, len);
        return c;
}
static void cell_release(void *data, lbomp_gid_t gid, void *arg)
{
        (void)gid, (void)arg;
        free(data);
}

int main(int argc, char **argv)
{
        enum { NCELLS = 256, NSTEPS = 40 };
        int provided, rank, size;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        lbomp_t *lb;
        lbomp_mpi_t *m;
        lbomp_mpi_pup_t pup = {cell_size, cell_pack, cell_unpack, cell_release, NULL};
        int rc = lbomp_create(&lb);
        if (rc < 0 || (rc = lbomp_mpi_attach(lb, MPI_COMM_WORLD, &pup, &m)) < 0) {
                fprintf(stderr, "%s\n",
                        *lbomp_mpi_last_error() ? lbomp_mpi_last_error() : lbomp_strerror(rc));
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = rank * NCELLS / size; i < (rank + 1) * NCELLS / size; i++) {
                struct cell *c = malloc(sizeof *c);
                c->value = i;
                c->cost = i < NCELLS / 8 ? 8 : 1; /* the first eighth, on rank 0, is 8x heavier */
                lbomp_mpi_task_add(m, (lbomp_gid_t)i, c, sizeof *c, NULL);
        }
        for (int step = 0; step < NSTEPS && rc == 0; step++)
                rc = lbomp_mpi_step(m, update, NULL); /* every rank, every step */
        if (rank == 0)
                lbomp_mpi_report(m, stdout);
        lbomp_gid_t mine[NCELLS];
        size_t n = lbomp_mpi_local_tasks(m, mine, NCELLS);
        for (size_t i = 0; i < n; i++)
                free(lbomp_mpi_task_data(m, mine[i]));
        lbomp_mpi_detach(m);
        lbomp_destroy(lb);
        MPI_Finalize();
        return rc < 0;
}
