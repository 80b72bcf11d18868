/*
 * Barriers: each round releases its threads together and exactly one of them gets
 * PTHREAD_BARRIER_SERIAL_THREAD; rounds follow each other at once; the error paths.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rtos/time.h"

#define THREADS 4 /* and main */
#define ROUNDS  20

static pthread_barrier_t barrier;
static volatile unsigned serials[ROUNDS];
static volatile unsigned arrived[ROUNDS];
static volatile unsigned early; /* a thread past a round before all had arrived */

static void round_trip(unsigned r)
{
    arrived[r]++;
    int ret = pthread_barrier_wait(&barrier);
    CHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
    if (arrived[r] != THREADS + 1) {
        early++;
    }
    if (ret == PTHREAD_BARRIER_SERIAL_THREAD) {
        serials[r]++;
    }
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    for (unsigned r = 0; r < ROUNDS; r++) {
        if ((r + id) % 3 == 0) {
            (void)rt_sleep(RT_USEC(100 * (id + 1))); /* arrive in different orders */
        }
        round_trip(r);
    }
    return NULL;
}

static int destroy_result;
static void *destroyer(void *arg)
{
    (void)arg;
    destroy_result = pthread_barrier_destroy(&barrier);
    return NULL;
}

int main(void)
{
    pthread_barrierattr_t ba;
    CHECK_EQ(pthread_barrierattr_init(&ba), 0);
    int v;
    CHECK_EQ(pthread_barrierattr_getpshared(&ba, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_barrierattr_setpshared(&ba, 7), EINVAL);
    CHECK_EQ(pthread_barrier_init(&barrier, &ba, 0), EINVAL);
    CHECK_EQ(pthread_barrier_init(&barrier, &ba, THREADS + 1), 0);
    CHECK_EQ(pthread_barrierattr_destroy(&ba), 0);
    CHECK_EQ(pthread_barrierattr_destroy(&ba), EINVAL);

    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        /* of different priorities, above and below main's */
        pthread_attr_t a;
        struct sched_param p = {.sched_priority = (int)(100 + 20 * i)};
        CHECK_EQ(pthread_attr_init(&a), 0);
        CHECK_EQ(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
        CHECK_EQ(pthread_attr_setschedparam(&a, &p), 0);
        CHECK_EQ(pthread_create(&t[i], &a, worker, (void *)(uintptr_t)i), 0);
        CHECK_EQ(pthread_attr_destroy(&a), 0);
    }
    for (unsigned r = 0; r < ROUNDS; r++) {
        if (r == 5) {
            /* threads wait at the barrier: destroying it is refused */
            (void)rt_sleep(RT_MSEC(2));
            pthread_t d;
            CHECK_EQ(pthread_create(&d, NULL, destroyer, NULL), 0);
            CHECK_EQ(pthread_join(d, NULL), 0);
            CHECK_EQ(destroy_result, EBUSY);
        }
        round_trip(r);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    unsigned wrong = 0;
    for (unsigned r = 0; r < ROUNDS; r++) {
        if (serials[r] != 1 || arrived[r] != THREADS + 1) {
            wrong++;
        }
    }
    CHECK_EQ(wrong, 0);
    CHECK_EQ(early, 0);

    /* a barrier of one: every wait is the serial one */
    CHECK_EQ(pthread_barrier_destroy(&barrier), 0);
    CHECK_EQ(pthread_barrier_wait(&barrier), EINVAL);
    CHECK_EQ(pthread_barrier_destroy(&barrier), EINVAL);
    CHECK_EQ(pthread_barrier_init(&barrier, NULL, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&barrier), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_wait(&barrier), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&barrier), 0);

    pthread_barrier_t z;
    memset(&z, 0, sizeof(z));
    CHECK_EQ(pthread_barrier_wait(&z), EINVAL);
    CHECK_EQ(pthread_barrier_wait(NULL), EINVAL);
    CHECK_EQ(pthread_barrier_init(NULL, NULL, 2), EINVAL);
    CHECK_EQ(pthread_barrier_init(&z, &ba, 2), EINVAL);
    POSIX_TEST_END("barrier");
}
