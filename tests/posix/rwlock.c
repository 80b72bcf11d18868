/*
 * Read-write locks: readers share, writers exclude; a waiting writer of the same or higher priority
 * keeps new readers out (and a more urgent reader still overtakes it); a thread's read lock is
 * recursive even while a writer waits; timed locks expire on time; the error paths.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rtos/time.h"
#include "threads.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static char log_[32];
static unsigned log_len;

static void *reader(void *arg)
{
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    log_[log_len++] = (char)(uintptr_t)arg;
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    return NULL;
}

static void *writer(void *arg)
{
    CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
    log_[log_len++] = (char)(uintptr_t)arg;
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    return NULL;
}

static int tries[4];
static void *trier(void *arg)
{
    (void)arg;
    tries[0] = pthread_rwlock_tryrdlock(&rw);
    if (tries[0] == 0) {
        CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    tries[1] = pthread_rwlock_trywrlock(&rw);
    if (tries[1] == 0) {
        CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    struct timespec ts = abs_in(RT_MSEC(4));
    rt_time_t t0 = rt_time_now();
    tries[2] = pthread_rwlock_timedwrlock(&rw, &ts);
    if (tries[2] == 0) {
        CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    } else if (rt_time_now() - t0 < RT_MSEC(4)) {
        tries[2] = -1;
    }
    tries[3] = pthread_rwlock_unlock(&rw); /* holds nothing */
    return NULL;
}

