/*
 * Message queues: priority order (FIFO within a priority), full and empty queues (EAGAIN), the timed
 * calls, blocked senders and receivers served most urgent first, attributes, unlink while open, and
 * every EINVAL/EBADF/EMSGSIZE/ENOENT/EEXIST/EMFILE path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "helpers.h"
#include "rtos/thread.h"

#define MS      1000000LL
#define LATE_NS 50000LL

static void test_open_errors(void)
{
    struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 16};
    static const char *const bad[] = {"noslash", "/", "/a/b", ""};
    for (int i = 0; i < 4; i++) {
        errno = 0;
        CHECK_EQ(mq_open(bad[i], O_CREAT | O_RDWR, 0600, &a), -1);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(mq_unlink(bad[i]), -1);
        CHECK_EQ(errno, ENOENT); /* no queue has that name: mq_unlink has no EINVAL */
    }
    errno = 0;
    CHECK_EQ(mq_open(NULL, O_RDWR), -1);
    CHECK_EQ(errno, EINVAL);
    static char longname[NAME_MAX + 3];
    longname[0] = '/';
    memset(longname + 1, 'q', NAME_MAX + 1);
    errno = 0;
    CHECK_EQ(mq_open(longname, O_CREAT | O_RDWR, 0600, &a), -1);
    CHECK_EQ(errno, ENAMETOOLONG);
    errno = 0;
    CHECK_EQ(mq_open("/none", O_RDWR), -1);
    CHECK_EQ(errno, ENOENT);
    errno = 0;
    CHECK_EQ(mq_unlink("/none"), -1);
    CHECK_EQ(errno, ENOENT);
    errno = 0;
    CHECK_EQ(mq_open("/q", O_CREAT | O_ACCMODE, 0600, &a), -1);
    CHECK_EQ(errno, EINVAL);
    static const struct mq_attr bada[] = {
        {.mq_maxmsg = 0, .mq_msgsize = 16},
        {.mq_maxmsg = -1, .mq_msgsize = 16},
        {.mq_maxmsg = 4, .mq_msgsize = 0},
        {.mq_maxmsg = 4, .mq_msgsize = -5},
        {.mq_maxmsg = MQ_MAXMSG_MAX + 1L, .mq_msgsize = 16},
        {.mq_maxmsg = 4, .mq_msgsize = MQ_MSGSIZE_MAX + 1L},
    };
    for (int i = 0; i < 6; i++) {
        errno = 0;
        CHECK_EQ(mq_open("/q", O_CREAT | O_RDWR, 0600, &bada[i]), -1);
        CHECK_EQ(errno, EINVAL);
    }
    /* A queue too large for the heap. */
    struct mq_attr huge = {.mq_maxmsg = MQ_MAXMSG_MAX, .mq_msgsize = MQ_MSGSIZE_MAX};
    errno = 0;
    CHECK_EQ(mq_open("/q", O_CREAT | O_RDWR, 0600, &huge), -1);
    CHECK_EQ(errno, ENOSPC);
    /* Defaults, EEXIST. */
    mqd_t q = mq_open("/q", O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
    CHECK(q >= 0);
    struct mq_attr got;
    CHECK_EQ(mq_getattr(q, &got), 0);
    CHECK(got.mq_maxmsg == MQ_MAXMSG_DEFAULT && got.mq_msgsize == MQ_MSGSIZE_DEFAULT && got.mq_curmsgs == 0 &&
          got.mq_flags == 0);
    errno = 0;
    CHECK_EQ(mq_open("/q", O_CREAT | O_EXCL | O_RDWR, 0600, &a), -1);
    CHECK_EQ(errno, EEXIST);
    CHECK_EQ(mq_close(q), 0);
    CHECK_EQ(mq_unlink("/q"), 0);
}

