/*
 * A service's session over a V-Bus channel (conn.h): slots, the reader's role, the session's life.
 *
 * Lock order: opening, then rx, then tx, then lock. `lock` is held only for bounded work (a few ring copies
 * of at most one frame's bytes, never a wait). The reader holds `rx` while it waits for bytes.
 */
#include "conn.h"

#include <errno.h>
#include <string.h>

#include "rtos/time.h"

static const char P9_VERSION[] = "9P2000.L";

const struct lsvc_proto lsvc_9p = {
    .version = P9_VERSION,
    .msize = P9_MSIZE,
    .msize_min = P9_IOHDR + 512u,
    .reply_type = p9_reply_type,
    .bulk_at = p9_bulk_at,
    .no_answer = ETIMEDOUT,
};

static rt_time_t left(rt_time_t deadline)
{
    rt_time_t now = rt_time_now();
    return now >= deadline ? RT_NO_WAIT : deadline - now;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int lsvc_init(struct lsvc_conn *c, const char *chan_name, const struct lsvc_proto *proto,
              struct lsvc_slot *slots, unsigned n_slots)
{
    if (c->ready) {
        return 0;
    }
    if (n_slots == 0 || n_slots > LSVC_SLOTS_MAX) {
        return EINVAL;
    }
    memset(c, 0, sizeof(*c));
    memset(slots, 0, n_slots * sizeof(*slots));
    if (rt_mutex_init(&c->lock) != RT_OK || rt_mutex_init(&c->tx) != RT_OK ||
        rt_mutex_init(&c->rx) != RT_OK || rt_mutex_init(&c->opening) != RT_OK ||
        rt_sem_init(&c->free, n_slots, n_slots) != RT_OK) {
        return EIO;
    }
    c->chan_name = chan_name;
    c->proto = proto;
    c->slots = slots;
    c->n_slots = n_slots;
    while ((1u << c->slot_bits) < n_slots) {
        c->slot_bits++;
    }
    c->msize = proto->msize;
    c->sess = 1;
    c->ready = true;
    return 0;
}

/* Ends the current session (under lock): what is in flight fails with EIO, abandoned slots are freed,
 * the frame being read is forgotten. */
static void session_end(struct lsvc_conn *c)
{
    for (unsigned i = 0; i < c->n_slots; i++) {
        struct lsvc_slot *s = &c->slots[i];
        if (s->state == LSVC_SENT) {
            s->err = EIO;
            s->data = NULL;
            s->state = LSVC_DONE;
        } else if (s->state == LSVC_ABANDONED) {
            s->state = LSVC_FREE;
            rt_sem_give(&c->free);
        }
    }
    if (c->up) {
        c->stats.lost++;
    }
    c->up = false;
    c->sess++;
    c->msize = c->proto->msize;
    c->hdr_len = 0;
    c->target = NULL;
}

/* The framing is lost (Linux sent something that is not a reply frame): the session ends and the rtos
 * closes and reopens its end, so that Linux's server sees end of file and a new connection starts
 * clean (the V-Bus drops every byte of the old one). Called holding rx, not lock. */
static void drop_connection(struct lsvc_conn *c)
{
    (void)rt_mutex_lock(&c->tx, RT_FOREVER);
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    session_end(c);
    c->stats.bad_frames++;
    rt_chan_t *old = c->ch;
    c->ch = NULL;
    (void)rt_mutex_unlock(&c->lock);
    if (old != NULL) {
        (void)rt_chan_close(old);
    }
    rt_chan_t *ch = NULL;
    if (rt_chan_open(c->chan_name, &ch) == RT_OK) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        c->ch = ch;
        (void)rt_mutex_unlock(&c->lock);
    }
    (void)rt_mutex_unlock(&c->tx);
}

/* Under lock: the slot in flight that tag answers, or NULL; *abandoned when it is one whose owner gave
 * up (its reply is read into nothing and the slot freed). */
