/*
 * The C library's <arpa/inet.h> (htonl, htons, ntohl, ntohs), with what POSIX adds: the types of
 * <netinet/in.h> and the address conversions, IPv4 only (rtos/linuxsvc/socket.c).
 */
#ifndef RTMUX_ARPA_INET_H
#define RTMUX_ARPA_INET_H

#include_next <arpa/inet.h>

#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 with the address in dst (network byte order), 0 for text that is no dotted quad, -1 with errno
 * EAFNOSUPPORT for another family than AF_INET. */
int inet_pton(int af, const char *__restrict src, void *__restrict dst);
/* dst, or NULL with errno ENOSPC (size too small) or EAFNOSUPPORT. */
const char *inet_ntop(int af, const void *__restrict src, char *__restrict dst, socklen_t size);
/* A dotted quad as inet_pton reads it (not the older forms "a.b", hex or octal parts), INADDR_NONE for
 * anything else. */
in_addr_t inet_addr(const char *s);
/* The address as a dotted quad, in a buffer the next call overwrites. */
char *inet_ntoa(struct in_addr in);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_ARPA_INET_H */
