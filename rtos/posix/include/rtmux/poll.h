/*
 * rtmux's extension to poll(): a V-Bus channel as a descriptor, so one poll() waits for sockets and
 * channels at once (docs/linux-services.md, "Sockets"). The channel stays the application's: it reads
 * and writes it with rt_chan_recv and rt_chan_send (rtos/chan.h) and closes it with rt_chan_close.
 */
#ifndef RTMUX_RTMUX_POLL_H
#define RTMUX_RTMUX_POLL_H

#include <poll.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rt_chan;

/* A descriptor standing for the open channel `ch` in poll(): POLLIN while it has bytes to receive,
 * POLLOUT while it is connected and has room to send, POLLHUP while no Linux program has it open.
 * close() gives the descriptor back (the channel stays open). -1 with errno EMFILE when all 16 are in
 * use, EINVAL for NULL. */
int rtmux_chan_fd(struct rt_chan *ch);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_RTMUX_POLL_H */
