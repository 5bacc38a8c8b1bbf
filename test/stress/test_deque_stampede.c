/*
 * test_deque_stampede.c — no task runs twice, none is lost: one owner takes batches while thieves
 * steal from the same deque, round after round, with plain pthreads so that
 * ThreadSanitizer sees every synchronization (libgomp is not instrumented). The thieves never
 * wait for a round to start: they steal all the time, so a thief delayed from one round meets the
 * owner's next content, which the owner re-arms without a barrier (as a step does). Each position
 * of each round must be claimed exactly once and lie inside that round's content; the owner runs
 * its batches in ascending positions, after each other, the thieves taking its last positions
 * (tail mode) or its next ones (front mode), one position or a run of them per claim (the grain),
 * the mode and the grain changing from round to round. Also built with
 * -fsanitize=thread as test_deque_stampede_tsan.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "deque.h"
#include "test.h"

#define ITEMS   2048
#define ROUNDS  3000
#define THIEVES 3

static struct lbomp__deque dq;
static _Atomic int claims[ITEMS];
static _Atomic long claimed; /* claims of the current round */
static _Atomic long nitems;  /* the current round's item count */
static _Atomic int done;
static _Atomic long stolen_total, lost_races, bad;

static void claim(int64_t pos)
{
        long n = atomic_load_explicit(&nitems, memory_order_acquire);
        if (pos < 0 || pos >= n) {
                atomic_fetch_add(&bad, 1);
                return;
        }
        atomic_fetch_add_explicit(&claims[pos], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&claimed, 1, memory_order_release);
}

static void *thief(void *arg)
{
        (void)arg;
        long got = 0, spins = 0;
        while (!atomic_load_explicit(&done, memory_order_acquire)) {
                int64_t pos, count;
                enum lbomp__take t = lbomp__deque_steal(&dq, &pos, &count);
                if (t == LBOMP__TAKEN) {
                        /* The owner does not start another round before these claims count, so
                         * the round read here is the one they belong to. */
                        if (count < 1)
                                atomic_fetch_add(&bad, 1);
                        for (int64_t p = pos; p < pos + count; p++)
                                claim(p);
                        got += count;
                } else if (t == LBOMP__LOST_RACE) {
                        atomic_fetch_add(&lost_races, 1);
                } else if (++spins % 64 == 0) {
                        sched_yield();
                }
        }
        atomic_fetch_add(&stolen_total, got);
        return NULL;
}

int main(void)
{
        pthread_t th[THIEVES];
        for (int i = 0; i < THIEVES; i++)
                pthread_create(&th[i], NULL, thief, NULL);
        long own = 0;
        for (int r = 0; r < ROUNDS; r++) {
                /* Item counts from 0 to ITEMS exercise the empty deque and the last-item race. */
                int n = (r * 997) % (ITEMS + 1);
                for (int i = 0; i < n; i++)
                        atomic_store(&claims[i], 0);
                atomic_store(&claimed, 0);
                atomic_store_explicit(&nitems, n, memory_order_release);
                /* Every other round, the owner keeps the first positions for itself and arms
                 * the rest, as a step does with its first batch. */
                int64_t mine = r % 2 ? n / 3 : 0;
                for (int64_t p = 0; p < mine; p++)
                        claim(p);
                own += mine;
                /* Both modes, each with and without a first batch kept, runs of 1 to 5
                 * positions per index (a grain of 1 in half the rounds). */
                int64_t grain = r % 8 < 4 ? 1 : 1 + (r / 8) % 5;
                lbomp__deque_arm_grain(&dq, mine, n - mine, (r / 2) % 2, grain);
                int64_t first, got, prev_end = mine - 1;
                int64_t k = 1 + r % 17; /* batch sizes 1..17, and all at once every 17 rounds */
                while ((got = lbomp__deque_pop(&dq, r % 17 == 16 ? ITEMS : k, &first)) > 0) {
                        /* A batch is a run of positions after the previous one. */
                        if (first <= prev_end)
                                FAIL("round %d: batch at %lld after one ending at %lld", r,
                                     (long long)first, (long long)prev_end);
                        prev_end = first + got - 1;
                        for (int64_t p = first; p < first + got; p++)
                                claim(p);
                        own += got;
                }
                while (atomic_load_explicit(&claimed, memory_order_acquire) < n)
                        sched_yield();
                for (int i = 0; i < n; i++)
                        if (atomic_load(&claims[i]) != 1)
                                FAIL("round %d: item %d of %d claimed %d times", r, i, n,
                                     atomic_load(&claims[i]));
                if (atomic_load(&claimed) != n || atomic_load(&bad))
                        FAIL("round %d: %ld claims for %d items, %ld outside the content", r,
                             atomic_load(&claimed), n, atomic_load(&bad));
                /* Not a new round before every claim of this one counted (see thief()). */
                atomic_store_explicit(&nitems, 0, memory_order_release);
        }
        atomic_store(&done, 1);
        for (int i = 0; i < THIEVES; i++)
                pthread_join(th[i], NULL);
        printf("deque stampede: %d rounds, %ld items taken by the owner, %ld stolen, %ld lost "
               "races, every item exactly once\n",
               ROUNDS, own, atomic_load(&stolen_total), atomic_load(&lost_races));
        ASSERT_EQ(atomic_load(&bad), 0);
        return 0;
}
