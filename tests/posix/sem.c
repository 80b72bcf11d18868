/*
 * Semaphores: values, trywait, timedwait expiring on time, the order waiters wake in (priority, then
 * FIFO), named semaphores, and every EINVAL/EAGAIN/EOVERFLOW/EBUSY/ENOENT/EEXIST path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "helpers.h"
#include "rtos/irq.h"
#include "rtos/thread.h"

#define MS 1000000LL

static sem_t s;
static int order[HELPERS];
static volatile int order_len;

static void waiter(void *arg)
{
    if (sem_wait(&s) == 0) {
        order[order_len++] = (int)(long)arg;
    }
}

static void poster(void *arg)
{
    (void)arg;
    msleep(2);
    (void)sem_post(&s);
}

static void test_values(void)
{
    int v = -1;
    CHECK_EQ(sem_init(&s, 0, 2), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 2);
    CHECK_EQ(sem_wait(&s), 0);
    CHECK_EQ(sem_trywait(&s), 0);
    errno = 0;
    CHECK_EQ(sem_trywait(&s), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(sem_destroy(&s), 0);
    /* Destroyed: every call refuses it. */
    errno = 0;
    CHECK_EQ(sem_post(&s), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sem_wait(&s), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_destroy(&s), -1);
    /* Never initialised (zeroed, or garbage). */
    sem_t junk;
    memset(&junk, 0xa5, sizeof(junk));
    struct timespec ts = {0, 0};
    errno = 0;
    CHECK_EQ(sem_trywait(&junk), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sem_timedwait(&junk, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sem_getvalue(&junk, &v), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_post(NULL), -1);
    CHECK_EQ(sem_init(NULL, 0, 0), -1);
    /* Bounds. */
    errno = 0;
    CHECK_EQ(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1u), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_init(&s, 1, SEM_VALUE_MAX), 0); /* pshared: one process, accepted */
    errno = 0;
    CHECK_EQ(sem_post(&s), -1);
    CHECK_EQ(errno, EOVERFLOW);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, SEM_VALUE_MAX);
    CHECK_EQ(sem_getvalue(&s, NULL), -1);
    CHECK_EQ(sem_destroy(&s), 0);
}

