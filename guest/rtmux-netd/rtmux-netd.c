/*
 * rtmux-netd: Linux's sockets for rtos threads. It reads the rtos's requests from a V-Bus channel
 * (lib/netproto.h: rtmux-net, framed as 9P), carries each out on a Linux socket of its own, and answers.
 *
 *   rtmux-netd PORT        PORT: a channel name (/dev/virtio-ports/PORT) or a path (contains '/')
 *   rtmux-netd --fd N      the channel is descriptor N, already open (tests: one end of a socket pair)
 *   options: -v            one line on stderr per request that failed, and each session's start
 *
 * It serves one connection: it waits for the rtos to open its end (a V-Bus port polls POLLHUP until
 * then), serves it until end of file (the rtos closed, or reopened after a reply it refused), and exits
 * 0; Linux's supervisor starts it again. It exits 1 when the rtos's stream loses its framing (a frame
 * size out of range: nothing after it can be trusted) or the channel fails, 2 for a usage error.
 *
 * Design: one thread and poll(). Every Linux socket is non-blocking; a request that cannot be done yet
 * (a recv without data, an accept without a connection, a send into a full buffer, a connect under way,
 * a poll with nothing ready) waits in a table, with its own deadline (its wait[4], at most
 * NETP_WAIT_MAX_MS), and is tried again whenever poll() says one of its sockets changed, or answered
 * when its deadline comes. So a request waiting never holds up another, whatever socket it is on, and
 * the daemon has no locks and no thread to lose. Requests on one socket are done in the order they came.
 *
 * The rtos is not trusted either (a bug there must not break this): every field of every request is
 * checked before use, a request it cannot use is answered Rlerror, and every table and buffer is
 * bounded (NETP_SOCKETS_MAX sockets, PENDING_MAX waiting requests, OUT_HIGH bytes of answers before
 * it stops reading requests until the rtos reads its answers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/netproto.h"

#define PORT_DIR    "/dev/virtio-ports/"
#define PENDING_MAX 128u           /* requests waiting at once (the rtos has at most 64 in flight) */
#define OUT_HIGH    (256u * 1024u) /* answers not yet taken by the rtos: above, no request is read */
#define IN_CAP      (2u * NETP_MSIZE)
#define CONNECT_POLL \
    100 /* ms between looks while the rtos has not opened its end yet: ten a second, as rtmux-portwait */

_Static_assert(NETP_POLLIN == POLLIN && NETP_POLLPRI == POLLPRI && NETP_POLLOUT == POLLOUT &&
                   NETP_POLLERR == POLLERR && NETP_POLLHUP == POLLHUP && NETP_POLLNVAL == POLLNVAL,
               "rtmux-net's poll bits are Linux's");

static bool verbose;

/* --------------------------------------------------------------------------------------- the state */

struct sock {
    int fd; /* -1: free */
    uint32_t sid;
    uint8_t type;    /* NETP_STREAM, NETP_DGRAM */
    bool connecting; /* a connect under way (EINPROGRESS) whose outcome nobody has taken yet */
};

struct pend {
    bool used;
    uint16_t tag;
    uint8_t type; /* the T type */
    uint32_t sid;
    int64_t deadline; /* ms, CLOCK_MONOTONIC */
    uint64_t seq;     /* arrival order */
    uint32_t flags, count;
    bool to;
    struct sockaddr_in addr;
    uint8_t *data; /* Tsend's bytes (malloc), `done` of them sent so far */
    uint32_t done;
    uint16_t n; /* Tpoll */
    uint32_t psid[NETP_POLL_MAX];
    uint16_t pev[NETP_POLL_MAX];
};

static struct {
    int fd;
    bool up; /* Tversion agreed */
    uint32_t msize, data_max;
    uint32_t sid_gen;
    struct sock socks[NETP_SOCKETS_MAX];
    struct pend pend[PENDING_MAX];
    uint64_t seq;
    uint8_t in[IN_CAP];
    size_t in_len;
    uint8_t *out;
    size_t out_head, out_len, out_cap;
    uint64_t requests, failed, refused;
} d;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rtmux-netd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ------------------------------------------------------------------------------------------ answers */

static void out_room(size_t n)
{
    if (d.out_head > 0 && d.out_head == d.out_len) {
        d.out_head = d.out_len = 0;
    }
    if (d.out_len + n <= d.out_cap) {
        return;
    }
    if (d.out_head > 0) { /* move what is left to the front first */
        memmove(d.out, d.out + d.out_head, d.out_len - d.out_head);
        d.out_len -= d.out_head;
        d.out_head = 0;
    }
    if (d.out_len + n > d.out_cap) {
        size_t cap = d.out_cap == 0 ? 65536 : d.out_cap;
        while (cap < d.out_len + n) {
            cap *= 2;
        }
        uint8_t *p = realloc(d.out, cap);
        if (p == NULL) {
            say("out of memory for answers");
            exit(1);
        }
        d.out = p;
        d.out_cap = cap;
    }
}