static struct lsvc_slot *find_slot(struct lsvc_conn *c, uint16_t tag, bool *abandoned)
{
    *abandoned = false;
    for (unsigned i = 0; i < c->n_slots; i++) {
        struct lsvc_slot *s = &c->slots[i];
        if (s->tag != tag) {
            continue;
        }
        if (s->state == LSVC_SENT) {
            return s;
        }
        if (s->state == LSVC_ABANDONED) {
            *abandoned = true;
            return s;
        }
    }
    return NULL;
}

enum pump_result { PUMP_EMPTY, PUMP_FRAME, PUMP_BROKEN };

/* Whether a reply header may be followed: size within [P9_HDR, msize] and a reply type of the
 * protocol (p9_hdr_ok's rule, for any protocol). */
static bool hdr_ok(const struct lsvc_conn *c, const struct p9_hdr *h)
{
    if (h->size < P9_HDR || h->size > c->msize) {
        return false;
    }
    return h->type == P9_RLERROR || c->proto->reply_type((uint8_t)(h->type - 1u)) == h->type;
}

/* Under lock: an abandoned slot's reply has come (or started to): the slot and its tag are free again. */
static void release_abandoned(struct lsvc_conn *c, struct lsvc_slot *s)
{
    if (s->state == LSVC_ABANDONED) {
        s->state = LSVC_FREE;
        rt_sem_give(&c->free);
    }
}

static void finish(struct lsvc_slot *s, int err)
{
    s->err = err;
    s->state = LSVC_DONE;
}

/*
 * Under lock: reads what the ring holds, without waiting, until one frame is complete (PUMP_FRAME),
 * the ring is empty (PUMP_EMPTY; the frame's state is kept for the next reader) or the framing is
 * lost (PUMP_BROKEN). Every copy is bounded by the frame and by the buffer it goes into.
 */
static enum pump_result pump(struct lsvc_conn *c)
{
    static uint8_t scratch[256]; /* bytes of a frame nobody waits for (under lock) */
    rt_chan_t *ch = c->ch;
    if (ch == NULL) {
        return PUMP_EMPTY;
    }
    if (c->hdr_len < P9_HDR) {
        int n = rt_chan_recv(ch, c->hdr + c->hdr_len, P9_HDR - c->hdr_len, RT_NO_WAIT);
        if (n <= 0) {
            return PUMP_EMPTY;
        }
        c->hdr_len += (size_t)n;
        if (c->hdr_len < P9_HDR) {
            return PUMP_EMPTY;
        }
        p9_hdr_parse(c->hdr, &c->cur);
        size_t body = c->cur.size - P9_HDR;
        if (!hdr_ok(c, &c->cur) || (c->proto->bulk_at(c->cur.type) == 0 && body > LSVC_FIXED_MAX)) {
            return PUMP_BROKEN;
        }
        bool abandoned;
        struct lsvc_slot *s = find_slot(c, c->cur.tag, &abandoned);
        c->target = abandoned ? NULL : s;
        c->body_pos = 0;
        c->count = 0;
        if (s == NULL) {
            c->stats.unknown_tags++;
        } else if (abandoned) {
            release_abandoned(c, s); /* its reply is dropped below */
        } else if (c->cur.type != P9_RLERROR && c->cur.type != c->proto->reply_type(s->req[4])) {
            c->stats.bad_replies++;
            finish(s, EIO);
            c->target = NULL;
        }
    }
    size_t body = c->cur.size - P9_HDR;
    size_t bulk_at = c->proto->bulk_at(c->cur.type);
    size_t fixed = bulk_at != 0 ? bulk_at : body;
    while (c->body_pos < body) {
        struct lsvc_slot *s = c->target;
        if (s != NULL && s->state != LSVC_SENT) { /* its owner gave up while the frame came in */
            release_abandoned(c, s);
            c->target = NULL;
            continue;
        }
        uint8_t *dst;
        size_t want;
        if (s != NULL && c->body_pos < fixed) {
            dst = s->fixed + c->body_pos;
            want = fixed - c->body_pos;
        } else if (s != NULL) {
            if (c->body_pos == fixed) { /* the count, just read: it must be what the frame carries */
                c->count = le32(s->fixed + fixed - 4u);
                if (c->count != body - fixed || c->count > s->data_cap || s->data == NULL) {
                    c->stats.bad_replies++;
                    finish(s, EIO);
                    c->target = NULL;
                    continue;
                }
            }
            dst = (uint8_t *)s->data + (c->body_pos - fixed);
            want = body - c->body_pos;
        } else {
            dst = scratch;
            want = body - c->body_pos < sizeof(scratch) ? body - c->body_pos : sizeof(scratch);
        }
        int n = rt_chan_recv(ch, dst, want, RT_NO_WAIT);
        if (n <= 0) {
            return PUMP_EMPTY;
        }
        c->body_pos += (size_t)n;
    }
    struct lsvc_slot *s = c->target;
    if (s != NULL && s->state != LSVC_SENT) {
        release_abandoned(c, s);
        s = NULL;
    }
    if (s != NULL) {
        s->rtype = c->cur.type;
        s->fixed_len = body < fixed ? body : fixed;
        s->data_len = body > fixed ? body - fixed : 0;
        int err = 0;
        if (s->rtype == P9_RLERROR) {
            err = s->fixed_len == 4 ? p9_errno_local(le32(s->fixed)) : EIO;
            if (err == 0) {
                err = EIO;
            }
        } else if (bulk_at != 0 &&
                   (s->fixed_len != bulk_at || le32(s->fixed + bulk_at - 4u) != s->data_len)) {
            c->stats.bad_replies++;
            err = EIO;
        }
        finish(s, err);
    }
    c->hdr_len = 0;
    c->target = NULL;
    return PUMP_FRAME;
}

