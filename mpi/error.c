/*
 * error.c — how liblbomp-mpi reports a failure: the calling thread's last message
 * (lbomp_mpi_last_error()) and, for what a user must see unasked, the same line on stderr. Below
 * every other file of the library.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[512];

const char *lbomp_mpi_last_error(void)
{
        return last_error;
}

void lbomp__mpi_error(const struct lbomp_mpi *m, bool print, const char *fmt, ...)
{
        (void)m;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
        if (print)
                fprintf(stderr, "%s\n", last_error);
}
