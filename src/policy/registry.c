/*
 * registry.c — the policies of src/policy/policies.list (through the generated policies.h), by
 * name. An unknown name is answered with every valid name, and LBOMP_POLICY=help prints each with
 * its one-line description.
 */
#include <stdio.h>
#include <string.h>

#include "../policy.h"
#include "policies.h"

#define DECLARE(name, ident) extern const struct lbomp__policy lbomp__policy_##ident;
LBOMP__POLICIES(DECLARE)
#undef DECLARE

static const struct lbomp__policy *const policies[] = {
#define ENTRY(name, ident) &lbomp__policy_##ident,
        LBOMP__POLICIES(ENTRY)
#undef ENTRY
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

void lbomp__policy_help(FILE *out)
{
        for (size_t i = 0; i < NPOLICIES; i++)
                fprintf(out, "%-14s %s\n", policies[i]->name, policies[i]->help);
}