/* Holding rx: reads until `me` is answered, a frame for another request was handed over (the caller
 * then gives the role back so that request's owner returns at once), or the deadline passes. */
static int read_some(struct lsvc_conn *c, struct lsvc_slot *me, rt_time_t deadline)
{
    for (;;) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        enum pump_result r = pump(c);
        bool done = me->state == LSVC_DONE;
        rt_chan_t *ch = c->ch;
        (void)rt_mutex_unlock(&c->lock);
        if (r == PUMP_BROKEN) {
            drop_connection(c);
            return 0;
        }
        if (done || r == PUMP_FRAME) {
            return 0;
        }
        if (ch == NULL) {
            return ENOTCONN;
        }
        unsigned ready = 0;
        int w = rt_chan_wait(&ch, 1, RT_CHAN_READABLE | RT_CHAN_DISCONNECT, &ready, left(deadline));
        if (w == RT_ETIMEDOUT || w == RT_EWOULDBLOCK) {
            return ETIMEDOUT;
        }
        if (w < 0) {
            return EIO;
        }
        if ((ready & RT_CHAN_DISCONNECT) != 0) {
            (void)rt_mutex_lock(&c->lock, RT_FOREVER);
            session_end(c);
            (void)rt_mutex_unlock(&c->lock);
        }
    }
}

/* Under lock: a free slot (the caller took c->free), BUILDING in the current session, with a new tag. */
static struct lsvc_slot *claim(struct lsvc_conn *c)
{
    for (unsigned i = 0; i < c->n_slots; i++) {
        struct lsvc_slot *s = &c->slots[i];
        if (s->state == LSVC_FREE) {
            uint16_t tag;
            do {
                c->seq++;
                tag = (uint16_t)((unsigned)c->seq << c->slot_bits | i);
            } while (tag == P9_NOTAG);
            s->tag = tag;
            s->state = LSVC_BUILDING;
            s->sess = c->sess;
            s->bulk = NULL;
            s->bulk_len = 0;
            s->data = NULL;
            s->data_cap = 0;
            s->req_len = 0;
            return s;
        }
    }
    return NULL; /* not reached: the semaphore counts the free slots */
}

static int take_slot(struct lsvc_conn *c, struct lsvc_slot **out, rt_time_t timeout)
{
    int r = rt_sem_take(&c->free, timeout);
    if (r != RT_OK) {
        return r == RT_ETIMEDOUT || r == RT_EWOULDBLOCK ? ETIMEDOUT : EIO;
    }
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    *out = claim(c);
    (void)rt_mutex_unlock(&c->lock);
    return *out != NULL ? 0 : EIO;
}

