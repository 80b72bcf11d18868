/*
 * rtmux-ping: round trips and throughput through a V-Bus channel whose other side echoes every byte
 * (the rtos's `echo` service), from Linux user space.
 *
 *   rtmux-ping PORT [-n COUNT] [-s SIZE] [-T SECONDS]    COUNT round trips of SIZE bytes
 *   rtmux-ping PORT --bulk [-t SECONDS] [-T SECONDS]     4 KiB writes and reads at the same time
 *   rtmux-ping PORT --hist [-n COUNT] ...                round trips, their distribution too (below)
 *   rtmux-ping --pipe [the options above]                the same through a pipe pair, to and from a
 *                                                        child process echoing every byte: the
 *                                                        reference (make bench) that any Linux program
 *                                                        talking to another process pays
 *
 * PORT is a channel name (opened as /dev/virtio-ports/PORT) or a path (it contains '/'; a terminal is
 * put into raw mode, so a pty or a serial line works too). Every byte sent is a function of its
 * position in the stream (pattern()), so a byte lost, added, changed or moved is found where it comes
 * back. Final line, for the tools to parse:
 *   rtt_us min=A avg=B p99=C max=D n=N          (microseconds, CLOCK_MONOTONIC; p99 nearest-rank)
 *   throughput_MBps tx=A rx=B                   (10^6 bytes per second)
 * With --hist the round trips' line comes after their histogram, on one line:
 *   rtt_hist_ns W C:N C:N ...                   cells of W ns; cell C holds the N round trips in
 *                                               [C*W, (C+1)*W) ns; non-empty cells only, in order
 * Exit status: 0; 1 when a byte came back wrong, the other side closed or was not connected, or
 * nothing moved for the -T timeout (default 5 s); 2 for a usage error. Each failure prints one line
 * saying what and where.
 *
 * One thread and poll(): the port is non-blocking, every read and write may be partial and may be
 * interrupted (EINTR: retried), and writes and reads of one round trip overlap, so a round trip larger
 * than the channel's rings cannot deadlock. A V-Bus port reads as end-of-file and polls POLLHUP while
 * the rtos side has the channel closed: the program waits up to the timeout for it to connect first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define PORT_DIR     "/dev/virtio-ports/"
#define BULK_CHUNK   4096u
#define MAX_SIZE     (1u << 20)
#define MAX_COUNT    10000000u
#define CONNECT_POLL 10   /* ms between checks while the other side is not connected */
#define HIST_CELL_NS 100u /* --hist: the width of a cell */

static const char *port_name = "";

/* Where bytes go out and come back: one file for a port, the two ends of two pipes for --pipe. */
struct link {
    int rfd, wfd;
};

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rtmux-ping: %s: ", port_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void __attribute__((noreturn)) usage(const char *why)
{
    if (why != NULL) {
        fprintf(stderr, "rtmux-ping: %s\n", why);
    }
    fprintf(stderr, "usage: rtmux-ping PORT [-n COUNT] [-s SIZE] [-T SECONDS]\n"
                    "       rtmux-ping PORT --bulk [-t SECONDS] [-T SECONDS]\n"
                    "       rtmux-ping --pipe [-n COUNT] [-s SIZE | --bulk -t SECONDS] [-T SECONDS]\n"
                    "       (--hist: the round trips' histogram too)\n");
    exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The byte at stream position k: its low byte mixed with the higher ones, so that a shift by any
 * multiple of 256 bytes changes the data too. */
static uint8_t pattern(uint64_t k)
{
    return (uint8_t)(k ^ (k >> 8) ^ (k >> 16) ^ (k >> 24) ^ (k >> 32));
}

static void fill(uint8_t *buf, size_t n, uint64_t at)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = pattern(at + i);
    }
}

/* Checks what came back from stream position `at`; fails naming the first wrong byte. */
static void check(const uint8_t *buf, size_t n, uint64_t at)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != pattern(at + i)) {
            fail("byte %" PRIu64 " of the stream came back as 0x%02x, sent 0x%02x", at + i, buf[i],
                 pattern(at + i));
        }
    }
}

static unsigned long parse_number(const char *text, const char *what, unsigned long low, unsigned long high)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 0);
    unsigned long mult = 1;
    if (end != NULL && (*end == 'k' || *end == 'K')) {
        mult = 1024;
        end++;
    }
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v > high / mult || v * mult < low) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%s '%s': expected %lu..%lu", what, text, low, high);
        usage(msg);
    }
    return v * mult;
}

