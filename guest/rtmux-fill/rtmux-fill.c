/*
 * rtmux-fill: fills a V-Bus channel whose other side echoes (the rtos's `echo` service) until nothing
 * more fits either way, then reads everything back: a full ring in both directions, nothing lost.
 *
 *   rtmux-fill PORT [-n BYTES] [-t SECONDS] [--nonblock] [--no-drain]
 *
 * Writes BYTES (default 1 MiB) in 4 KiB writes and reads nothing until the port stops taking them:
 * blocking (the default), a write still waiting after -t seconds (default 2) is interrupted by an
 * alarm; --nonblock, a write fails with EAGAIN, and poll() must then not report POLLOUT. The rtos's
 * echo has by then filled the way back and waits itself. Unless --no-drain, it then reads until every
 * byte written came back, each checked against its position in the stream. Output lines:
 *   fill: wrote N bytes, then the write blocked          (or: then EAGAIN, no POLLOUT | never blocked)
 *   fill: read back N bytes in order
 * Exit status 0; 1 when a byte came back wrong, the port closed, nothing moved for 10 s, or the
 * non-blocking port reported POLLOUT while refusing a write; 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK   4096u
#define STALL_S 10

static uint8_t byte_at(uint64_t k)
{
    uint64_t x = k * 0x9e3779b97f4a7c15ull;
    return (uint8_t)((x >> 56) ^ k);
}

static void __attribute__((noreturn)) die(const char *what)
{
    fprintf(stderr, "rtmux-fill: %s\n", what);
    exit(1);
}

static void on_alarm(int sig)
{
    (void)sig; /* only interrupts the blocked write */
}

int main(int argc, char **argv)
{
    const char *port = NULL;
    uint64_t total = 1u << 20;
    unsigned block_s = 2;
    bool nonblock = false, drain = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            total = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            block_s = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--nonblock") == 0) {
            nonblock = true;
        } else if (strcmp(argv[i], "--no-drain") == 0) {
            drain = false;
        } else if (argv[i][0] != '-' && port == NULL) {
            port = argv[i];
        } else {
            port = NULL;
            break;
        }
    }
    if (port == NULL || total == 0 || block_s == 0) {
        fprintf(stderr, "usage: rtmux-fill PORT [-n BYTES] [-t SECONDS] [--nonblock] [--no-drain]\n");
        return 2;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s%s", strchr(port, '/') != NULL ? "" : "/dev/virtio-ports/", port);
    int fd = open(path, O_RDWR | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
    if (fd < 0) {
        die("cannot open the port");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm; /* no SA_RESTART: the write returns EINTR */
    sigaction(SIGALRM, &sa, NULL);

    static uint8_t buf[CHUNK];
    uint64_t wrote = 0;
    const char *how = "never blocked";
    while (wrote < total) {
        size_t n = total - wrote < CHUNK ? (size_t)(total - wrote) : CHUNK;
        for (size_t i = 0; i < n; i++) {
            buf[i] = byte_at(wrote + i);
        }
        if (!nonblock) {
            alarm(block_s);
        }
        ssize_t rc = write(fd, buf, n);
        int err = errno;
        alarm(0);
        if (rc > 0) {
            wrote += (uint64_t)rc;
            continue;
        }
        if (rc < 0 && err == EINTR && !nonblock) {
            how = "then the write blocked";
            break;
        }
        if (rc < 0 && err == EAGAIN && nonblock) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, 0) > 0 && (p.revents & POLLOUT)) {
                die("the port refused a write (EAGAIN) but poll reports POLLOUT");
            }
            how = "then EAGAIN, no POLLOUT";
            break;
        }
        die(rc == 0 ? "write returned 0" : "write failed");
    }
    printf("fill: wrote %" PRIu64 " bytes, %s\n", wrote, how);
    fflush(stdout);
    if (!drain) {
        return 0;
    }
    if (!nonblock && fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        die("cannot make the port non-blocking");
    }
    uint64_t got = 0;
    while (got < wrote) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, STALL_S * 1000);
        if (rc == 0) {
            fprintf(stderr, "rtmux-fill: nothing came back for %d s after %" PRIu64 " of %" PRIu64 " bytes\n",
                    STALL_S, got, wrote);
            return 1;
        }
        if (rc < 0 && errno == EINTR) {
            continue;
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0) {
            die("the other side closed the channel");
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                continue;
            }
            die("read failed");
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != byte_at(got + (uint64_t)i)) {
                fprintf(stderr, "rtmux-fill: byte %" PRIu64 " came back as 0x%02x, sent 0x%02x\n",
                        got + (uint64_t)i, buf[i], byte_at(got + (uint64_t)i));
                return 1;
            }
        }
        got += (uint64_t)n;
    }
    if (got != wrote) {
        die("more bytes came back than were written");
    }
    printf("fill: read back %" PRIu64 " bytes in order\n", got);
    return 0;
}