/* Holding opening: Tversion, which starts the session. Its tag is NOTAG (9P), answered to this slot. */
static int handshake(struct lsvc_conn *c)
{
    struct lsvc_slot *s;
    int err = take_slot(c, &s, LSVC_TIMEOUT);
    if (err != 0) {
        return err;
    }
    const struct lsvc_proto *p = c->proto;
    size_t vlen = strlen(p->version);
    struct p9_w w;
    p9_w_begin(&w, s->req, sizeof(s->req), P9_TVERSION, P9_NOTAG);
    p9_w_u32(&w, p->msize);
    p9_w_str(&w, p->version, vlen);
    s->req_len = p9_w_end(&w);
    s->tag = P9_NOTAG;
    err = lsvc_call(c, s, LSVC_TIMEOUT);
    if (err == 0) {
        struct p9_r r;
        p9_r_init(&r, s->fixed, s->fixed_len);
        uint32_t msize = p9_r_u32(&r);
        const char *ver;
        uint16_t n;
        p9_r_str(&r, &ver, &n);
        if (!p9_r_done(&r) || msize < p->msize_min || msize > p->msize || n != vlen ||
            memcmp(ver, p->version, n) != 0) {
            err = EIO;
        } else {
            (void)rt_mutex_lock(&c->lock, RT_FOREVER);
            if (s->sess == c->sess) {
                c->msize = msize;
                c->up = true;
                c->stats.sessions++;
            } else {
                err = EIO;
            }
            (void)rt_mutex_unlock(&c->lock);
        }
    }
    lsvc_put(c, s);
    return err;
}

/* Holding opening: the channel open and a session up, or why not. */
static int ensure(struct lsvc_conn *c)
{
    if (c->ch == NULL) {
        rt_chan_t *ch = NULL;
        int r = rt_chan_open(c->chan_name, &ch);
        if (r != RT_OK) {
            return r == RT_ENOENT ? ENODEV : r == RT_EBUSY ? EBUSY : EIO;
        }
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        c->ch = ch;
        (void)rt_mutex_unlock(&c->lock);
    }
    unsigned ev = rt_chan_events(c->ch);
    bool connected = rt_chan_connected(c->ch);
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    if (c->up && ((ev & RT_CHAN_DISCONNECT) != 0 || !connected)) {
        session_end(c);
    }
    bool up = c->up;
    (void)rt_mutex_unlock(&c->lock);
    if (up) {
        return 0;
    }
    if (!connected) {
        return ENOTCONN;
    }
    return handshake(c);
}

int lsvc_get(struct lsvc_conn *c, struct lsvc_slot **s, uint32_t *sess)
{
    if (!c->ready) {
        return ENODEV;
    }
    if (rt_mutex_lock(&c->opening, LSVC_TIMEOUT) != RT_OK) {
        return ETIMEDOUT;
    }
    int err = ensure(c);
    (void)rt_mutex_unlock(&c->opening);
    if (err == 0) {
        err = take_slot(c, s, LSVC_TIMEOUT);
    }
    if (err == 0) {
        *sess = (*s)->sess;
        if (!lsvc_current(c, *sess)) { /* the session ended between the two */
            lsvc_put(c, *s);
            err = ENOTCONN;
        }
    }
    return err;
}

/* The owner gives up on a request in flight: its reply, if it ever comes, is read into nothing. A
 * request not answered in time fails with the protocol's no_answer errno. */
static int abandon(struct lsvc_conn *c, struct lsvc_slot *s, int err)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    if (s->state == LSVC_DONE) { /* answered at the last moment */
        err = s->err;
    } else {
        s->state = LSVC_ABANDONED;
        s->data = NULL;
        if (err == ETIMEDOUT) {
            c->stats.timeouts++;
            err = c->proto->no_answer;
        }
    }
    (void)rt_mutex_unlock(&c->lock);
    return err;
}