static int open_port(const char *arg)
{
    static char path[PATH_MAX];
    if (strchr(arg, '/') != NULL) {
        snprintf(path, sizeof(path), "%s", arg);
    } else {
        snprintf(path, sizeof(path), "%s%s", PORT_DIR, arg);
    }
    int fd = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fail("cannot open %s: %s", path, strerror(errno));
    }
    if (isatty(fd)) {
        struct termios t;
        if (tcgetattr(fd, &t) == 0) {
            cfmakeraw(&t);
            (void)tcsetattr(fd, TCSANOW, &t);
        }
    }
    return fd;
}

/* poll() until `deadline` (ns): the read side for POLLIN (and POLLHUP), the write side for POLLOUT;
 * their events merged, 0 when the deadline passed. EINTR is retried. */
static short wait_for(struct link l, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t t = now_ns();
        if (t >= deadline) {
            return 0;
        }
        uint64_t ms = (deadline - t + 999999u) / 1000000u;
        struct pollfd p[2] = {{.fd = l.rfd, .events = (short)(events & POLLIN)},
                              {.fd = l.wfd, .events = (short)(events & POLLOUT)}};
        nfds_t n = 2;
        if (l.rfd == l.wfd) {
            p[0].events = events;
            n = 1;
        }
        int rc = poll(p, n, ms > INT_MAX ? INT_MAX : (int)ms);
        if (rc < 0 && errno == EINTR) {
            continue;
        }
        if (rc < 0) {
            fail("poll: %s", strerror(errno));
        }
        if (rc > 0) {
            return (short)(p[0].revents | (n == 2 ? p[1].revents : 0));
        }
    }
}

/* Waits until the other side has the channel open (no POLLHUP), at most timeout_ns. */
static void wait_connected(int fd, uint64_t timeout_ns)
{
    uint64_t deadline = now_ns() + timeout_ns;
    for (;;) {
        short ev = wait_for((struct link){fd, fd}, POLLOUT, deadline);
        if (ev == 0) {
            fail("the other side is not connected (still after %" PRIu64 " s)", timeout_ns / 1000000000u);
        }
        if (ev & (POLLERR | POLLNVAL)) {
            fail("poll reports an error on the port");
        }
        if (!(ev & POLLHUP)) {
            return;
        }
        struct timespec pause = {0, CONNECT_POLL * 1000000L};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
        }
    }
}

