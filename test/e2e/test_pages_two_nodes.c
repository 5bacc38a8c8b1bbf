/*
 * test_pages_two_nodes.c — pages really follow their task between two NUMA nodes of this host:
 * every task allocates its memory with lbomp_task_alloc (on its worker's node), the heavy tasks
 * all start on the first worker, greedy spreads them over workers of every node, and with
 * LBOMP_MOVE_PAGES=on each task's pages end on the node of the CPU its thread runs on. Needs two
 * NUMA nodes with CPUs this process may use, and lbomp binding the threads (OMP_PROC_BIND unset):
 * exits 77 otherwise.
 */
#include <numa.h>
#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbomp.h"
#include "test.h"

#define NT  256
#define MEM (4 * 4096)

struct task {
        int cost;
        char *mem;
        _Atomic int cpu_node; /* node of the CPU the task last ran on */
        double x;
};

static struct task task[NT];

static void work(void *data, lbomp_id_t id, void *arg)
{
        (void)id, (void)arg;
        struct task *t = data;
        atomic_store(&t->cpu_node, numa_node_of_cpu(sched_getcpu()));
        test_spin(&t->x, t->cost * 2000);
        t->mem[0] = (char)t->x;
}

int main(void)
{
        if (numa_available() < 0)
                SKIP("the kernel has no NUMA support");
        if (getenv("OMP_PROC_BIND") || getenv("OMP_PLACES"))
                SKIP("OMP_PROC_BIND/OMP_PLACES set: lbomp does not bind the threads");
        lbomp_t *lb;
        ASSERT_EQ(lbomp_create(&lb), 0);
        int nodes = 0, cores = 0;
        lbomp_topology(lb, &nodes, &cores);
        if (nodes < 2)
                SKIP("this host has %d NUMA node(s); two are needed", nodes);
        ASSERT_EQ(lbomp_set_workers(lb, cores), 0);
        ASSERT_EQ(lbomp_set_policy(lb, "greedy"), 0);
        ASSERT_EQ(lbomp_set_period(lb, 4), 0);
        ASSERT_EQ(lbomp_set_move_pages(lb, 1), 0);
        for (int i = 0; i < NT; i++) {
                task[i].cost = i < NT / cores ? 20 : 1; /* the first worker's tasks are heavy */
                ASSERT_EQ(lbomp_task_add(lb, &task[i], MEM, LBOMP_NODE_ANY, NULL), 0);
        }
        for (int i = 0; i < NT; i++) {
                void *p;
                ASSERT_EQ(lbomp_task_alloc(lb, (lbomp_id_t)i, MEM, &p), 0);
                task[i].mem = p;
                memset(p, 0, MEM);
        }
        for (int s = 0; s < 13; s++) /* LB steps after steps 3, 7, 11; step 12 records nodes */
                ASSERT_EQ(lbomp_step(lb, work, NULL), 0);
        unsigned long long node_moves = 0, bytes = 0;
        for (size_t i = 0; i < lbomp_lb_count(lb); i++) {
                lbomp_lb_stats_t st;
                ASSERT_EQ(lbomp_lb_get(lb, i, &st, sizeof st), 0);
                if (st.data_error)
                        SKIP("move_pages failed: %s (not allowed in this container?)",
                             strerror(-st.data_error));
                node_moves += st.node_migrations;
                bytes += st.data_bytes;
        }
        printf("two nodes: %llu migrations across nodes, %llu bytes of pages moved\n", node_moves,
               bytes);
        ASSERT_GT(node_moves, 0);
        ASSERT(bytes >= (unsigned long long)MEM * node_moves);
        long ps = sysconf(_SC_PAGESIZE);
        for (int i = 0; i < NT; i++)
                for (size_t off = 0; off < MEM; off += (size_t)ps) {
                        void *page = task[i].mem + off;
                        int status = -1;
                        ASSERT_EQ(move_pages(0, 1, &page, NULL, &status, 0), 0);
                        if (status != atomic_load(&task[i].cpu_node))
                                FAIL("task %d runs on node %d, its page %zu is on node %d", i,
                                     atomic_load(&task[i].cpu_node), off / (size_t)ps, status);
                }
        lbomp_destroy(lb);
        for (int i = 0; i < NT; i++)
                lbomp_free(task[i].mem, MEM);
        printf("pages follow their task: ok\n");
        return 0;
}
