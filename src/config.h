/*
 * config.h — the one table of LBOMP_* variables (config.c, the only getenv() caller).
 *
 * Each variable has one validation path: a value from the environment is parsed strictly into a
 * number or word, then checked and applied by the same code that the API setters call with a typed
 * value, so a setter accepts exactly what the variable accepts and refuses the rest with the same
 * message (naming the setter and the variable). Parts below: error, the policy registry, topology
 * (whether the kernel has NUMA support).
 */
#ifndef LBOMP_CONFIG_H
#define LBOMP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

enum lbomp__steal { LBOMP__STEAL_OFF, LBOMP__STEAL_NODE, LBOMP__STEAL_ALL };
/* LBOMP_SPEEDS: where workers' speeds come from (README "Unequal cores"). */
enum lbomp__speeds { LBOMP__SPEEDS_AUTO, LBOMP__SPEEDS_PRIOR, LBOMP__SPEEDS_OFF };

struct lbomp__config {
        const struct lbomp__policy *policy;
        int period;
        bool period_set; /* LBOMP_PERIOD given (variable or lbomp_set_period): windows of exactly
                            that length; else quiet windows lengthen it (lbstep.h) */
        uint64_t seed;
        int verbose;
        char *topology; /* NULL: host */
        char *trace;    /* LBOMP_TRACE: file recording every LB step, or NULL */
        enum lbomp__steal steal;
        bool steal_set; /* LBOMP_STEAL given: else `none` steals nothing, the others steal all */
        bool time_wall; /* LBOMP_TIME=wall: raw wall time; default cpu: bounded by CPU time */
        enum lbomp__speeds speeds; /* LBOMP_SPEEDS: auto (prior × measured), prior, off (1.0) */
        bool move_pages;           /* LBOMP_MOVE_PAGES=on: a task's registered pages follow it */
        char *powercap_root;       /* LBOMP_POWERCAP_ROOT; NULL: the machine's own counters */
        double step_timeout; /* LBOMP_STEP_TIMEOUT: seconds a step waits for its team; 0: ever */
        uint32_t history;    /* LBOMP_HISTORY: LB steps and windows kept (16 × as many steps) */
        struct lbomp__params params;
};

/* The library's defaults. */
void lbomp__config_defaults(struct lbomp__config *c);
/* Fills defaults, then the environment. On a bad value: one message (printed) + negative errno,
 * and nothing to free. */
int lbomp__config_from_env(struct lbomp__config *c);
void lbomp__config_free(struct lbomp__config *c);
/* The table, for the report and README: name, default, meaning. */
void lbomp__config_print(FILE *out);

/*
 * The variable `var` given `value`, checked exactly as the environment is; -ENOENT for an unknown
 * variable. On refusal nothing changes and lbomp_last_error() names the variable (and `who`, the
 * setter, when not NULL). Not printed: the caller's return code says it.
 */
int lbomp__config_set(struct lbomp__config *c, const char *var, const char *value, const char *who);
/* The same for a numeric variable given its typed value by a setter. */
int lbomp__config_set_num(struct lbomp__config *c, const char *var, double value, const char *who);

#endif