/* One non-blocking transfer: bytes moved, 0 when it would block; fails on end-of-file or an error. */
static size_t xfer(int fd, bool out, void *buf, size_t n)
{
    for (;;) {
        ssize_t rc = out ? write(fd, buf, n) : read(fd, buf, n);
        if (rc > 0) {
            return (size_t)rc;
        }
        if (rc == 0 && !out) {
            fail("the other side closed the channel (end of file)");
        }
        if (rc < 0 && errno == EINTR) {
            continue;
        }
        if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        }
        if (rc < 0) {
            fail("%s: %s", out ? "write" : "read", strerror(errno));
        }
        return 0; /* a zero-byte write: try again after poll */
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* COUNT round trips of SIZE bytes; each one's time from its first write to its last byte read. */
static void ping(struct link l, unsigned long count, size_t size, uint64_t timeout_ns, bool hist)
{
    uint8_t *tx = malloc(size), *rx = malloc(size);
    uint64_t *rtt = malloc(count * sizeof(*rtt));
    if (tx == NULL || rx == NULL || rtt == NULL) {
        fail("out of memory");
    }
    uint64_t at = 0;
    for (unsigned long r = 0; r < count; r++) {
        fill(tx, size, at);
        size_t sent = 0, got = 0;
        uint64_t start = now_ns();
        uint64_t deadline = start + timeout_ns;
        while (got < size) {
            short ev = wait_for(l, (short)(POLLIN | (sent < size ? POLLOUT : 0)), deadline);
            if (ev == 0) {
                fail("round trip %lu: nothing moved for %" PRIu64
                     " ms (sent %zu of %zu bytes, %zu came back)",
                     r, timeout_ns / 1000000u, sent, size, got);
            }
            if (ev & (POLLERR | POLLNVAL)) {
                fail("round trip %lu: poll reports an error on the port", r);
            }
            size_t moved = 0;
            if (ev & (POLLIN | POLLHUP)) {
                size_t n = xfer(l.rfd, false, rx + got, size - got);
                if (got + n > sent) {
                    fail("round trip %lu: %zu bytes came back, only %zu were sent", r, got + n, sent);
                }
                got += n;
                moved += n;
            }
            if (sent < size && (ev & POLLOUT)) {
                size_t n = xfer(l.wfd, true, tx + sent, size - sent);
                sent += n;
                moved += n;
            }
            if (moved != 0) {
                deadline = now_ns() + timeout_ns; /* the timeout bounds a stall, not a slow transfer */
            }
        }
        rtt[r] = now_ns() - start;
        check(rx, size, at);
        at += size;
    }
    uint64_t sum = 0;
    for (unsigned long r = 0; r < count; r++) {
        sum += rtt[r];
    }
    qsort(rtt, count, sizeof(*rtt), cmp_u64);
    if (hist) { /* sorted: each cell's round trips are one run */
        printf("rtt_hist_ns %u", HIST_CELL_NS);
        for (unsigned long r = 0; r < count;) {
            uint64_t cell = rtt[r] / HIST_CELL_NS;
            unsigned long n = 0;
            for (; r < count && rtt[r] / HIST_CELL_NS == cell; r++) {
                n++;
            }
            printf(" %" PRIu64 ":%lu", cell, n);
        }
        printf("\n");
    }
    unsigned long p99 = (count * 99u + 99u) / 100u; /* nearest rank: ceil(0.99 n), 1-based */
    printf("rtt_us min=%.1f avg=%.1f p99=%.1f max=%.1f n=%lu\n", (double)rtt[0] / 1e3,
           (double)sum / (double)count / 1e3, (double)rtt[p99 - 1] / 1e3, (double)rtt[count - 1] / 1e3,
           count);
    free(tx);
    free(rx);
    free(rtt);
}

/* Writes 4 KiB chunks for `seconds` while reading what comes back, then reads the rest. */
static void bulk(struct link l, unsigned long seconds, uint64_t timeout_ns)
{
    static uint8_t tx[BULK_CHUNK], rx[BULK_CHUNK];
    uint64_t sent = 0, got = 0;
    size_t txpos = 0; /* bytes of the current chunk already written */
    uint64_t start = now_ns();
    uint64_t stop = start + (uint64_t)seconds * 1000000000u;
    uint64_t tx_end = start, rx_end = start;
    uint64_t deadline = start + timeout_ns;
    bool writing = true;
    fill(tx, BULK_CHUNK, 0);
    while (writing || got < sent) {
        uint64_t until = deadline;
        if (writing && txpos == 0) {
            if (now_ns() >= stop) {
                writing = false; /* only whole chunks: every write the program starts is 4 KiB */
                tx_end = now_ns();
                continue;
            }
            until = stop < deadline ? stop : deadline;
        }
        short ev = wait_for(l, (short)(POLLIN | (writing ? POLLOUT : 0)), until);
        if (ev == 0) {
            if (now_ns() >= deadline) {
                fail("nothing moved for %" PRIu64 " ms (sent %" PRIu64 " bytes, %" PRIu64 " came back)",
                     timeout_ns / 1000000u, sent, got);
            }
            continue; /* the writing time is over */
        }
        if (ev & (POLLERR | POLLNVAL)) {
            fail("poll reports an error on the port");
        }
        size_t moved = 0;
        if (ev & (POLLIN | POLLHUP)) {
            /* At most what is still due: one byte more than that is an error, found by the check. */
            size_t want = got + sizeof(rx) > sent ? (size_t)(sent - got) : sizeof(rx);
            size_t n = xfer(l.rfd, false, rx, want != 0 ? want : 1);
            if (got + n > sent) {
                fail("%" PRIu64 " bytes came back, only %" PRIu64 " were sent", got + n, sent);
            }
            check(rx, n, got);
            got += n;
            moved += n;
            if (n != 0) {
                rx_end = now_ns();
            }
        }
        if (writing && (ev & POLLOUT)) {
            size_t n = xfer(l.wfd, true, tx + txpos, BULK_CHUNK - txpos);
            txpos += n;
            sent += n;
            moved += n;
            if (txpos == BULK_CHUNK) {
                txpos = 0;
                fill(tx, BULK_CHUNK, sent);
            }
        }
        if (moved != 0) {
            deadline = now_ns() + timeout_ns;
        }
    }
    double tx_s = (double)(tx_end - start) / 1e9, rx_s = (double)(rx_end - start) / 1e9;
    printf("rtmux-ping: %" PRIu64 " bytes each way, sent in %.3f s, back in %.3f s\n", sent, tx_s, rx_s);
    printf("throughput_MBps tx=%.2f rx=%.2f\n", tx_s > 0 ? (double)sent / 1e6 / tx_s : 0.0,
           rx_s > 0 ? (double)got / 1e6 / rx_s : 0.0);
}

/* The far end of --pipe: every byte read on `rfd` written back on `wfd`, in order, until end of file. */
static void __attribute__((noreturn)) pipe_echo(int rfd, int wfd)
{
    static uint8_t buf[1u << 16]; /* a pipe's default capacity: one read empties a full pipe */
    for (;;) {
        ssize_t n = read(rfd, buf, sizeof(buf));
        if (n == 0) {
            _exit(0);
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            _exit(1);
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(wfd, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                _exit(1);
            }
            done += w;
        }
    }
}

/* Two pipes to and from a child process running pipe_echo(); our ends non-blocking, as a port is. */
static struct link open_pipes(pid_t *child)
{
    int out[2], back[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(back, O_CLOEXEC) != 0) {
        fail("pipe: %s", strerror(errno));
    }
    fflush(NULL);
    *child = fork();
    if (*child < 0) {
        fail("fork: %s", strerror(errno));
    }
    if (*child == 0) {
        close(out[1]);
        close(back[0]);
        pipe_echo(out[0], back[1]);
    }
    close(out[0]);
    close(back[1]);
    if (fcntl(out[1], F_SETFL, O_NONBLOCK) != 0 || fcntl(back[0], F_SETFL, O_NONBLOCK) != 0) {
        fail("fcntl: %s", strerror(errno));
    }
    return (struct link){.rfd = back[0], .wfd = out[1]};
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"bulk", no_argument, NULL, 'b'},
        {"pipe", no_argument, NULL, 'p'},
        {"hist", no_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long count = 1000, size = 64, seconds = 5, timeout_s = 5;
    bool is_bulk = false, is_pipe = false, size_given = false, count_given = false, time_given = false;
    bool hist = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "n:s:t:T:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            count = parse_number(optarg, "-n", 1, MAX_COUNT);
            count_given = true;
            break;
        case 's':
            size = parse_number(optarg, "-s", 1, MAX_SIZE);
            size_given = true;
            break;
        case 't':
            seconds = parse_number(optarg, "-t", 1, 3600);
            time_given = true;
            break;
        case 'T':
            timeout_s = parse_number(optarg, "-T", 1, 3600);
            break;
        case 'b':
            is_bulk = true;
            break;
        case 'p':
            is_pipe = true;
            break;
        case 'H':
            hist = true;
            break;
        case 'h':
            usage(NULL);
        default:
            usage(NULL);
        }
    }
    if (is_pipe && optind != argc) {
        usage("--pipe takes no PORT");
    }
    if (!is_pipe && optind != argc - 1) {
        usage(optind >= argc ? "PORT is missing" : "one PORT only");
    }
    if (is_bulk && (size_given || count_given)) {
        usage("-n and -s are for round trips; --bulk writes 4 KiB chunks for -t seconds");
    }
    if (is_bulk && hist) {
        usage("--hist is for round trips");
    }
    if (!is_bulk && time_given) {
        usage("-t is for --bulk");
    }
    uint64_t timeout_ns = (uint64_t)timeout_s * 1000000000u;
    struct link l;
    pid_t child = -1;
    if (is_pipe) {
        port_name = "pipe";
        (void)signal(SIGPIPE, SIG_IGN); /* a write to a dead echo fails with EPIPE, said by fail() */
        l = open_pipes(&child);
    } else {
        port_name = argv[optind];
        int fd = open_port(port_name);
        wait_connected(fd, timeout_ns);
        l = (struct link){.rfd = fd, .wfd = fd};
    }
    if (is_bulk) {
        bulk(l, seconds, timeout_ns);
    } else {
        ping(l, count, size, timeout_ns, hist);
    }
    close(l.wfd); /* the echo child reads end of file and exits */
    if (l.rfd != l.wfd) {
        close(l.rfd);
    }
    int status = 0;
    if (child > 0 &&
        (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        fail("the echo process failed (status 0x%x)", status);
    }
    return 0;
}
