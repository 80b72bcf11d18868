/*
 * POSIX semaphores (The Open Group Base Specifications Issue 7, <semaphore.h>) on rtos counting
 * semaphores: waiters wake in priority order, FIFO within a priority. Unnamed (sem_init) and named
 * (sem_open; names "/NAME", NAME 1 to NAME_MAX bytes without '/'). Deviations: docs/posix.md.
 */
#ifndef RTMUX_SEMAPHORE_H
#define RTMUX_SEMAPHORE_H

#include <rtmux/posix_features.h>

#include <fcntl.h>
#include <limits.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest value a semaphore may have (the C library's <limits.h> does not define it). */
#ifndef SEM_VALUE_MAX
#define SEM_VALUE_MAX 2147483647
#endif
/* No limit of its own on the semaphores a process may have: the heap's for named ones. */

/* A semaphore: an rtos semaphore and its state (rtos/posix/sem.c). The members are private; the rtos
 * semaphore is opaque storage, so that this header declares no name outside the standard's (no rtos
 * header, no <stdbool.h>: an application may call a variable `bool`). */
typedef struct {
    unsigned int __magic;    /* set while initialised or open: anything else is EINVAL */
    unsigned int __waiters;  /* threads inside a wait (sem_destroy's EBUSY) */
    int __named;             /* from sem_open: sem_close, not sem_destroy */
    unsigned long __kobj[4]; /* the rtos semaphore (rt_sem_t) */
} sem_t;

#define SEM_FAILED ((sem_t *)0)

int sem_init(sem_t *sem, int pshared, unsigned value);
int sem_destroy(sem_t *sem);
int sem_wait(sem_t *sem);
int sem_trywait(sem_t *sem);
int sem_timedwait(sem_t *__restrict sem, const struct timespec *__restrict abstime);
/* Issue 8: sem_timedwait on CLOCK_REALTIME or CLOCK_MONOTONIC. */
int sem_clockwait(sem_t *__restrict sem, clockid_t clock, const struct timespec *__restrict abstime);
int sem_post(sem_t *sem);
int sem_getvalue(sem_t *__restrict sem, int *__restrict value);

sem_t *sem_open(const char *name, int oflag, ...);
int sem_close(sem_t *sem);
int sem_unlink(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_SEMAPHORE_H */
