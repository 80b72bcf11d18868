/*
 * The C library's <sys/signal.h>, with a struct sigevent that has SIGEV_THREAD's two members
 * (sigev_notify_function, sigev_notify_attributes): the C library's own lacks them. Its definition is
 * renamed out of the way while it is included; nothing in the C library's compiled code uses it.
 */
#ifndef RTMUX_SYS_SIGNAL_H
#define RTMUX_SYS_SIGNAL_H

#include <rtmux/posix_features.h>
#include <rtmux/pthread_types.h>

#define sigevent rtmux_libc_sigevent
#include_next <sys/signal.h>
#undef sigevent

struct sigevent {
    int sigev_notify;         /* SIGEV_NONE or SIGEV_THREAD (SIGEV_SIGNAL: ENOTSUP) */
    int sigev_signo;          /* unused: signals are not implemented */
    union sigval sigev_value; /* passed to sigev_notify_function */
    void (*sigev_notify_function)(union sigval);
    pthread_attr_t *sigev_notify_attributes; /* the notification thread's priority and stack */
};

#endif /* RTMUX_SYS_SIGNAL_H */