static void test_timedwait(void)
{
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    /* Expires on time: at or after the deadline, within 50 us (icount: instructions). */
    long long dl = ns_of(CLOCK_REALTIME) + 5 * MS;
    struct timespec abs = ts_of(dl);
    errno = 0;
    CHECK_EQ(sem_timedwait(&s, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    long long now = ns_of(CLOCK_REALTIME);
    CHECK(now >= dl && now < dl + 50000);
    /* Past deadline: at once. */
    errno = 0;
    CHECK_EQ(sem_timedwait(&s, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    CHECK(ns_of(CLOCK_REALTIME) - now < 50000);
    /* A bad abstime: EINVAL only when the call would block. */
    struct timespec bad = {.tv_sec = 0, .tv_nsec = 1000000000L};
    errno = 0;
    CHECK_EQ(sem_timedwait(&s, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_timedwait(&s, NULL), -1);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(sem_timedwait(&s, &bad), 0);
    /* A time before the Epoch has passed: ETIMEDOUT at once (EINVAL names the nanoseconds only). */
    struct timespec before_epoch = {.tv_sec = -5, .tv_nsec = 0};
    errno = 0;
    CHECK_EQ(sem_timedwait(&s, &before_epoch), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    errno = 0;
    CHECK_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &before_epoch), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    /* sem_clockwait on the monotonic clock, and a clock it refuses. */
    dl = ns_of(CLOCK_MONOTONIC) + 2 * MS;
    abs = ts_of(dl);
    errno = 0;
    CHECK_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    now = ns_of(CLOCK_MONOTONIC);
    CHECK(now >= dl && now < dl + 50000);
    errno = 0;
    CHECK_EQ(sem_clockwait(&s, CLOCK_THREAD_CPUTIME_ID, &abs), -1);
    CHECK_EQ(errno, EINVAL);
    /* A post before the deadline ends the wait with success, when it comes. */
    start(0, poster, NULL, 100);
    long long t0 = ns_of(CLOCK_REALTIME);
    abs = ts_of(t0 + 20 * MS);
    CHECK_EQ(sem_timedwait(&s, &abs), 0);
    now = ns_of(CLOCK_REALTIME);
    CHECK(now - t0 >= 2 * MS && now - t0 < 2 * MS + 50000);
    join(0);
    CHECK_EQ(sem_destroy(&s), 0);
}

/* Waiters wake most urgent first, FIFO among equals: one post at a time, each taken by the waiter
 * the kernel hands it to. While they wait, sem_destroy refuses (EBUSY). */
static void test_wake_order(void)
{
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    order_len = 0;
    start(0, waiter, (void *)1L, 50);
    start(1, waiter, (void *)2L, 70);
    start(2, waiter, (void *)3L, 60);
    msleep(1); /* each blocks, in this order */
    start(3, waiter, (void *)4L, 60);
    msleep(1);
    errno = 0;
    CHECK_EQ(sem_destroy(&s), -1);
    CHECK_EQ(errno, EBUSY);
    int v = -1;
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    for (int i = 0; i < HELPERS; i++) {
        CHECK_EQ(sem_post(&s), 0);
        msleep(1);
        CHECK_EQ(order_len, i + 1);
    }
    static const int want[HELPERS] = {2, 3, 4, 1};
    for (int i = 0; i < HELPERS; i++) {
        CHECK_EQ(order[i], want[i]);
        join(i);
    }
    CHECK_EQ(sem_destroy(&s), 0);
}

static void test_named(void)
{
    static const char *const bad[] = {"noslash", "/", "/a/b", ""};
    for (int i = 0; i < 4; i++) {
        errno = 0;
        CHECK(sem_open(bad[i], O_CREAT, 0600, 1) == SEM_FAILED);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(sem_unlink(bad[i]), -1);
        CHECK_EQ(errno, ENOENT); /* no semaphore has that name: sem_unlink has no EINVAL */
    }
    errno = 0;
    CHECK(sem_open(NULL, 0) == SEM_FAILED);
    CHECK_EQ(errno, EINVAL);
    static char longname[NAME_MAX + 3];
    longname[0] = '/';
    memset(longname + 1, 'x', NAME_MAX + 1);
    errno = 0;
    CHECK(sem_open(longname, O_CREAT, 0600, 1) == SEM_FAILED);
    CHECK_EQ(errno, ENAMETOOLONG);
    longname[NAME_MAX + 1] = '\0'; /* NAME_MAX bytes after the slash: allowed */
    sem_t *l = sem_open(longname, O_CREAT | O_EXCL, 0600, 0);
    CHECK(l != SEM_FAILED);
    CHECK_EQ(sem_close(l), 0);
    CHECK_EQ(sem_unlink(longname), 0);

    errno = 0;
    CHECK(sem_open("/s1", 0) == SEM_FAILED);
    CHECK_EQ(errno, ENOENT);
    errno = 0;
    CHECK(sem_open("/s1", O_CREAT, 0600, (unsigned)SEM_VALUE_MAX + 1u) == SEM_FAILED);
    CHECK_EQ(errno, EINVAL);
    sem_t *a = sem_open("/s1", O_CREAT | O_EXCL, 0600, 3);
    CHECK(a != SEM_FAILED);
    sem_t *b = sem_open("/s1", 0);
    CHECK(b == a);                                 /* the same semaphore, the same address */
    sem_t *c = sem_open("/s1", O_CREAT, 0600, 99); /* exists: the value is not used */
    CHECK(c == a);
    int v = -1;
    CHECK_EQ(sem_getvalue(a, &v), 0);
    CHECK_EQ(v, 3);
    errno = 0;
    CHECK(sem_open("/s1", O_CREAT | O_EXCL, 0600, 1) == SEM_FAILED);
    CHECK_EQ(errno, EEXIST);
    errno = 0;
    CHECK_EQ(sem_destroy(a), -1); /* named: sem_close, not sem_destroy */
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_close(c), 0);
    CHECK_EQ(sem_close(b), 0);
    /* Unlinked while open: the name is gone, the semaphore lives on until the last close. */
    CHECK_EQ(sem_unlink("/s1"), 0);
    errno = 0;
    CHECK_EQ(sem_unlink("/s1"), -1);
    CHECK_EQ(errno, ENOENT);
    errno = 0;
    CHECK(sem_open("/s1", 0) == SEM_FAILED);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(sem_wait(a), 0);
    CHECK_EQ(sem_post(a), 0);
    sem_t *d = sem_open("/s1", O_CREAT | O_EXCL, 0600, 0); /* a new one under the old name */
    CHECK(d != SEM_FAILED);
    CHECK_EQ(sem_getvalue(d, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_close(a), 0);
    CHECK_EQ(sem_close(d), 0);
    CHECK_EQ(sem_unlink("/s1"), 0);
    /* sem_close of an unnamed semaphore. */
    sem_t u;
    CHECK_EQ(sem_init(&u, 0, 0), 0);
    errno = 0;
    CHECK_EQ(sem_close(&u), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_destroy(&u), 0);
}

/* From an interrupt handler: sem_post wakes a waiter, the calls that would block or lock refuse. */
static volatile int irq_post_rc = 99, irq_wait_rc = 99, irq_wait_errno, irq_open_errno;

static void sgi_handler(unsigned intid, void *arg)
{
    (void)intid;
    (void)arg;
    irq_wait_rc = sem_wait(&s);
    irq_wait_errno = errno;
    errno = 0;
    (void)sem_open("/irq", O_CREAT, 0600, 0);
    irq_open_errno = errno;
    irq_post_rc = sem_post(&s);
}

static void test_irq(void)
{
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    CHECK_EQ(rt_irq_attach(RT_IRQ_SGI(3), 100, RT_IRQ_EDGE, sgi_handler, NULL), RT_OK);
    CHECK_EQ(rt_irq_enable(RT_IRQ_SGI(3)), RT_OK);
    CHECK_EQ(rt_irq_raise_sgi(3), RT_OK);
    long long dl = ns_of(CLOCK_REALTIME) + 10 * MS;
    struct timespec abs = ts_of(dl);
    CHECK_EQ(sem_timedwait(&s, &abs), 0); /* the handler's post */
    CHECK_EQ(irq_post_rc, 0);
    CHECK_EQ(irq_wait_rc, -1);
    CHECK_EQ(irq_wait_errno, EPERM);
    CHECK_EQ(irq_open_errno, EPERM);
    CHECK_EQ(rt_irq_detach(RT_IRQ_SGI(3)), RT_OK);
    CHECK_EQ(sem_destroy(&s), 0);
}

int main(void)
{
    test_values();
    test_timedwait();
    test_wake_order();
    test_named();
    test_irq();
    POSIX_TEST_END("sem");
}
