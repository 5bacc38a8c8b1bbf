/*
 * packdrop.c — decentralized batch task migration (PackDrop, Freitas et al., SBAC-PAD 2018):
 * overloaded workers cut their excess into packs (BatchAssembly) while underloaded ones gossip
 * their load, then each pack is offered whole to a receiver drawn from what gossip told
 * (BatchSend). The protocol is transfer.c's, shared with distributed; what makes it PackDrop is
 * that tasks travel in packs of about s = mean task cost × (2 − P / tasks), one message per pack,
 * and our locality extension: a pack is a run of linked tasks grown from the worker's boundary,
 * and receivers on the sender's node are drawn more often. doc/policies.md says where we depart
 * from the paper and why.
 */
#include "../mailbox.h"
#include "transfer.h"

static const char *const kinds[] = {"gossip", "offer", "accept", "reject", "forced", NULL};

static const struct lbomp__xfer_rules rules = {.packs = true, .locality = true};

static int packdrop_round(struct lbomp__dctx *dc, uint32_t self, uint32_t round, void *state)
{
        (void)round;
        return lbomp__xfer_round(dc, self, state, &rules);
}

const struct lbomp__policy lbomp__policy_packdrop = {
        .name = "packdrop",
        .help = "decentralized: overloaded workers send packs of tasks to receivers found by "
                "gossip (PackDrop)",
        .kind = LBOMP__DECENTRAL,
        .wstate_size = sizeof(struct lbomp__xfer),
        .round = packdrop_round,
        .msg_kinds = kinds,
};
