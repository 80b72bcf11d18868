/*
 * The C library's <sched.h>, with the POSIX options the rtos implements declared first
 * (rtmux/posix_features.h), so that it declares their functions.
 */
#ifndef RTMUX_SCHED_H
#define RTMUX_SCHED_H

#include <rtmux/posix_features.h>

#include_next <sched.h>

#endif /* RTMUX_SCHED_H */
