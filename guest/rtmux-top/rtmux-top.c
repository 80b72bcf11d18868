/*
 * rtmux-top: the rtos's threads seen from Linux, refreshed like top(1).
 *
 *   rtmux-top [-b] [-d SECONDS] [-n COUNT] [-t NAME|ID] [-p PORT] [-T SECONDS]
 *
 * Asks the rtos's thread statistics server (rtos/threadstat.h) on the V-Bus channel rtmux-threads for a
 * snapshot every -d seconds (1 by default) and prints a table: each thread's id, name, base/effective
 * priority, state, its share of the CPU over the last interval (since the rtos's boot for the first
 * table, or since the thread's start when it is new), its wake-ups, its worst wake-up latency in
 * microseconds and its stack's high-water mark against its size; above it the rtos's uptime, its idle
 * share, interrupts a second and the requests its server refused. -b (batch): no screen clearing, for
 * a log or a test; -n: COUNT tables, then exit (0: for ever, the default); -t: one thread, by name, or
 * by id when all digits; -p: another port (a channel name, opened as /dev/virtio-ports/PORT, or a path:
 * it contains '/'; a terminal is put into raw mode); -T: how long a reply may take (5 s).
 *
 * The protocol (docs/rtmux-top.md), one line each way per request:
 *   -> threads 1 TAG all | threads 1 TAG id ID | threads 1 TAG name NAME
 *   <- threads 1 TAG ok N, system ..., server ..., N thread lines, end TAG
 *   <- threads 1 TAG error CODE TEXT
 * Every reply is checked field by field before it is used: a line that is not what the protocol says
 * ends the program with the line shown (exit 1); lines of another TAG (a reply to an earlier program
 * that did not wait for it) are skipped.
 *
 * Exit status: 0; 1 no such port (the configuration lacks [services] threads), the port is busy or
 * closed at the rtos's end, no reply in time, a malformed reply, an unknown thread (-t); 2 usage.
 * Each failure prints one line on stderr saying what.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define PORT_DIR     "/dev/virtio-ports/"
#define DEFAULT_PORT "rtmux-threads"
#define VERSION      1
#define MAX_THREADS  64u  /* RT_THREADS_MAX: a reply never lists more */
#define LINE_MAX     256u /* RT_CHAN_MSG_MAX: a reply's line, its newline included */
#define NAME_MAX_LEN 31u
#define SKIP_MAX     4096u /* lines of other tags skipped before giving up */
#define CONNECT_POLL 100   /* ms between looks while the rtos's end is closed */

struct thread {
    uint32_t id;
    unsigned base, prio;
    char state[8];
    uint64_t cpu_ns, switches, wakeups, worst_ns, stack_used, stack_size;
    char name[NAME_MAX_LEN + 1u];
};

struct snapshot {
    uint64_t uptime_ns, idle_ns, irqs;
    unsigned listed, unlisted;
    uint64_t requests, refused, abandoned;
    unsigned n;
    struct thread t[MAX_THREADS];
};

static const char *port_path = "";
static int port_fd = -1;
static char inbuf[2 * LINE_MAX];
static size_t inlen;

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rtmux-top: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void __attribute__((noreturn)) usage(const char *why)
{
    if (why != NULL) {
        fprintf(stderr, "rtmux-top: %s\n", why);
    }
    fprintf(stderr, "usage: rtmux-top [-b] [-d SECONDS] [-n COUNT] [-t NAME|ID] [-p PORT] [-T SECONDS]\n");
    exit(2);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A duration in seconds, 0.01 to 3600, as milliseconds. */
static int64_t seconds_arg(const char *s, const char *what)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0.01 && v <= 3600.0)) {
        fprintf(stderr, "rtmux-top: %s '%s' must be a number of seconds from 0.01 to 3600\n", what, s);
        usage(NULL);
    }
    return (int64_t)(v * 1000.0 + 0.5);
}

/* A whole decimal number without sign, fitting in 64 bits (max: its largest value). */
static bool u64_field(const char *s, uint64_t max, uint64_t *out)
{
    if (*s == '\0' || strlen(s) > 20u) {
        return false;
    }
    uint64_t v = 0;
    for (const char *c = s; *c != '\0'; c++) {
        if (*c < '0' || *c > '9') {
            return false;
        }
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10u) {
            return false;
        }
        v = v * 10u + d;
    }
    if (v > max) {
        return false;
    }
    *out = v;
    return true;
}

