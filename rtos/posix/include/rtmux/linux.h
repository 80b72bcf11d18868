/*
 * Linux's services for rtos applications (docs/linux-services.md): what they did, for a test or a
 * status line. Files are the POSIX calls on paths under /linux; the network is the sockets; the log is
 * stdout and stderr, copied to Linux when the system configuration says so.
 */
#ifndef RTMUX_LINUX_H
#define RTMUX_LINUX_H

#include <stdint.h>

/* One service's session with Linux (files: 9P on rtmux-files; network: rtmux-net). */
struct rtmux_linux_session_stats {
    uint64_t requests;     /* sent */
    uint64_t errors;       /* failed, for any reason (Linux's errno included) */
    uint64_t timeouts;     /* of which no answer in time */
    uint64_t sessions;     /* begun (Tversion answered) */
    uint64_t lost;         /* ended by Linux (its server stopped, Linux rebooted) */
    uint64_t bad_frames;   /* replies that lost the stream's framing: the channel was reopened */
    uint64_t unknown_tags; /* replies to nothing in flight: dropped */
    uint64_t bad_replies;  /* replies of the wrong type or malformed: EIO to their caller */
};

struct rtmux_linux_stats {
    struct rtmux_linux_session_stats files; /* the POSIX calls on paths under /linux */
    struct rtmux_linux_session_stats net;   /* sockets; all 0 when the system offers no network */
    /* the log (the rtmux-log channel) */
    uint64_t log_sent;    /* bytes handed to Linux */
    uint64_t log_dropped; /* bytes dropped: Linux's reader was away while more than the hold came */
    uint64_t log_held;    /* bytes held now, to be sent at the next write */
};

/* 0, or -1 with errno ENOSYS when the system offers no service at all. */
int rtmux_linux_stats(struct rtmux_linux_stats *out);

#endif /* RTMUX_LINUX_H */
