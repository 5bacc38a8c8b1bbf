/*
 * lbstep.h — the LB step: snapshot → plan → check → apply → record, then the data of the tasks
 * that moved. The centralized work runs on one thread in the serial part of the barrier that ends
 * the window's last step (lbomp__lb_begin); then every thread of the team calls lbomp__lb_step()
 * for what needs the team: a decentralized policy's rounds, the data moves.
 * Below it: window, snapshot, plan, the policies and their round engine, trace, task memory.
 */
#ifndef LBOMP_LBSTEP_H
#define LBOMP_LBSTEP_H

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "lbomp.h"
#include "plan.h"
#include "policy.h"
#include "policy/auto.h"

/* The note of an LB step that ran no policy: kept as numbers, written out when read
 * (lbomp__lbrec_note), so that such a step formats nothing. */
enum lbomp__note {
        LBOMP__NOTE_TEXT,     /* `note` as written ("" when nothing needs saying) */
        LBOMP__NOTE_BALANCED, /* arg[0]: the tolerance */
        LBOMP__NOTE_NO_PAY,   /* arg[0] gain, arg[1] cost, u periods, flag: cost measured */
        LBOMP__NOTE_AUTO_SKIP /* arg[0] predicted loss, arg[1] cost, arg[2] floor; flag: the
                                 next LB step armed for a load that moves within the window */
};

/* Everything one LB step records beyond the public fields. */
struct lbomp__lbrec {
        lbomp_lb_stats_t pub;
        char note[320]; /* why the plan is what it is, when that needs saying; "" otherwise */
        enum lbomp__note note_kind;
        double note_arg[3];
        uint32_t note_u;
        bool note_flag;
        struct lbomp__pstats ps;
        double energy_j, power_w; /* of the window that led to this step; NAN when unknown */
};

/* The record's note: `note` itself, or the numbers of a cheap step's note written into buf. */
const char *lbomp__lbrec_note(const struct lbomp__lbrec *r, char *buf, size_t len);

/* What the run's LB steps add up to (the ones no longer kept included). */
struct lbomp__lbsum {
        uint64_t steps, migrations, migrated_bytes, messages, node_migrations, data_moves,
                data_bytes;
        double decision_s, apply_s, move_cost, data_s;
        double locality_first; /* locality_before of the run's first LB step */
};

struct lbomp__lbs {
        /* The last LBOMP_HISTORY LB steps (struct lbomp__lbrec); recs.n counts every one */
        struct lbomp__history recs;
        struct lbomp__lbsum gone; /* the LB steps whose records were reused */
        /* scratch, reused */
        struct lbomp__snapbuf *sb;
        struct lbomp__plan plan;
        struct lbomp__dec *dec;
        double *cost; /* a worker's task costs */
        uint32_t cost_cap;
        double *slot_cost; /* the snapshot's costs by task slot, for the workers' batches */
        uint32_t slot_cost_cap;
        /* The public id of each task of the last snapshot (whose ids are task-table slots), for
         * code that names tasks as the program does (liblbomp-mpi); valid with `snap`. */
        uint32_t *snap_ids;
        uint32_t snap_ids_cap;
        /* Every LB step builds its snapshot, whatever the policy and the balance: another
         * library reads the costs (liblbomp-mpi). Set before the first step. */
        bool keep_costs;
        /* LBOMP_TRACE: records every LB step's snapshot and plan (trace.h), or NULL */
        struct lbomp__trace_writer *trace;
        int32_t *trace_wcore; /* [nworkers] core of each worker, for the trace */
        /* the LB step in progress, shared by the team between barriers */
        const struct lbomp__snap *snap;
        struct lbomp__lbrec *cur;
        double t_decide, t_data;
        double t_begin;     /* when this LB step began */
        double pays_cost_s; /* the last LB step that ran a policy, begin to applied: what a plan
                               must win back (0: none ran yet) */
        uint32_t pays_runs; /* LB steps so far, for the horizon of the pays check */
        bool skip;          /* no time was measured: nothing to decide from */
        /* the load moves within the window (lbomp__interleave_wanted) and interleaving the tasks
         * pays on the window's timed steps: this LB step's plan is lbomp__interleave's, not the
         * policy's (spread_pays) */
        bool spread;
        double spread_gain, spread_cost, spread_horizon;
        double spread_now; /* what the judged steps took (spread_pays), seconds per step */
        /* the mapping is the last interleaving: an LB step keeps it while the window's λ (over
         * all its steps) is within the tolerance; a policy's plan that moves tasks clears it */
        bool interleaved;
        /* auto: a window whose load moves within it arms the next LB step, to judge the
         * interleaving on that window's timed steps; one that did not pay, or found the tasks
         * interleaved already, is judged again only after 2, 4 … 32 windows */
        struct lbomp__spread_backoff spread_backoff;
        /* The last interleaving that moved tasks, on probation (policy.h, struct lbomp__probe);
         * `undo`: this LB step's plan puts the tasks back where they were before it; `trial`:
         * this LB step's interleaving is tried though its estimated gain did not cover its cost */
        struct lbomp__probe probe;
        bool undo, trial;
        int rc;     /* the step could not run (-ENOMEM, -EFAULT): nothing moves */
        int dec_rc; /* what the decentralized run returned */
        /* The locality cost of the task table (lbstep.c, table_locality) at tasks.gen ==
         * loc_gen, when loc_ok: an LB step that moved nothing since does not walk the links. */
        double loc;
        uint64_t loc_gen;
        bool loc_ok;
        bool said_no_time;
        bool said_when_nomem; /* auto: no room for the when-rule's loads, said once */
        /* LBOMP_POLICY=auto (policy/auto.h): the when-rule checked at every time step, the LB
         * step it armed (the window then ends LBOMP__TIMED time steps later, its tasks timed),
         * what the policy is handed, and the measured per-byte cost of the data moves. */
        bool armed;
        int auto_period; /* the armed window's length in time steps (auto, or a quiet window cut
                            short); 0: LBOMP_PERIOD, lengthened by `quiet` */
        /* Quiet windows (lbomp__lb_quiet_check): with LBOMP_PERIOD unset, each LB step that moves
         * nothing after one that moved nothing doubles the next window, up to LBOMP__QUIET_MAX
         * doublings; one that moves tasks, or steps whose λ rose, bring it back to LBOMP_PERIOD. */
        uint32_t quiet;
        uint32_t still;   /* LB steps in a row that moved nothing */
        double quiet_lam; /* mean per-step λ of the window before the last quiet LB step */
        double step_lam;  /* the same of the window the LB step in progress closes */
        struct lbomp__auto_when when;
        struct lbomp__auto_hist hist;
        double byte_s;
        double lb_cost_s; /* the LB step in progress: decision and apply, then its data */
        double *auto_w;   /* [2 * workers] scratch: early and late loads of a window */
        uint32_t auto_w_cap;
};