static void open_port(const char *arg)
{
    static char path[300];
    if (strchr(arg, '/') != NULL) {
        snprintf(path, sizeof(path), "%s", arg);
    } else {
        if (strlen(arg) == 0 || strlen(arg) > 64) {
            usage("the port must be a channel name (1..64 characters) or a path");
        }
        snprintf(path, sizeof(path), PORT_DIR "%s", arg);
    }
    port_path = path;
    port_fd = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (port_fd < 0) {
        int e = errno;
        if (e == ENOENT && strchr(arg, '/') == NULL) {
            fail("%s: no such port: this system's configuration does not offer the rtos's threads (its "
                 "[services] needs threads = true; docs/configuration.md)",
                 path);
        }
        if (e == EBUSY) {
            fail("%s: the port is open in another program (a V-Bus port has one at a time)", path);
        }
        fail("%s: %s", path, strerror(e));
    }
    struct termios tio;
    if (tcgetattr(port_fd, &tio) == 0) { /* a pty or a serial line: bytes as they are */
        cfmakeraw(&tio);
        (void)tcsetattr(port_fd, TCSANOW, &tio);
    }
}

/* Waits until `fd` has one of `events` or the deadline passes; returns poll's revents (0: time's up).
 * POLLHUP (the rtos's end closed) is returned as it is: the caller decides. */
static short wait_fd(short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            return 0;
        }
        struct pollfd p = {.fd = port_fd, .events = events};
        int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR) {
            fail("%s: poll: %s", port_path, strerror(errno));
        }
        if (r > 0) {
            return p.revents;
        }
    }
}

static void __attribute__((noreturn)) not_served(void)
{
    fail("%s: the rtos does not serve the thread statistics (its end of the channel is closed: the rtos "
         "application does not run the server, or the rtos has stopped)",
         port_path);
}

