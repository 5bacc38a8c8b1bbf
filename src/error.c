/*
 * error.c — the one map of return codes (error.h), the calling thread's last message and the log
 * function. Every message the library writes goes through lbomp__log(), so a program that must
 * keep its stderr clean installs its own function once (lbomp_set_log_fn()).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "lbomp.h"

static _Thread_local char last_error[512];

/* The program's log function, or NULL for stderr; set once, read by any thread. */
static _Atomic(lbomp_log_fn) log_fn;
static void *_Atomic log_arg;

void lbomp_set_log_fn(lbomp_log_fn fn, void *arg)
{
        atomic_store(&log_arg, arg);
        atomic_store(&log_fn, fn);
}

static void emit(const char *msg)
{
        lbomp_log_fn fn = atomic_load(&log_fn);
        if (fn)
                fn(msg, atomic_load(&log_arg));
        else
                fprintf(stderr, "%s\n", msg);
}

void lbomp__set_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
}

void lbomp__fail(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
        emit(last_error);
}

void lbomp__log(const char *fmt, ...)
{
        char line[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        emit(line);
}

void lbomp__clear_error(void)
{
        last_error[0] = 0;
}

const char *lbomp_last_error(void)
{
        return last_error;
}

const char *lbomp_strerror(int err)
{
        switch (-err) {
#define X(code, name, text)                                                                        \
        case code:                                                                                 \
                return text;
                LBOMP__ERRORS(X)
#undef X
        default:
                break;
        }
        if (err < 0) { /* a file errno: the C library's text, thread-safe */
                const char *s = strerrordesc_np(-err);
                if (s)
                        return s;
        }
        return "unknown error";
}

const char *lbomp_err_name(int err)
{
        switch (-err) {
#define X(code, name, text)                                                                        \
        case code:                                                                                 \
                return name;
                LBOMP__ERRORS(X)
#undef X
        default:
                break;
        }
        if (err < 0) {
                const char *s = strerrorname_np(-err);
                if (s)
                        return s;
        }
        return "UNKNOWN";
}
