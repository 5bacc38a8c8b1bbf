/*
 * transfer.h — the phased transfer protocol shared by packdrop (tasks leave in packs) and
 * distributed (tasks leave one by one): in each phase a reduction, then gossip of the underloaded
 * workers' loads, then offers from the overloaded workers, accepted under the threshold or, when
 * forced, only where they lower the larger of the two loads (with a swap of lighter tasks back
 * when that is what it takes). The policies differ only in their rules (struct lbomp__xfer_rules).
 */
#ifndef LBOMP_POLICY_TRANSFER_H
#define LBOMP_POLICY_TRANSFER_H

#include "gossip.h"

struct lbomp__xfer_rules {
        bool packs;    /* packdrop: tasks leave in packs of about s; else one task per offer */
        bool locality; /* packdrop's extension: connected packs, receivers near the sender first */
        /* distributed: once a sender's rejected offers exceed this share of the receivers it
         * knows, its offers go forced (0: never) */
        double give_up;
};

#define LBOMP__XFER_REMEMBER 4 /* targets that refused a pack, not offered it again */

/* A pack: tasks that leave together (one task each for distributed). */
struct lbomp__xpack {
        uint32_t first, n; /* its tasks: ptask[first .. first + n) */
        double cost;
        uint32_t tries;  /* normal offers made */
        uint32_t ftries; /* forced offers made */
        uint32_t target;
        uint32_t nref; /* refusals so far; the last LBOMP__XFER_REMEMBER are in refused[] */
        uint32_t refused[LBOMP__XFER_REMEMBER];
        uint32_t state;
        bool forced;
};

enum { LBOMP__PK_PENDING, LBOMP__PK_PLACED };

/* One worker's state for one LB step (the policy's wstate, zeroed by the framework). */
struct lbomp__xfer {
        int phase;
        uint32_t nphase; /* phases started */
        bool sender;
        double load; /* background + tasks held, minus packs out, plus packs in */
        double avg, ub, s, v;
        struct lbomp__gossip g;
        /* Tasks held (snapshot indices): cur, ascending, at the start of a phase; left[i] when
         * cur[i] went away in it; recv, the tasks received in it. */
        uint32_t *cur, ncur;
        uint8_t *left;
        uint32_t *recv, nrecv, caprecv;
        bool contiguous; /* cur[i] == cur[0] + i */
        uint32_t *light; /* receiver: tasks of cur lightest first, for swaps (built when needed) */
        uint32_t nlight;
        uint32_t *cand_back;       /* scratch: the tasks a swap sends back */
        double spare, spare_small; /* lbomp__xfer_spare() for this round's replies (small < 0:
                                      not computed yet) */
        uint32_t *ptask;           /* tasks of the packs, pack after pack */
        struct lbomp__xpack *pk;
        uint32_t npk, unplaced;
        double pending; /* cost of the packs out, neither placed nor home yet */
        double *cw;     /* scratch: cumulative weights of the candidates */
        uint32_t *cand; /* scratch: candidates */
        uint32_t capcand;
        uint32_t moved;      /* tasks sent away (accepted) in this phase */
        uint32_t rejections; /* normal offers refused in this phase */
        uint32_t known;      /* receivers known when the offers started */
};

/* assemble.c: the tasks held. Index of task t among those held at the phase's start, or -1. */
int64_t lbomp__xfer_held_index(const struct lbomp__xfer *st, uint32_t t);
/* The tasks held now (those of the last phase that stayed, `from` and those received) become the
 * phase's. 0 or -ENOMEM. */
int lbomp__xfer_hold(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                     const uint32_t *from, uint32_t n);
/* Tasks that arrived in a pack: held from the next phase on. 0 or -ENOMEM. */
int lbomp__xfer_receive(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                        const uint32_t *t, uint32_t n);
/* What a swap could send back: the tasks held but the largest (returned), the smallest in *small.
 */
double lbomp__xfer_spare(const struct lbomp__xfer *st, struct lbomp__dctx *dc, double *small);
/* st->light: the tasks held, lightest first (built once a phase). 0 or -ENOMEM. */
int lbomp__xfer_lightest(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self);
/* BatchAssembly: cuts the excess above ub into st->pk. 0 or -ENOMEM. */
int lbomp__xfer_assemble(struct lbomp__xfer *st, struct lbomp__dctx *dc, uint32_t self,
                         const struct lbomp__xfer_rules *rules);

/* The round function of a policy following `rules` (policy.h). */
int lbomp__xfer_round(struct lbomp__dctx *dc, uint32_t self, struct lbomp__xfer *st,
                      const struct lbomp__xfer_rules *rules);

/* Message kinds of both policies, in this order. */
enum { LBOMP__XK_GOSSIP, LBOMP__XK_OFFER, LBOMP__XK_ACCEPT, LBOMP__XK_REJECT, LBOMP__XK_FORCED };

#endif
