/*
 * auto.c — LBOMP_POLICY=auto (auto.h): the features, the model (kNN with k = 3 or a decision tree
 * over the committed table auto_table.c), the when-rule, and the policy that runs the chosen
 * candidate's plan when it pays.
 *
 * As a policy it is centralized: the chosen candidate runs inside its plan, on the same snapshot,
 * and the runtime's never-worse check then sees that plan as any other. Whether it pays is judged
 * here: the plan's gain (maximum load before minus after) over the steps it is expected to persist
 * against the measured cost of an LB step plus the move cost (bytes x distance x per-byte cost).
 */
#include "auto.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const lbomp__auto_cand_names[LBOMP__AUTO_NCAND] = {
        "none", "greedy", "refine", "hierarchical", "smart", "greedy-refine", "greedy-comm"};

extern const struct lbomp__policy lbomp__policy_none, lbomp__policy_greedy, lbomp__policy_refine,
        lbomp__policy_hierarchical, lbomp__policy_smart, lbomp__policy_greedy_refine,
        lbomp__policy_greedy_comm;

const struct lbomp__policy *lbomp__auto_candidate(int c)
{
        static const struct lbomp__policy *const cand[LBOMP__AUTO_NCAND] = {
                &lbomp__policy_none,         &lbomp__policy_greedy, &lbomp__policy_refine,
                &lbomp__policy_hierarchical, &lbomp__policy_smart,  &lbomp__policy_greedy_refine,
                &lbomp__policy_greedy_comm};
        return c >= 0 && c < LBOMP__AUTO_NCAND ? cand[c] : NULL;
}

/* What an LB step that runs a policy costs before any ran (auto measures decision and apply
 * afterwards, the pays check the whole LB step, snapshot included): on this project's 2-core
 * machine decision and apply took 10.8 µs for 64 tasks (memtask) and 55 µs for 512 (kneighbor),
 * so 5 µs + 0.1 µs per task. It was 20 µs + 0.2 µs, two to three times that: auto's first decision
 * on the 1 MiB hotspot memtask, at step 4, then judged a plan that would have paid (gain 36 µs
 * against 33 + 20 µs of data) not worth it and waited a window at λ 1.4. A guess too low costs one
 * LB step at most, which then measures the cost; too high, a window of imbalance. */
double lbomp__auto_lb_cost_guess(uint32_t ntasks)
{
        return 5e-6 + 0.1e-6 * (double)ntasks;
}

static bool model_ok(const struct lbomp__auto_model *m)
{
        if (m->version != LBOMP__AUTO_TABLE_VERSION || !m->mean || !m->scale)
                return false;
        if (m->kind == 0) {
                if (!m->nrows || !m->rows || !m->label || m->k < 1)
                        return false;
                for (uint32_t i = 0; i < m->nrows; i++)
                        if (m->label[i] >= LBOMP__AUTO_NCAND)
                                return false;
                return true;
        }
        if (m->kind != 1 || !m->nnodes || !m->node)
                return false;
        for (uint32_t i = 0; i < m->nnodes; i++) {
                const struct lbomp__auto_node *n = &m->node[i];
                if (n->feat < 0 ? n->label >= LBOMP__AUTO_NCAND
                                : n->feat >= LBOMP__AUTO_NFEAT || n->left <= i || n->right <= i ||
                                          n->left >= m->nnodes || n->right >= m->nnodes)
                        return false;
        }
        return true;
}

static pthread_once_t model_once = PTHREAD_ONCE_INIT;
static const struct lbomp__auto_model *model_checked;

static void model_check(void)
{
        model_checked = model_ok(&lbomp__auto_table) ? &lbomp__auto_table : NULL;
}

const struct lbomp__auto_model *lbomp__auto_model(void)
{
        pthread_once(&model_once, model_check);
        return model_checked;
}

static double clamp(double x, double lo, double hi)
{
        return x < lo ? lo : x > hi ? hi : x;
}