/* An answer being built: its bytes go straight into the output buffer. */
struct w {
    size_t at; /* where its header starts in d.out */
};

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void w_begin(struct w *w, uint8_t type, uint16_t tag, size_t most)
{
    out_room(NETP_HDR + most);
    w->at = d.out_len;
    d.out[d.out_len + 4] = type;
    put_le(d.out + d.out_len + 5, tag, 2);
    d.out_len += NETP_HDR;
}

static void w_int(uint64_t v, unsigned n)
{
    put_le(d.out + d.out_len, v, n);
    d.out_len += n;
}

static void w_bytes(const void *p, size_t n)
{
    memcpy(d.out + d.out_len, p, n);
    d.out_len += n;
}

static void w_addr(const struct sockaddr_in *a)
{
    w_bytes(&a->sin_addr.s_addr, 4);
    w_bytes(&a->sin_port, 2);
}

static void w_end(struct w *w)
{
    put_le(d.out + w->at, d.out_len - w->at, 4);
}

static void reply_empty(uint8_t type, uint16_t tag)
{
    struct w w;
    w_begin(&w, (uint8_t)(type + 1), tag, 0);
    w_end(&w);
}

static void reply_err(uint16_t tag, int err, uint8_t type)
{
    struct w w;
    w_begin(&w, NETP_RLERROR, tag, 4);
    w_int((uint32_t)err, 4);
    w_end(&w);
    d.failed++;
    if (verbose) {
        say("request type %u tag %u: %s", type, tag, strerror(err));
    }
}

/* A request the daemon refuses (the rtos sent something it cannot use). */
static void refuse(uint16_t tag, int err, uint8_t type)
{
    d.refused++;
    reply_err(tag, err, type);
}

/* -------------------------------------------------------------------------------------- the request */

struct r {
    const uint8_t *p;
    size_t len, pos;
    bool bad;
};

static uint64_t r_int(struct r *r, unsigned n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        v |= (uint64_t)r->p[r->pos + i] << (8 * i);
    }
    r->pos += n;
    return v;
}

static uint8_t r_u8(struct r *r)
{
    return (uint8_t)r_int(r, 1);
}

static uint16_t r_u16(struct r *r)
{
    return (uint16_t)r_int(r, 2);
}

static uint32_t r_u32(struct r *r)
{
    return (uint32_t)r_int(r, 4);
}

/* addr[4] port[2], in network byte order as they travel */
static void r_addr(struct r *r, struct sockaddr_in *a)
{
    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    if (r->bad || 6 > r->len - r->pos) {
        r->bad = true;
        return;
    }
    memcpy(&a->sin_addr.s_addr, r->p + r->pos, 4);
    memcpy(&a->sin_port, r->p + r->pos + 4, 2);
    r->pos += 6;
}

/* -------------------------------------------------------------------------------------- the sockets */

static struct sock *sock_of(uint32_t sid)
{
    uint32_t i = sid & 0xFFu;
    if (i == 0 || i > NETP_SOCKETS_MAX) {
        return NULL;
    }
    struct sock *s = &d.socks[i - 1];
    return s->fd >= 0 && s->sid == sid ? s : NULL;
}

static struct sock *sock_new(int fd, uint8_t type)
{
    for (unsigned i = 0; i < NETP_SOCKETS_MAX; i++) {
        struct sock *s = &d.socks[i];
        if (s->fd < 0) {
            d.sid_gen = (d.sid_gen + 1) & 0xFFFFFFu;
            *s = (struct sock){.fd = fd, .type = type, .sid = d.sid_gen << 8 | (i + 1)};
            return s;
        }
    }
    return NULL;
}

static bool sock_room(void)
{
    for (unsigned i = 0; i < NETP_SOCKETS_MAX; i++) {
        if (d.socks[i].fd < 0) {
            return true;
        }
    }
    return false;
}

/* What the rtos may reach: every address and port, for now. The system configuration's [services]
 * will narrow it (a list of addresses and ports per use); this is the one place to check it. */
enum use { USE_BIND, USE_CONNECT, USE_SENDTO };

static bool allowed(enum use use, const struct sockaddr_in *a)
{
    (void)use;
    (void)a;
    return true;
}

/* ------------------------------------------------------------------------------ waiting requests */

static void pend_free(struct pend *p)
{
    free(p->data);
    memset(p, 0, sizeof(*p));
}

