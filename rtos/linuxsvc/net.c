/*
 * Linux's sockets over rtmux-net (net.h, lib/netproto.h): descriptors, one function per call, poll().
 *
 * A descriptor holds the daemon's socket id (sid) and the session it belongs to; a generation number
 * changes each time the descriptor is given out, so a call that waits across several requests notices
 * a close (and a reuse of the number) by another thread and ends with EBADF.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/time.h>

#include "lib/netproto.h"
#include "rtos/time.h"

_Static_assert(NETP_HDR == P9_HDR && NETP_NOTAG == P9_NOTAG && (int)NETP_RLERROR == (int)P9_RLERROR &&
                   (int)NETP_TVERSION == (int)P9_TVERSION && (int)NETP_RVERSION == (int)P9_RVERSION,
               "rtmux-net frames, starts and fails as 9P does (conn.h)");
_Static_assert(LNET_SOCKETS <= NETP_SOCKETS_MAX && LNET_SLOTS <= LSVC_SLOTS_MAX, "the daemon's limits");
_Static_assert(NETP_POLLIN == POLLIN && NETP_POLLPRI == POLLPRI && NETP_POLLOUT == POLLOUT &&
                   NETP_POLLERR == POLLERR && NETP_POLLHUP == POLLHUP && NETP_POLLNVAL == POLLNVAL,
               "<poll.h>'s bits are rtmux-net's");

/* How often a waiting poll() looks again at what cannot wake it (a channel's POLLOUT, below). */
#define RECHECK RT_MSEC(10)

struct lnet_sock {
    bool used; /* given out (open: the daemon's socket is made) */
    bool open;
    bool nonblock;
    uint8_t type; /* NETP_STREAM, NETP_DGRAM */
    uint32_t gen, sess, sid;
    rt_time_t rcvtimeo, sndtimeo; /* 0: wait for good */
};

static struct {
    struct lsvc_conn conn;
    struct lsvc_slot slots[LNET_SLOTS];
    rt_mutex_t lock; /* the descriptor tables */
    rt_sem_t idle;   /* never given: poll() without descriptors sleeps on it */
    bool ready;
    uint32_t gen;
    struct lnet_sock socks[LNET_SOCKETS];
    rt_chan_t *chans[LNET_CHANS];
} ln;

static uint8_t reply_type(uint8_t t)
{
    bool req = t == NETP_TVERSION || (t >= NETP_TSOCKET && t <= NETP_TPOLL && (t & 1u) == 0);
    return req ? (uint8_t)(t + 1u) : 0;
}

static size_t bulk_at(uint8_t r)
{
    return r == NETP_RRECV ? NETP_RRECV_FIXED : 0;
}

static const struct lsvc_proto net_proto = {
    .version = NETP_VERSION,
    .msize = NETP_MSIZE,
    .msize_min = NETP_MSIZE_MIN,
    .reply_type = reply_type,
    .bulk_at = bulk_at,
    .no_answer = EIO, /* Linux did not answer: unlike a connect's own ETIMEDOUT */
};

__attribute__((constructor)) void lnet_init(void)
{
    if (ln.ready) {
        return;
    }
    if (rt_mutex_init(&ln.lock) != RT_OK || rt_sem_init(&ln.idle, 0, 1) != RT_OK ||
        lsvc_init(&ln.conn, NETP_CHANNEL, &net_proto, ln.slots, LNET_SLOTS) != 0) {
        return;
    }
    ln.ready = true;
}

static int fail(int err)
{
    errno = err;
    return -1;
}

/* ------------------------------------------------------------------------------------------- time */

/* The deadline of a wait of `t` from now (RT_FOREVER: never). */
static rt_time_t deadline_after(rt_time_t t)
{
    rt_time_t now = rt_time_now();
    return t == RT_FOREVER || t > RT_FOREVER - now ? RT_FOREVER : now + t;
}

static bool expired(rt_time_t deadline)
{
    return deadline != RT_FOREVER && rt_time_now() >= deadline;
}

/* The wait[4] of the next request towards `deadline`: whole milliseconds, rounded up, at most the
 * daemon's hold. */
static uint32_t wait_ms(rt_time_t deadline)
{
    rt_time_t now = rt_time_now();
    if (deadline != RT_FOREVER && now >= deadline) {
        return 0;
    }
    rt_time_t left = deadline == RT_FOREVER ? RT_MSEC(NETP_WAIT_MAX_MS) : deadline - now;
    rt_time_t ms = (left + RT_MSEC(1) - 1) / RT_MSEC(1);
    return ms < NETP_WAIT_MAX_MS ? (uint32_t)ms : NETP_WAIT_MAX_MS;
}

/* ------------------------------------------------------------------------------------- descriptors */

/* A socket descriptor as a call found it. */
struct ref {
    int fd;
    uint32_t gen, sess, sid;
    uint8_t type;
    bool nonblock;
    rt_time_t rcvtimeo, sndtimeo;
};

static struct lnet_sock *sock_at(int fd)
{
    return fd >= LNET_FD_FIRST && fd < LNET_FD_FIRST + LNET_SOCKETS ? &ln.socks[fd - LNET_FD_FIRST] : NULL;
}

