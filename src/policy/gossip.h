/*
 * gossip.h — the information-propagation phase shared by packdrop and distributed (GrapevineLB):
 * underloaded workers spread (id, load) lists by epidemic push so that overloaded ones learn of
 * receivers without anyone gathering the whole machine's state.
 */
#ifndef LBOMP_POLICY_GOSSIP_H
#define LBOMP_POLICY_GOSSIP_H

#include "../mailbox.h"

/* Entries a worker's view keeps from gossip (a sample of the receivers, gossip.c). */
#ifndef LBOMP__GOSSIP_VIEW
#define LBOMP__GOSSIP_VIEW 64
#endif
/* Sends per worker and phase, for ceil(log2 P) = lg. */
#ifndef LBOMP__GOSSIP_BUDGET
#define LBOMP__GOSSIP_BUDGET(lg) ((lg) + 1)
#endif

/* One known worker: its load as last heard, and the version of that news (newer wins). */
struct lbomp__gentry {
        uint32_t id, ver;
        double load;
        double spare; /* what it could send back in a swap: its load but its largest task */
        double small; /* its smallest task */
};

struct lbomp__gossip {
        struct lbomp__gentry *e, *tmp; /* known workers sorted by id; tmp: merge buffer */
        uint32_t n, cap, max;          /* entries, room, workers (the most there can be) */
        struct lbomp__dctx *dc;        /* where the lists grow */
        uint32_t self;
        uint32_t budget; /* sends left: 2·ceil(log2 P) + 1 per LB step */
        uint32_t kind;   /* message kind of gossip */
        bool changed;    /* news since the last send */
};

/* Starts the phase for `self` (state reset every LB step). 0 or -ENOMEM. */
int lbomp__gossip_init(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self,
                       uint32_t kind);
/* Sets (or refreshes) an entry, e.g. the worker's own offer to receive: news to forward. 0 or
 * -ENOMEM. */
int lbomp__gossip_set(struct lbomp__gossip *g, uint32_t id, uint32_t ver, double load, double spare,
                      double small);
/* Merges every gossip message of this round's inbox. 0 or -ENOMEM. */
int lbomp__gossip_receive(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self);
/* If there is news and budget left: one send, the whole list to `fanout` distinct random other
 * workers. 0 or a negative errno. */
int lbomp__gossip_send(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self);
/* Returned by lbomp__gossip_round() once the phase is over everywhere. */
#define LBOMP__GOSSIP_OVER 2
/*
 * One round of the phase. While messages are in flight: merge the inbox, forward any news, and
 * return the round function's answer (a sender stays LBOMP__ROUND_BUSY so that it sees the end).
 * Once no message was sent in the last round — on every worker in the same round, the barrier of
 * the paper — LBOMP__GOSSIP_OVER, and the caller moves on. A negative errno on failure.
 */
int lbomp__gossip_round(struct lbomp__gossip *g, struct lbomp__dctx *dc, uint32_t self,
                        bool sender);
/* Worker id's rank in self's view: a hash of both, different from worker to worker. Views keep
 * the entries of lowest rank; ties between equally loaded workers go by it too, so that senders
 * that see the same loads do not all pick the same worker. */
uint64_t lbomp__gossip_rank(uint32_t self, uint32_t id);
/* Index of `id` in the list, or -1. */
int64_t lbomp__gossip_find(const struct lbomp__gossip *g, uint32_t id);

#endif
