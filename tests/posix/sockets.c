/*
 * The sockets' POSIX part that needs no Linux (docs/linux-services.md, "Sockets"): the headers'
 * constants and types, the address conversions of <arpa/inet.h>, poll() over the console and with no
 * descriptor, and what socket() says when the system has no sockets service (bare metal, or a
 * partition without the rtmux-net channel): -1 with ENODEV. The calls against Linux's daemon are tested
 * on the host (tests/unit/c/svc_net.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rtmux/poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_inet(void)
{
    struct in_addr a;
    CHECK_EQ(inet_pton(AF_INET, "192.168.1.20", &a), 1);
    CHECK(a.s_addr == htonl(0xC0A80114u));
    const uint8_t *b = (const uint8_t *)&a.s_addr;
    CHECK(b[0] == 192 && b[3] == 20); /* network byte order: as written */
    CHECK_EQ(inet_pton(AF_INET, "0.0.0.0", &a), 1);
    CHECK_EQ(inet_pton(AF_INET, "255.255.255.255", &a), 1);
    CHECK(a.s_addr == INADDR_BROADCAST);
    static const char *bad[] = {"",       "1.2.3",   "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
                                "1..2.3", "a.b.c.d", "1.2.3.4 ",  " 1.2.3.4",  "1234.1.1.1"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ(inet_pton(AF_INET, bad[i], &a), 0);
    }
    errno = 0;
    CHECK(inet_pton(AF_INET6, "::1", &a) == -1 && errno == EAFNOSUPPORT);
    char s[INET_ADDRSTRLEN];
    a.s_addr = htonl(0x0A00020Fu);
    CHECK(inet_ntop(AF_INET, &a, s, sizeof(s)) == s && strcmp(s, "10.0.2.15") == 0);
    a.s_addr = htonl(0xFFFFFFFFu);
    CHECK(inet_ntop(AF_INET, &a, s, sizeof(s)) == s && strcmp(s, "255.255.255.255") == 0);
    errno = 0;
    CHECK(inet_ntop(AF_INET, &a, s, 15) == NULL && errno == ENOSPC);
    CHECK(inet_addr("127.0.0.1") == htonl(INADDR_LOOPBACK));
    CHECK(inet_addr("nonsense") == INADDR_NONE);
    a.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(strcmp(inet_ntoa(a), "127.0.0.1") == 0);
    CHECK(htons(0x1234) == 0x3412 && ntohl(htonl(0xA1B2C3D4u)) == 0xA1B2C3D4u);
}

static void test_headers(void)
{
    struct sockaddr_in in;
    CHECK(sizeof(in) == 16 && sizeof(struct sockaddr) == 16);
    CHECK(sizeof(struct sockaddr_storage) >= sizeof(in));
    CHECK(SOCK_STREAM != SOCK_DGRAM && AF_INET == 2 && IPPROTO_TCP == 6 && IPPROTO_UDP == 17);
    CHECK(TCP_NODELAY == 1 && SOL_SOCKET != IPPROTO_TCP);
    CHECK(SHUT_RD == 0 && SHUT_WR == 1 && SHUT_RDWR == 2);
    CHECK(POLLIN == 1 && POLLOUT == 4 && POLLNVAL == 0x20);
}

static void test_poll(void)
{
    struct pollfd p[4] = {{.fd = 1, .events = POLLOUT},
                          {.fd = 0, .events = POLLIN},
                          {.fd = -1, .events = POLLIN},
                          {.fd = 100, .events = POLLIN}};
    CHECK_EQ(poll(p, 4, 0), 3);
    CHECK(p[0].revents == POLLOUT && p[1].revents == POLLIN && p[2].revents == 0 && p[3].revents == POLLNVAL);
    p[0].events = POLLIN; /* the console is never readable */
    long long t0 = ms_now();
    CHECK_EQ(poll(p, 1, 30), 0);
    CHECK(ms_now() - t0 >= 30);
    t0 = ms_now();
    CHECK_EQ(poll(NULL, 0, 20), 0); /* a sleep */
    CHECK(ms_now() - t0 >= 20);
    errno = 0;
    CHECK(rtmux_chan_fd(NULL) == -1 && errno == EINVAL);
}

static void test_no_service(void)
{
    errno = 0;
    CHECK_EQ(socket(AF_INET, SOCK_STREAM, 0), -1);
    CHECK_EQ(errno, ENODEV);
    errno = 0;
    CHECK(socket(AF_INET6, SOCK_STREAM, 0) == -1 && errno == EAFNOSUPPORT);
    char b[4];
    errno = 0;
    CHECK(read(64, b, 4) == -1 && errno == EBADF);
    errno = 0;
    CHECK(write(100, b, 4) == -1 && errno == EBADF);
    errno = 0;
    CHECK(close(127) == -1 && errno == EBADF);
    errno = 0;
    CHECK(send(1, b, 4, 0) == -1 && errno == ENOTSOCK);
    errno = 0;
    CHECK(fcntl(1, F_GETFL) == -1 && errno == EINVAL);
}

int main(void)
{
    test_inet();
    test_headers();
    test_poll();
    test_no_service();
    POSIX_TEST_END("sockets");
}