static rt_chan_t *chan_at(int fd);

/* The socket `fd`, in the current session: 0, or EBADF (no such open socket, or one of a session that
 * ended), ENOTSOCK (a descriptor of another kind: the console's and files' range, a channel's). */
static int ref_get(int fd, struct ref *r)
{
    struct lnet_sock *k = sock_at(fd);
    if (k == NULL) {
        return (fd >= 0 && fd < LNET_FD_FIRST) || chan_at(fd) != NULL ? ENOTSOCK : EBADF;
    }
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    bool open = k->used && k->open;
    *r = (struct ref){.fd = fd,
                      .gen = k->gen,
                      .sess = k->sess,
                      .sid = k->sid,
                      .type = k->type,
                      .nonblock = k->nonblock,
                      .rcvtimeo = k->rcvtimeo,
                      .sndtimeo = k->sndtimeo};
    (void)rt_mutex_unlock(&ln.lock);
    return open && lsvc_current(&ln.conn, r->sess) ? 0 : EBADF;
}

/* Whether r's descriptor is still the one the call started with (not closed, not given out again). */
static bool ref_live(const struct ref *r)
{
    struct lnet_sock *k = sock_at(r->fd);
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    bool live = k->used && k->open && k->gen == r->gen;
    (void)rt_mutex_unlock(&ln.lock);
    return live;
}

/* A descriptor given out but not open yet (its socket is being made): -1 when none is free. */
static int reserve(void)
{
    int fd = -1;
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    for (unsigned i = 0; i < LNET_SOCKETS && fd < 0; i++) {
        struct lnet_sock *k = &ln.socks[i];
        if (!k->used) {
            ln.gen++;
            *k = (struct lnet_sock){.used = true, .gen = ln.gen};
            fd = LNET_FD_FIRST + (int)i;
        }
    }
    (void)rt_mutex_unlock(&ln.lock);
    return fd;
}

static void unreserve(int fd)
{
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    sock_at(fd)->used = false;
    (void)rt_mutex_unlock(&ln.lock);
}

static void make_open(int fd, uint32_t sess, uint32_t sid, uint8_t type, bool nonblock, rt_time_t rcv,
                      rt_time_t snd)
{
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    struct lnet_sock *k = sock_at(fd);
    k->open = true;
    k->sess = sess;
    k->sid = sid;
    k->type = type;
    k->nonblock = nonblock;
    k->rcvtimeo = rcv;
    k->sndtimeo = snd;
    (void)rt_mutex_unlock(&ln.lock);
}

/* ---------------------------------------------------------------------------------------- requests */

struct req {
    struct lsvc_slot *s;
    uint32_t sess;
    struct p9_w w;
};

/* A slot for a request of `type`, in r's session (r NULL: the current one). */
static int req_begin(struct req *q, uint8_t type, const struct ref *r)
{
    if (!ln.ready) {
        return ENODEV;
    }
    int err = lsvc_get(&ln.conn, &q->s, &q->sess);
    if (err == ETIMEDOUT) {
        err = EIO; /* no slot or no session in time: Linux is not answering */
    }
    if (r != NULL && err == ENOTCONN) {
        err = EIO; /* r's session ended since the call began (ref_get): a call in flight fails so */
    }
    if (err != 0) {
        return err;
    }
    if (r != NULL && q->sess != r->sess) {
        lsvc_put(&ln.conn, q->s);
        return EIO;
    }
    p9_w_begin(&q->w, q->s->req, sizeof(q->s->req), type, q->s->tag);
    return 0;
}

/* Sends the request built in q (and `bulk` bytes after it) and waits for the answer: as long as the
 * daemon may hold it (`wait` ms), then LSVC_TIMEOUT for Linux to answer at all. */
static int req_call(struct req *q, uint32_t wait, const void *bulk, size_t bulk_len)
{
    size_t len = p9_w_end(&q->w);
    if (len == 0) {
        return EINVAL;
    }
    if (bulk_len != 0) { /* the size counts the data that follows */
        uint32_t size = (uint32_t)(len + bulk_len);
        q->s->req[0] = (uint8_t)size;
        q->s->req[1] = (uint8_t)(size >> 8);
        q->s->req[2] = (uint8_t)(size >> 16);
        q->s->req[3] = (uint8_t)(size >> 24);
        q->s->bulk = bulk;
        q->s->bulk_len = bulk_len;
    }
    q->s->req_len = len;
    return lsvc_call(&ln.conn, q->s, RT_MSEC(wait) + LSVC_TIMEOUT);
}

static void req_end(struct req *q)
{
    lsvc_put(&ln.conn, q->s);
}

/* The reply's fixed part, which must be exactly `len` bytes. */
static bool reply_is(const struct req *q, size_t len, struct p9_r *r)
{
    p9_r_init(r, q->s->fixed, q->s->fixed_len);
    return q->s->fixed_len == len;
}

/* A request whose answer has no body. */
static int simple(const struct ref *k, uint8_t type, const void *args, size_t n)
{
    struct req q;
    int err = req_begin(&q, type, k);
    if (err != 0) {
        return err;
    }
    p9_w_u32(&q.w, k->sid);
    p9_w_bytes(&q.w, args, n);
    err = req_call(&q, 0, NULL, 0);
    if (err == 0 && q.s->fixed_len != 0) {
        err = EIO;
    }
    req_end(&q);
    return err;
}

