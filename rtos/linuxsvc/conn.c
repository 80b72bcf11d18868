/*
 * A service's session over a V-Bus channel (conn.h): slots, the reader's role, the session's life.
 *
 * Lock order: opening, then rx, then tx, then lock. `lock` is held only for bounded work (a few ring copies
 * of at most one frame's bytes, never a wait). The reader holds `rx` while it waits for bytes (and for
 * the watched channels of lsvc_call_watch's callers).
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
    for (unsigned i = 0; i < n_slots; i++) {
        if (rt_sem_init(&slots[i].wake, 0, 1) != RT_OK) {
            return EIO;
        }
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

/* Under lock: the owner of s, which stepped aside (must_yield), looks again. */
static void wake_yielder(struct lsvc_slot *s)
{
    if (s->yielding) {
        s->yielding = false;
        (void)rt_sem_give(&s->wake);
    }
}

/* Under lock: a request is answered (or failed); its owner has yet to take the result (collected).
 * The owner may be waiting on the reader's role, on its watch, or aside (must_yield). */
static void finish(struct lsvc_conn *c, struct lsvc_slot *s, int err)
{
    s->err = err;
    s->state = LSVC_DONE;
    c->collect++;
    if (s->watch != NULL) {
        (void)rt_sem_give(&s->watch->wake);
    }
    wake_yielder(s);
}

/* Ends the current session (under lock): what is in flight fails with EIO, abandoned slots are freed,
 * the frame being read is forgotten. */
static void session_end(struct lsvc_conn *c)
{
    for (unsigned i = 0; i < c->n_slots; i++) {
        struct lsvc_slot *s = &c->slots[i];
        if (s->state == LSVC_SENT) {
            s->data = NULL;
            finish(c, s, EIO);
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
            finish(c, s, EIO);
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
                    finish(c, s, EIO);
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
        finish(c, s, err);
    }
    c->hdr_len = 0;
    c->target = NULL;
    return PUMP_FRAME;
}

/* Under lock: the channels a reader waits on, the session's first, then those of the watches that have
 * not fired (owner[i]: whose channel list[i] is). Returns how many. */
static unsigned wait_list(struct lsvc_conn *c, rt_chan_t *ch, rt_chan_t **list, struct lsvc_watch **owner)
{
    unsigned n = 0;
    list[n] = ch;
    owner[n++] = NULL;
    for (struct lsvc_watch *w = c->watches; w != NULL; w = w->next) {
        for (unsigned i = 0; i < w->n && !w->fired && n < 1u + LSVC_WATCH_MAX; i++) {
            list[n] = w->chans[i];
            owner[n++] = w;
        }
    }
    return n;
}

/* Under lock: whether w is still added (its owner may have returned while a reader waited). */
static bool watch_live(const struct lsvc_conn *c, const struct lsvc_watch *w)
{
    for (const struct lsvc_watch *x = c->watches; x != NULL; x = x->next) {
        if (x == w) {
            return true;
        }
    }
    return false;
}

/* Holding rx: reads until `me` is answered, a frame for another request was handed over (the caller
 * then gives the role back so that request's owner returns at once), a watched channel fired (its
 * watcher is woken, and the role given back for it), or the deadline passes. */
static int read_some(struct lsvc_conn *c, struct lsvc_slot *me, rt_time_t deadline)
{
    for (;;) {
        rt_chan_t *list[1u + LSVC_WATCH_MAX];
        struct lsvc_watch *owner[1u + LSVC_WATCH_MAX];
        unsigned ready[1u + LSVC_WATCH_MAX] = {0};
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        enum pump_result r = pump(c);
        bool done = me->state == LSVC_DONE;
        rt_chan_t *ch = c->ch;
        unsigned n = wait_list(c, ch, list, owner);
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
        /* Another thread may end the session meanwhile (lsvc_get takes the channel's latched
         * DISCONNECT when it finds it first, and no event is left to wake this wait), so the reader
         * looks again at its request every LSVC_RECHECK. */
        rt_time_t t = left(deadline);
        int w = rt_chan_wait(list, n, RT_CHAN_READABLE | RT_CHAN_DISCONNECT, ready,
                             t > LSVC_RECHECK ? LSVC_RECHECK : t);
        if ((w == RT_ETIMEDOUT || w == RT_EWOULDBLOCK) && t > LSVC_RECHECK) {
            (void)rt_mutex_lock(&c->lock, RT_FOREVER);
            bool answered = c->collect > 0; /* owners that did not run while it stepped aside */
            (void)rt_mutex_unlock(&c->lock);
            if (answered) {
                return 0; /* the caller gives the role back, and may step aside again */
            }
            continue;
        }
        if (w == RT_ETIMEDOUT || w == RT_EWOULDBLOCK) {
            return ETIMEDOUT;
        }
        if (w < 0 && n == 1) {
            return EIO;
        }
        /* w < 0 with watched channels: one of them was closed (its poll() ends, seeing POLLHUP) */
        bool fired = false;
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        for (unsigned i = 1; i < n; i++) {
            if ((ready[i] != 0 || w < 0) && watch_live(c, owner[i]) && !owner[i]->fired) {
                owner[i]->fired = true;
                (void)rt_sem_give(&owner[i]->wake);
            }
            fired |= ready[i] != 0 || w < 0;
        }
        if (w < 0) {
            ready[0] = 0;
        }
        if ((ready[0] & RT_CHAN_DISCONNECT) != 0) {
            session_end(c);
        }
        (void)rt_mutex_unlock(&c->lock);
        if (fired) {
            return 0;
        }
    }
}

/* Under lock: the owner of an answered request took its result. When no answered request waits for
 * its owner any more, the callers that stepped aside for them (must_yield) go on. */
static void collected(struct lsvc_conn *c)
{
    c->collect--;
    for (unsigned i = 0; i < c->n_slots && c->collect == 0; i++) {
        wake_yielder(&c->slots[i]);
    }
}

/*
 * Holding rx, for a caller whose request is not answered: whether it must give the role back and wait
 * (on its slot's `wake`) for the owners of answered requests to take their results first. The reader gives
 * the role back after each frame it hands over, but the mutex goes to its most urgent waiter, who need not be
 * that frame's owner; without this, a caller whose reply will take long (a blocked recv) would hold the role
 * while the owner of a reply that is there already waits for it. A caller steps aside at most LSVC_YIELD
 * at a time (call()): it lends its priority to no one meanwhile, so a less urgent owner kept from running
 * would otherwise hold it up; after that it takes the role through the mutex again (lending its priority
 * to whoever has it) and reads until its next frame, or LSVC_RECHECK (read_some), then steps aside again
 * if answers still wait: a less urgent owner kept from running waits at most that long once it can run.
 */
static bool must_yield(struct lsvc_conn *c, struct lsvc_slot *s)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    bool yield = s->state != LSVC_DONE && c->collect > 0;
    s->yielding = yield;
    (void)rt_mutex_unlock(&c->lock);
    return yield;
}