/* Sends the whole request, waiting for the rtos's end to be open (up to the deadline). */
static void send_request(const char *req, int64_t deadline)
{
    size_t len = strlen(req), done = 0;
    while (done < len) {
        ssize_t w = write(port_fd, req + done, len - done);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            fail("%s: write: %s", port_path, strerror(errno));
        }
        short ev = wait_fd(POLLOUT, deadline);
        if (ev == 0) {
            if (done == 0) {
                not_served();
            }
            fail("%s: the rtos did not take the request within the deadline", port_path);
        }
        if ((ev & POLLOUT) == 0 && (ev & (POLLHUP | POLLERR)) != 0) {
            /* Closed at the rtos's end: it may still be starting; look again until the deadline. */
            struct timespec pause = {0, CONNECT_POLL * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
}

/* The next line of the reply into `line` (without its newline, NUL-terminated), by the deadline. */
static void read_line(char *line, int64_t deadline, int64_t timeout_ms)
{
    for (;;) {
        char *nl = memchr(inbuf, '\n', inlen);
        if (nl != NULL && (size_t)(nl - inbuf) < LINE_MAX) {
            size_t n = (size_t)(nl - inbuf);
            memcpy(line, inbuf, n);
            line[n] = '\0';
            inlen -= n + 1u;
            memmove(inbuf, nl + 1, inlen);
            return;
        }
        if (nl != NULL || inlen >= LINE_MAX) {
            inbuf[40] = '\0';
            fail("%s: malformed reply: a line longer than %u bytes ('%s...')", port_path, LINE_MAX - 1u,
                 inbuf);
        }
        ssize_t r = read(port_fd, inbuf + inlen, sizeof(inbuf) - inlen);
        if (r > 0) {
            inlen += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            fail("%s: read: %s", port_path, strerror(errno));
        }
        /* r == 0: end of file, the rtos's end closed (a V-Bus port) or the other side gone (a pty) */
        short ev = r == 0 ? POLLHUP : wait_fd(POLLIN, deadline);
        if (ev == 0) {
            fail("%s: no reply from the rtos within %.1f s (its server runs below every other rtos thread: "
                 "a busy rtos answers late; -T gives it longer)",
                 port_path, (double)timeout_ms / 1000.0);
        }
        if ((ev & POLLIN) == 0 && (ev & (POLLHUP | POLLERR)) != 0) {
            if (now_ms() >= deadline) {
                not_served();
            }
            struct timespec pause = {0, CONNECT_POLL * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
}

/* Splits `line` into at most `max` space-separated words (in place); returns how many; the last word
 * takes the rest of the line when `rest` is set. */
static unsigned split(char *line, char **w, unsigned max, bool rest)
{
    unsigned n = 0;
    char *p = line;
    while (*p != '\0' && n < max) {
        if (rest && n == max - 1u) {
            w[n++] = p;
            break;
        }
        w[n++] = p;
        char *sp = strchr(p, ' ');
        if (sp == NULL) {
            break;
        }
        *sp = '\0';
        p = sp + 1;
    }
    return n;
}

static void __attribute__((noreturn)) malformed(const char *line, const char *expected)
{
    fail("%s: malformed reply from the rtos: '%.80s' (expected %s)", port_path, line, expected);
}

static bool printable(const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s < ' ' || *s > '~') {
            return false;
        }
    }
    return true;
}

static void parse_thread(char *line, struct thread *t)
{
    char copy[LINE_MAX];
    snprintf(copy, sizeof(copy), "%s", line);
    char *w[12];
    uint64_t v[10];
    static const uint64_t max[10] = {UINT32_MAX, 255,        255,        0,          UINT64_MAX,
                                     UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    const char *what =
        "'thread ID BASE PRIO STATE CPU_NS SWITCHES WAKEUPS WORST_NS STACK_USED STACK_SIZE NAME'";
    if (split(line, w, 12, true) != 12 || strcmp(w[0], "thread") != 0) {
        malformed(copy, what);
    }
    for (unsigned i = 0; i < 10; i++) {
        if (i == 3) {
            continue;
        }
        if (!u64_field(w[1 + i], max[i], &v[i])) {
            malformed(copy, what);
        }
    }
    if (strcmp(w[4], "running") != 0 && strcmp(w[4], "ready") != 0 && strcmp(w[4], "blocked") != 0) {
        malformed(copy, "a state: running, ready or blocked");
    }
    if (strlen(w[11]) == 0 || strlen(w[11]) > NAME_MAX_LEN || !printable(w[11])) {
        malformed(copy, "a name of 1 to 31 printable characters");
    }
    t->id = (uint32_t)v[0];
    t->base = (unsigned)v[1];
    t->prio = (unsigned)v[2];
    snprintf(t->state, sizeof(t->state), "%s", w[4]);
    t->cpu_ns = v[4];
    t->switches = v[5];
    t->wakeups = v[6];
    t->worst_ns = v[7];
    t->stack_used = v[8];
    t->stack_size = v[9];
    snprintf(t->name, sizeof(t->name), "%s", w[11]);
}

/* One request and its reply, checked, into *s. */
static void ask(const char *what, uint32_t tag, int64_t timeout_ms, struct snapshot *s)
{
    char req[128], line[LINE_MAX], copy[LINE_MAX], tagtxt[16];
    snprintf(req, sizeof(req), "threads %d %" PRIu32 " %s\n", VERSION, tag, what);
    snprintf(tagtxt, sizeof(tagtxt), "%" PRIu32, tag);
    int64_t deadline = now_ms() + timeout_ms;
    send_request(req, deadline);
    char *w[6];
    unsigned skipped = 0, n = 0;
    /* The header: this request's; other tags' lines (an earlier program's reply) are skipped. */
    for (;;) {
        read_line(line, deadline, timeout_ms);
        snprintf(copy, sizeof(copy), "%s", line);
        n = split(line, w, 6, true);
        if (n >= 4 && strcmp(w[0], "threads") == 0 && strcmp(w[2], tagtxt) == 0) {
            if (strcmp(w[1], "1") != 0) {
                malformed(copy, "a reply of version 1");
            }
            break;
        }
        if (++skipped > SKIP_MAX) {
            fail("%s: no reply to this request among %u lines from the rtos", port_path, SKIP_MAX);
        }
    }
    if (strcmp(w[3], "error") == 0) {
        if (n != 6 || !printable(w[5])) {
            malformed(copy, "'threads 1 TAG error CODE TEXT'");
        }
        if (strcmp(w[4], "unknown-thread") == 0) {
            fail("%s", w[5]);
        }
        fail("the rtos refused the request '%s' (%s): %s", what, w[4], w[5]);
    }
    uint64_t count = 0;
    if (n != 5 || strcmp(w[3], "ok") != 0 || !u64_field(w[4], MAX_THREADS, &count)) {
        malformed(copy, "'threads 1 TAG ok N' (N at most 64) or 'threads 1 TAG error CODE TEXT'");
    }
    s->n = (unsigned)count;
    /* system UPTIME_NS IDLE_NS IRQS THREADS UNLISTED */
    read_line(line, deadline, timeout_ms);
    snprintf(copy, sizeof(copy), "%s", line);
    char *f[7];
    uint64_t v[5];
    if (split(line, f, 7, false) != 6 || strcmp(f[0], "system") != 0 || !u64_field(f[1], UINT64_MAX, &v[0]) ||
        !u64_field(f[2], UINT64_MAX, &v[1]) || !u64_field(f[3], UINT64_MAX, &v[2]) ||
        !u64_field(f[4], MAX_THREADS, &v[3]) || !u64_field(f[5], UINT32_MAX, &v[4]) || v[1] > v[0]) {
        malformed(copy, "'system UPTIME_NS IDLE_NS IRQS THREADS UNLISTED' (idle at most the uptime)");
    }
    s->uptime_ns = v[0];
    s->idle_ns = v[1];
    s->irqs = v[2];
    s->listed = (unsigned)v[3];
    s->unlisted = (unsigned)v[4];
    /* server REQUESTS REFUSED ABANDONED */
    read_line(line, deadline, timeout_ms);
    snprintf(copy, sizeof(copy), "%s", line);
    if (split(line, f, 7, false) != 4 || strcmp(f[0], "server") != 0 || !u64_field(f[1], UINT64_MAX, &v[0]) ||
        !u64_field(f[2], UINT64_MAX, &v[1]) || !u64_field(f[3], UINT64_MAX, &v[2])) {
        malformed(copy, "'server REQUESTS REFUSED ABANDONED'");
    }
    s->requests = v[0];
    s->refused = v[1];
    s->abandoned = v[2];
    for (unsigned i = 0; i < s->n; i++) {
        read_line(line, deadline, timeout_ms);
        parse_thread(line, &s->t[i]);
        for (unsigned j = 0; j < i; j++) {
            if (s->t[j].id == s->t[i].id) {
                fail("%s: malformed reply from the rtos: thread id %" PRIu32 " listed twice", port_path,
                     s->t[i].id);
            }
        }
    }
    read_line(line, deadline, timeout_ms);
    char end[32];
    snprintf(end, sizeof(end), "end %s", tagtxt);
    if (strcmp(line, end) != 0) {
        malformed(line, end);
    }
}

/* The thread of `prev` with `id`, or NULL. */
static const struct thread *find(const struct snapshot *prev, uint32_t id)
{
    for (unsigned i = 0; prev != NULL && i < prev->n; i++) {
        if (prev->t[i].id == id) {
            return &prev->t[i];
        }
    }
    return NULL;
}

/* Most urgent first (effective priority), then by id: the order the scheduler sees them in. */
static int by_priority(const void *a, const void *b)
{
    const struct thread *x = a, *y = b;
    if (x->prio != y->prio) {
        return x->prio > y->prio ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static double share(uint64_t part, uint64_t whole)
{
    return whole == 0 ? 0.0 : 100.0 * (double)part / (double)whole;
}

/* One table: `cur` against `prev` (NULL: since the rtos's boot). */
static void show(struct snapshot *cur, const struct snapshot *prev, bool batch)
{
    uint64_t span =
        prev != NULL && cur->uptime_ns > prev->uptime_ns ? cur->uptime_ns - prev->uptime_ns : cur->uptime_ns;
    bool since_boot = prev == NULL || cur->uptime_ns <= prev->uptime_ns; /* the rtos restarted: anew */
    uint64_t idle = since_boot ? cur->idle_ns
                               : cur->idle_ns - (prev->idle_ns < cur->idle_ns ? prev->idle_ns : cur->idle_ns);
    uint64_t irqs = since_boot ? cur->irqs : cur->irqs - (prev->irqs < cur->irqs ? prev->irqs : cur->irqs);
    qsort(cur->t, cur->n, sizeof(cur->t[0]), by_priority);
    if (!batch) {
        fputs("\033[H\033[2J", stdout);
    }
    printf("rtmux-top: rtos up %.3f s, %u threads", (double)cur->uptime_ns / 1e9, cur->listed);
    if (cur->unlisted > 0) {
        printf(" (+%u not listed)", cur->unlisted);
    }
    printf(", idle %.1f %%, %.0f interrupts/s, %" PRIu64 " refused requests\n", share(idle, span),
           span == 0 ? 0.0 : (double)irqs * 1e9 / (double)span, cur->refused);
    printf("%5s %-16s %7s %-7s %6s %9s %10s %13s\n", "ID", "NAME", "PRIO", "STATE", "CPU%", "WAKEUPS",
           "WORST-us", "STACK");
    for (unsigned i = 0; i < cur->n; i++) {
        const struct thread *t = &cur->t[i];
        const struct thread *old = since_boot ? NULL : find(prev, t->id);
        uint64_t cpu = old != NULL && old->cpu_ns <= t->cpu_ns ? t->cpu_ns - old->cpu_ns : t->cpu_ns;
        double pct = share(cpu, span);
        char prio[16], stack[48];
        snprintf(prio, sizeof(prio), "%u/%u", t->base, t->prio);
        snprintf(stack, sizeof(stack), "%" PRIu64 "/%" PRIu64, t->stack_used, t->stack_size);
        printf("%5" PRIu32 " %-16s %7s %-7s %6.1f %9" PRIu64 " %10.3f %13s\n", t->id, t->name, prio, t->state,
               pct > 100.0 ? 100.0 : pct, t->wakeups, (double)t->worst_ns / 1000.0, stack);
    }
    if (batch) {
        putchar('\n');
    }
    fflush(stdout);
}

int main(int argc, char *argv[])
{
    int64_t delay_ms = 1000, timeout_ms = 5000;
    uint64_t count = 0;
    bool batch = false;
    const char *port = DEFAULT_PORT, *one = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "bd:n:t:p:T:h")) != -1) {
        switch (opt) {
        case 'b':
            batch = true;
            break;
        case 'd':
            delay_ms = seconds_arg(optarg, "-d");
            break;
        case 'T':
            timeout_ms = seconds_arg(optarg, "-T");
            break;
        case 'n':
            if (!u64_field(optarg, 1000000000u, &count)) {
                usage("-n COUNT must be a whole number (0: for ever)");
            }
            break;
        case 't':
            one = optarg;
            break;
        case 'p':
            port = optarg;
            break;
        case 'h':
            usage(NULL);
        default:
            usage(NULL);
        }
    }
    if (optind != argc) {
        usage("no arguments besides the options");
    }
    char what[80];
    if (one == NULL) {
        snprintf(what, sizeof(what), "all");
    } else {
        uint64_t id = 0;
        size_t len = strlen(one);
        if (u64_field(one, UINT32_MAX - 1u, &id)) {
            snprintf(what, sizeof(what), "id %" PRIu64, id);
        } else if (len == 0 || len > NAME_MAX_LEN || !printable(one)) {
            usage("-t NAME: a thread's name is 1 to 31 printable characters (or an ID: digits)");
        } else {
            snprintf(what, sizeof(what), "name %s", one);
        }
    }
    open_port(port);
    /* Tags differ between runs, so that a reply left from an earlier run is told apart. */
    uint32_t tag = (uint32_t)(((uint64_t)getpid() * 100000u + (uint64_t)now_ms() % 100000u) % 1000000000u);
    static struct snapshot snaps[2];
    struct snapshot *prev = NULL;
    for (uint64_t i = 0; count == 0 || i < count; i++) {
        struct snapshot *cur = &snaps[i % 2u];
        int64_t started = now_ms();
        ask(what, tag++, timeout_ms, cur);
        show(cur, prev, batch);
        prev = cur;
        if (count != 0 && i + 1u == count) {
            break;
        }
        int64_t left = started + delay_ms - now_ms();
        if (left > 0) {
            struct timespec pause = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
            while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
            }
        }
    }
    return 0;
}