/* ---------------------------------------------------------------------------------------- addresses */

/* addr[4] port[2] of a struct sockaddr_in (network byte order both). */
static int addr_in(const struct sockaddr *a, socklen_t len, uint8_t out[6])
{
    if (a == NULL) {
        return EFAULT;
    }
    if (len < sizeof(struct sockaddr_in)) {
        return EINVAL;
    }
    struct sockaddr_in in;
    memcpy(&in, a, sizeof(in));
    if (in.sin_family != AF_INET) {
        return EAFNOSUPPORT;
    }
    memcpy(out, &in.sin_addr.s_addr, 4);
    memcpy(out + 4, &in.sin_port, 2);
    return 0;
}

/* Fills what the caller's *len allows of a struct sockaddr_in (POSIX truncates); *len gets its size. */
static void addr_out(const uint8_t in[6], struct sockaddr *a, socklen_t *len)
{
    if (a == NULL || len == NULL) {
        return;
    }
    struct sockaddr_in s;
    memset(&s, 0, sizeof(s));
    s.sin_family = AF_INET;
    memcpy(&s.sin_addr.s_addr, in, 4);
    memcpy(&s.sin_port, in + 4, 2);
    memcpy(a, &s, *len < sizeof(s) ? *len : sizeof(s));
    *len = sizeof(s);
}

static void r_addr(struct p9_r *r, uint8_t out[6])
{
    for (unsigned i = 0; i < 6; i++) {
        out[i] = p9_r_u8(r);
    }
}

/* ------------------------------------------------------------------------------------------ sockets */

int lnet_socket(int domain, int type, int protocol)
{
    int flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC);
    int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (domain != AF_INET) {
        return fail(EAFNOSUPPORT);
    }
    uint8_t t;
    if (kind == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) {
        t = NETP_STREAM;
    } else if (kind == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP)) {
        t = NETP_DGRAM;
    } else {
        return fail(kind == SOCK_STREAM || kind == SOCK_DGRAM ? EPROTONOSUPPORT : EPROTOTYPE);
    }
    int fd = reserve();
    if (fd < 0) {
        return fail(EMFILE);
    }
    struct req q;
    int err = req_begin(&q, NETP_TSOCKET, NULL);
    if (err == 0) {
        p9_w_u8(&q.w, t);
        err = req_call(&q, 0, NULL, 0);
        struct p9_r r;
        if (err == 0 && !reply_is(&q, NETP_RSOCKET_LEN, &r)) {
            err = EIO;
        }
        if (err == 0) {
            make_open(fd, q.sess, p9_r_u32(&r), t, (flags & SOCK_NONBLOCK) != 0, 0, 0);
        }
        req_end(&q);
    }
    if (err != 0) {
        unreserve(fd);
        return fail(err);
    }
    return fd;
}

int lnet_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct ref k;
    uint8_t a[6];
    int err = ref_get(fd, &k);
    if (err == 0) {
        err = addr_in(addr, len, a);
    }
    if (err == 0) {
        err = simple(&k, NETP_TBIND, a, sizeof(a));
    }
    return err == 0 ? 0 : fail(err);
}

int lnet_listen(int fd, int backlog)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err == 0) {
        uint8_t b[4];
        uint32_t v = backlog < 0 ? 0u : (uint32_t)backlog;
        for (unsigned i = 0; i < 4; i++) {
            b[i] = (uint8_t)(v >> (8 * i));
        }
        err = simple(&k, NETP_TLISTEN, b, sizeof(b));
    }
    return err == 0 ? 0 : fail(err);
}

int lnet_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct ref k;
    uint8_t a[6];
    int err = ref_get(fd, &k);
    if (err == 0) {
        err = addr_in(addr, len, a);
    }
    if (err != 0) {
        return fail(err);
    }
    /* Linux ends a blocking connect at SO_SNDTIMEO with EINPROGRESS, as here */
    rt_time_t deadline = k.nonblock ? 0 : deadline_after(k.sndtimeo == 0 ? RT_FOREVER : k.sndtimeo);
    uint8_t again = 0;
    for (;;) {
        struct req q;
        err = req_begin(&q, NETP_TCONNECT, &k);
        if (err != 0) {
            break;
        }
        uint32_t wait = wait_ms(deadline);
        p9_w_u32(&q.w, k.sid);
        p9_w_bytes(&q.w, a, sizeof(a));
        p9_w_u32(&q.w, wait);
        p9_w_u8(&q.w, again);
        err = req_call(&q, wait, NULL, 0);
        if (err == 0 && q.s->fixed_len != 0) {
            err = EIO;
        }
        req_end(&q);
        if (err != EINPROGRESS || expired(deadline)) {
            break;
        }
        if (!ref_live(&k)) {
            err = EBADF;
            break;
        }
        again = 1;
    }
    return err == 0 ? 0 : fail(err);
}

