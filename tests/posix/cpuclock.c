/*
 * pthread_getcpuclockid: another thread's CPU-time clock grows while it computes and stands still while
 * it sleeps; the clock is readable and has a resolution, is not settable and cannot be slept on; a
 * made-up clock ID (odd, inside the image or not) and the clock of an ended thread are EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "check.h"

#define MS 1000000LL

static long long ns_of(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0) {
        return -1;
    }
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static sem_t start_spin, spun, finish;

/* Sleeps 10 ms, then on request spins 10 ms, then waits to be told to end. */
static void *worker(void *arg)
{
    (void)arg;
    struct timespec rq = {.tv_sec = 0, .tv_nsec = 10 * MS};
    (void)nanosleep(&rq, NULL);
    (void)sem_wait(&start_spin);
    long long end = ns_of(CLOCK_MONOTONIC) + 10 * MS;
    while (ns_of(CLOCK_MONOTONIC) < end) {
    }
    (void)sem_post(&spun);
    (void)sem_wait(&finish);
    return NULL;
}

static int marker;

int main(void)
{
    CHECK_EQ(sem_init(&start_spin, 0, 0), 0);
    CHECK_EQ(sem_init(&spun, 0, 0), 0);
    CHECK_EQ(sem_init(&finish, 0, 0), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, worker, NULL), 0);
    clockid_t clk;
    CHECK_EQ(pthread_getcpuclockid(t, &clk), 0);
    CHECK_EQ(pthread_getcpuclockid(t, NULL), EINVAL);
    CHECK(clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_THREAD_CPUTIME_ID &&
          clk != CLOCK_PROCESS_CPUTIME_ID);

    /* Main waits (the worker sleeps meanwhile): the worker's clock hardly moves. */
    long long c0 = ns_of(clk);
    CHECK(c0 >= 0);
    struct timespec rq = {.tv_sec = 0, .tv_nsec = 5 * MS};
    CHECK_EQ(nanosleep(&rq, NULL), 0);
    long long c1 = ns_of(clk);
    CHECK(c1 >= c0 && c1 - c0 < MS / 10);

    /* The worker computes 10 ms: its clock advances by about that much. */
    CHECK_EQ(sem_post(&start_spin), 0);
    CHECK_EQ(sem_wait(&spun), 0);
    long long c2 = ns_of(clk);
    CHECK(c2 - c1 >= 10 * MS && c2 - c1 < 12 * MS);

    struct timespec res;
    CHECK_EQ(clock_getres(clk, &res), 0);
    CHECK(res.tv_sec == 0 && res.tv_nsec > 0);
    struct timespec ts = {.tv_sec = 1, .tv_nsec = 0};
    errno = 0;
    CHECK_EQ(clock_settime(clk, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(clock_nanosleep(clk, 0, &rq, NULL), EINVAL);

    /* Made-up IDs: odd outside the image, odd inside it on something that is not a thread. */
    errno = 0;
    CHECK_EQ(clock_gettime((clockid_t)0x12345, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(clock_gettime((clockid_t)((unsigned long)&marker | 1u), &ts), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(clock_gettime((clockid_t)~0ul, &ts), -1);
    CHECK_EQ(errno, EINVAL);

    /* After the thread has ended and been joined, its clock and its ID are gone. */
    CHECK_EQ(sem_post(&finish), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    errno = 0;
    CHECK_EQ(clock_gettime(clk, &ts), -1);
    CHECK_EQ(errno, EINVAL);
    POSIX_TEST_END("cpuclock");
}