/* Gives the reader's role back; a caller waiting on its watch may take it now. */
static void rx_release(struct lsvc_conn *c)
{
    (void)rt_mutex_unlock(&c->rx);
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    for (struct lsvc_watch *w = c->watches; w != NULL; w = w->next) {
        (void)rt_sem_give(&w->wake);
    }
    (void)rt_mutex_unlock(&c->lock);
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
            s->watch = NULL;
            s->yielding = false;
            while (rt_sem_take(&s->wake, RT_NO_WAIT) == RT_OK) { /* a late wake-up of its last use */
            }
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
        s->watch = NULL; /* its watch ends with the call */
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
        rx_release(c);
    }
    return err;
}

/* lsvc_call and lsvc_call_watch (w not NULL). */
static int call(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout, struct lsvc_watch *w)
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
        s->watch = w;
    }
    (void)rt_mutex_unlock(&c->lock);
    if (!current) {
        return EIO;
    }
    bool may_yield = true;
    int err = send_request(c, s, deadline);
    if (err != 0) {
        (void)rt_mutex_lock(&c->lock, RT_FOREVER);
        if (s->state == LSVC_DONE) {
            collected(c);
        }
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
        bool fired = w != NULL && w->fired;
        (void)rt_mutex_unlock(&c->lock);
        if (done) {
            break;
        }
        if (fired) {
            err = abandon(c, s, LSVC_FIRED);
            if (err == LSVC_FIRED) {
                return err;
            }
            break; /* answered at the last moment */
        }
        /* a watcher reads only when the role is free, and otherwise waits for its reader to wake it */
        int r = rt_mutex_lock(&c->rx, w != NULL ? RT_NO_WAIT : left(deadline));
        if (r != RT_OK && w != NULL && r != RT_EINVAL) {
            r = rt_sem_take(&w->wake, left(deadline));
            if (r == RT_OK) {
                continue;
            }
        }
        if (r != RT_OK) {
            err = abandon(c, s, ETIMEDOUT);
            break;
        }
        if (may_yield && must_yield(c, s)) {
            rx_release(c);
            rt_time_t t = left(deadline);
            if (rt_sem_take(&s->wake, t < LSVC_YIELD ? t : LSVC_YIELD) != RT_OK) {
                (void)rt_mutex_lock(&c->lock, RT_FOREVER);
                s->yielding = false; /* or it was woken meanwhile: claim() drops that wake-up */
                (void)rt_mutex_unlock(&c->lock);
                if (t <= LSVC_YIELD) {
                    err = abandon(c, s, ETIMEDOUT);
                    break;
                }
                may_yield = false; /* enough: read until the next frame */
            }
            continue;
        }
        err = read_some(c, s, deadline);
        may_yield = true;
        rx_release(c);
        if (err != 0) {
            err = abandon(c, s, err);
            break;
        }
    }
    if (err == 0) {
        err = s->err;
    }
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    if (s->state == LSVC_DONE) {
        collected(c);
    }
    c->stats.errors += err != 0;
    (void)rt_mutex_unlock(&c->lock);
    return err;
}

int lsvc_call(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout)
{
    return call(c, s, timeout, NULL);
}

int lsvc_call_watch(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout, struct lsvc_watch *w)
{
    return call(c, s, timeout, w);
}

int lsvc_watch_add(struct lsvc_conn *c, struct lsvc_watch *w)
{
    w->fired = false;
    w->next = NULL;
    if (rt_sem_init(&w->wake, 0, 1) != RT_OK) {
        return EINVAL;
    }
    int err = EAGAIN;
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    if (w->n <= LSVC_WATCH_MAX - c->watched) {
        w->next = c->watches;
        c->watches = w;
        c->watched += w->n;
        err = 0;
    }
    (void)rt_mutex_unlock(&c->lock);
    return err;
}

void lsvc_watch_del(struct lsvc_conn *c, struct lsvc_watch *w)
{
    (void)rt_mutex_lock(&c->lock, RT_FOREVER);
    for (struct lsvc_watch **p = &c->watches; *p != NULL; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            c->watched -= w->n;
            break;
        }
    }
    (void)rt_mutex_unlock(&c->lock);
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
