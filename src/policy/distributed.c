/*
 * distributed.c — decentralized per-task balancing (GrapevineLB, Menon & Kalé SC'13; Charm++
 * DistributedLB): underloaded workers gossip their load; an overloaded worker offers its tasks one
 * by one, smallest first, each to a receiver drawn with probability proportional to its free room
 * under the threshold, which accepts iff it stays within it; after a rejection a task is offered
 * once more, and a sender whose offers were refused by more than 10 % of the receivers it knows
 * stops offering normally. One offer and one reply per task moved: the baseline packdrop is
 * measured against. The protocol and its phases are transfer.c's, shared with packdrop
 * (doc/policies.md: what we add to GrapevineLB and why).
 */
#include "../mailbox.h"
#include "transfer.h"

static const char *const kinds[] = {"gossip", "offer", "accept", "reject", "forced", NULL};

static const struct lbomp__xfer_rules rules = {.packs = false, .locality = false, .give_up = 0.1};

static int distributed_round(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state)
{
        (void)round;
        return lbomp__xfer_round(dc, self, state, &rules);
}

const struct lbomp__policy lbomp__policy_distributed = {
        .name = "distributed",
        .help = "decentralized: gossip, then tasks offered one by one to random underloaded "
                "workers (GrapevineLB)",
        .kind = LBOMP__DECENTRAL,
        .wstate_size = sizeof(struct lbomp__xfer),
        .round = distributed_round,
        .msg_kinds = kinds,
};
