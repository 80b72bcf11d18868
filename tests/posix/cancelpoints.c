/*
 * The cancellation points of the clocks, semaphores and message queues: a thread with a cancel request
 * pending is cancelled when it calls sem_wait, sem_timedwait, sem_clockwait, mq_receive, mq_send,
 * mq_timedreceive, nanosleep, clock_nanosleep or sleep (its cleanup handler runs, the call never
 * returns), and a request made while it sleeps is acted on when the sleep ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MS 1000000L

static sem_t gate, never;
static mqd_t empty, full;
static volatile int reached, cleaned;

static struct timespec mono_in(long ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += ns % 1000000000L;
    t.tv_sec += ns / 1000000000L + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static long long mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec d = {.tv_sec = 0, .tv_nsec = ms * MS};
    nanosleep(&d, NULL);
}

/* The calls, each one that would block (or sleep 50 ms) if it returned. */
static void do_sem_wait(void)
{
    (void)sem_wait(&never);
}
static void do_sem_timedwait(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec = 0;
    t.tv_sec += 1;
    (void)sem_timedwait(&never, &t);
}
static void do_sem_clockwait(void)
{
    struct timespec t = mono_in(50 * MS);
    (void)sem_clockwait(&never, CLOCK_MONOTONIC, &t);
}
static void do_mq_receive(void)
{
    char buf[8];
    (void)mq_receive(empty, buf, sizeof buf, NULL);
}
static void do_mq_send(void)
{
    (void)mq_send(full, "x", 1, 0);
}
static void do_mq_timedreceive(void)
{
    char buf[8];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 1;
    (void)mq_timedreceive(empty, buf, sizeof buf, NULL, &t);
}
static void do_nanosleep(void)
{
    sleep_ms(50);
}
static void do_clock_nanosleep(void)
{
    struct timespec t = mono_in(50 * MS);
    (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
}
static void do_sleep(void)
{
    (void)sleep(1);
}

/* Ends a call that did block (a failed check), so that the test goes on. */
static void undo_sem(void)
{
    (void)sem_post(&never);
}
static void undo_receive(void)
{
    (void)mq_send(empty, "u", 1, 0);
}
static void undo_send(void)
{
    char buf[8];
    (void)mq_receive(full, buf, sizeof buf, NULL);
}

struct round {
    const char *name;
    void (*call)(void);
    void (*undo)(void);
};

static const struct round rounds[] = {
    {"sem_wait", do_sem_wait, undo_sem},
    {"sem_timedwait", do_sem_timedwait, undo_sem},
    {"sem_clockwait", do_sem_clockwait, undo_sem},
    {"mq_receive", do_mq_receive, undo_receive},
    {"mq_send", do_mq_send, undo_send},
    {"mq_timedreceive", do_mq_timedreceive, undo_receive},
    {"nanosleep", do_nanosleep, NULL},
    {"clock_nanosleep", do_clock_nanosleep, NULL},
    {"sleep", do_sleep, NULL},
};

static void cleanup(void *arg)
{
    (void)arg;
    cleaned = 1;
}

/* Takes the request with cancellation disabled, then enables it and makes the call. */
static void *pending_victim(void *arg)
{
    const struct round *r = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    (void)sem_wait(&gate); /* a cancellation point, but disabled */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    pthread_cleanup_push(cleanup, NULL);
    r->call();
    reached = 1;
    pthread_cleanup_pop(0);
    return NULL;
}

static void test_pending_request(const struct round *r)
{
    reached = cleaned = 0;
    CHECK_EQ(sem_init(&never, 0, 0), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, pending_victim, (void *)r), 0);
    CHECK_EQ(pthread_cancel(t), 0);
    CHECK_EQ(sem_post(&gate), 0);
    sleep_ms(5);
    if (r->undo != NULL && !cleaned) {
        printf("cancelpoints: %s did not act on a pending request\n", r->name);
        r->undo();
    }
    void *ret = NULL;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(cleaned, 1);
    CHECK_EQ(reached, 0);
    CHECK_EQ(sem_destroy(&never), 0);
}

/* A request made during a sleep: acted on when the sleep ends (it does not shorten it). */
static void *sleeping_victim(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    sleep_ms(20);
    reached = 1;
    pthread_cleanup_pop(0);
    return NULL;
}

static void test_request_during_sleep(void)
{
    reached = cleaned = 0;
    long long t0 = mono_ns();
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, sleeping_victim, NULL), 0);
    sleep_ms(5);
    CHECK_EQ(pthread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(reached, 0);
    CHECK(mono_ns() - t0 >= 20 * MS);
}

int main(void)
{
    CHECK_EQ(sem_init(&gate, 0, 0), 0);
    struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8};
    empty = mq_open("/cancel-empty", O_CREAT | O_RDWR, 0600, &a);
    full = mq_open("/cancel-full", O_CREAT | O_RDWR, 0600, &a);
    CHECK(empty >= 0 && full >= 0);
    CHECK_EQ(mq_send(full, "f", 1, 0), 0);
    for (unsigned i = 0; i < sizeof rounds / sizeof rounds[0]; i++) {
        test_pending_request(&rounds[i]);
    }
    test_request_during_sleep();
    CHECK_EQ(mq_close(empty), 0);
    CHECK_EQ(mq_close(full), 0);
    CHECK_EQ(mq_unlink("/cancel-empty"), 0);
    CHECK_EQ(mq_unlink("/cancel-full"), 0);
    POSIX_TEST_END("cancelpoints");
}
