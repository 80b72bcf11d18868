/*
 * The C library's <unistd.h>, with the POSIX options the rtos implements declared first
 * (rtmux/posix_features.h), so that it declares their functions.
 */
#ifndef RTMUX_UNISTD_H
#define RTMUX_UNISTD_H

#include <rtmux/posix_features.h>

#include_next <unistd.h>

#endif /* RTMUX_UNISTD_H */
