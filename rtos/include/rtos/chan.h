/*
 * V-Bus channels: named byte streams between rtos threads and Linux programs (which open
 * /dev/virtio-ports/NAME). The system configuration names the channels ([[channel]]); inside rtmux the
 * rtos finds them in its DTB, bare metal there are none and every open fails with RT_ENOENT.
 *
 * A channel is open on the rtos's side (rt_chan_open) and connected while a Linux program has it open
 * too. Bytes go both ways in order, through rings in the rtos's own memory; the rtos never waits for
 * Linux or the hypervisor to do anything but read or write those rings. Nothing is dropped silently:
 * a send while nothing is connected returns RT_ENOTCONN, a full ring blocks (up to the timeout) or
 * gives RT_EWOULDBLOCK with RT_NO_WAIT; bytes of an earlier Linux connection that were not received
 * before a new one began are dropped and counted (rt_chan_stats), so none crosses a reconnection.
 *
 * Every call does a bounded amount of work (a ring copy, a look at the connection), with interrupts
 * masked for at most a 256-byte copy at a time; the calls may be used from threads, and
 * rt_chan_send/rt_chan_recv with RT_NO_WAIT from interrupt handlers too. No memory is allocated.
 *
 * Messages: a send of at most RT_CHAN_MSG_MAX bytes goes into the ring to Linux in one step, all of it or
 * nothing: it waits (up to its timeout) until the ring has room for all of it, and returns an error
 * having written nothing otherwise. So its bytes reach the ring, and Linux's reader, contiguous and never
 * with another sender's bytes (another thread's or a handler's) inside; sends from different threads
 * are in the order they got room. A longer send is a stream: it is written up to 256 bytes at a time as
 * room appears, and other senders' messages may land between its parts. Senders waiting for room look
 * again each time the hypervisor frees some, most urgent first (FIFO within a priority), so a send never
 * waits behind a less urgent one; a long message may wait while more urgent senders take the room.
 */
#ifndef RTOS_CHAN_H
#define RTOS_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtos/types.h"

typedef struct rt_chan rt_chan_t;

/* The largest send that reaches the ring whole (above); every channel's ring holds at least this. */
#define RT_CHAN_MSG_MAX 256u

/* Conditions and events (rt_chan_wait, rt_chan_events). READABLE and WRITABLE are states; CONNECT and
 * DISCONNECT are latched when they happen and cleared when reported. */
#define RT_CHAN_READABLE   0x1u /* bytes wait to be received */
#define RT_CHAN_WRITABLE   0x2u /* connected, and the ring to Linux has room (a message: rt_chan_send) */
#define RT_CHAN_CONNECT    0x4u /* a Linux program connected */
#define RT_CHAN_DISCONNECT 0x8u /* it closed the port (or Linux reset the device) */

struct rt_chan_stats {
    uint64_t sent_bytes, sent_msgs;         /* sends that wrote something, and their bytes */
    uint64_t received_bytes, received_msgs; /* receives that read something, and their bytes */
    uint64_t full;                          /* sends that found the ring to Linux without room for all */
    uint64_t discarded;                     /* bytes of an earlier connection dropped at a new one */
    uint64_t connects, disconnects;
};

/* Opens the channel named `name` for this rtos; one opener at a time (RT_EBUSY). RT_ENOENT: no such
 * channel, or no V-Bus (bare metal). Open, it is connected once Linux has the port open as well. */
int rt_chan_open(const char *name, rt_chan_t **ch);
int rt_chan_close(rt_chan_t *ch);

/*
 * Sends len bytes, waiting up to `timeout` for room in the ring. Returns len, or: RT_ENOTCONN (not
 * connected), RT_ETIMEDOUT, RT_EWOULDBLOCK (RT_NO_WAIT and not enough room), RT_EINVAL (len above
 * INT32_MAX), RT_EPERM (waiting in an interrupt handler). len <= RT_CHAN_MSG_MAX: all or nothing (an
 * error means no byte was written; RT_EWOULDBLOCK: room for fewer than len bytes). Longer: fewer than
 * len (the count written) when the timeout expired or the connection closed after some were written;
 * RT_EWOULDBLOCK: no room at all.
 */
int rt_chan_send(rt_chan_t *ch, const void *buf, size_t len, rt_time_t timeout);
/*
 * Receives what is waiting, at most len bytes, waiting up to `timeout` for at least one (connected or
 * not: a reader waits for the next connection's bytes). Returns the count, or RT_ETIMEDOUT,
 * RT_EWOULDBLOCK (RT_NO_WAIT and nothing waits), RT_EINVAL, RT_EPERM.
 */
int rt_chan_recv(rt_chan_t *ch, void *buf, size_t len, rt_time_t timeout);
/*
 * Waits until one of the n channels has one of the conditions in `want` (RT_CHAN_*), up to `timeout`.
 * ready[i] gets channel i's conditions among `want` (latched events reported are cleared). Returns the
 * number of channels with something, or RT_ETIMEDOUT, RT_EWOULDBLOCK (RT_NO_WAIT), RT_EINVAL, RT_EPERM.
 */
int rt_chan_wait(rt_chan_t *const chans[], unsigned n, unsigned want, unsigned ready[], rt_time_t timeout);

/* Whether a Linux program is connected now. */
bool rt_chan_connected(rt_chan_t *ch);
/* The latched RT_CHAN_CONNECT / RT_CHAN_DISCONNECT since the last call (then cleared). */
unsigned rt_chan_events(rt_chan_t *ch);
int rt_chan_stats(rt_chan_t *ch, struct rt_chan_stats *out);
const char *rt_chan_name(const rt_chan_t *ch);
/* The channels the DTB gives this rtos (0 bare metal). */
unsigned rt_chan_count(void);

#endif /* RTOS_CHAN_H */
