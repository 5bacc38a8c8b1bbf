/*
 * error.h — the one map of return codes, the calling thread's last message, and logging.
 *
 * Every part of the library reports a failure the same way: a negative errno from the map below
 * (one code, one meaning), and a message naming what was wrong, kept per thread for
 * lbomp_last_error() and, for what the user must see even when nobody asks, written through the
 * log function (stderr unless the program installed its own with lbomp_set_log_fn()). This file
 * sits below every other part: it calls nothing of the library.
 */
#ifndef LBOMP_ERROR_H
#define LBOMP_ERROR_H

#include <errno.h>
#include <stdbool.h>

/*
 * The return codes of the public API: code, short name, meaning. lbomp_strerror(),
 * lbomp_err_name() and the list in lbomp.h come from this one table; a code outside it (a file
 * errno such as -EACCES from LBOMP_TRACE) is described by the C library.
 */
#define LBOMP__ERRORS(X)                                                                           \
        X(0, "OK", "success")                                                                      \
        X(EINVAL, "EINVAL", "invalid argument")                                                    \
        X(ENOMEM, "ENOMEM", "out of memory")                                                       \
        X(ENOENT, "ENOENT", "no such policy, file or task")                                        \
        X(ENOTSUP, "ENOTSUP", "not supported: backend not built or not present")                   \
        X(EBUSY, "EBUSY", "not allowed while a step of this runtime runs")                         \
        X(EPERM, "EPERM",                                                                          \
          "not allowed from here (inside a parallel region, or outside the team of the step)")     \
        X(ETIMEDOUT, "ETIMEDOUT",                                                                  \
          "the team did not reach the step barrier (a construct only some threads run)")           \
        X(EINTR, "EINTR", "a step ended before every task ran (break or return out of the loop)")  \
        X(ECANCELED, "ECANCELED", "canceled: LBOMP_POLICY=help listed the policies")               \
        X(EAGAIN, "EAGAIN", "the policy could not complete; the mapping was kept")                 \
        X(ELOOP, "ELOOP", "a decentralized policy did not end; the mapping was kept")              \
        X(EINPROGRESS, "EINPROGRESS", "task not placed yet: it gets its worker at the next step")  \
        X(ESTALE, "ESTALE", "the task id was removed")                                             \
        X(EFBIG, "EFBIG", "file too large")                                                        \
        X(EIO, "EIO", "input/output error")                                                        \
        X(EFAULT, "EFAULT", "internal inconsistency (a bug in lbomp)")

/* Formats the calling thread's last error message (lbomp_last_error()). */
void lbomp__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, and writes it through the log function: for what the user must see unasked. */
void lbomp__fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line through the log function only (warnings, verbose output); no newline needed. */
void lbomp__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clears the calling thread's last error. */
void lbomp__clear_error(void);

#endif