static struct pend *pend_new(uint8_t type, uint16_t tag, uint32_t sid, uint32_t wait_ms)
{
    for (unsigned i = 0; i < PENDING_MAX; i++) {
        struct pend *p = &d.pend[i];
        if (!p->used) {
            if (wait_ms > NETP_WAIT_MAX_MS) {
                wait_ms = NETP_WAIT_MAX_MS;
            }
            memset(p, 0, sizeof(*p));
            *p = (struct pend){.used = true,
                               .type = type,
                               .tag = tag,
                               .sid = sid,
                               .deadline = now_ms() + wait_ms,
                               .seq = ++d.seq};
            return p;
        }
    }
    return NULL;
}

/* Whether an earlier request waits on the same socket in the same direction (they go in order). */
static bool behind(const struct pend *p)
{
    bool in = p->type == NETP_TRECV || p->type == NETP_TACCEPT;
    for (unsigned i = 0; i < PENDING_MAX; i++) {
        const struct pend *q = &d.pend[i];
        if (q->used && q != p && q->sid == p->sid && q->seq < p->seq && q->type != NETP_TPOLL &&
            (q->type == NETP_TRECV || q->type == NETP_TACCEPT) == in) {
            return true;
        }
    }
    return false;
}

/* Each try_* does the request's work without blocking: true when it answered (the request is over),
 * false when it must wait. `last`: its deadline has come, so it answers whatever the outcome. */

static bool try_connect(struct pend *p, struct sock *s, bool last)
{
    struct pollfd pf = {.fd = s->fd, .events = POLLOUT};
    if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
            err = errno;
        }
        s->connecting = false;
        if (err != 0) {
            reply_err(p->tag, err, p->type);
        } else {
            reply_empty(p->type, p->tag);
        }
        return true;
    }
    if (last) {
        reply_err(p->tag, EINPROGRESS, p->type);
        return true;
    }
    return false;
}

