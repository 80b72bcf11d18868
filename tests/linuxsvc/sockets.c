/*
 * Sockets from rtos threads through Linux's network, in the whole system (tests/system/
 * test_linux_services.py): rtmux-netd in Linux carries out the calls.
 *
 *   1. TCP client: 100,000 bytes to Linux's echo server (busybox nc -ll -e cat on 127.0.0.1:7000) and
 *      back, compared;
 *   2. TCP server: an rtos listener on port 7001 that Linux's nc reaches; it reads Linux's line and
 *      answers one computed here (the test matches it in Linux's output);
 *   3. UDP: datagrams between two rtos sockets through Linux's loopback, each way, with the sender's
 *      address; poll() on a socket;
 *   4. UDP with a stock Linux program: busybox tftp reads a file from an rtos TFTP server on port 7005
 *      (request, data, acknowledgement); the file's line is computed here and the test matches it in
 *      Linux's copy;
 *   5. `sockets-done` in /srv/rtos (Linux's script ends on it); exit with the failed checks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rtmux/linux.h"

#define BASE       "/linux/srv/rtos"
#define ECHO_BYTES 100000

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static struct sockaddr_in ipv4(uint32_t host, unsigned short port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(host);
    return a;
}

static struct sockaddr_in loopback(unsigned short port)
{
    return ipv4(INADDR_LOOPBACK, port);
}

static void touch(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0);
    CHECK_EQ(fd >= 0 ? close(fd) : -1, 0);
}

static void tcp_client(void)
{
    static unsigned char out[ECHO_BYTES], in[ECHO_BYTES];
    for (size_t i = 0; i < sizeof(out); i++) {
        out[i] = (unsigned char)(i * 7u + (i >> 8));
    }
    int s = -1, err = 0;
    for (int i = 0; i < 600 && s < 0; i++) { /* Linux's echo server may not listen yet */
        s = socket(AF_INET, SOCK_STREAM, 0);
        err = s < 0 ? errno : 0;
        struct sockaddr_in a = loopback(7000);
        if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) != 0) {
            err = errno;
            (void)close(s);
            s = -1;
        }
        if (s < 0) { /* ENOTCONN until rtmux-netd has the channel, ECONNREFUSED until nc listens */
            sleep_ms(100);
        }
    }
    if (s < 0) {
        printf("FAIL tcp client: errno %d\n", err);
        check_failed++;
    }
    if (s < 0) {
        return;
    }
    size_t sent = 0, got = 0;
    while (got < sizeof(in)) {
        if (sent < sizeof(out)) {
            size_t k = sizeof(out) - sent < 4096 ? sizeof(out) - sent : 4096;
            ssize_t n = send(s, out + sent, k, 0);
            CHECK(n > 0);
            if (n <= 0) {
                break;
            }
            sent += (size_t)n;
        }
        ssize_t n = recv(s, in + got, sizeof(in) - got, sent < sizeof(out) ? MSG_DONTWAIT : 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue;
        }
        CHECK(n > 0);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    CHECK_EQ(got, ECHO_BYTES);
    CHECK(memcmp(in, out, got) == 0);
    CHECK_EQ(close(s), 0);
    printf("SOCK| tcp echo %lu bytes\n", (unsigned long)got);
}

static void tcp_server(void)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    int one = 1;
    CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    struct sockaddr_in a = ipv4(INADDR_ANY, 7001);
    CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
    CHECK_EQ(listen(l, 4), 0);
    touch(BASE "/listening"); /* Linux's nc connects on it */
    struct sockaddr_in peer;
    socklen_t plen = sizeof(peer);
    int c = accept(l, (struct sockaddr *)&peer, &plen);
    CHECK(c >= 0);
    char line[64] = {0};
    size_t have = 0;
    while (c >= 0 && have < sizeof(line) - 1 && memchr(line, '\n', have) == NULL) {
        ssize_t n = recv(c, line + have, sizeof(line) - 1 - have, 0);
        if (n <= 0) {
            break;
        }
        have += (size_t)n;
    }
    char addr[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &peer.sin_addr, addr, sizeof(addr));
    CHECK(strcmp(addr, "127.0.0.1") == 0);
    CHECK(strncmp(line, "hello-42\n", 9) == 0);
    char reply[64];
    int n = snprintf(reply, sizeof(reply), "rtos-heard-%u-bytes-from-%s\n", (unsigned)have, addr);
    CHECK_EQ(c >= 0 ? send(c, reply, (size_t)n, 0) : -1, n);
    CHECK_EQ(c >= 0 ? close(c) : -1, 0);
    CHECK_EQ(close(l), 0);
    printf("SOCK| tcp server heard %u bytes from %s\n", (unsigned)have, addr);
}

