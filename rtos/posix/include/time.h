/*
 * The C library's <time.h>, with the POSIX options the rtos implements declared first
 * (rtmux/posix_features.h), so that it declares their functions.
 */
#ifndef RTMUX_TIME_H
#define RTMUX_TIME_H

#include <rtmux/posix_features.h>

#include_next <time.h>

#endif /* RTMUX_TIME_H */
