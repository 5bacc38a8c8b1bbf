/*
 * auto.h — the meta-balancer (LBOMP_POLICY=auto): *when* to balance and *which* policy to run.
 *
 * When: at every time step the runtime hands the step's λ and maximum load to
 * lbomp__auto_when_step(); it arms an LB step when the time predicted to be lost to imbalance over
 * the coming steps exceeds the measured cost of an LB step. LBOMP_PERIOD only bounds how long a
 * window runs.
 *
 * Which: lbomp__auto_features() turns the snapshot and what the window measured beyond it (the
 * per-step variability, how fast the loads move) into LBOMP__AUTO_NFEAT numbers; a model trained
 * offline on lbomp-sim (tools/auto/train.py, committed as auto_table.c) maps them to one of the
 * candidates; the auto policy (auto.c) runs that candidate's plan and keeps it only when its
 * predicted gain over the horizon exceeds the LB step's cost plus the cost of the moves.
 * Below it: policy.h.
 */
#ifndef LBOMP_POLICY_AUTO_H
#define LBOMP_POLICY_AUTO_H

#include <stdbool.h>
#include <stdint.h>

#include "../policy.h"

/* The features, in the table's order (doc/policies.md, "auto"). The first seven are the thesis's.
 */
enum lbomp__auto_feature {
        LBOMP__AF_AVG_LOAD,  /* log10 of the average worker load, seconds per step */
        LBOMP__AF_ABOVE,     /* share of workers above the average */
        LBOMP__AF_LAMBDA,    /* max / avg */
        LBOMP__AF_IDLE,      /* average idle share of a step, 1 - avg / max */
        LBOMP__AF_TASK_LOAD, /* log10 of the average task load, seconds per step */
        LBOMP__AF_COMM,      /* log10(1e-6 + link bytes x per-byte cost / compute) */
        LBOMP__AF_REMOTE,    /* share of link bytes between tasks on different workers */
        LBOMP__AF_STEPVAR,   /* mean per-step λ over the window / λ of the window's sums */
        LBOMP__AF_DRIFT,     /* log10(1e-4 + per-step relative change of the worker loads) */
        LBOMP__AF_NUMA,      /* mean normalised distance - 1 of the remote link bytes */
        LBOMP__AF_GRAIN,     /* log10 of tasks per worker */
        LBOMP__AF_MOVE,      /* log10(1e-6 + task bytes x per-byte cost / compute per step) */
        LBOMP__AUTO_NFEAT
};

extern const struct lbomp__policy lbomp__policy_auto;

/* The candidates (indices of the model's classes), centralized policies the LB step can run in
 * its serial part; packdrop and distributed need the team's rounds and are not candidates. */
#define LBOMP__AUTO_NCAND  7
#define LBOMP__AUTO_REFINE 2 /* the second opinion when the model's plan does not pay */
extern const char *const lbomp__auto_cand_names[LBOMP__AUTO_NCAND];
/* The policy of candidate c (none, greedy, refine, hierarchical, smart, greedy-refine,
 * greedy-comm). */
const struct lbomp__policy *lbomp__auto_candidate(int c);

/* What the runtime (or the simulator) measured beyond the snapshot, handed to the auto policy. */
struct lbomp__auto_hist {
        double step_var;    /* mean per-step λ / λ of the window's sums (1: unknown) */
        double drift;       /* per-step relative change of the worker loads (0: unknown) */
        double decay;       /* per-step share of the imbalance that does not persist (0: unknown) */
        double horizon;     /* steps until the next decision at the latest (LBOMP_PERIOD) */
        double lb_cost_s;   /* measured cost of an LB step (<= 0: lbomp__auto_lb_cost_guess) */
        double byte_s;      /* seconds per byte x normalised distance moved */
        const double *load; /* [nworkers] loads under the current mapping when the caller has
                               them (the LB step's plan does), else NULL: computed */
        /* per step, the largest excess over the mean that stayed on one worker at every timed
         * step of the window, beyond their noise (lbomp__window_persistent_excess), when known:
         * a plan wins at most that per step */
        bool persist_known;
        double persist_s;
        /* out: what auto chose and why, for the LB step's record */
        int model_choice; /* candidate index the model chose */
        int choice;       /* the candidate whose plan was judged last (refine after a no) */
        bool pays;        /* its plan was kept */
        double gain_s;    /* (max - max after the plan, at most persist_s) x persisting steps */
        double cost_s;    /* LB step + moves */
        float feat[LBOMP__AUTO_NFEAT];
        double model_s; /* time of features + model */
};

