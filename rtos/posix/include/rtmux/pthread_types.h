/*
 * pthread_t and pthread_attr_t, which <pthread.h>, <signal.h> (struct sigevent's
 * sigev_notify_attributes) and <time.h> need. The members are the implementation's: use the
 * pthread_attr_* functions.
 */
#ifndef RTMUX_PTHREAD_TYPES_H
#define RTMUX_PTHREAD_TYPES_H

#include <stddef.h>
#include <sys/sched.h>

/* A thread: its control block (rtos/posix/pthread.c). */
typedef struct rtmux_pthread *pthread_t;

typedef struct {
    int __initialized;  /* pthread_attr_init was called and pthread_attr_destroy was not */
    int __detachstate;  /* PTHREAD_CREATE_JOINABLE or PTHREAD_CREATE_DETACHED */
    int __inheritsched; /* PTHREAD_INHERIT_SCHED or PTHREAD_EXPLICIT_SCHED */
    int __policy;       /* SCHED_FIFO, SCHED_RR or SCHED_OTHER */
    struct sched_param __param;
    void *__stackaddr; /* lowest address of a caller-given stack, or NULL */
    size_t __stacksize;
    size_t __guardsize;
} pthread_attr_t;

#endif /* RTMUX_PTHREAD_TYPES_H */