void lbomp__auto_features(const struct lbomp__snap *s, const struct lbomp__auto_hist *h,
                          double *load, float *f)
{
        uint32_t P = s->nworkers, T = s->ntasks;
        double byte_s = h && h->byte_s > 0 ? h->byte_s : LBOMP__BYTE_S_GUESS;
        double sum = 0, mx = 0, tasks = 0, bytes = 0;
        if (h && h->load)
                load = (double *)h->load; /* read only below */
        else
                lbomp__loads(s, s->worker, load);
        for (uint32_t w = 0; w < P; w++) {
                sum += load[w];
                tasks += load[w] - s->bg[w];
                mx = load[w] > mx ? load[w] : mx;
        }
        uint32_t stride = T > 1024 ? T / 1024 : 1;
        for (uint32_t t = 0; t < T; t += stride)
                bytes += (double)s->bytes[t];
        bytes *= stride;
        double avg = P ? sum / P : 0;
        uint32_t above = 0;
        for (uint32_t w = 0; w < P; w++)
                above += load[w] > avg * (1 + 1e-9);
        /* Links, sampled: every task's when there are at most 1,024, else a stride. */
        double lb = 0, rb = 0, rd = 0;
        if (s->link_off && T) {
                uint32_t nn = s->nnodes ? s->nnodes : 1;
                for (uint32_t t = 0; t < T; t += stride) {
                        uint32_t wt = s->worker[t];
                        for (uint32_t k = s->link_off[t]; k < s->link_off[t + 1]; k++) {
                                uint32_t u = s->link_dst[k], wu = s->worker[u];
                                double b = s->link_bytes[k];
                                lb += b;
                                if (wu != wt) {
                                        rb += b;
                                        int32_t na = s->wnode[wt], nb = s->wnode[wu];
                                        double d =
                                                s->dist && na >= 0 && nb >= 0
                                                        ? s->dist[(uint32_t)na * nn + (uint32_t)nb]
                                                        : 1.0;
                                        rd += b * (d - 1.0);
                                }
                        }
                }
        }
        double remote = lb > 0 ? rb / lb : 0;
        /* each link appears at both ends: per task, half of its ends' bytes */
        lb *= 0.5 * stride;
        double eps = 1e-12;
        f[LBOMP__AF_AVG_LOAD] = (float)log10(avg + eps);
        f[LBOMP__AF_ABOVE] = P ? (float)above / (float)P : 0;
        f[LBOMP__AF_LAMBDA] = avg > 0 ? (float)(mx / avg) : 1.0f;
        f[LBOMP__AF_IDLE] = mx > 0 ? (float)(1.0 - avg / mx) : 0;
        f[LBOMP__AF_TASK_LOAD] = (float)log10((T ? tasks / T : 0) + eps);
        f[LBOMP__AF_COMM] = (float)log10(1e-6 + (sum > 0 ? lb * byte_s / sum : 0));
        f[LBOMP__AF_REMOTE] = (float)remote;
        f[LBOMP__AF_STEPVAR] = h && h->step_var >= 1 ? (float)h->step_var : 1.0f;
        f[LBOMP__AF_DRIFT] = (float)log10(1e-4 + (h && h->drift > 0 ? h->drift : 0));
        f[LBOMP__AF_NUMA] = rb > 0 ? (float)(rd / rb) : 0;
        f[LBOMP__AF_GRAIN] = (float)log10(P ? (double)T / P + eps : eps);
        f[LBOMP__AF_MOVE] = (float)log10(1e-6 + (sum > 0 ? bytes * byte_s / sum : 0));
}

int lbomp__auto_classify(const struct lbomp__auto_model *m, const float *f)
{
        float z[LBOMP__AUTO_NFEAT];
        for (int i = 0; i < LBOMP__AUTO_NFEAT; i++)
                z[i] = (f[i] - m->mean[i]) / m->scale[i];
        if (m->kind == 1) {
                uint32_t i = 0;
                while (m->node[i].feat >= 0)
                        i = z[m->node[i].feat] <= m->node[i].thr ? m->node[i].left
                                                                 : m->node[i].right;
                return m->node[i].label;
        }
        /* kNN: the k nearest rows (squared Euclidean), a vote; a tie goes to the nearest row's
         * label among the tied. */
        enum { KMAX = 8 };
        int k = m->k < KMAX ? m->k : KMAX;
        float bd[KMAX];
        uint32_t bi[KMAX];
        int nb = 0;
        for (uint32_t r = 0; r < m->nrows; r++) {
                const float *x = m->rows + (size_t)r * LBOMP__AUTO_NFEAT;
                float d = 0;
                for (int i = 0; i < LBOMP__AUTO_NFEAT; i++) {
                        float e = x[i] - z[i];
                        d += e * e;
                }
                if (nb == k && d >= bd[k - 1])
                        continue;
                int j = nb < k ? nb++ : k - 1;
                while (j > 0 && bd[j - 1] > d) {
                        bd[j] = bd[j - 1];
                        bi[j] = bi[j - 1];
                        j--;
                }
                bd[j] = d;
                bi[j] = r;
        }
        int votes[LBOMP__AUTO_NCAND] = {0};
        for (int j = 0; j < nb; j++)
                votes[m->label[bi[j]]]++;
        int best = nb ? m->label[bi[0]] : 0;
        for (int j = 0; j < nb; j++) {
                int c = m->label[bi[j]];
                if (votes[c] > votes[best])
                        best = c;
        }
        return best;
}