/* A model: kNN over standardized rows, or a decision tree. */
struct lbomp__auto_node {
        int16_t feat;  /* feature tested, -1 for a leaf */
        uint8_t label; /* leaf: candidate */
        float thr;     /* go left when f[feat] <= thr */
        uint16_t left, right;
};
struct lbomp__auto_model {
        int version; /* of the table format and feature set */
        int kind;    /* 0: kNN, 1: tree */
        int k;
        uint32_t nrows;
        const float *mean, *scale; /* [NFEAT] standardization */
        const float *rows;         /* [nrows * NFEAT], standardized */
        const uint8_t *label;      /* [nrows] */
        uint32_t nnodes;
        const struct lbomp__auto_node *node; /* [nnodes], root 0 */
};
#define LBOMP__AUTO_TABLE_VERSION 1
/* auto_table.c, generated by tools/auto/train.py from its training runs */
extern const struct lbomp__auto_model lbomp__auto_table;
/* The committed model, checked (version, sizes, labels); NULL when it does not fit this code. */
const struct lbomp__auto_model *lbomp__auto_model(void);

/* The LB step's cost before one was measured: a fixed part plus a part per task, seconds. */
double lbomp__auto_lb_cost_guess(uint32_t ntasks);

/* Features of snapshot s. The worker loads are h->load, or computed into load[nworkers]
 * (scratch); h may be NULL (no history: step_var 1, drift 0, default per-byte cost). Task bytes
 * and links are sampled (at most 1,024 tasks'), so that with the loads given the features cost
 * O(workers + 1,024). */
void lbomp__auto_features(const struct lbomp__snap *s, const struct lbomp__auto_hist *h,
                          double *load, float *f);
/* The candidate the model picks for features f. */
int lbomp__auto_classify(const struct lbomp__auto_model *m, const float *f);

/* Steps over which a gain persists when the imbalance decays by `decay` per step, within
 * `horizon` steps: Σ_{h=1..H} (1 - decay)^h. */
double lbomp__auto_persist(double decay, double horizon);

/* The horizon of a gain: a plan keeps helping after the next decision as long as the imbalance
 * it removed persists, which, when nothing says otherwise, is taken to be as long as the run has
 * gone so far: `steps` done, at least `period`, at most 8 periods. */
static inline double lbomp__auto_horizon(uint64_t steps, int period)
{
        double p = period > 0 ? period : 1, s = (double)steps;
        return s < p ? p : s > 8 * p ? 8 * p : s;
}

/* Steps in a row in which a worker's load must have stayed above the mean for the when-rule (2..8,
 * lbomp__persisted). */
#define LBOMP__AUTO_STREAK 4
/* Futile LB steps in a row counted: the floor holds for up to 2^5 = 32 unarmed windows. */
#define LBOMP__AUTO_FUTILE_MAX 5

/* The when-rule, once per time step. */
struct lbomp__auto_when {
        double prev_excess; /* the last step's time lost to imbalance, seconds */
        double floor;       /* λ the last LB step left (or judged not worth lowering), >= 1 */
        double decay;       /* of the last decision */
        double lb_cost_s;   /* measured cost of an LB step (EWMA), 0 until one ran */
        uint32_t ntasks;
        uint32_t futile;         /* armed LB steps in a row that kept the mapping, at most
                                    LBOMP__AUTO_FUTILE_MAX */
        uint32_t unarmed;        /* windows ended unarmed since the floor last halved */
        double loss_s, excess_s; /* of the last step checked, for the report */
        /* lbomp__auto_persist(persist_decay, persist_horizon), kept between steps */
        double persist, persist_decay, persist_horizon;
        /* the workers' loads of the step being checked (lbomp__auto_when_loads), and each one's
         * load / mean - 1 in the last LBOMP__AUTO_STREAK steps, [nw][LBOMP__AUTO_STREAK] */
        double *load;
        float *rel;
        uint32_t nw, cap;
        uint64_t seen; /* steps recorded in rel since nw changed or an LB step ran */
        /* the horizon at which the last LB step's plan, which fell short by its horizon alone,
         * would pay (lbomp__auto_when_retry); 0: none */
        double retry_horizon;
};
void lbomp__auto_when_init(struct lbomp__auto_when *w);
void lbomp__auto_when_free(struct lbomp__auto_when *w);
/* Room for the loads of the step lbomp__auto_when_step() checks next, one per worker (seconds);
 * NULL when out of memory. A new worker count starts the history over. */