int lnet_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if (addr != NULL && len == NULL) {
        return fail(EFAULT);
    }
    int nfd = reserve();
    if (nfd < 0) {
        return fail(EMFILE);
    }
    rt_time_t deadline = k.nonblock ? 0 : deadline_after(k.rcvtimeo == 0 ? RT_FOREVER : k.rcvtimeo);
    for (;;) {
        struct req q;
        err = req_begin(&q, NETP_TACCEPT, &k);
        if (err != 0) {
            break;
        }
        uint32_t wait = wait_ms(deadline);
        p9_w_u32(&q.w, k.sid);
        p9_w_u32(&q.w, wait);
        err = req_call(&q, wait, NULL, 0);
        struct p9_r r;
        if (err == 0 && !reply_is(&q, NETP_RACCEPT_LEN, &r)) {
            err = EIO;
        }
        if (err == 0) {
            uint32_t sid = p9_r_u32(&r);
            uint8_t a[6];
            r_addr(&r, a);
            /* Linux's accepted socket keeps its listener's timeouts, not its O_NONBLOCK */
            make_open(nfd, q.sess, sid, NETP_STREAM, false, k.rcvtimeo, k.sndtimeo);
            addr_out(a, addr, len);
        }
        req_end(&q);
        if (err != EAGAIN || expired(deadline)) {
            break;
        }
        if (!ref_live(&k)) {
            err = EBADF;
            break;
        }
    }
    if (err != 0) {
        unreserve(nfd);
        return fail(err);
    }
    return nfd;
}

/* One Tsend of at most the session's data limit: the count sent, or -errno. */
static ssize_t send_once(const struct ref *k, const void *buf, size_t n, uint32_t wait, const uint8_t *to)
{
    struct req q;
    int err = req_begin(&q, NETP_TSEND, k);
    if (err != 0) {
        return -err;
    }
    p9_w_u32(&q.w, k->sid);
    p9_w_u32(&q.w, 0); /* flags */
    p9_w_u32(&q.w, wait);
    p9_w_u8(&q.w, to != NULL ? 1 : 0);
    static const uint8_t none[6];
    p9_w_bytes(&q.w, to != NULL ? to : none, 6);
    p9_w_u32(&q.w, (uint32_t)n);
    err = req_call(&q, wait, buf, n);
    struct p9_r r;
    ssize_t sent = -err;
    if (err == 0) {
        uint32_t c = reply_is(&q, NETP_RSEND_LEN, &r) ? p9_r_u32(&r) : UINT32_MAX;
        sent = c <= n ? (ssize_t)c : -EIO; /* more than it was given: Linux is wrong */
    }
    req_end(&q);
    return sent;
}

ssize_t lnet_sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if ((flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL)) != 0) {
        return fail(EOPNOTSUPP);
    }
    if (buf == NULL && n != 0) {
        return fail(EFAULT);
    }
    uint8_t a[6];
    const uint8_t *dest = NULL;
    if (to != NULL && k.type == NETP_DGRAM) { /* a stream's peer is the connected one */
        err = addr_in(to, tolen, a);
        if (err != 0) {
            return fail(err);
        }
        dest = a;
    }
    uint32_t most = lsvc_msize(&ln.conn) - NETP_IOHDR;
    bool nonblock = k.nonblock || (flags & MSG_DONTWAIT) != 0;
    rt_time_t deadline = nonblock ? 0 : deadline_after(k.sndtimeo == 0 ? RT_FOREVER : k.sndtimeo);
    if (k.type == NETP_DGRAM) {
        if (n > most) {
            return fail(EMSGSIZE);
        }
        for (;;) {
            ssize_t r = send_once(&k, buf, n, wait_ms(deadline), dest);
            if (r != -EAGAIN || expired(deadline)) {
                return r < 0 ? fail((int)-r) : r;
            }
            if (!ref_live(&k)) {
                return fail(EBADF);
            }
        }
    }
    /* a stream: every byte, in parts of at most `most`, unless the deadline ends it (then what went) */
    size_t done = 0;
    while (done < n || n == 0) {
        size_t part = n - done < most ? n - done : most;
        ssize_t r = send_once(&k, (const uint8_t *)buf + done, part, wait_ms(deadline), NULL);
        if (r < 0 && (r != -EAGAIN || expired(deadline))) {
            return done > 0 ? (ssize_t)done : fail((int)-r);
        }
        done += r > 0 ? (size_t)r : 0;
        if (n == 0 || (done < n && expired(deadline))) {
            break;
        }
        if (done < n && !ref_live(&k)) {
            return done > 0 ? (ssize_t)done : fail(EBADF);
        }
    }
    return (ssize_t)done;
}

