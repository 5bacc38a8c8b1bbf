/*
 * fuzz_config.c — libFuzzer target for the configuration parser (config.c): every LBOMP_*
 * variable, through the setter path (lbomp__config_set) and through the environment
 * (lbomp__config_from_env). Input: one byte choosing the variable and the path, then the value.
 * Beyond "no crash, no sanitizer report", it checks the promise of strict parsing: an accepted
 * value leaves every field in its documented range, a refused one changes nothing and leaves a
 * message that names the variable.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lbomp.h"

static const char *const names[] = {
        "LBOMP_POLICY",        "LBOMP_PERIOD",
        "LBOMP_TOPOLOGY",      "LBOMP_SEED",
        "LBOMP_VERBOSE",       "LBOMP_STEAL",
        "LBOMP_TIME",          "LBOMP_TOLERANCE",
        "LBOMP_FANOUT",        "LBOMP_RETRIES",
        "LBOMP_POWERCAP_ROOT", "LBOMP_NOT_A_VAR", /* unknown names are refused with -ENOENT */
};
#define NNAMES (sizeof names / sizeof names[0])

static void check_ranges(const struct lbomp__config *c)
{
        if (!c->policy || c->period < 1 || c->verbose < 0 || c->verbose > 2 ||
            !(c->params.tolerance > 0 && c->params.tolerance <= 1.0) || c->params.fanout < 1 ||
            c->params.fanout > 64 || c->params.retries < 0 || c->params.retries > 64 ||
            (int)c->steal < 0 || (int)c->steal > 2 || (c->topology && !*c->topology))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1 || size > 4096)
                return 0;
        const char *var = names[data[0] % NNAMES];
        int via_env = data[0] & 0x80;
        char *value = malloc(size);
        if (!value)
                return 0;
        memcpy(value, data + 1, size - 1);
        value[size - 1] = '\0'; /* an environment value ends at its first NUL anyway */

        struct lbomp__config c;
        if (via_env) {
                setenv(var, value, 1);
                int rc = lbomp__config_from_env(&c);
                unsetenv(var);
                if (rc == 0) {
                        check_ranges(&c);
                        lbomp__config_free(&c);
                } else if (rc != -ECANCELED && rc != -ENOMEM && !strstr(lbomp_last_error(), var)) {
                        abort(); /* a refusal must name the variable */
                }
        } else {
                if (lbomp__config_from_env(&c) != 0)
                        abort(); /* the harness runs with no LBOMP_* variable set */
                struct lbomp__config before;
                memcpy(&before, &c, sizeof c);
                int rc = lbomp__config_set(&c, var, value, NULL);
                if (rc == 0) {
                        check_ranges(&c);
                } else {
                        /* Nothing changed: no half-applied value, no silent clamp. */
                        if (memcmp(&before, &c, sizeof c) != 0)
                                abort();
                        if (rc != -ENOENT && rc != -ECANCELED && rc != -ENOMEM &&
                            !strstr(lbomp_last_error(), var))
                                abort();
                }
                lbomp__config_free(&c);
        }
        free(value);
        return 0;
}