static void test_order_full_empty(void)
{
    struct mq_attr a = {.mq_maxmsg = 5, .mq_msgsize = 16};
    mqd_t q = mq_open("/order", O_CREAT | O_RDWR | O_NONBLOCK, 0600, &a);
    CHECK(q >= 0);
    char buf[16];
    unsigned prio = 99;
    errno = 0;
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), -1); /* empty */
    CHECK_EQ(errno, EAGAIN);
    static const struct {
        const char *text;
        unsigned prio;
    } in[] = {{"one", 1}, {"fiveA", 5}, {"three", 3}, {"fiveB", 5}, {"", 0}};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(mq_send(q, in[i].text, strlen(in[i].text), in[i].prio), 0);
    }
    struct mq_attr got;
    CHECK_EQ(mq_getattr(q, &got), 0);
    CHECK_EQ(got.mq_curmsgs, 5);
    CHECK_EQ(got.mq_flags, O_NONBLOCK);
    errno = 0;
    CHECK_EQ(mq_send(q, "x", 1, 7), -1); /* full */
    CHECK_EQ(errno, EAGAIN);
    static const struct {
        const char *text;
        unsigned prio;
    } out[] = {{"fiveA", 5}, {"fiveB", 5}, {"three", 3}, {"one", 1}, {"", 0}};
    for (int i = 0; i < 5; i++) {
        memset(buf, 0, sizeof(buf));
        ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
        CHECK_EQ(n, (long)strlen(out[i].text));
        CHECK(memcmp(buf, out[i].text, strlen(out[i].text)) == 0);
        CHECK_EQ(prio, out[i].prio);
    }
    errno = 0;
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    /* Interleaved behind a backlog of two: slots are reused, the order kept. */
    CHECK_EQ(mq_send(q, "m", 1, 4), 0);
    CHECK_EQ(mq_send(q, "m", 1, 4), 0);
    for (int round = 0; round < 20; round++) {
        CHECK_EQ(mq_send(q, "lo", 2, 0), 0);
        CHECK_EQ(mq_send(q, "hi", 2, 9), 0); /* hi m m lo */
        CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 2);
        CHECK(prio == 9 && memcmp(buf, "hi", 2) == 0);
        CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 1);
        CHECK_EQ(prio, 4);
        CHECK_EQ(mq_send(q, "m", 1, 4), 0); /* m m lo */
        CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 1);
        CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 1);
        CHECK_EQ(prio, 4);
        CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 2);
        CHECK(prio == 0 && memcmp(buf, "lo", 2) == 0);
        CHECK_EQ(mq_send(q, "m", 1, 4), 0);
        CHECK_EQ(mq_send(q, "m", 1, 4), 0);
    }
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 1);
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 1);
    /* EMSGSIZE and priorities out of range. */
    char big[17] = {0};
    errno = 0;
    CHECK_EQ(mq_send(q, big, 17, 0), -1);
    CHECK_EQ(errno, EMSGSIZE);
    CHECK_EQ(mq_send(q, big, 16, 0), 0);
    errno = 0;
    CHECK_EQ(mq_receive(q, buf, 15, NULL), -1);
    CHECK_EQ(errno, EMSGSIZE);
    CHECK_EQ(mq_receive(q, buf, 16, NULL), 16);
    errno = 0;
    CHECK_EQ(mq_send(q, "p", 1, MQ_PRIO_MAX), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(mq_send(q, "p", 1, MQ_PRIO_MAX - 1), 0);
    CHECK_EQ(mq_receive(q, buf, 16, &prio), 1);
    CHECK_EQ(prio, MQ_PRIO_MAX - 1);
    CHECK_EQ(mq_close(q), 0);
    CHECK_EQ(mq_unlink("/order"), 0);
}