/* One Trecv of at most the session's data limit into buf: the count, or -errno. */
static ssize_t recv_once(const struct ref *k, void *buf, size_t n, bool peek, uint32_t wait, uint8_t from[6],
                         bool *has_from)
{
    struct req q;
    int err = req_begin(&q, NETP_TRECV, k);
    if (err != 0) {
        return -err;
    }
    p9_w_u32(&q.w, k->sid);
    p9_w_u32(&q.w, peek ? NETP_MSG_PEEK : 0u);
    p9_w_u32(&q.w, wait);
    p9_w_u32(&q.w, (uint32_t)n);
    q.s->data = buf;
    q.s->data_cap = n;
    err = req_call(&q, wait, NULL, 0);
    ssize_t got = -err;
    if (err == 0) { /* conn.c checked the count against the data and the buffer */
        struct p9_r r;
        p9_r_init(&r, q.s->fixed, q.s->fixed_len);
        *has_from = p9_r_u8(&r) == 1;
        r_addr(&r, from);
        got = (ssize_t)q.s->data_len;
    }
    req_end(&q);
    return got;
}

ssize_t lnet_recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if ((flags & ~(MSG_PEEK | MSG_DONTWAIT | MSG_WAITALL)) != 0) {
        return fail(EOPNOTSUPP);
    }
    if (buf == NULL && n != 0) {
        return fail(EFAULT);
    }
    if (from != NULL && fromlen == NULL) {
        return fail(EFAULT);
    }
    bool peek = (flags & MSG_PEEK) != 0;
    bool all = (flags & MSG_WAITALL) != 0 && !peek && k.type == NETP_STREAM;
    bool nonblock = k.nonblock || (flags & MSG_DONTWAIT) != 0;
    rt_time_t deadline = nonblock ? 0 : deadline_after(k.rcvtimeo == 0 ? RT_FOREVER : k.rcvtimeo);
    uint32_t most = lsvc_msize(&ln.conn) - NETP_IOHDR;
    size_t done = 0;
    for (;;) {
        size_t part = n - done < most ? n - done : most;
        uint8_t a[6] = {0};
        bool has_from = false;
        ssize_t r = recv_once(&k, (uint8_t *)buf + done, part, peek, wait_ms(deadline), a, &has_from);
        if (r >= 0 && from != NULL) {
            if (has_from) {
                addr_out(a, from, fromlen);
            } else {
                *fromlen = 0; /* a stream's bytes come from its peer, not given here */
            }
        }
        if (r < 0 && (r != -EAGAIN || expired(deadline))) {
            return done > 0 ? (ssize_t)done : fail((int)-r);
        }
        done += r > 0 ? (size_t)r : 0;
        if (r > 0 && (!all || done == n)) {
            break;
        }
        if (r == 0 && part != 0) { /* the stream's end (or an empty datagram) */
            break;
        }
        if (part == 0 || expired(deadline)) {
            break;
        }
        if (!ref_live(&k)) {
            return done > 0 ? (ssize_t)done : fail(EBADF);
        }
    }
    return (ssize_t)done;
}

int lnet_shutdown(int fd, int how)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    uint8_t h;
    if (how == SHUT_RD) {
        h = NETP_SHUT_RD;
    } else if (how == SHUT_WR) {
        h = NETP_SHUT_WR;
    } else if (how == SHUT_RDWR) {
        h = NETP_SHUT_RDWR;
    } else {
        return fail(EINVAL);
    }
    err = simple(&k, NETP_TSHUTDOWN, &h, 1);
    return err == 0 ? 0 : fail(err);
}

/* ------------------------------------------------------------------------------------------ options */

/* The rtmux-net option for level/name, 0 if it is none of them. */
static uint8_t opt_of(int level, int name)
{
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_REUSEADDR:
            return NETP_OPT_REUSEADDR;
        case SO_KEEPALIVE:
            return NETP_OPT_KEEPALIVE;
        case SO_BROADCAST:
            return NETP_OPT_BROADCAST;
        case SO_ERROR:
            return NETP_OPT_ERROR;
        default:
            return 0;
        }
    }
    return level == IPPROTO_TCP && name == TCP_NODELAY ? NETP_OPT_NODELAY : 0;
}

static bool is_timeo(int level, int name)
{
    return level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO);
}

int lnet_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if (val == NULL) {
        return fail(EFAULT);
    }
    if (is_timeo(level, name)) { /* the rtos's own: each request's wait comes from it */
        struct timeval tv;
        if (len < sizeof(tv)) {
            return fail(EINVAL);
        }
        memcpy(&tv, val, sizeof(tv));
        if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000) {
            return fail(EDOM);
        }
        uint64_t sec = (uint64_t)tv.tv_sec;
        rt_time_t t =
            sec > RT_FOREVER / RT_SEC(1) - 1 ? RT_FOREVER : RT_SEC(sec) + RT_USEC((uint64_t)tv.tv_usec);
        (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
        struct lnet_sock *s = sock_at(fd);
        if (s->used && s->gen == k.gen) {
            *(name == SO_RCVTIMEO ? &s->rcvtimeo : &s->sndtimeo) = t;
        }
        (void)rt_mutex_unlock(&ln.lock);
        return 0;
    }
    uint8_t opt = opt_of(level, name);
    if (opt == 0 || opt == NETP_OPT_ERROR) {
        return fail(ENOPROTOOPT);
    }
    int v;
    if (len < sizeof(v)) {
        return fail(EINVAL);
    }
    memcpy(&v, val, sizeof(v));
    uint8_t args[5] = {opt, v != 0 ? 1 : 0, 0, 0, 0};
    err = simple(&k, NETP_TSETOPT, args, sizeof(args));
    return err == 0 ? 0 : fail(err);
}

