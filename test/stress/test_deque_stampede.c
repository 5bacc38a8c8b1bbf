/*
 * test_deque_stampede.c — no task runs twice, none is lost: one owner pops while thieves steal
 * from the same Chase-Lev deque, round after round, with plain pthreads so that ThreadSanitizer
 * sees every synchronization (libgomp is not instrumented). Each item's claim counter must end at
 * exactly 1. Also built with -fsanitize=thread as test_deque_stampede_tsan.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "deque.h"
#include "test.h"

#define ITEMS   4096
#define ROUNDS  200
#define THIEVES 3

static struct lbomp__deque dq;
static uint32_t items[ITEMS];
static _Atomic int claims[ITEMS];
static pthread_barrier_t bar;
static _Atomic long stolen_total, lost_races;

static void claim(int64_t pos)
{
        atomic_fetch_add_explicit(&claims[items[pos]], 1, memory_order_relaxed);
}

static void *thief(void *arg)
{
        (void)arg;
        for (int r = 0; r < ROUNDS; r++) {
                pthread_barrier_wait(&bar); /* owner has reset */
                int64_t pos;
                long got = 0;
                for (;;) {
                        enum lbomp__take t = lbomp__deque_steal(&dq, &pos);
                        if (t == LBOMP__TAKEN) {
                                claim(pos);
                                got++;
                        } else if (t == LBOMP__LOST_RACE) {
                                atomic_fetch_add(&lost_races, 1);
                        } else {
                                break;
                        }
                }
                atomic_fetch_add(&stolen_total, got);
                pthread_barrier_wait(&bar); /* round over */
                pthread_barrier_wait(&bar); /* checked */
        }
        return NULL;
}

int main(void)
{
        pthread_t th[THIEVES];
        pthread_barrier_init(&bar, NULL, THIEVES + 1);
        for (int i = 0; i < THIEVES; i++)
                pthread_create(&th[i], NULL, thief, NULL);
        for (int r = 0; r < ROUNDS; r++) {
                /* A different item count each round exercises the last-item race. */
                int n = 1 + (r * 997) % ITEMS;
                for (int i = 0; i < n; i++) {
                        items[i] = (uint32_t)i;
                        atomic_store(&claims[i], 0);
                }
                lbomp__deque_reset(&dq, items, n);
                pthread_barrier_wait(&bar);
                int64_t pos;
                while (lbomp__deque_pop(&dq, &pos) == LBOMP__TAKEN)
                        claim(pos);
                pthread_barrier_wait(&bar);
                for (int i = 0; i < n; i++)
                        if (atomic_load(&claims[i]) != 1)
                                FAIL("round %d: item %d of %d claimed %d times", r, i, n,
                                     atomic_load(&claims[i]));
                pthread_barrier_wait(&bar);
        }
        for (int i = 0; i < THIEVES; i++)
                pthread_join(th[i], NULL);
        printf("deque stampede: %d rounds, %ld items stolen, %ld lost races, every item exactly "
               "once\n",
               ROUNDS, atomic_load(&stolen_total), atomic_load(&lost_races));
        return 0;
}
