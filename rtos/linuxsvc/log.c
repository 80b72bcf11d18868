/*
 * stdout and stderr to Linux (log.h): what the console shows is copied, in order, to the `rtmux-log`
 * channel, whose Linux end appends it to a file or hands it to syslog (the system configuration's
 * [services] log, which the DTB's /rtmux-services says as rtmux,log).
 *
 * A write never waits for Linux: what the channel cannot take now (Linux's reader is not there yet,
 * or its ring is full) is held, up to LOG_HOLD bytes, and sent before the next write's bytes; beyond
 * that the oldest held bytes are dropped and counted. So a thread that prints keeps its timing whatever
 * Linux does; the console keeps every byte as before.
 */
#include "log.h"

#include <errno.h>
#include <string.h>

#include "files.h"
#include "net.h"
#include "rtmux/linux.h"
#include "rtos/chan.h"
#include "rtos/sync.h"
#include "rtos/system.h"

#define LOG_CHANNEL "rtmux-log"
/* What is held while Linux's reader is away: a boot's worth of an application's lines. */
#define LOG_HOLD 8192u

static struct {
    bool on;
    rt_mutex_t lock;
    rt_chan_t *ch;
    uint8_t held[LOG_HOLD]; /* a ring: the oldest byte at head */
    size_t head, count;
    uint64_t sent, dropped;
} lg;

void lsvc_log_init(void)
{
    uint32_t len = 0;
    const char *how = rt_dt_prop(LFS_DTB_NODE, "rtmux,log", &len);
    lg.on = how != NULL && len > 1 && rt_mutex_init(&lg.lock) == RT_OK;
}

/* Sends up to n bytes now, in messages of at most RT_CHAN_MSG_MAX (each whole or not at all, never
 * waiting); returns how many went. */
static size_t send_now(const uint8_t *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < RT_CHAN_MSG_MAX ? n - done : RT_CHAN_MSG_MAX;
        if (rt_chan_send(lg.ch, p + done, k, RT_NO_WAIT) != (int)k) {
            break;
        }
        done += k;
    }
    lg.sent += done;
    return done;
}

static void hold(const uint8_t *p, size_t n)
{
    if (n > LOG_HOLD) { /* only the last LOG_HOLD bytes can be kept */
        lg.dropped += n - LOG_HOLD;
        p += n - LOG_HOLD;
        n = LOG_HOLD;
    }
    if (lg.count + n > LOG_HOLD) { /* drop the oldest */
        size_t drop = lg.count + n - LOG_HOLD;
        lg.head = (lg.head + drop) % LOG_HOLD;
        lg.count -= drop;
        lg.dropped += drop;
    }
    for (size_t i = 0; i < n; i++) {
        lg.held[(lg.head + lg.count + i) % LOG_HOLD] = p[i];
    }
    lg.count += n;
}

/* Sends what is held, oldest first; true when nothing is left. */
static bool flush_held(void)
{
    while (lg.count > 0) {
        size_t run = LOG_HOLD - lg.head < lg.count ? LOG_HOLD - lg.head : lg.count;
        size_t k = send_now(lg.held + lg.head, run);
        lg.head = (lg.head + k) % LOG_HOLD;
        lg.count -= k;
        if (k < run) {
            return false;
        }
    }
    return true;
}

void lsvc_log_write(const void *buf, size_t n)
{
    if (!lg.on || n == 0 || rt_mutex_lock(&lg.lock, RT_FOREVER) != RT_OK) {
        return;
    }
    if (lg.ch == NULL && rt_chan_open(LOG_CHANNEL, &lg.ch) != RT_OK) {
        lg.ch = NULL;
    }
    size_t done = 0;
    if (lg.ch != NULL && flush_held()) {
        done = send_now(buf, n);
    }
    hold((const uint8_t *)buf + done, n - done);
    (void)rt_mutex_unlock(&lg.lock);
}

void lsvc_log_flush(void)
{
    if (lg.on && rt_mutex_lock(&lg.lock, RT_FOREVER) == RT_OK) {
        if (lg.ch != NULL) {
            (void)flush_held();
        }
        (void)rt_mutex_unlock(&lg.lock);
    }
}

/* Sockets are linked only into an application that makes one (syscalls.c); without them, no session. */
#pragma weak lnet_stats

static struct rtmux_linux_session_stats session_stats(const struct lsvc_stats *s)
{
    return (struct rtmux_linux_session_stats){
        .requests = s->requests,
        .errors = s->errors,
        .timeouts = s->timeouts,
        .sessions = s->sessions,
        .lost = s->lost,
        .bad_frames = s->bad_frames,
        .unknown_tags = s->unknown_tags,
        .bad_replies = s->bad_replies,
    };
}

int rtmux_linux_stats(struct rtmux_linux_stats *out)
{
    struct lsvc_stats f, n = {0};
    lfs_stats(&f);
    if (lnet_stats != NULL) {
        lnet_stats(&n);
    }
    *out = (struct rtmux_linux_stats){.files = session_stats(&f), .net = session_stats(&n)};
    if (lg.on && rt_mutex_lock(&lg.lock, RT_FOREVER) == RT_OK) {
        out->log_sent = lg.sent;
        out->log_dropped = lg.dropped;
        out->log_held = lg.count;
        (void)rt_mutex_unlock(&lg.lock);
    }
    if (!lg.on && rt_dt_prop(LFS_DTB_NODE, "compatible", NULL) == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return 0;
}
