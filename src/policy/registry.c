/*
 * registry.c — the one list of policy names. An unknown name is answered with every valid name,
 * and LBOMP_POLICY=help prints each with its one-line description.
 */
#include <stdio.h>
#include <string.h>

#include "../policy.h"

extern const struct lbomp__policy lbomp__policy_none, lbomp__policy_greedy, lbomp__policy_refine,
        lbomp__policy_hierarchical, lbomp__policy_smart, lbomp__policy_packdrop,
        lbomp__policy_distributed;

static const struct lbomp__policy *const policies[] = {
        &lbomp__policy_none,         &lbomp__policy_greedy, &lbomp__policy_refine,
        &lbomp__policy_hierarchical, &lbomp__policy_smart,  &lbomp__policy_packdrop,
        &lbomp__policy_distributed,
};

#define NPOLICIES (sizeof policies / sizeof policies[0])

const struct lbomp__policy *lbomp__policy_find(const char *name)
{
        for (size_t i = 0; name && i < NPOLICIES; i++)
                if (strcmp(policies[i]->name, name) == 0)
                        return policies[i];
        return NULL;
}

size_t lbomp__policy_count(void)
{
        return NPOLICIES;
}

const struct lbomp__policy *lbomp__policy_at(size_t i)
{
        return i < NPOLICIES ? policies[i] : NULL;
}

void lbomp__policy_names(char *buf, size_t len)
{
        size_t used = 0;
        if (len)
                buf[0] = 0;
        for (size_t i = 0; i < NPOLICIES && used < len; i++) {
                int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", policies[i]->name);
                if (n < 0)
                        break;
                used += (size_t)n;
        }
}
