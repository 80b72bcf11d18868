/*
 * The C library's <time.h>, with the POSIX options the rtos implements declared first
 * (rtmux/posix_features.h), so that it declares their functions.
 */
#ifndef RTMUX_TIME_H
#define RTMUX_TIME_H

#include <rtmux/posix_features.h>

#include_next <time.h>

/* XSI: CLOCKS_PER_SEC is one million (picolibc's is 100 on arm64). times() counts in it and clock()
 * sums what times() says (rtos/libc/syscalls.c), so clock() is in microseconds. */
#undef CLOCKS_PER_SEC
#define CLOCKS_PER_SEC ((clock_t)1000000)
#undef CLK_TCK
#define CLK_TCK CLOCKS_PER_SEC

#endif /* RTMUX_TIME_H */