static void udp(void)
{
    int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(a >= 0 && b >= 0);
    struct sockaddr_in aa = loopback(7002), ba = loopback(7003);
    CHECK_EQ(bind(a, (struct sockaddr *)&aa, sizeof(aa)), 0);
    CHECK_EQ(bind(b, (struct sockaddr *)&ba, sizeof(ba)), 0);
    for (int i = 0; i < 20; i++) {
        int from = i % 2 ? b : a, to = i % 2 ? a : b;
        struct sockaddr_in dst = i % 2 ? aa : ba;
        char msg[32], got[64];
        int n = snprintf(msg, sizeof(msg), "datagram %d", i);
        CHECK_EQ(sendto(from, msg, (size_t)n, 0, (struct sockaddr *)&dst, sizeof(dst)), n);
        struct pollfd p = {.fd = to, .events = POLLIN};
        CHECK_EQ(poll(&p, 1, 5000), 1);
        CHECK((p.revents & POLLIN) != 0);
        struct sockaddr_in src;
        socklen_t slen = sizeof(src);
        ssize_t k = recvfrom(to, got, sizeof(got), 0, (struct sockaddr *)&src, &slen);
        CHECK_EQ(k, n);
        CHECK(k == n && memcmp(got, msg, (size_t)n) == 0);
        CHECK_EQ(ntohs(src.sin_port), i % 2 ? 7003 : 7002);
    }
    CHECK_EQ(close(a), 0);
    CHECK_EQ(close(b), 0);
    printf("SOCK| udp 20 datagrams\n");
}

/* One TFTP read (RFC 1350) served to Linux's busybox tftp: its RRQ comes to port 7005, the file (one DATA
 * block of fewer than 512 bytes, which ends the transfer) goes back to its address, its ACK comes back.
 * Options a client adds after the mode (RFC 2347) are ignored, which a client must accept. */
static void udp_linux(void)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(s >= 0);
    struct sockaddr_in a = ipv4(INADDR_ANY, 7005);
    CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    touch(BASE "/udp-listening"); /* Linux's tftp asks on it */
    struct pollfd p = {.fd = s, .events = POLLIN};
    CHECK_EQ(poll(&p, 1, 60000), 1); /* guest time: Linux's script looks for the file every 100 ms */
    unsigned char rrq[516];
    struct sockaddr_in src;
    socklen_t slen = sizeof(src);
    ssize_t k = recvfrom(s, rrq, sizeof(rrq) - 1, 0, (struct sockaddr *)&src, &slen);
    CHECK(k > 4 && rrq[0] == 0 && rrq[1] == 1); /* RRQ */
    rrq[k > 0 ? k : 0] = 0;
    const char *name = (const char *)rrq + 2;
    CHECK(strcmp(name, "greeting") == 0);
    char addr[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &src.sin_addr, addr, sizeof(addr));
    CHECK(strcmp(addr, "127.0.0.1") == 0);
    unsigned char data[4 + 64] = {0, 3, 0, 1}; /* DATA, block 1 */
    int n =
        snprintf((char *)data + 4, sizeof(data) - 4, "rtos-tftp-%s-%d-bytes-from-%s\n", name, (int)k, addr);
    CHECK_EQ(sendto(s, data, (size_t)n + 4, 0, (struct sockaddr *)&src, slen), n + 4);
    CHECK_EQ(poll(&p, 1, 10000), 1);
    unsigned char ack[16];
    struct sockaddr_in from;
    socklen_t flen = sizeof(from);
    k = recvfrom(s, ack, sizeof(ack), 0, (struct sockaddr *)&from, &flen);
    CHECK(k == 4 && ack[0] == 0 && ack[1] == 4 && ack[2] == 0 && ack[3] == 1); /* ACK of block 1 */
    CHECK(from.sin_port == src.sin_port && from.sin_addr.s_addr == src.sin_addr.s_addr);
    CHECK_EQ(close(s), 0);
    printf("SOCK| udp: tftp read of %s by %s:%u, acknowledged\n", name, addr, (unsigned)ntohs(src.sin_port));
}

int main(void)
{
    struct stat st;
    for (int i = 0; stat(BASE "/ready", &st) != 0; i++) {
        if (i == 1200) {
            printf("SOCK| error: no ready in 120 s\n");
            return 1;
        }
        sleep_ms(100);
    }
    tcp_client();
    tcp_server();
    udp();
    udp_linux();
    /* Every call above was a request of the network's session, none refused; files have their own. */
    struct rtmux_linux_stats s;
    CHECK_EQ(rtmux_linux_stats(&s), 0);
    printf("SOCK| stats requests %llu errors %llu sessions %llu bad_frames %llu unknown_tags %llu "
           "bad_replies %llu\n",
           (unsigned long long)s.net.requests, (unsigned long long)s.net.errors,
           (unsigned long long)s.net.sessions, (unsigned long long)s.net.bad_frames,
           (unsigned long long)s.net.unknown_tags, (unsigned long long)s.net.bad_replies);
    CHECK(s.net.requests >= 20);
    CHECK(s.net.sessions >= 1);
    CHECK_EQ(s.net.bad_frames + s.net.unknown_tags + s.net.bad_replies, 0);
    CHECK(s.files.requests > 0);
    touch(BASE "/sockets-done");
    POSIX_TEST_END("linux sockets");
}
