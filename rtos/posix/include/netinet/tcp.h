/*
 * TCP's socket options (<netinet/tcp.h>): TCP_NODELAY, at level IPPROTO_TCP.
 */
#ifndef RTMUX_NETINET_TCP_H
#define RTMUX_NETINET_TCP_H

#define TCP_NODELAY 1

#endif /* RTMUX_NETINET_TCP_H */