static void test_badf(void)
{
    struct mq_attr a = {.mq_maxmsg = 2, .mq_msgsize = 8};
    mqd_t w = mq_open("/dir", O_CREAT | O_WRONLY, 0600, &a);
    mqd_t r = mq_open("/dir", O_RDONLY);
    CHECK(w >= 0 && r >= 0 && w != r);
    char buf[8];
    errno = 0;
    CHECK_EQ(mq_receive(w, buf, 8, NULL), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(mq_send(r, "x", 1, 0), -1);
    CHECK_EQ(errno, EBADF);
    CHECK_EQ(mq_send(w, "x", 1, 0), 0);
    CHECK_EQ(mq_receive(r, buf, 8, NULL), 1);
    CHECK_EQ(mq_close(w), 0);
    static const mqd_t bogus[] = {-1, 0, 1, 12345, 0x7fffffff};
    struct mq_attr got;
    for (int i = 0; i < 5; i++) {
        errno = 0;
        CHECK_EQ(mq_send(bogus[i], "x", 1, 0), -1);
        CHECK_EQ(errno, EBADF);
        errno = 0;
        CHECK_EQ(mq_getattr(bogus[i], &got), -1);
        CHECK_EQ(errno, EBADF);
        errno = 0;
        CHECK_EQ(mq_close(bogus[i]), -1);
        CHECK_EQ(errno, EBADF);
    }
    /* Closed: its descriptor is refused, also once the slot is used again. */
    errno = 0;
    CHECK_EQ(mq_send(w, "x", 1, 0), -1);
    CHECK_EQ(errno, EBADF);
    mqd_t w2 = mq_open("/dir", O_WRONLY);
    CHECK(w2 >= 0 && w2 != w);
    errno = 0;
    CHECK_EQ(mq_close(w), -1);
    CHECK_EQ(errno, EBADF);
    /* Unlinked while open: the name is gone, the queue works until its last close. */
    CHECK_EQ(mq_unlink("/dir"), 0);
    errno = 0;
    CHECK_EQ(mq_open("/dir", O_RDONLY), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(mq_send(w2, "yz", 2, 0), 0);
    CHECK_EQ(mq_receive(r, buf, 8, NULL), 2);
    mqd_t other = mq_open("/dir", O_CREAT | O_EXCL | O_RDWR, 0600, &a); /* a new queue, same name */
    CHECK(other >= 0);
    CHECK_EQ(mq_getattr(other, &got), 0);
    CHECK_EQ(got.mq_curmsgs, 0);
    CHECK_EQ(mq_close(w2), 0);
    CHECK_EQ(mq_close(r), 0);
    CHECK_EQ(mq_close(other), 0);
    CHECK_EQ(mq_unlink("/dir"), 0);
    /* mq_getattr/setattr arguments; setattr changes O_NONBLOCK only. */
    mqd_t q = mq_open("/attr", O_CREAT | O_RDWR, 0600, &a);
    errno = 0;
    CHECK_EQ(mq_getattr(q, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(mq_setattr(q, NULL, &got), -1);
    CHECK_EQ(errno, EINVAL);
    struct mq_attr set = {.mq_flags = O_NONBLOCK, .mq_maxmsg = 99, .mq_msgsize = 99}, old;
    CHECK_EQ(mq_setattr(q, &set, &old), 0);
    CHECK_EQ(old.mq_flags, 0);
    CHECK_EQ(mq_getattr(q, &got), 0);
    CHECK(got.mq_flags == O_NONBLOCK && got.mq_maxmsg == 2 && got.mq_msgsize == 8);
    errno = 0;
    CHECK_EQ(mq_receive(q, buf, 8, NULL), -1); /* non-blocking now */
    CHECK_EQ(errno, EAGAIN);
    set.mq_flags = 0;
    CHECK_EQ(mq_setattr(q, &set, NULL), 0);
    CHECK_EQ(mq_getattr(q, &got), 0);
    CHECK_EQ(got.mq_flags, 0);
    errno = 0;
    CHECK_EQ(mq_setattr(12345, &set, NULL), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(mq_notify(q, NULL), 0); /* removes no registration: there is none */
    struct sigevent ev = {.sigev_notify = SIGEV_NONE};
    errno = 0;
    CHECK_EQ(mq_notify(q, &ev), -1);
    CHECK_EQ(errno, ENOSYS);
    errno = 0;
    CHECK_EQ(mq_notify(12345, &ev), -1); /* the descriptor is checked first */
    CHECK_EQ(errno, EBADF);
    /* Descriptors run out: EMFILE. */
    static mqd_t many[70];
    int n = 0;
    while (n < 70 && (many[n] = mq_open("/attr", O_RDONLY)) >= 0) {
        n++;
    }
    CHECK_EQ(n, MQ_OPEN_MAX - 1); /* q holds one */
    CHECK_EQ(errno, EMFILE);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(mq_close(many[i]), 0);
    }
    CHECK_EQ(mq_close(q), 0);
    CHECK_EQ(mq_unlink("/attr"), 0);
}

static void test_timed(void)
{
    struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8};
    mqd_t q = mq_open("/timed", O_CREAT | O_RDWR, 0600, &a);
    char buf[8];
    /* Empty: timedreceive expires on time. */
    long long dl = ns_of(CLOCK_REALTIME) + 5 * MS;
    struct timespec abs = ts_of(dl);
    errno = 0;
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    long long now = ns_of(CLOCK_REALTIME);
    CHECK(now >= dl && now < dl + LATE_NS);
    /* Passed deadline: at once. Bad abstime: EINVAL when it would wait. */
    errno = 0;
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    struct timespec bad = {.tv_sec = 0, .tv_nsec = -1};
    errno = 0;
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    struct timespec before_epoch = {.tv_sec = -5, .tv_nsec = 0}; /* passed, not EINVAL */
    errno = 0;
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, &before_epoch), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    errno = 0;
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    /* Full: timedsend expires on time; a bad abstime is fine while there is room. */
    CHECK_EQ(mq_timedsend(q, "a", 1, 0, &bad), 0);
    dl = ns_of(CLOCK_REALTIME) + 3 * MS;
    abs = ts_of(dl);
    errno = 0;
    CHECK_EQ(mq_timedsend(q, "b", 1, 0, &abs), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    now = ns_of(CLOCK_REALTIME);
    CHECK(now >= dl && now < dl + LATE_NS);
    errno = 0;
    CHECK_EQ(mq_timedsend(q, "b", 1, 0, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(mq_timedreceive(q, buf, 8, NULL, &bad), 1); /* a message: abstime not looked at */
    /* O_NONBLOCK: EAGAIN whatever abstime says. */
    mqd_t nb = mq_open("/timed", O_RDWR | O_NONBLOCK);
    errno = 0;
    CHECK_EQ(mq_timedreceive(nb, buf, 8, NULL, &bad), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(mq_close(nb), 0);
    CHECK_EQ(mq_close(q), 0);
    CHECK_EQ(mq_unlink("/timed"), 0);
}

/* Blocked receivers get messages most urgent first; a blocked sender gets room when it comes. */
static mqd_t shared_q;
static int got_by[HELPERS];
static volatile int got_len;

static void receiver(void *arg)
{
    char buf[8];
    if (mq_receive(shared_q, buf, 8, NULL) == 1) {
        got_by[got_len++] = (int)(long)arg;
    }
}

static volatile long long sender_done;

static void sender(void *arg)
{
    (void)arg;
    if (mq_send(shared_q, "s", 1, 3) == 0) {
        sender_done = ns_of(CLOCK_MONOTONIC);
    }
}

static void test_blocking(void)
{
    struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8};
    shared_q = mq_open("/block", O_CREAT | O_RDWR, 0600, &a);
    CHECK(shared_q >= 0);
    got_len = 0;
    start(0, receiver, (void *)1L, 50);
    start(1, receiver, (void *)2L, 90);
    start(2, receiver, (void *)3L, 70);
    msleep(1); /* all three wait */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(mq_send(shared_q, "m", 1, 0), 0);
        msleep(1);
        CHECK_EQ(got_len, i + 1);
    }
    CHECK(got_by[0] == 2 && got_by[1] == 3 && got_by[2] == 1);
    for (int i = 0; i < 3; i++) {
        join(i);
    }
    /* A sender waiting on a full queue sends once a message is taken. */
    CHECK_EQ(mq_send(shared_q, "f", 1, 0), 0);
    sender_done = 0;
    start(0, sender, NULL, 60);
    msleep(2);
    CHECK(sender_done == 0);
    char buf[8];
    unsigned prio = 99;
    long long t0 = ns_of(CLOCK_MONOTONIC);
    CHECK_EQ(mq_receive(shared_q, buf, 8, &prio), 1);
    CHECK_EQ(prio, 0);
    msleep(1);
    CHECK(sender_done >= t0);
    CHECK_EQ(mq_receive(shared_q, buf, 8, &prio), 1);
    CHECK_EQ(prio, 3);
    join(0);
    CHECK_EQ(mq_close(shared_q), 0);
    CHECK_EQ(mq_unlink("/block"), 0);
}

int main(void)
{
    test_open_errors();
    test_order_full_empty();
    test_badf();
    test_timed();
    test_blocking();
    POSIX_TEST_END("mqueue");
}