static int send_request(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t deadline)
{
    if (rt_mutex_lock(&c->tx, left(deadline)) != RT_OK) {
        return ETIMEDOUT;
    }
    rt_chan_t *ch = c->ch;
    int err = 0;
    size_t sent = 0;
    if (ch == NULL) {
        err = ENOTCONN;
    } else {
        int n = rt_chan_send(ch, s->req, s->req_len, left(deadline));
        sent = n > 0 ? (size_t)n : 0;
        if (n >= 0 && sent == s->req_len && s->bulk_len != 0) {
            n = rt_chan_send(ch, s->bulk, s->bulk_len, left(deadline));
            sent += n > 0 ? (size_t)n : 0;
        }
        if (sent != s->req_len + s->bulk_len) {
            err = n == RT_ENOTCONN ? ENOTCONN : n == RT_ETIMEDOUT || n >= 0 ? ETIMEDOUT : EIO;
        }
    }
    (void)rt_mutex_unlock(&c->tx);
    if (err != 0 && sent != 0) {
        /* part of a frame is in the ring: Linux would read the next request as its rest */
        (void)rt_mutex_lock(&c->rx, RT_FOREVER);
        drop_connection(c);
        (void)rt_mutex_unlock(&c->rx);
    }
    return err;
}

int lsvc_call(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout)
{
    rt_time_t deadline = rt_time_now() + timeout;
    if (s->req_len < P9_HDR) {
        return EINVAL; /* the request did not fit its buffer */
    }
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    bool current = s->sess == c->sess;
    if (current) {
        s->state = LSVC_SENT; /* before it is sent: a quick reply finds it */
        s->fixed_len = s->data_len = 0;
        s->err = 0;
    }
    (void)rt_mutex_unlock(&c->lock);
    if (!current) {
        return EIO;
    }
    int err = send_request(c, s, deadline);
    if (err != 0) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        if (s->state == LSVC_SENT || s->state == LSVC_DONE) {
            s->state = LSVC_BUILDING; /* not sent (or cut off): no reply will come for it */
        }
        c->stats.errors++;
        (void)rt_mutex_unlock(&c->lock);
        return err == ETIMEDOUT ? c->proto->no_answer : err;
    }
    c->stats.requests++;
    for (;;) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        bool done = s->state == LSVC_DONE;
        (void)rt_mutex_unlock(&c->lock);
        if (done) {
            break;
        }
        int r = rt_mutex_lock(&c->rx, left(deadline));
        if (r != RT_OK) {
            err = abandon(c, s, ETIMEDOUT);
            break;
        }
        err = read_some(c, s, deadline);
        (void)rt_mutex_unlock(&c->rx);
        if (err != 0) {
            err = abandon(c, s, err);
            break;
        }
    }
    if (err == 0) {
        err = s->err;
    }
    if (err != 0) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        c->stats.errors++;
        (void)rt_mutex_unlock(&c->lock);
    }
    return err;
}

void lsvc_put(struct lsvc_conn *c, struct lsvc_slot *s)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    bool mine = s->state != LSVC_ABANDONED && s->state != LSVC_FREE;
    if (mine) {
        s->state = LSVC_FREE;
        s->data = NULL;
    }
    (void)rt_mutex_unlock(&c->lock);
    if (mine) {
        rt_sem_give(&c->free);
    }
}

bool lsvc_current(struct lsvc_conn *c, uint32_t sess)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    bool cur = c->up && c->sess == sess;
    (void)rt_mutex_unlock(&c->lock);
    return cur;
}

uint32_t lsvc_iounit(struct lsvc_conn *c)
{
    return lsvc_msize(c) - P9_IOHDR;
}

uint32_t lsvc_msize(struct lsvc_conn *c)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    uint32_t n = c->msize;
    (void)rt_mutex_unlock(&c->lock);
    return n;
}

void lsvc_get_stats(struct lsvc_conn *c, struct lsvc_stats *out)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    *out = c->stats;
    (void)rt_mutex_unlock(&c->lock);
}