double lbomp__auto_persist(double decay, double horizon)
{
        double p = clamp(1.0 - decay, 0, 1), sum = 0, q = 1;
        for (int h = 1; h <= (int)horizon && h <= 10000; h++) {
                q *= p;
                sum += q;
                if (q < 1e-6)
                        break;
        }
        return sum;
}

double lbomp__auto_drift(const double *early, const double *late, uint32_t n, double apart)
{
        double d = 0, s = 0;
        for (uint32_t i = 0; i < n; i++) {
                d += fabs(late[i] - early[i]);
                s += late[i];
        }
        return s > 0 && apart > 0 ? d / s / apart : 0;
}

double lbomp__auto_decay(const double *early, const double *late, uint32_t n, double apart)
{
        double me = 0, ml = 0;
        for (uint32_t i = 0; i < n; i++) {
                me += early[i];
                ml += late[i];
        }
        if (!n || !(apart > 0))
                return 0;
        me /= n;
        ml /= n;
        double sxy = 0, sxx = 0;
        for (uint32_t i = 0; i < n; i++) {
                sxy += (early[i] - me) * (late[i] - ml);
                sxx += (early[i] - me) * (early[i] - me);
        }
        /* balanced early (a spread within 5 % of the mean, as the noise of measured loads):
         * no pattern to follow */
        if (!(sxx > 2.5e-3 * me * me * n))
                return 0;
        double s = clamp(sxy / sxx, 0, 1);
        return s > 0 ? 1.0 - pow(s, 1.0 / apart) : 1.0;
}

void lbomp__auto_when_init(struct lbomp__auto_when *w)
{
        memset(w, 0, sizeof *w);
        w->floor = 1.0;
        w->persist_horizon = -1; /* not computed yet */
}

void lbomp__auto_when_free(struct lbomp__auto_when *w)
{
        free(w->load);
        free(w->rel);
        w->load = NULL;
        w->rel = NULL;
        w->cap = w->nw = 0;
}

double *lbomp__auto_when_loads(struct lbomp__auto_when *w, uint32_t n)
{
        if (n > w->cap) {
                double *load = realloc(w->load, (size_t)n * sizeof *load);
                if (load)
                        w->load = load;
                float *rel = realloc(w->rel, (size_t)n * LBOMP__AUTO_STREAK * sizeof *rel);
                if (rel)
                        w->rel = rel;
                if (!load || !rel)
                        return NULL;
                w->cap = n;
        }
        if (n != w->nw) {
                w->nw = n;
                w->seen = 0;
        }
        return w->load;
}

/* The largest excess over the mean, relative to it, that one worker kept in each of the last
 * LBOMP__AUTO_STREAK steps (lbomp__persisted: its least, no more than its mean less t99 of its
 * standard error). */
static double when_persistent(const struct lbomp__auto_when *w)
{
        double best = -INFINITY, e[LBOMP__AUTO_STREAK];
        for (uint32_t i = 0; i < w->nw; i++) {
                const float *r = w->rel + (size_t)i * LBOMP__AUTO_STREAK;
                double least = INFINITY;
                for (int k = 0; k < LBOMP__AUTO_STREAK; k++) {
                        e[k] = r[k];
                        least = e[k] < least ? e[k] : least;
                }
                if (!(least > 0) || least <= best) /* the bound is at most the least */
                        continue;
                double p = lbomp__persisted(e, LBOMP__AUTO_STREAK);
                best = p > best ? p : best;
        }
        return best;
}

