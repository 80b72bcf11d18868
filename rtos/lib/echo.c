/*
 * The echo service (rtos/echo.h).
 */
#include "rtos/echo.h"

#include "rtos/rtos.h"

/* A PAGE_SIZE receive buffer of Linux's driver carries at most 4 KiB: one read takes a whole buffer. */
#define ECHO_CHUNK 4096u

static struct {
    const char *who, *channel;
    rt_time_t delay;
    bool started;
} svc;
static rt_thread_t echo_thread;
RT_STACK_DEFINE(echo_stack, 8192);

/* Bytes that cannot go back because the program closed the port are the rtos's last words to it:
 * dropped with the connection (RT_ENOTCONN, not an error). */
static void echo_entry(void *arg)
{
    (void)arg;
    static uint8_t buf[ECHO_CHUNK];
    if (svc.delay > 0) {
        (void)rt_sleep(svc.delay);
    }
    rt_chan_t *ch = NULL;
    int rc = rt_chan_open(svc.channel, &ch);
    if (rc != RT_OK) {
        rt_printf("%s: channel %s not served: %s\n", svc.who, svc.channel, rt_strerror(rc));
        return;
    }
    if (svc.delay > 0) {
        rt_printf("%s: %s opened after %lu s\n", svc.who, svc.channel,
                  (unsigned long)(svc.delay / RT_SEC(1)));
    }
    for (;;) {
        int n = rt_chan_recv(ch, buf, sizeof(buf), RT_FOREVER);
        if (n <= 0) {
            continue;
        }
        int sent = rt_chan_send(ch, buf, (size_t)n, RT_FOREVER);
        if (sent != n && sent != RT_ENOTCONN) {
            rt_printf("%s: %s: %d of %d bytes sent back: %s\n", svc.who, svc.channel, sent < 0 ? 0 : sent, n,
                      rt_strerror(sent < 0 ? sent : RT_ENOTCONN));
        }
    }
}

int rt_echo_start(const char *who, const char *channel, unsigned prio, rt_time_t open_delay)
{
    if (svc.started) {
        return RT_EBUSY;
    }
    svc.who = who;
    svc.channel = channel;
    svc.delay = open_delay;
    int rc = rt_thread_create(&echo_thread, "echo", echo_entry, NULL, echo_stack, sizeof(echo_stack), prio);
    svc.started = rc == RT_OK;
    return rc;
}
