/*
 * Internal interface of the C library's glue (rtos/libc/): what its files and the POSIX layer share.
 */
#ifndef RTOS_LIBC_H
#define RTOS_LIBC_H

#include <stddef.h>

/* Writes through the calling thread's console line (stdio.c): descriptors 1 and 2. */
void rtmux_console_write(const char *s, size_t n);
/* Writes out the calling thread's unfinished console line. */
void rtmux_console_flush(void);

/* Sets up the C library's static lock (lock.c); before any other thread runs. */
void rtmux_libc_locks_init(void);

#endif /* RTOS_LIBC_H */