int lnet_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if (val == NULL || len == NULL) {
        return fail(EFAULT);
    }
    if (is_timeo(level, name)) {
        rt_time_t t = name == SO_RCVTIMEO ? k.rcvtimeo : k.sndtimeo;
        struct timeval tv = {.tv_sec = (time_t)(t / RT_SEC(1)),
                             .tv_usec = (suseconds_t)(t % RT_SEC(1) / RT_USEC(1))};
        if (*len < sizeof(tv)) {
            return fail(EINVAL);
        }
        memcpy(val, &tv, sizeof(tv));
        *len = sizeof(tv);
        return 0;
    }
    int v;
    if (*len < sizeof(v)) {
        return fail(EINVAL);
    }
    if (level == SOL_SOCKET && name == SO_TYPE) {
        v = k.type == NETP_STREAM ? SOCK_STREAM : SOCK_DGRAM;
    } else {
        uint8_t opt = opt_of(level, name);
        if (opt == 0) {
            return fail(ENOPROTOOPT);
        }
        struct req q;
        err = req_begin(&q, NETP_TGETOPT, &k);
        if (err != 0) {
            return fail(err);
        }
        p9_w_u32(&q.w, k.sid);
        p9_w_u8(&q.w, opt);
        err = req_call(&q, 0, NULL, 0);
        struct p9_r r;
        if (err == 0 && !reply_is(&q, NETP_RGETOPT_LEN, &r)) {
            err = EIO;
        }
        uint32_t got = err == 0 ? p9_r_u32(&r) : 0;
        req_end(&q);
        if (err != 0) {
            return fail(err);
        }
        /* SO_ERROR is a Linux errno (0: none); the flags are 0 or not */
        v = opt == NETP_OPT_ERROR ? (got == 0 ? 0 : p9_errno_local(got)) : got != 0;
    }
    memcpy(val, &v, sizeof(v));
    *len = sizeof(v);
    return 0;
}

static int name_of(int fd, uint8_t which, struct sockaddr *addr, socklen_t *len)
{
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    if (addr == NULL || len == NULL) {
        return fail(EFAULT);
    }
    struct req q;
    err = req_begin(&q, NETP_TNAME, &k);
    if (err != 0) {
        return fail(err);
    }
    p9_w_u32(&q.w, k.sid);
    p9_w_u8(&q.w, which);
    err = req_call(&q, 0, NULL, 0);
    struct p9_r r;
    if (err == 0 && !reply_is(&q, NETP_RNAME_LEN, &r)) {
        err = EIO;
    }
    if (err == 0) {
        uint8_t a[6];
        r_addr(&r, a);
        addr_out(a, addr, len);
    }
    req_end(&q);
    return err == 0 ? 0 : fail(err);
}

int lnet_getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    return name_of(fd, 0, addr, len);
}

int lnet_getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
    return name_of(fd, 1, addr, len);
}

/* --------------------------------------------------------------------------------------------- poll */

static rt_chan_t *chan_at(int fd)
{
    if (fd < LNET_CHAN_FD_FIRST || fd >= LNET_FD_END) {
        return NULL;
    }
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    rt_chan_t *ch = ln.chans[fd - LNET_CHAN_FD_FIRST];
    (void)rt_mutex_unlock(&ln.lock);
    return ch;
}

#define POLL_FDS_MAX 256 /* descriptors in one poll(): more is EINVAL */

/* What a pass of poll() found out about its descriptors. */
struct poll_set {
    unsigned nsock;                 /* sockets, asked of Linux */
    nfds_t sock_at[NETP_POLL_MAX];  /* their places in fds */
    struct ref sock[NETP_POLL_MAX]; /* as found when the call began */
    unsigned nwatch;                /* channels polled for POLLIN: a wait ends when one is ready */
    rt_chan_t *watch[LNET_CHANS];
    bool recheck; /* a channel waits for what cannot end a wait (POLLOUT...) */
};

/* A channel's state as poll() reports it (looking takes no latched event; a wait for channels in
 * lnet_poll or a reader's wait for watched ones takes RT_CHAN_DISCONNECT, which shows as POLLHUP). */
static short chan_revents(rt_chan_t *ch, short events)
{
    unsigned ready = 0;
    (void)rt_chan_wait(&ch, 1, RT_CHAN_READABLE | RT_CHAN_WRITABLE, &ready, RT_NO_WAIT);
    short r = 0;
    if ((ready & RT_CHAN_READABLE) != 0) {
        r |= (short)(events & POLLIN);
    }
    if ((ready & RT_CHAN_WRITABLE) != 0) {
        r |= (short)(events & POLLOUT);
    }
    if (!rt_chan_connected(ch)) {
        r |= POLLHUP;
    }
    return r;
}

/* The remote part of a pass: Tpoll of the set's sockets, holding it up to `wait` ms (with `w`, a
 * watched channel ends the wait too). Adds the ready ones to fds and returns how many, or -errno. */