static bool try_accept(struct pend *p, struct sock *s, bool last)
{
    if (!sock_room()) { /* leave the connection queued for a later accept */
        reply_err(p->tag, EMFILE, p->type);
        return true;
    }
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    memset(&a, 0, sizeof(a));
    int fd = accept4(s->fd, (struct sockaddr *)&a, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if ((errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && !last) {
            return false;
        }
        reply_err(p->tag, errno == EWOULDBLOCK ? EAGAIN : errno, p->type);
        return true;
    }
    struct sock *n = sock_new(fd, NETP_STREAM);
    struct w w;
    w_begin(&w, NETP_RACCEPT, p->tag, NETP_RACCEPT_LEN);
    w_int(n->sid, 4);
    if (a.sin_family != AF_INET) {
        memset(&a, 0, sizeof(a));
    }
    w_addr(&a);
    w_end(&w);
    return true;
}

/* A stream takes the bytes as its buffer has room; a datagram goes whole in one sendto (even empty). */
static bool try_send(struct pend *p, struct sock *s, bool last)
{
    bool dgram = s->type == NETP_DGRAM;
    while (dgram || p->done < p->count) {
        ssize_t n = p->to ? sendto(s->fd, p->data + p->done, p->count - p->done, MSG_DONTWAIT | MSG_NOSIGNAL,
                                   (const struct sockaddr *)&p->addr, sizeof(p->addr))
                          : send(s->fd, p->data + p->done, p->count - p->done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            int err = errno == EWOULDBLOCK ? EAGAIN : errno;
            if (err == EINTR) {
                continue;
            }
            if (err == EAGAIN && !last) {
                return false;
            }
            if (p->done > 0) {
                break; /* what went; the error comes again at the next send */
            }
            reply_err(p->tag, err, p->type);
            return true;
        }
        p->done = dgram ? p->count : p->done + (uint32_t)n;
        if (dgram) {
            break;
        }
    }
    struct w w;
    w_begin(&w, NETP_RSEND, p->tag, NETP_RSEND_LEN);
    w_int(p->done, 4);
    w_end(&w);
    return true;
}

static bool try_recv(struct pend *p, struct sock *s, bool last)
{
    static uint8_t buf[NETP_DATA_MAX];
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    memset(&a, 0, sizeof(a));
    int fl = MSG_DONTWAIT | ((p->flags & NETP_MSG_PEEK) != 0 ? MSG_PEEK : 0);
    ssize_t n = recvfrom(s->fd, buf, p->count, fl, (struct sockaddr *)&a, &len);
    if (n < 0) {
        if ((errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && !last) {
            return false;
        }
        reply_err(p->tag, errno == EWOULDBLOCK ? EAGAIN : errno, p->type);
        return true;
    }
    bool from = s->type == NETP_DGRAM && len >= sizeof(a) && a.sin_family == AF_INET;
    if (!from) {
        memset(&a, 0, sizeof(a));
    }
    struct w w;
    w_begin(&w, NETP_RRECV, p->tag, NETP_RRECV_FIXED + (size_t)n);
    w_int(from ? 1 : 0, 1);
    w_addr(&a);
    w_int((uint64_t)n, 4);
    w_bytes(buf, (size_t)n);
    w_end(&w);
    return true;
}

/* A Tpoll's sockets now; true if one has something. */
static bool poll_now(const struct pend *p, uint16_t *rev)
{
    struct pollfd pf[NETP_POLL_MAX];
    bool any = false;
    for (unsigned i = 0; i < p->n; i++) {
        struct sock *s = sock_of(p->psid[i]);
        pf[i] = (struct pollfd){.fd = s != NULL ? s->fd : -1, .events = (short)p->pev[i]};
        rev[i] = s != NULL ? 0 : NETP_POLLNVAL;
        any |= s == NULL;
    }
    if (poll(pf, p->n, 0) > 0) {
        for (unsigned i = 0; i < p->n; i++) {
            if (pf[i].fd >= 0 && pf[i].revents != 0) {
                rev[i] = (uint16_t)(pf[i].revents & (NETP_POLLIN | NETP_POLLPRI | NETP_POLLOUT |
                                                     NETP_POLLERR | NETP_POLLHUP | NETP_POLLNVAL));
                any |= rev[i] != 0;
            }
        }
    }
    return any;
}

static bool try_poll(struct pend *p, bool last)
{
    uint16_t rev[NETP_POLL_MAX];
    if (!poll_now(p, rev) && !last) {
        return false;
    }
    struct w w;
    w_begin(&w, NETP_RPOLL, p->tag, 2u + 2u * p->n);
    w_int(p->n, 2);
    for (unsigned i = 0; i < p->n; i++) {
        w_int(rev[i], 2);
    }
    w_end(&w);
    return true;
}

/* Tries a waiting request; frees it once answered. */
static void try_pend(struct pend *p, int64_t now)
{
    bool last = now >= p->deadline;
    bool done;
    if (p->type == NETP_TPOLL) {
        done = try_poll(p, last);
    } else {
        struct sock *s = sock_of(p->sid);
        if (s == NULL) { /* closed meanwhile (Tclose answers its requests first: not reached) */
            reply_err(p->tag, EBADF, p->type);
            done = true;
        } else if (behind(p)) {
            done = last;
            if (last) {
                reply_err(p->tag, p->type == NETP_TCONNECT ? EINPROGRESS : EAGAIN, p->type);
            }
        } else if (p->type == NETP_TCONNECT) {
            done = try_connect(p, s, last);
        } else if (p->type == NETP_TACCEPT) {
            done = try_accept(p, s, last);
        } else if (p->type == NETP_TSEND) {
            done = try_send(p, s, last);
        } else {
            done = try_recv(p, s, last);
        }
    }
    if (done) {
        pend_free(p);
    }
}

/* A request that may have to wait: tried at once, kept if it must wait. */
static void start(struct pend *p)
{
    try_pend(p, now_ms());
}

/* --------------------------------------------------------------------------------------- requests */

static void end_session(void)
{
    for (unsigned i = 0; i < PENDING_MAX; i++) {
        if (d.pend[i].used) {
            pend_free(&d.pend[i]);
        }
    }
    for (unsigned i = 0; i < NETP_SOCKETS_MAX; i++) {
        if (d.socks[i].fd >= 0) {
            close(d.socks[i].fd);
            d.socks[i].fd = -1;
        }
    }
    d.up = false;
}

static void do_version(uint16_t tag, struct r *r)
{
    uint32_t msize = r_u32(r);
    uint16_t n = r_u16(r);
    const uint8_t *v = r->p + r->pos; /* its n bytes: checked next */
    if (r->bad || n != r->len - r->pos) {
        refuse(tag, EPROTO, NETP_TVERSION);
        return;
    }
    end_session(); /* a new session: nothing of the old one survives */
    bool ok = n == sizeof(NETP_VERSION) - 1 && memcmp(v, NETP_VERSION, n) == 0 && msize >= NETP_MSIZE_MIN;
    uint32_t agreed = msize < NETP_MSIZE ? msize : NETP_MSIZE;
    d.msize = ok ? agreed : NETP_MSIZE; /* no session: the frames' limit stays the protocol's */
    d.data_max = d.msize - NETP_IOHDR;
    d.up = ok;
    const char *ver = ok ? NETP_VERSION : "unknown";
    struct w w;
    w_begin(&w, NETP_RVERSION, tag, 6 + strlen(ver));
    w_int(agreed, 4);
    w_int(strlen(ver), 2);
    w_bytes(ver, strlen(ver));
    w_end(&w);
    if (verbose) {
        say("session %s (msize %u)", ok ? "started" : "refused: another version or msize", agreed);
    }
}

static int opt_of(uint8_t opt, int *level, int *name)
{
    switch (opt) {
    case NETP_OPT_REUSEADDR:
        *level = SOL_SOCKET, *name = SO_REUSEADDR;
        return 0;
    case NETP_OPT_KEEPALIVE:
        *level = SOL_SOCKET, *name = SO_KEEPALIVE;
        return 0;
    case NETP_OPT_BROADCAST:
        *level = SOL_SOCKET, *name = SO_BROADCAST;
        return 0;
    case NETP_OPT_NODELAY:
        *level = IPPROTO_TCP, *name = TCP_NODELAY;
        return 0;
    case NETP_OPT_ERROR:
        *level = SOL_SOCKET, *name = SO_ERROR;
        return 0;
    default:
        return ENOPROTOOPT;
    }
}

/* One well-framed request. Every path answers it now or leaves it waiting (exactly one answer). */
static void handle(uint8_t type, uint16_t tag, const uint8_t *body, size_t len)
{
    d.requests++;
    struct r r = {.p = body, .len = len};
    if (type == NETP_TVERSION) {
        do_version(tag, &r);
        return;
    }
    if (!d.up) {
        refuse(tag, EPROTO, type);
        return;
    }
    static const size_t fixed[] = {
        [NETP_TSOCKET - NETP_TSOCKET] = NETP_TSOCKET_LEN,
        [NETP_TBIND - NETP_TSOCKET] = NETP_TBIND_LEN,
        [NETP_TLISTEN - NETP_TSOCKET] = NETP_TLISTEN_LEN,
        [NETP_TCONNECT - NETP_TSOCKET] = NETP_TCONNECT_LEN,
        [NETP_TACCEPT - NETP_TSOCKET] = NETP_TACCEPT_LEN,
        [NETP_TSEND - NETP_TSOCKET] = NETP_TSEND_FIXED,
        [NETP_TRECV - NETP_TSOCKET] = NETP_TRECV_LEN,
        [NETP_TSHUTDOWN - NETP_TSOCKET] = NETP_TSHUTDOWN_LEN,
        [NETP_TCLOSE - NETP_TSOCKET] = NETP_TCLOSE_LEN,
        [NETP_TSETOPT - NETP_TSOCKET] = NETP_TSETOPT_LEN,
        [NETP_TGETOPT - NETP_TSOCKET] = NETP_TGETOPT_LEN,
        [NETP_TNAME - NETP_TSOCKET] = NETP_TNAME_LEN,
        [NETP_TPOLL - NETP_TSOCKET] = 6,
    };
    if (type < NETP_TSOCKET || type > NETP_TPOLL || (type & 1u) != 0) {
        refuse(tag, EOPNOTSUPP, type);
        return;
    }
    size_t want = fixed[type - NETP_TSOCKET];
    bool var = type == NETP_TSEND || type == NETP_TPOLL; /* a fixed part, then more */
    if (var ? len < want : len != want) {
        refuse(tag, EPROTO, type);
        return;
    }
    if (type == NETP_TSOCKET) {
        uint8_t t = r_u8(&r);
        if (t != NETP_STREAM && t != NETP_DGRAM) {
            refuse(tag, EINVAL, type);
            return;
        }
        if (!sock_room()) {
            reply_err(tag, EMFILE, type);
            return;
        }
        int fd =
            socket(AF_INET, (t == NETP_STREAM ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            reply_err(tag, errno, type);
            return;
        }
        struct sock *s = sock_new(fd, t);
        struct w w;
        w_begin(&w, NETP_RSOCKET, tag, NETP_RSOCKET_LEN);
        w_int(s->sid, 4);
        w_end(&w);
        return;
    }
    if (type == NETP_TPOLL) {
        uint32_t wait = r_u32(&r);
        uint16_t n = r_u16(&r);
        if (n == 0 || n > NETP_POLL_MAX || len != 6u + 6u * n) {
            refuse(tag, n == 0 || n > NETP_POLL_MAX ? EINVAL : EPROTO, type);
            return;
        }
        struct pend *p = pend_new(type, tag, 0, wait);
        if (p == NULL) {
            reply_err(tag, ENOBUFS, type);
            return;
        }
        p->n = n;
        for (unsigned i = 0; i < n; i++) {
            p->psid[i] = r_u32(&r);
            p->pev[i] = r_u16(&r) & (NETP_POLLIN | NETP_POLLPRI | NETP_POLLOUT);
        }
        start(p);
        return;
    }
    uint32_t sid = r_u32(&r);
    struct sock *s = sock_of(sid);
    if (s == NULL) {
        refuse(tag, EBADF, type);
        return;
    }
    switch (type) {
    case NETP_TBIND: {
        struct sockaddr_in a;
        r_addr(&r, &a);
        if (!allowed(USE_BIND, &a)) {
            reply_err(tag, EACCES, type);
        } else if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            reply_err(tag, errno, type);
        } else {
            reply_empty(type, tag);
        }
        return;
    }
    case NETP_TLISTEN: {
        uint32_t backlog = r_u32(&r);
        if (listen(s->fd, (int)(backlog < NETP_BACKLOG_MAX ? backlog : NETP_BACKLOG_MAX)) != 0) {
            reply_err(tag, errno, type);
        } else {
            reply_empty(type, tag);
        }
        return;
    }
    case NETP_TCONNECT: {
        struct sockaddr_in a;
        r_addr(&r, &a);
        uint32_t wait = r_u32(&r);
        uint8_t again = r_u8(&r);
        if (again > 1) {
            refuse(tag, EINVAL, type);
            return;
        }
        if (again && !s->connecting) { /* its outcome was taken already (SO_ERROR): tell it again */
            int err = 0;
            socklen_t el = sizeof(err);
            struct sockaddr_in peer;
            socklen_t pl = sizeof(peer);
            if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0 &&
                getpeername(s->fd, (struct sockaddr *)&peer, &pl) == 0) {
                reply_empty(type, tag);
            } else {
                reply_err(tag, err != 0 ? err : ECONNREFUSED, type);
            }
            return;
        }
        if (!again) {
            if (!allowed(USE_CONNECT, &a)) {
                reply_err(tag, EACCES, type);
                return;
            }
            if (connect(s->fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
                reply_empty(type, tag);
                return;
            }
            if (errno != EINPROGRESS) {
                reply_err(tag, errno, type);
                return;
            }
            s->connecting = true;
        }
        struct pend *p = pend_new(type, tag, sid, wait);
        if (p == NULL) {
            reply_err(tag, ENOBUFS, type);
            return;
        }
        start(p);
        return;
    }
    case NETP_TACCEPT:
    case NETP_TRECV: {
        uint32_t flags = type == NETP_TRECV ? r_u32(&r) : 0;
        uint32_t wait = r_u32(&r);
        uint32_t count = type == NETP_TRECV ? r_u32(&r) : 0;
        if ((flags & ~NETP_MSG_PEEK) != 0) {
            refuse(tag, EOPNOTSUPP, type);
            return;
        }
        struct pend *p = pend_new(type, tag, sid, wait);
        if (p == NULL) {
            reply_err(tag, ENOBUFS, type);
            return;
        }
        p->flags = flags;
        p->count = count < d.data_max ? count : d.data_max;
        start(p);
        return;
    }
    case NETP_TSEND: {
        uint32_t flags = r_u32(&r);
        uint32_t wait = r_u32(&r);
        uint8_t to = r_u8(&r);
        struct sockaddr_in a;
        r_addr(&r, &a);
        uint32_t count = r_u32(&r);
        if (count != len - NETP_TSEND_FIXED || count > d.data_max || to > 1) {
            refuse(tag, count > d.data_max ? EMSGSIZE : to > 1 ? EINVAL : EPROTO, type);
            return;
        }
        if (flags != 0) {
            refuse(tag, EOPNOTSUPP, type);
            return;
        }
        if (to && !allowed(USE_SENDTO, &a)) {
            reply_err(tag, EACCES, type);
            return;
        }
        struct pend *p = pend_new(type, tag, sid, wait);
        if (p == NULL) {
            reply_err(tag, ENOBUFS, type);
            return;
        }
        p->to = to != 0;
        p->addr = a;
        p->count = count;
        p->data = malloc(count > 0 ? count : 1);
        if (p->data == NULL) {
            pend_free(p);
            reply_err(tag, ENOMEM, type);
            return;
        }
        memcpy(p->data, body + NETP_TSEND_FIXED, count);
        start(p);
        return;
    }
    case NETP_TSHUTDOWN: {
        uint8_t how = r_u8(&r);
        static const int hows[] = {SHUT_RD, SHUT_WR, SHUT_RDWR};
        if (how > NETP_SHUT_RDWR) {
            refuse(tag, EINVAL, type);
        } else if (shutdown(s->fd, hows[how]) != 0) {
            reply_err(tag, errno, type);
        } else {
            reply_empty(type, tag);
        }
        return;
    }
    case NETP_TCLOSE:
        for (unsigned i = 0; i < PENDING_MAX; i++) { /* its waiting requests first */
            struct pend *p = &d.pend[i];
            if (p->used && p->type != NETP_TPOLL && p->sid == sid) {
                reply_err(p->tag, EBADF, p->type);
                pend_free(p);
            }
        }
        close(s->fd);
        s->fd = -1;
        reply_empty(type, tag);
        return;
    case NETP_TSETOPT:
    case NETP_TGETOPT: {
        uint8_t opt = r_u8(&r);
        uint32_t v = type == NETP_TSETOPT ? r_u32(&r) : 0;
        int level, name;
        int err = opt_of(opt, &level, &name);
        if (err == 0 && type == NETP_TSETOPT && (opt == NETP_OPT_ERROR || v > 1)) {
            err = opt == NETP_OPT_ERROR ? ENOPROTOOPT : EINVAL;
        }
        if (err != 0) {
            refuse(tag, err, type);
            return;
        }
        int iv = (int)v;
        socklen_t il = sizeof(iv);
        int rc = type == NETP_TSETOPT ? setsockopt(s->fd, level, name, &iv, il)
                                      : getsockopt(s->fd, level, name, &iv, &il);
        if (rc != 0) {
            reply_err(tag, errno, type);
            return;
        }
        if (type == NETP_TSETOPT) {
            reply_empty(type, tag);
            return;
        }
        if (opt == NETP_OPT_ERROR && s->connecting) { /* the outcome is taken if there is one */
            struct pollfd pf = {.fd = s->fd, .events = POLLOUT};
            s->connecting = !(poll(&pf, 1, 0) == 1 && pf.revents != 0);
        }
        struct w w;
        w_begin(&w, NETP_RGETOPT, tag, NETP_RGETOPT_LEN);
        w_int(iv < 0 ? 0u : (uint32_t)iv, 4);
        w_end(&w);
        return;
    }
    case NETP_TNAME: {
        uint8_t which = r_u8(&r);
        struct sockaddr_in a;
        socklen_t al = sizeof(a);
        memset(&a, 0, sizeof(a));
        if (which > 1) {
            refuse(tag, EINVAL, type);
            return;
        }
        int rc = which == 0 ? getsockname(s->fd, (struct sockaddr *)&a, &al)
                            : getpeername(s->fd, (struct sockaddr *)&a, &al);
        if (rc != 0) {
            reply_err(tag, errno, type);
            return;
        }
        if (a.sin_family != AF_INET) {
            memset(&a, 0, sizeof(a));
        }
        struct w w;
        w_begin(&w, NETP_RNAME, tag, NETP_RNAME_LEN);
        w_addr(&a);
        w_end(&w);
        return;
    }
    default:
        refuse(tag, EOPNOTSUPP, type);
        return;
    }
}

/* ------------------------------------------------------------------------------------- the channel */

/* Reads what the channel has; false at its end. */
static bool read_in(void)
{
    for (;;) {
        if (d.in_len == IN_CAP) {
            return true;
        }
        ssize_t n = read(d.fd, d.in + d.in_len, IN_CAP - d.in_len);
        if (n > 0) {
            d.in_len += (size_t)n;
            continue;
        }
        if (n == 0) {
            return false;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return true;
        }
        say("reading the channel: %s", strerror(errno));
        exit(1);
    }
}

/* Handles every whole frame read so far. */
static void frames(void)
{
    size_t at = 0;
    while (d.in_len - at >= NETP_HDR) {
        const uint8_t *f = d.in + at;
        uint32_t size = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
        uint32_t most = d.up ? d.msize : NETP_MSIZE;
        if (size < NETP_HDR || size > most) {
            say("the rtos sent a frame of %u bytes (%u..%u): the stream's framing is lost; ending", size,
                NETP_HDR, most);
            exit(1);
        }
        if (d.in_len - at < size) {
            break;
        }
        handle(f[4], (uint16_t)(f[5] | f[6] << 8), f + NETP_HDR, size - NETP_HDR);
        at += size;
        if (d.out_len - d.out_head > OUT_HIGH) {
            break; /* the rest when the rtos has read some answers */
        }
    }
    memmove(d.in, d.in + at, d.in_len - at);
    d.in_len -= at;
}

static void write_out(void)
{
    while (d.out_head < d.out_len) {
        ssize_t n = write(d.fd, d.out + d.out_head, d.out_len - d.out_head);
        if (n > 0) {
            d.out_head += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        int err = n < 0 ? errno : 0;
        say("writing the channel: %s", n < 0 ? strerror(err) : "no progress");
        exit(err == EPIPE || err == ECONNRESET || err == ENODEV ? 0 : 1);
    }
    d.out_head = d.out_len = 0;
}

/* Waits until the rtos has its end open: a V-Bus port polls POLLHUP until then. */
static void wait_connected(void)
{
    for (;;) {
        struct pollfd pf = {.fd = d.fd, .events = POLLIN};
        int n = poll(&pf, 1, -1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 || (pf.revents & (POLLERR | POLLNVAL)) != 0) {
            say("the channel failed before the rtos opened it");
            exit(1);
        }
        if ((pf.revents & POLLHUP) == 0) {
            return;
        }
        struct timespec ts = {.tv_nsec = CONNECT_POLL * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void serve(void)
{
    static struct pollfd pf[1 + NETP_SOCKETS_MAX];
    for (;;) {
        int64_t now = now_ms();
        int timeout = -1;
        short ev[NETP_SOCKETS_MAX] = {0};
        for (unsigned i = 0; i < PENDING_MAX; i++) {
            const struct pend *p = &d.pend[i];
            if (!p->used) {
                continue;
            }
            int64_t left = p->deadline > now ? p->deadline - now : 0;
            timeout = timeout < 0 || left < timeout ? (int)left : timeout;
            if (p->type == NETP_TPOLL) {
                for (unsigned k = 0; k < p->n; k++) {
                    struct sock *s = sock_of(p->psid[k]);
                    if (s != NULL) {
                        ev[s - d.socks] |= (short)p->pev[k];
                    }
                }
            } else {
                struct sock *s = sock_of(p->sid);
                if (s != NULL) {
                    ev[s - d.socks] |= p->type == NETP_TRECV || p->type == NETP_TACCEPT ? POLLIN : POLLOUT;
                }
            }
        }
        /* backpressure: no request is read while the rtos leaves OUT_HIGH of answers unread */
        bool full = d.out_len - d.out_head > OUT_HIGH;
        pf[0] = (struct pollfd){
            .fd = d.fd, .events = (short)((full ? 0 : POLLIN) | (d.out_len > d.out_head ? POLLOUT : 0))};
        nfds_t n = 1;
        for (unsigned i = 0; i < NETP_SOCKETS_MAX; i++) {
            if (ev[i] != 0 && d.socks[i].fd >= 0) {
                pf[n++] = (struct pollfd){.fd = d.socks[i].fd, .events = ev[i]};
            }
        }
        if (poll(pf, n, timeout) < 0 && errno != EINTR) {
            say("poll: %s", strerror(errno));
            exit(1);
        }
        bool eof = false;
        if (!full && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            eof = !read_in();
        } else if ((pf[0].revents & (POLLHUP | POLLERR)) != 0) {
            return; /* the rtos closed without reading its answers: nothing is left to do */
        }
        if (d.out_len - d.out_head <= OUT_HIGH) {
            frames(); /* also those read before the answers backed up */
        }
        now = now_ms();
        for (unsigned i = 0; i < PENDING_MAX; i++) {
            if (d.pend[i].used) {
                try_pend(&d.pend[i], now);
            }
        }
        write_out();
        if (eof && d.in_len == 0) {
            return;
        }
        if (eof) {
            say("the channel ended inside a frame");
            return;
        }
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: rtmux-netd [-v] PORT | rtmux-netd [-v] --fd N\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *port = NULL;
    int fd = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = true;
        } else if (strcmp(argv[i], "--fd") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0 || v > 65535) {
                return usage();
            }
            fd = (int)v;
        } else if (argv[i][0] != '-' && port == NULL) {
            port = argv[i];
        } else {
            return usage();
        }
    }
    if ((port == NULL) == (fd < 0)) {
        return usage();
    }
    signal(SIGPIPE, SIG_IGN);
    if (port != NULL) {
        char path[256];
        snprintf(path, sizeof(path), "%s%s", strchr(port, '/') != NULL ? "" : PORT_DIR, port);
        fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            say("%s: %s", path, strerror(errno));
            return 1;
        }
        struct termios t;
        if (tcgetattr(fd, &t) == 0) { /* a terminal (a test's pty): raw bytes */
            cfmakeraw(&t);
            (void)tcsetattr(fd, TCSANOW, &t);
        }
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        say("channel descriptor: %s", strerror(errno));
        return 1;
    }
    d.fd = fd;
    d.msize = NETP_MSIZE;
    d.data_max = NETP_DATA_MAX;
    for (unsigned i = 0; i < NETP_SOCKETS_MAX; i++) {
        d.socks[i].fd = -1;
    }
    wait_connected();
    serve();
    end_session();
    if (verbose || d.refused > 0) {
        say("the rtos closed the channel: %llu requests, %llu failed, %llu refused",
            (unsigned long long)d.requests, (unsigned long long)d.failed, (unsigned long long)d.refused);
    }
    return 0;
}