bool lbomp__auto_when_step(struct lbomp__auto_when *w, double tol, double horizon)
{
        w->excess_s = w->loss_s = 0;
        if (!w->nw)
                return false;
        double mean, lam = lbomp__imbalance(w->load, w->nw, NULL, &mean);
        size_t slot = w->seen % LBOMP__AUTO_STREAK;
        for (uint32_t i = 0; i < w->nw; i++)
                w->rel[(size_t)i * LBOMP__AUTO_STREAK + slot] =
                        mean > 0 ? (float)(w->load[i] / mean - 1.0) : 0.0f;
        w->seen++;
        if (!(mean > 0)) {
                w->prev_excess = 0;
                return false;
        }
        /* whichever worker is on top: the lower of this step's excess and the last one's */
        double any = 0;
        if (lam > w->floor * (1.0 + tol))
                any = mean * (lam - w->floor);
        double e = any < w->prev_excess ? any : w->prev_excess;
        w->prev_excess = any;
        if (w->futile)
                e = 0; /* it armed LB steps that found nothing to plan: persistence alone */
        if (w->seen >= LBOMP__AUTO_STREAK) {
                double lp = 1.0 + when_persistent(w);
                if (lp > w->floor * (1.0 + tol) && mean * (lp - w->floor) > e)
                        e = mean * (lp - w->floor);
        }
        /* a plan that fell short by its horizon alone: now that the horizon is there, the
         * excess that persisted, against no floor */
        if (w->retry_horizon > 0 && horizon >= w->retry_horizon && w->seen >= LBOMP__AUTO_STREAK) {
                double lp = 1.0 + when_persistent(w);
                if (lp > 1.0 + tol) {
                        w->retry_horizon = 0;
                        w->excess_s = mean * (lp - 1.0);
                        w->loss_s = w->excess_s * lbomp__auto_persist(w->decay, horizon);
                        return true;
                }
        }
        if (!(e > 0))
                return false;
        w->excess_s = e;
        /* the persistence only changes with the decay (an LB step) and the horizon (the run's
         * first 8 periods): computed again only then, not at every step */
        if (w->persist_decay != w->decay || w->persist_horizon != horizon) {
                w->persist_decay = w->decay;
                w->persist_horizon = horizon;
                w->persist = lbomp__auto_persist(w->decay, horizon);
        }
        w->loss_s = e * w->persist;
        double cost = w->lb_cost_s > 0 ? w->lb_cost_s : lbomp__auto_lb_cost_guess(w->ntasks);
        return w->loss_s > cost;
}

void lbomp__auto_when_done(struct lbomp__auto_when *w, double cost_s, double lambda_after,
                           double decay, bool moved)
{
        if (cost_s > 0)
                w->lb_cost_s = w->lb_cost_s > 0 ? 0.5 * (w->lb_cost_s + cost_s) : cost_s;
        w->floor = lambda_after > 1.0 ? lambda_after : 1.0;
        w->decay = clamp(decay, 0, 1);
        w->seen = 0; /* the loads before it say nothing of the mapping it left */
        w->retry_horizon = 0;
        w->prev_excess = 0;
        w->unarmed = 0;
        if (moved)
                w->futile = 0;
}

void lbomp__auto_when_retry(struct lbomp__auto_when *w, const struct lbomp__auto_hist *h,
                            double max_horizon)
{
        w->retry_horizon = 0;
        double horizon = h->horizon > 0 ? h->horizon : 10;
        double per = lbomp__auto_persist(h->decay, horizon);
        if (h->pays || !(h->gain_s > 0) || !(per > 0) || !(h->cost_s > h->gain_s))
                return;
        /* the persisting steps the plan's per-step gain needs to beat its cost */
        double need = h->cost_s / (h->gain_s / per);
        double p = clamp(1.0 - h->decay, 0, 1), sum = 0, q = 1;
        for (double k = 1; k <= max_horizon && k <= 10000; k++) {
                q *= p;
                sum += q;
                if (sum > need) {
                        w->retry_horizon = k;
                        return;
                }
                if (q < 1e-6)
                        return;
        }
}

