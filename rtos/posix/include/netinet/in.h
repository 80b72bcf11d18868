/*
 * Internet addresses (<netinet/in.h>) for the sockets of <sys/socket.h>: IPv4 only (IPv6's names are
 * absent). Addresses and ports are in network byte order, as everywhere.
 */
#ifndef RTMUX_NETINET_IN_H
#define RTMUX_NETINET_IN_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _IN_ADDR_T_DECLARED
typedef uint32_t in_addr_t;
#define _IN_ADDR_T_DECLARED
#endif
#ifndef _IN_PORT_T_DECLARED
typedef uint16_t in_port_t;
#define _IN_PORT_T_DECLARED
#endif

struct in_addr {
    in_addr_t s_addr;
};

struct sockaddr_in {
    sa_family_t sin_family; /* AF_INET */
    in_port_t sin_port;
    struct in_addr sin_addr;
    unsigned char sin_zero[8];
};

#define IPPROTO_IP   0
#define IPPROTO_ICMP 1
#define IPPROTO_TCP  6
#define IPPROTO_UDP  17

/* In host byte order: htonl(INADDR_LOOPBACK) is what goes into sin_addr. */
#define INADDR_ANY       ((in_addr_t)0x00000000)
#define INADDR_BROADCAST ((in_addr_t)0xffffffff)
#define INADDR_NONE      ((in_addr_t)0xffffffff)
#define INADDR_LOOPBACK  ((in_addr_t)0x7f000001)

#define INET_ADDRSTRLEN 16

#ifdef __cplusplus
}
#endif

/* htonl, htons, ntohl, ntohs (POSIX lets this header give them too) */
#include <arpa/inet.h>

#endif /* RTMUX_NETINET_IN_H */
