/*
 * rtmux-net: the messages between the rtos's socket client (rtos/linuxsvc/net.c) and the Linux daemon
 * that carries out its calls (guest/rtmux-netd/), over the V-Bus channel NETP_CHANNEL. This header is
 * the one definition both sides build from (docs/linux-services.md, "Sockets").
 *
 * Framing is 9P's, so the rtos reads both services with one reader (rtos/linuxsvc/conn.c):
 *   size[4] type[1] tag[2] body          little endian; size counts the whole frame, header included
 * The rtos sends T-messages, each with a tag of its own; the daemon answers each with the R-message of
 * the next type number (T + 1), or with Rlerror, carrying the tag back. Replies come in any order: a
 * request that has to wait (a recv with no data yet) does not hold up the others. A session starts
 * with Tversion (tag NETP_NOTAG) and lasts until either side closes the channel; a Tversion in the
 * middle starts a new session too. Nothing of a session (its sockets, its requests) survives it.
 *
 * Neither side trusts the other. The rtos refuses a reply with an unknown tag, a type that does not
 * answer its request, a body of the wrong length, or a count that is not what the frame carries
 * (conn.h). The daemon answers a well-framed request it cannot use with Rlerror (EPROTO: malformed;
 * EINVAL: a value out of range; EBADF: no such socket; EOPNOTSUPP: an unknown type), and a frame whose
 * size is out of range (the stream's framing is lost) ends the daemon: its supervisor starts a new one.
 *
 * Fields: u8, u16, u32 as above. addr[4] and port[2] are an IPv4 address and a port in network byte
 * order, as in struct sockaddr_in (AF_INET is the only family of this version). sid[4] is a socket of
 * the session, a number the daemon chose (Rsocket, Raccept). wait[4] is in milliseconds: how long the
 * daemon may hold a request that cannot be done yet before it answers that it is not done (EAGAIN,
 * EINPROGRESS, or an Rpoll with nothing ready); 0 answers at once, and the daemon holds nothing longer
 * than NETP_WAIT_MAX_MS (a larger value is taken as that). A caller that waits longer (a blocking recv
 * without a timeout) asks again: so every request is answered within NETP_WAIT_MAX_MS while Linux is
 * alive, which lets the rtos tell a silent Linux from a slow network.
 *
 * The messages (T: request, R: its answer; "-" is an empty body):
 *
 *   Tversion  msize[4] version[s]       s = len[2] then the bytes, NETP_VERSION; tag NETP_NOTAG
 *   Rversion  msize[4] version[s]       msize: at most the request's; another version: no session
 *   Rlerror   ecode[4]                  a Linux errno value (asm-generic numbers); the call failed
 *
 *   Tsocket   type[1]                   NETP_STREAM (TCP) or NETP_DGRAM (UDP), AF_INET
 *   Rsocket   sid[4]                    EMFILE beyond NETP_SOCKETS_MAX sockets in the session
 *   Tbind     sid[4] addr[4] port[2]
 *   Rbind     -
 *   Tlisten   sid[4] backlog[4]
 *   Rlisten   -
 *   Tconnect  sid[4] addr[4] port[2] wait[4] again[1]
 *   Rconnect  -                         connected (TCP) or the peer set (UDP)
 *             again 0: a new connect(); again 1: the rest of one that answered EINPROGRESS: wait for
 *             its outcome (Rconnect or its error), EINPROGRESS again if it is still under way
 *   Taccept   sid[4] wait[4]
 *   Raccept   sid[4] addr[4] port[2]    a new socket of the session, and its peer
 *   Tsend     sid[4] flags[4] wait[4] to[1] addr[4] port[2] count[4] data[count]
 *   Rsend     count[4]                  the bytes taken, 1..count; to 1: a datagram to addr:port
 *             (sendto), to 0: to the peer. A stream socket takes all of data unless the wait ended
 *             first (then what it took; EAGAIN if nothing); a datagram goes whole or not at all
 *   Trecv     sid[4] flags[4] wait[4] count[4]
 *   Rrecv     from[1] addr[4] port[2] count[4] data[count]
 *             count <= the request's; 0: the stream's end (or an empty datagram). from 1: addr:port is
 *             the sender (datagrams), from 0: not given (addr and port zero)
 *   Tshutdown sid[4] how[1]             0 reading, 1 writing, 2 both (SHUT_RD, SHUT_WR, SHUT_RDWR)
 *   Rshutdown -
 *   Tclose    sid[4]
 *   Rclose    -                         requests still waiting on the socket are answered EBADF first
 *   Tsetopt   sid[4] opt[1] value[4]    opt: NETP_OPT_*; a flag option takes 0 or 1
 *   Rsetopt   -
 *   Tgetopt   sid[4] opt[1]
 *   Rgetopt   value[4]                  NETP_OPT_ERROR: the pending error as a Linux errno (0: none)
 *   Tname     sid[4] which[1]           0: the socket's own address (getsockname), 1: its peer's
 *   Rname     addr[4] port[2]
 *   Tpoll     wait[4] n[2] n*(sid[4] events[2])     1 <= n <= NETP_POLL_MAX; events: NETP_POLL*
 *   Rpoll     n[2] n*(revents[2])       as many as asked, in order; NETP_POLLNVAL for a sid that is
 *                                       no socket; answered as soon as one is ready or the wait ends
 *
 * flags: NETP_MSG_PEEK (Trecv) only; any other bit is EOPNOTSUPP. Sends never raise SIGPIPE on Linux.
 * Linux's errno values travel as they are; the rtos maps them to its C library's (p9_errno_local).
 */
