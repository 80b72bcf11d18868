/*
 * POSIX message queues (The Open Group Base Specifications Issue 7, <mqueue.h>) in the rtos
 * application's heap: messages of up to mq_msgsize bytes, received highest priority first, FIFO
 * within a priority; senders and receivers that wait are served most urgent thread first.
 * Names "/NAME", NAME 1 to NAME_MAX bytes without '/'. Deviations and limits: docs/posix.md.
 */
#ifndef RTMUX_MQUEUE_H
#define RTMUX_MQUEUE_H

#include <rtmux/posix_features.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A message queue descriptor; (mqd_t)-1 is the error return of mq_open. */
typedef int mqd_t;

struct mq_attr {
    long mq_flags;   /* 0 or O_NONBLOCK (the descriptor's) */
    long mq_maxmsg;  /* messages the queue holds, 1..MQ_MAXMSG_MAX */
    long mq_msgsize; /* bytes a message may have, 1..MQ_MSGSIZE_MAX */
    long mq_curmsgs; /* messages in the queue now */
};

/* Message priorities are 0..MQ_PRIO_MAX - 1, higher first. */
#define MQ_PRIO_MAX 32
/* Descriptors open at once. */
#define MQ_OPEN_MAX 64
/* Limits of mq_open's attributes (beyond them: EINVAL), and its defaults for a NULL attr. */
#define MQ_MAXMSG_MAX      65536
#define MQ_MSGSIZE_MAX     1048576
#define MQ_MAXMSG_DEFAULT  10
#define MQ_MSGSIZE_DEFAULT 1024

mqd_t mq_open(const char *name, int oflag, ...);
int mq_close(mqd_t mqd);
int mq_unlink(const char *name);
int mq_send(mqd_t mqd, const char *msg, size_t len, unsigned prio);
int mq_timedsend(mqd_t mqd, const char *msg, size_t len, unsigned prio, const struct timespec *abstime);
ssize_t mq_receive(mqd_t mqd, char *msg, size_t len, unsigned *prio);
ssize_t mq_timedreceive(mqd_t mqd, char *__restrict msg, size_t len, unsigned *__restrict prio,
                        const struct timespec *__restrict abstime);
int mq_getattr(mqd_t mqd, struct mq_attr *attr);
int mq_setattr(mqd_t mqd, const struct mq_attr *__restrict attr, struct mq_attr *__restrict old);
/* Not implemented (ENOSYS): docs/posix.md. */
int mq_notify(mqd_t mqd, const struct sigevent *notification);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_MQUEUE_H */