double *lbomp__auto_when_loads(struct lbomp__auto_when *w, uint32_t n);
/*
 * One step, whose loads are in lbomp__auto_when_loads(): arms an LB step (returns true) when the
 * loss predicted over the next `horizon` steps, an excess beyond the floor times
 * lbomp__auto_persist(), exceeds the LB step's cost. The excess is the larger of two:
 * - whichever worker is on top, the lower of this step's and the last step's excess
 *   (mean (λ - floor), 0 within `tol` of the floor) — not after an armed LB step that found
 *   nothing to plan (futile > 0), until one moves tasks again;
 * - the excess that persisted on one worker: of the workers above the mean in each of the last
 *   LBOMP__AUTO_STREAK steps, the largest least load / mean - 1 (no more than its mean less t99
 *   of its standard error), as λ against the floor.
 * A single noisy step does not arm it; once an LB step found nothing to plan, neither does noise
 * that puts another worker on top at each step, nor a hotspot that moves on before it persisted
 * (the plans' gain counts only the excess that persisted over the timed steps,
 * lbomp__window_persistent_excess, so no plan could follow either).
 */
bool lbomp__auto_when_step(struct lbomp__auto_when *w, double tol, double horizon);
/*
 * After an LB step whose plan did not pay (h: what it judged): when its gain, at the decay it saw,
 * would beat its cost over a longer horizon the run reaches by `max_horizon` (LBOMP_PERIOD × 8:
 * lbomp__auto_horizon), the when-rule arms an LB step once the horizon is there and the excess
 * that persisted on one worker is still beyond the tolerance — whatever the floor, which the plan
 * that did not pay raised (a lasting imbalance whose moves cost more than the steps gone so far
 * would win waits for its horizon, not for the floor's back-off).
 */
void lbomp__auto_when_retry(struct lbomp__auto_when *w, const struct lbomp__auto_hist *h,
                            double max_horizon);
/* After an LB step: its cost, the λ it left, the decay it saw, whether it moved tasks (a move
 * ends a run of LB steps that kept the mapping: lbomp__auto_when_futile). */
void lbomp__auto_when_done(struct lbomp__auto_when *w, double cost_s, double lambda_after,
                           double decay, bool moved);

/*
 * After an armed LB step that kept the mapping (no plan paid: nothing persisted beyond the noise
 * of its steps, or the moves cost more than they win), called after lbomp__auto_when_done with
 * moved false: the floor is at least `step_lam`, the
 * window's mean per-step λ, the level the when-rule's per-step λ is compared with, and each such
 * LB step in a row doubles the windows before the floor halves again (lbomp__auto_when_unarmed),
 * up to 32. Per-step λ that noise lifts (1.1-1.2 on the balanced 1 MiB memtask when the two cores
 * share no cache) or a load that moves within every window (whose plans find nothing) would else
 * arm an LB step every other window, each timing its tasks and planning for nothing. Up to 8
 * windows (3 in a row) were not enough where the imbalance the steps read is none a plan can
 * lower (bench/churn in face far: tasks of 50 ns whose stolen runs cost their owner more than
 * its own, λ 1.5-1.8 at every armed LB step, 28 of them a run; 10 with up to 32).
 */
void lbomp__auto_when_futile(struct lbomp__auto_when *w, double step_lam);
/* After an LB step, as the runtime and lbomp-sim call them: lbomp__auto_when_done, then, when it
 * kept the mapping, lbomp__auto_when_futile with the window's mean per-step λ `step_lam`. */
void lbomp__auto_when_after(struct lbomp__auto_when *w, double cost_s, double lambda_after,
                            double decay, bool moved, double step_lam);
/* At a window's end that nothing armed: the floor halves towards 1 (an imbalance judged not worth
 * lowering is looked at again), after 2^futile such windows. */
void lbomp__auto_when_unarmed(struct lbomp__auto_when *w);

/* drift from a window's per-worker loads of its early and late steps, `apart` steps apart:
 * Σ |late - early| / Σ late / apart. */
double lbomp__auto_drift(const double *early, const double *late, uint32_t n, double apart);
/* decay from the same loads: how much of the early part's imbalance the late part keeps is the
 * slope s of late_w - mean(late) on early_w - mean(early) (clamped to [0, 1]); per step,
 * 1 - s^(1/apart). 0 (unknown) when the early loads are balanced (their standard deviation
 * within 5 % of their mean). At most 1. */
double lbomp__auto_decay(const double *early, const double *late, uint32_t n, double apart);

#endif