#ifndef LIB_NETPROTO_H
#define LIB_NETPROTO_H

#include <stdint.h>

#define NETP_CHANNEL "rtmux-net"
#define NETP_VERSION "rtmux-net.1"

#define NETP_HDR   7u      /* size[4] type[1] tag[2] */
#define NETP_NOTAG 0xFFFFu /* Tversion's tag */
/* The most data one Tsend or Rrecv carries; a longer send is several messages (a datagram is
 * EMSGSIZE). Beyond the data, NETP_IOHDR covers the largest header (Tsend's 30 bytes) with room. */
#define NETP_DATA_MAX 8192u
#define NETP_IOHDR    64u
#define NETP_MSIZE    (NETP_DATA_MAX + NETP_IOHDR) /* the largest frame either side sends */
/* The smallest msize a session may agree: a header and 512 bytes of data. */
#define NETP_MSIZE_MIN (NETP_IOHDR + 512u)

#define NETP_WAIT_MAX_MS 1000u /* the longest the daemon holds a request (wait[4] above) */
#define NETP_SOCKETS_MAX 64u   /* sockets of one session, accepted ones included */
#define NETP_POLL_MAX    64u   /* sockets in one Tpoll */
#define NETP_BACKLOG_MAX 128u  /* Tlisten's backlog is clamped to it */

enum netp_type {
    NETP_RLERROR = 7,
    NETP_TVERSION = 100,
    NETP_RVERSION = 101,
    NETP_TSOCKET = 160,
    NETP_RSOCKET = 161,
    NETP_TBIND = 162,
    NETP_RBIND = 163,
    NETP_TLISTEN = 164,
    NETP_RLISTEN = 165,
    NETP_TCONNECT = 166,
    NETP_RCONNECT = 167,
    NETP_TACCEPT = 168,
    NETP_RACCEPT = 169,
    NETP_TSEND = 170,
    NETP_RSEND = 171,
    NETP_TRECV = 172,
    NETP_RRECV = 173,
    NETP_TSHUTDOWN = 174,
    NETP_RSHUTDOWN = 175,
    NETP_TCLOSE = 176,
    NETP_RCLOSE = 177,
    NETP_TSETOPT = 178,
    NETP_RSETOPT = 179,
    NETP_TGETOPT = 180,
    NETP_RGETOPT = 181,
    NETP_TNAME = 182,
    NETP_RNAME = 183,
    NETP_TPOLL = 184,
    NETP_RPOLL = 185,
};

/* The body lengths of the fixed-size messages (the ones not listed vary: Tversion, Rversion, Tpoll,
 * Rpoll; Tsend and Rrecv have a fixed part, then count bytes of data). */
#define NETP_TSOCKET_LEN   1u
#define NETP_RSOCKET_LEN   4u
#define NETP_TBIND_LEN     10u
#define NETP_TLISTEN_LEN   8u
#define NETP_TCONNECT_LEN  15u
#define NETP_TACCEPT_LEN   8u
#define NETP_RACCEPT_LEN   10u
#define NETP_TSEND_FIXED   23u /* before the data */
#define NETP_RSEND_LEN     4u
#define NETP_TRECV_LEN     16u
#define NETP_RRECV_FIXED   11u /* before the data; it ends with count[4] */
#define NETP_TSHUTDOWN_LEN 5u
#define NETP_TCLOSE_LEN    4u
#define NETP_TSETOPT_LEN   9u
#define NETP_TGETOPT_LEN   5u
#define NETP_RGETOPT_LEN   4u
#define NETP_TNAME_LEN     5u
#define NETP_RNAME_LEN     6u
#define NETP_RLERROR_LEN   4u

/* Tsocket's type */
#define NETP_STREAM 1u
#define NETP_DGRAM  2u

/* Tsend/Trecv flags */
#define NETP_MSG_PEEK 0x1u

/* Tsetopt/Tgetopt options: the socket options the rtos passes on (SO_RCVTIMEO and SO_SNDTIMEO are the
 * rtos's own: it sets each request's wait from them). */
#define NETP_OPT_REUSEADDR 1u /* SO_REUSEADDR, 0 or 1 */
#define NETP_OPT_KEEPALIVE 2u /* SO_KEEPALIVE, 0 or 1 */
#define NETP_OPT_BROADCAST 3u /* SO_BROADCAST, 0 or 1 */
#define NETP_OPT_NODELAY   4u /* TCP_NODELAY, 0 or 1 (stream sockets) */
#define NETP_OPT_ERROR     5u /* SO_ERROR: get only, and reading it clears it */

/* Tpoll events and Rpoll revents: Linux's own poll bits (and those of the rtos's <poll.h>). */
#define NETP_POLLIN   0x01u
#define NETP_POLLPRI  0x02u
#define NETP_POLLOUT  0x04u
#define NETP_POLLERR  0x08u
#define NETP_POLLHUP  0x10u
#define NETP_POLLNVAL 0x20u

/* Tshutdown's how */
#define NETP_SHUT_RD   0u
#define NETP_SHUT_WR   1u
#define NETP_SHUT_RDWR 2u

#endif /* LIB_NETPROTO_H */