static int poll_remote(struct pollfd *fds, const struct poll_set *ps, uint32_t wait, struct lsvc_watch *w)
{
    struct req q;
    int err = req_begin(&q, NETP_TPOLL, &ps->sock[0]);
    if (err != 0) {
        return -err;
    }
    p9_w_u32(&q.w, wait);
    p9_w_u16(&q.w, (uint16_t)ps->nsock);
    for (unsigned i = 0; i < ps->nsock; i++) {
        const struct ref *k = &ps->sock[i];
        p9_w_u32(&q.w, k->sess == q.sess ? k->sid : 0); /* another session's: no socket (POLLNVAL) */
        p9_w_u16(&q.w, (uint16_t)(fds[ps->sock_at[i]].events & (POLLIN | POLLPRI | POLLOUT)));
    }
    size_t len = p9_w_end(&q.w);
    q.s->req_len = len;
    rt_time_t timeout = RT_MSEC(wait) + LSVC_TIMEOUT;
    err = len == 0    ? EINVAL
          : w != NULL ? lsvc_call_watch(&ln.conn, q.s, timeout, w)
                      : lsvc_call(&ln.conn, q.s, timeout);
    int count = 0;
    if (err == 0) {
        struct p9_r r;
        if (!reply_is(&q, 2u + 2u * ps->nsock, &r) || p9_r_u16(&r) != ps->nsock) {
            err = EIO;
        }
        for (unsigned i = 0; i < ps->nsock && err == 0; i++) {
            struct pollfd *p = &fds[ps->sock_at[i]];
            short got = (short)(p9_r_u16(&r) & (p->events | POLLERR | POLLHUP | POLLNVAL));
            count += p->revents == 0 && got != 0;
            p->revents |= got;
        }
    }
    if (err != LSVC_FIRED) {
        req_end(&q);
    }
    return err == LSVC_FIRED ? 0 : err != 0 ? -err : count;
}

/* The local part of a pass: every descriptor's revents but the sockets' (POLLNVAL for one that is no
 * open socket of the current session), which it gathers into ps on the first pass. Returns how many
 * are ready. */
static int poll_local(struct pollfd *fds, nfds_t n, struct poll_set *ps, bool first,
                      short (*other)(int fd, short events))
{
    int count = 0;
    for (nfds_t i = 0; i < n; i++) {
        struct pollfd *p = &fds[i];
        p->revents = 0;
        if (p->fd < 0) {
            continue;
        }
        rt_chan_t *ch = chan_at(p->fd);
        struct ref k;
        if (ch != NULL) {
            p->revents = chan_revents(ch, p->events);
            if (first && (p->events & POLLIN) != 0) {
                ps->watch[ps->nwatch++] = ch; /* lnet_poll counted them: at most LNET_CHANS */
            }
            ps->recheck |= first && (p->events & POLLIN) == 0;
            ps->recheck |= (p->events & POLLOUT) != 0 && (p->revents & POLLOUT) == 0;
        } else if (p->fd >= LNET_FD_FIRST && p->fd < LNET_FD_END) {
            if (ref_get(p->fd, &k) != 0) {
                p->revents = POLLNVAL;
            } else if (first) {
                ps->sock_at[ps->nsock] = i;
                ps->sock[ps->nsock++] = k;
            }
        } else {
            p->revents = other != NULL ? other(p->fd, p->events) : POLLNVAL;
        }
        count += p->revents != 0;
    }
    return count;
}

int lnet_poll(struct pollfd *fds, nfds_t n, int timeout_ms, short (*other)(int fd, short events))
{
    if (fds == NULL && n != 0) {
        return fail(EFAULT);
    }
    if (n > POLL_FDS_MAX) {
        return fail(EINVAL);
    }
    unsigned socks = 0, chans = 0;
    for (nfds_t i = 0; i < n; i++) {
        socks += fds[i].fd >= LNET_FD_FIRST && fds[i].fd < LNET_FD_FIRST + LNET_SOCKETS;
        chans += fds[i].fd >= LNET_CHAN_FD_FIRST && fds[i].fd < LNET_FD_END;
    }
    if (socks > NETP_POLL_MAX || chans > LNET_CHANS) {
        return fail(EINVAL);
    }
    rt_time_t deadline = timeout_ms < 0 ? RT_FOREVER : deadline_after(RT_MSEC((unsigned)timeout_ms));
    static struct poll_set zero;
    struct poll_set ps = zero;
    struct lsvc_watch w = {.chans = ps.watch};
    bool watching = false, first = true;
    int count, err = 0;
    for (;;) {
        count = poll_local(fds, n, &ps, first, other);
        bool last = count > 0 || expired(deadline);
        if (ps.nsock > 0) {
            bool kick = false;
            if (ps.nwatch > 0 && !watching) {
                w.n = ps.nwatch;
                err = lsvc_watch_add(&ln.conn, &w);
                if (err != 0) {
                    break;
                }
                /* this pass's request is answered at once, so a reader that was waiting without the
                 * watch's channels returns, and every later wait includes them */
                watching = kick = true;
            }
            uint32_t wait = last || kick ? 0 : wait_ms(ps.recheck ? deadline_after(RECHECK) : deadline);
            if (ps.recheck && !last && wait_ms(deadline) < wait) {
                wait = wait_ms(deadline);
            }
            int r = poll_remote(fds, &ps, wait, watching && wait > 0 ? &w : NULL);
            if (r < 0) {
                /* the session ended (its sockets are POLLNVAL now), or Linux did not answer: then they
                 * are in error (their calls fail too), never a poll that waits for good */
                count = poll_local(fds, n, &ps, false, other);
                for (unsigned i = 0; i < ps.nsock && count == 0; i++) {
                    fds[ps.sock_at[i]].revents = POLLERR;
                }
                count = count == 0 ? (int)ps.nsock : count;
                break;
            }
            count += r;
            if (count > 0 || last) {
                break;
            }
        } else if (last) {
            break;
        } else if (ps.nwatch > 0) {
            unsigned ready[LNET_CHANS];
            rt_time_t until = ps.recheck ? deadline_after(RECHECK) : deadline;
            rt_time_t now = rt_time_now();
            rt_time_t t = until == RT_FOREVER ? RT_FOREVER : until > now ? until - now : RT_NO_WAIT;
            (void)rt_chan_wait(ps.watch, ps.nwatch, RT_CHAN_READABLE | RT_CHAN_DISCONNECT, ready, t);
        } else {
            rt_time_t until = ps.recheck ? deadline_after(RECHECK) : deadline;
            rt_time_t now = rt_time_now();
            (void)rt_sem_take(&ln.idle, until == RT_FOREVER ? RT_FOREVER
                                        : until > now       ? until - now
                                                            : RT_NO_WAIT);
        }
        first = false;
    }
    if (watching) {
        lsvc_watch_del(&ln.conn, &w);
    }
    return err != 0 ? fail(err) : count;
}

