/*
 * tsteps.c — the program's time steps (tsteps.h): which run of which task set begins one, and
 * when a task set's period is over. Runs of one team begin one after the other (each in the serial
 * part of its own gathering), so the lock is never contended in a correct program; it keeps the
 * count whole when two teams misuse one runtime at once.
 */
#include "tsteps.h"

void lbomp__tsteps_init(struct lbomp__tsteps *ts)
{
        pthread_mutex_init(&ts->lock, NULL);
        ts->now = 0;
        atomic_init(&ts->begun, 0);
        ts->head = NULL;
        ts->former = NULL;
        ts->marked = false;
        atomic_init(&ts->mark, 0);
}

void lbomp__tsteps_destroy(struct lbomp__tsteps *ts)
{
        pthread_mutex_destroy(&ts->lock);
}

bool lbomp__tsteps_begin(struct lbomp__tsteps *ts, struct lbomp__tset *s)
{
        /* The common case, without the lock: the head runs again, no mark was ever made nor is
         * pending; it begins the next time step (what the locked path below does for it). Runs of
         * one runtime's task sets follow each other, so only a misuse could race here, and the
         * lock never kept that whole either. */
        if (s == ts->head && s->runs > 0 && !ts->marked &&
            !atomic_load_explicit(&ts->mark, memory_order_acquire)) {
                ts->now++;
                atomic_store_explicit(&ts->begun, ts->now + 1, memory_order_release);
                s->t = ts->now;
                s->runs++;
                return false;
        }
        pthread_mutex_lock(&ts->lock);
        uint64_t begun = atomic_load_explicit(&ts->begun, memory_order_relaxed);
        bool here = s->runs > 0 && s->t == ts->now; /* s already ran in the current time step */
        bool next = false;
        if (atomic_exchange_explicit(&ts->mark, 0, memory_order_acq_rel)) {
                ts->marked = true;
                next = begun > 0; /* the very first run begins time step 0 */
        } else if (ts->marked) {
                next = false;
        } else if (begun == 0) {
                ts->head = s;
        } else if (s == ts->head) {
                next = true;
        } else if (s == ts->former) {
                ts->head = s;
                ts->former = NULL;
                next = true;
        } else if (here && ts->head->runs == 1) {
                ts->former = ts->head;
                ts->head = s;
                next = true;
        }
        if (next)
                ts->now++;
        atomic_store_explicit(&ts->begun, ts->now + 1, memory_order_release);
        bool again = !next && here;
        if (s->runs == 0)
                s->t_first = ts->now;
        s->t = ts->now;
        s->runs++;
        pthread_mutex_unlock(&ts->lock);
        return again;
}

void lbomp__tsteps_mark(struct lbomp__tsteps *ts)
{
        atomic_store_explicit(&ts->mark, 1, memory_order_release);
}

bool lbomp__tsteps_due(struct lbomp__tsteps *ts, struct lbomp__tset *s, uint64_t measured,
                       int period)
{
        (void)ts;
        if (measured == 0 || s->t + 1 < lbomp__tsteps_end(s, period))
                return false;
        s->t_lb = s->t + 1;
        return true;
}

uint64_t lbomp__tsteps_count(const struct lbomp__tsteps *ts)
{
        return atomic_load_explicit(&((struct lbomp__tsteps *)ts)->begun, memory_order_acquire);
}