void lbomp__auto_when_after(struct lbomp__auto_when *w, double cost_s, double lambda_after,
                            double decay, bool moved, double step_lam)
{
        lbomp__auto_when_done(w, cost_s, lambda_after, decay, moved);
        if (!moved)
                lbomp__auto_when_futile(w, step_lam);
}

void lbomp__auto_when_futile(struct lbomp__auto_when *w, double step_lam)
{
        w->futile = w->futile < LBOMP__AUTO_FUTILE_MAX ? w->futile + 1 : LBOMP__AUTO_FUTILE_MAX;
        if (step_lam > w->floor)
                w->floor = step_lam;
}

void lbomp__auto_when_unarmed(struct lbomp__auto_when *w)
{
        if (++w->unarmed < 1u << w->futile)
                return;
        w->unarmed = 0;
        w->floor = 1.0 + 0.5 * (w->floor - 1.0);
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Candidate c's plan into dest, and whether it pays: its gain (max - max after) over the steps it
 * persists against the LB step's cost plus the move cost. load[P] is scratch. */
static int judge(const struct lbomp__snap *s, struct lbomp__auto_hist *h, int c, double mx,
                 uint32_t *dest, struct lbomp__pstats *st, double *load)
{
        int rc = lbomp__policy_run_offline(lbomp__auto_candidate(c), s, dest, st);
        if (rc < 0)
                return rc;
        lbomp__loads(s, dest, load);
        double mx_new = 0;
        for (uint32_t w = 0; w < s->nworkers; w++)
                mx_new = load[w] > mx_new ? load[w] : mx_new;
        struct lbomp__moves mv;
        lbomp__moves(s, dest, &mv);
        double byte_s = h->byte_s > 0 ? h->byte_s : LBOMP__BYTE_S_GUESS;
        double horizon = h->horizon > 0 ? h->horizon : 10;
        double won = mx - mx_new;
        if (h->persist_known && won > h->persist_s)
                won = h->persist_s > 0 ? h->persist_s : 0;
        h->choice = c;
        h->gain_s = won * lbomp__auto_persist(h->decay, horizon);
        h->cost_s = (h->lb_cost_s > 0 ? h->lb_cost_s : lbomp__auto_lb_cost_guess(s->ntasks)) +
                    mv.cost * byte_s;
        h->pays = mv.tasks > 0 && h->gain_s > h->cost_s;
        return 0;
}

/* The model's candidate; when its plan does not pay (or it is none), refine's, the candidate that
 * moves the fewest tasks, as a second opinion under the same pays check; else the mapping stays. */
static int auto_plan(const struct lbomp__snap *s, uint32_t *dest, struct lbomp__pstats *st)
{
        uint32_t P = s->nworkers;
        struct lbomp__auto_hist local = {.step_var = 1, .horizon = 10};
        struct lbomp__auto_hist *h = s->hist ? s->hist : &local;
        double *load = malloc(((size_t)P + 1) * sizeof *load);
        if (!load)
                return -ENOMEM;
        double t0 = now_s();
        lbomp__auto_features(s, h, load, h->feat);
        const struct lbomp__auto_model *m = lbomp__auto_model();
        int c = m ? lbomp__auto_classify(m, h->feat) : 1; /* no model (said at create): greedy */
        h->model_s = now_s() - t0;
        h->model_choice = h->choice = c;
        h->pays = false;
        h->gain_s = h->cost_s = 0;
        const double *cur = h->load ? h->load : load;
        double mx = 0;
        for (uint32_t w = 0; w < P; w++)
                mx = cur[w] > mx ? cur[w] : mx;
        int rc = judge(s, h, c, mx, dest, st, load);
        if (rc == 0 && !h->pays && c != LBOMP__AUTO_REFINE) {
                memset(st, 0, sizeof *st);
                rc = judge(s, h, LBOMP__AUTO_REFINE, mx, dest, st, load);
        }
        free(load);
        if (rc < 0)
                return rc;
        if (!h->pays)
                for (uint32_t t = 0; t < s->ntasks; t++)
                        dest[t] = s->worker[t];
        return 0;
}

const struct lbomp__policy lbomp__policy_auto = {
        .name = "auto",
        .help = "meta-balancer: balances when the predicted loss exceeds the LB step's cost, "
                "with the candidate a model trained on lbomp-sim picks",
        .kind = LBOMP__CENTRAL,
        .plan = auto_plan,
};