/* ----------------------------------------------------------------------- the C library's calls */

ssize_t lnet_read(int fd, void *buf, size_t n)
{
    return lnet_recvfrom(fd, buf, n, 0, NULL, NULL);
}

ssize_t lnet_write(int fd, const void *buf, size_t n)
{
    return lnet_sendto(fd, buf, n, 0, NULL, 0);
}

int lnet_close(int fd)
{
    if (fd >= LNET_CHAN_FD_FIRST && fd < LNET_FD_END) {
        (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
        rt_chan_t **slot = &ln.chans[fd - LNET_CHAN_FD_FIRST];
        bool had = *slot != NULL;
        *slot = NULL;
        (void)rt_mutex_unlock(&ln.lock);
        return had ? 0 : fail(EBADF);
    }
    struct lnet_sock *s = sock_at(fd);
    if (s == NULL) {
        return fail(EBADF);
    }
    /* The descriptor is free at once: calls on it in other threads end with EBADF (the daemon answers
     * their requests so before Rclose), a new socket may get its number. */
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    bool open = s->used && s->open;
    struct ref k = {.fd = fd, .sess = s->sess, .sid = s->sid};
    s->used = false;
    (void)rt_mutex_unlock(&ln.lock);
    if (!open) {
        return fail(EBADF);
    }
    if (!lsvc_current(&ln.conn, k.sess)) {
        return fail(EBADF); /* its session ended: Linux's socket is gone already */
    }
    int err = simple(&k, NETP_TCLOSE, NULL, 0);
    return err == 0 || err == EBADF ? 0 : fail(err);
}

int lnet_fstat(int fd, struct stat *st)
{
    struct ref k;
    int err = chan_at(fd) != NULL ? 0 : ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    *st = (struct stat){0};
    st->st_mode = chan_at(fd) != NULL ? S_IFCHR | 0600 : S_IFSOCK | 0600;
    return 0;
}

int lnet_fcntl(int fd, int cmd, int arg)
{
    if (chan_at(fd) != NULL && (cmd == F_GETFD || cmd == F_SETFD)) {
        return 0;
    }
    struct ref k;
    int err = ref_get(fd, &k);
    if (err != 0) {
        return fail(err);
    }
    switch (cmd) {
    case F_GETFD:
        return 0;
    case F_SETFD:
        return 0; /* there is no exec: close-on-exec means nothing */
    case F_GETFL:
        return O_RDWR | (k.nonblock ? O_NONBLOCK : 0);
    case F_SETFL:
        (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
        struct lnet_sock *s = sock_at(fd);
        if (s->used && s->gen == k.gen) {
            s->nonblock = (arg & O_NONBLOCK) != 0;
        }
        (void)rt_mutex_unlock(&ln.lock);
        return 0;
    default:
        return fail(EINVAL);
    }
}

int lnet_chan_fd(rt_chan_t *ch)
{
    if (ch == NULL) {
        return fail(EINVAL);
    }
    int fd = -1;
    (void)rt_mutex_lock(&ln.lock, RT_FOREVER);
    for (unsigned i = 0; i < LNET_CHANS && fd < 0; i++) {
        if (ln.chans[i] == NULL) {
            ln.chans[i] = ch;
            fd = LNET_CHAN_FD_FIRST + (int)i;
        }
    }
    (void)rt_mutex_unlock(&ln.lock);
    return fd >= 0 ? fd : fail(EMFILE);
}

void lnet_stats(struct lsvc_stats *out)
{
    lsvc_get_stats(&ln.conn, out);
}