static void *timed_reader(void *arg)
{
    (void)arg;
    struct timespec ts = abs_in(RT_MSEC(3));
    tries[0] = pthread_rwlock_timedrdlock(&rw, &ts);
    if (tries[0] == 0) {
        CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

int main(void)
{
    /* readers share: main reads, and so does a thread meanwhile */
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    pthread_t t = spawn(reader, (void *)'r', 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(log_len, 1);
    /* a writer does not get in, nor a try or a timed one */
    t = spawn(trier, NULL, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(tries[0], 0);
    CHECK_EQ(tries[1], EBUSY);
    CHECK_EQ(tries[2], ETIMEDOUT);
    CHECK_EQ(tries[3], EPERM);
    /* the caller's own: recursive read, no write, unlock as often as locked */
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
    CHECK_EQ(pthread_rwlock_trywrlock(&rw), EDEADLK);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_destroy(&rw), EBUSY);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_unlock(&rw), EPERM);

    /* a writer excludes readers and writers */
    CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
    CHECK_EQ(pthread_rwlock_rdlock(&rw), EDEADLK);
    memset(tries, 0x55, sizeof(tries));
    t = spawn(trier, NULL, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(tries[0], EBUSY);
    CHECK_EQ(tries[1], EBUSY);
    CHECK_EQ(tries[2], ETIMEDOUT);
    CHECK_EQ(tries[3], EPERM);
    t = spawn(timed_reader, NULL, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(tries[0], ETIMEDOUT);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

    /* who gets it when main's read lock goes: waiting are a writer W (50), readers a (50, after W),
     * b (60) and c (40); b overtook W at once (more urgent); W goes before a and c, then both */
    log_len = 0;
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    pthread_t w = spawn(writer, (void *)'W', 50);
    (void)rt_sleep(RT_MSEC(1)); /* W waits */
    pthread_t a = spawn(reader, (void *)'a', 50);
    pthread_t c = spawn(reader, (void *)'c', 40);
    (void)rt_sleep(RT_MSEC(1)); /* a and c wait behind W */
    CHECK_EQ(log_len, 0);
    pthread_t b = spawn(reader, (void *)'b', 60);
    (void)rt_sleep(RT_MSEC(1));
    CHECK_EQ(log_len, 1); /* b read at once */
    /* main's own read lock again, although W waits: recursive */
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_join(w, NULL), 0);
    CHECK_EQ(pthread_join(a, NULL), 0);
    CHECK_EQ(pthread_join(b, NULL), 0);
    CHECK_EQ(pthread_join(c, NULL), 0);
    CHECK_EQ(log_len, 4);
    CHECK(memcmp(log_, "bWac", 4) == 0);

    /* a writer that gives up lets the readers behind it in */
    log_len = 0;
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    memset(tries, 0x55, sizeof(tries));
    pthread_t tw = spawn(trier, NULL, 50); /* tryrd 0, trywr EBUSY, then a 4 ms timed write */
    (void)rt_sleep(RT_MSEC(1));
    pthread_t r2 = spawn(reader, (void *)'q', 50); /* waits behind the timed writer */
    (void)rt_sleep(RT_MSEC(1));
    CHECK_EQ(log_len, 0);
    (void)rt_sleep(RT_MSEC(4)); /* the writer timed out */
    CHECK_EQ(log_len, 1);
    CHECK_EQ(pthread_join(tw, NULL), 0);
    CHECK_EQ(pthread_join(r2, NULL), 0);
    CHECK_EQ(tries[2], ETIMEDOUT);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

    /* timed lock: a bad time is refused only when the lock must wait */
    struct timespec bad = {.tv_sec = 0, .tv_nsec = -5};
    CHECK_EQ(pthread_rwlock_timedwrlock(&rw, &bad), 0);
    CHECK_EQ(pthread_rwlock_timedrdlock(&rw, &bad), EDEADLK);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_timedwrlock(&rw, &bad), EDEADLK);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

    /* a thread holds at most POSIX_RDLOCKS_MAX (8) distinct read locks: the next is EAGAIN */
    pthread_rwlock_t many[9];
    for (int i = 0; i < 9; i++) {
        CHECK_EQ(pthread_rwlock_init(&many[i], NULL), 0);
    }
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(pthread_rwlock_rdlock(&many[i]), 0);
    }
    CHECK_EQ(pthread_rwlock_rdlock(&many[8]), EAGAIN);
    CHECK_EQ(pthread_rwlock_wrlock(&many[8]), 0);
    for (int i = 0; i < 9; i++) {
        CHECK_EQ(pthread_rwlock_unlock(&many[i]), 0);
        CHECK_EQ(pthread_rwlock_destroy(&many[i]), 0);
    }

    /* EINVAL */
    pthread_rwlock_t z;
    memset(&z, 0, sizeof(z));
    CHECK_EQ(pthread_rwlock_rdlock(&z), EINVAL);
    CHECK_EQ(pthread_rwlock_wrlock(&z), EINVAL);
    CHECK_EQ(pthread_rwlock_unlock(&z), EINVAL);
    CHECK_EQ(pthread_rwlock_destroy(&z), EINVAL);
    CHECK_EQ(pthread_rwlock_rdlock(NULL), EINVAL);
    CHECK_EQ(pthread_rwlock_init(NULL, NULL), EINVAL);
    pthread_rwlockattr_t ra;
    int v;
    CHECK_EQ(pthread_rwlockattr_init(&ra), 0);
    CHECK_EQ(pthread_rwlockattr_getpshared(&ra, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_rwlockattr_setpshared(&ra, 7), EINVAL);
    CHECK_EQ(pthread_rwlock_init(&z, &ra), 0);
    CHECK_EQ(pthread_rwlockattr_destroy(&ra), 0);
    CHECK_EQ(pthread_rwlock_init(&z, &ra), EINVAL);
    pthread_rwlock_t rc;
    memcpy(&rc, &z, sizeof(rc));
    CHECK_EQ(pthread_rwlock_rdlock(&rc), EINVAL); /* a copy */
    CHECK_EQ(pthread_rwlock_destroy(&z), 0);
    CHECK_EQ(pthread_rwlock_destroy(&rw), 0);
    CHECK_EQ(pthread_rwlock_rdlock(&rw), EINVAL);

    POSIX_TEST_END("rwlock");
}
