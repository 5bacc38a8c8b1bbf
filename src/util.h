/*
 * util.h — the little every part needs and that belongs to none: growing an array, the cache line,
 * a spin's pause.
 * Header only; it calls nothing of the library.
 */
#ifndef LBOMP_UTIL_H
#define LBOMP_UTIL_H

#include <errno.h>
#include <stdlib.h>

#define LBOMP__CACHELINE   64
#define LBOMP__MAX_WORKERS 4096 /* threads of one team the runtime accepts */

/* Resizes *p to n elements of `size` bytes (at least one); 0 or -ENOMEM, *p kept on failure. */
static inline int lbomp__grow(void **p, size_t n, size_t size)
{
        void *q = realloc(*p, (n ? n : 1) * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        return 0;
}
#define LBOMP__GROW(ptr, n) lbomp__grow((void **)&(ptr), (n), sizeof *(ptr))

/* One turn of a spin wait: the CPU's hint that this is one (x86 pause). */
static inline void lbomp__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

#endif