struct lbomp;

/* Scratch, room for the last `keep` records and, with a path, the trace file (a message naming it
 * on failure). 0 or negative. */
int lbomp__lbs_init(struct lbomp__lbs *l, const char *trace_path, uint32_t keep);
/* LB step i of the run, or NULL when it is not kept (LBOMP_HISTORY) or not there. */
static inline const struct lbomp__lbrec *lbomp__lbs_at(const struct lbomp__lbs *l, uint64_t i)
{
        return (const struct lbomp__lbrec *)lbomp__history_at(&l->recs, i);
}
/* The run's totals over every LB step. */
void lbomp__lbs_totals(const struct lbomp__lbs *l, struct lbomp__lbsum *out);
void lbomp__lbs_free(struct lbomp__lbs *l);
/* The snapshot the next LB step would see (valid until the next LB step), for tests; NULL with
 * *rc set on failure. One thread, no step running. */
const struct lbomp__snap *lbomp__lb_snapshot(struct lbomp *lb, int *rc);
/* Serial part of the barrier that ends a window's last step, with that step folded into the
 * window: record, snapshot and the whole centralized plan (or a decentralized policy's
 * preparation); under `none` (no trace), the record alone, from the workers' own loads. */
void lbomp__lb_begin(struct lbomp *lb);
/* LBOMP_PERIOD's doublings at most while LB steps move nothing (10 -> 80 steps by default). */
#define LBOMP__QUIET_MAX 3
/* Whether the windows may lengthen: LBOMP_PERIOD unset, a policy other than auto and none, and no
 * trace or other library reading every LB step. */
bool lbomp__lb_quiet_ok(const struct lbomp *lb);
/*
 * Serial part, after the steps waiting in the workers' rings were folded into a quiet window (one
 * longer than LBOMP_PERIOD): when the window's mean per-step λ rose above the last one's by more
 * than the tolerance, and that rise would cost more than an LB step over the steps the window has
 * left before `end` (the time step that would close it), the window ends as soon as its tasks are
 * timed (the next LBOMP__TIMED time steps).
 */
void lbomp__lb_quiet_check(struct lbomp *lb, uint64_t end);
/* Whether the LB step just begun needs the team (lbomp__lb_step): a decentralized policy's rounds
 * or data moves. */
bool lbomp__lb_team_work(const struct lbomp *lb);
/* Every thread `self` of the team, after that barrier: a decentralized policy's rounds, the data
 * moves. Returns 0, or -ENOMEM when the LB step could not run (the mapping is kept). */
int lbomp__lb_step(struct lbomp *lb, int self);

#endif
