/*
 * One session with a Linux service over a V-Bus channel, shared by every rtos thread: 9P2000.L for
 * Linux's files (files.c), rtmux-net for its sockets (net.c, lib/netproto.h). Both frame their messages
 * as 9P does (size[4] type[1] tag[2], a Tversion to start, Rlerror for errors); what differs is in the
 * session's protocol description (struct lsvc_proto), so one reader serves both.
 *
 * Any number of threads may have a request in flight (up to the session's slots; more wait for a
 * slot). Each request has a tag of its own; replies come back in any order. There is no thread of the
 * service's own: a thread waiting for its reply takes the reader's role (a priority-inheriting mutex,
 * so the most urgent waiter lends its priority to whoever reads), reads one frame, hands it to the
 * request it answers, gives the role back, and returns once its own reply is there. A thread that never
 * calls Linux never runs any of this.
 *
 * Linux is not trusted. A frame whose size is out of range, or a fixed part longer than any reply,
 * loses the stream's framing: the session is dropped (every request in flight fails with EIO) and the
 * rtos closes and reopens its end of the channel, so Linux's server sees end of file and starts over.
 * A well-framed reply with an unknown tag, or one already answered, is counted and dropped; one of the
 * wrong type fails its request with EIO. Nothing Linux sends is written anywhere but into the
 * requester's buffers, and never more than they hold.
 *
 * Sessions: the first request after the channel connects sends Tversion. When Linux closes the
 * channel (its server died, Linux rebooted or powered off) the requests in flight fail with EIO at
 * once, the session number changes (files opened in the old one give EBADF), and new requests fail at
 * once with ENOTCONN until Linux connects again. A request that gets no answer fails after its timeout
 * (LSVC_TIMEOUT by default) with the protocol's no_answer errno; its late reply is dropped when it comes.
 */
#ifndef RTOS_LINUXSVC_CONN_H
#define RTOS_LINUXSVC_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p9.h"
#include "rtos/chan.h"
#include "rtos/sync.h"
#include "rtos/types.h"

/* The most requests in flight at once a session may have (its slots, lsvc_init); the tag's low bits
 * are the slot (as few as hold the session's count), the rest a sequence number, so a late reply to an
 * earlier use of the slot is told apart. */
#define LSVC_SLOTS_MAX 64u
/* The longest request built in a slot: a Twalk of 16 names of 255 bytes does not fit, so path walks
 * send as many names per Twalk as fit here (files.c); every other request is far shorter. */
#define LSVC_REQ_MAX 1280u
/* The reply's fixed part (everything of Rread/Rreaddir before the data, all of any other reply). */
#define LSVC_FIXED_MAX 256u
/* How long a request waits for its answer. 9P servers answer in microseconds to milliseconds; this only
 * bounds a server that stopped without closing its end. */
#ifndef LSVC_TIMEOUT
#define LSVC_TIMEOUT RT_SEC(5)
#endif
/* The longest a caller steps aside at a time for others' answered requests (conn.c, must_yield). On the
 * rtos an owner runs at once unless a more urgent thread is busy; a host test of many equal threads on a
 * loaded machine sets it longer. */
#ifndef LSVC_YIELD
#define LSVC_YIELD RT_MSEC(1)
#endif
/* How long a reader waits before it looks at its request again, in case another thread ended the
 * session meanwhile (conn.c, read_some): the bound on noticing that. */
#define LSVC_RECHECK RT_MSEC(100)

enum lsvc_slot_state { LSVC_FREE, LSVC_BUILDING, LSVC_SENT, LSVC_DONE, LSVC_ABANDONED };

/* The channels all the watches of one session may name at once (with the session's own channel, as
 * many as one rt_chan_wait takes). */
#define LSVC_WATCH_MAX 31u
/* lsvc_call_watch's result when a watched channel was ready before the reply. */
#define LSVC_FIRED (-1)

/*
 * A caller that waits for its reply and for local channels at once (poll() over sockets and channels).
 * A thread can block on one object only, so whoever holds the reader's role waits on the watched
 * channels as well as on the session's, and wakes the watcher through `wake` when one of them is
 * readable or its Linux end closes; the watcher itself waits on `wake`, or reads when the role is free.
 * A reader that was already waiting when a watch was added does not see its channels until its next
 * frame: the watcher sends a request that Linux answers at once after lsvc_watch_add (net.c: a poll of
 * its sockets without a wait), so from then on every reader waits on them.
 */
struct lsvc_watch {
    rt_chan_t *const *chans; /* the n channels watched for RT_CHAN_READABLE or RT_CHAN_DISCONNECT */
    unsigned n;
    rt_sem_t wake; /* given when the reply came, a channel fired, or the reader's role was given back */
    bool fired;    /* one of the channels was ready (under the session's lock) */
    struct lsvc_watch *next;
};

struct lsvc_slot {
    uint16_t tag;
    enum lsvc_slot_state state;
    int err;       /* when DONE: 0, or the C library's errno (Rlerror's, or EIO for a bad reply) */
    uint32_t sess; /* the session it was sent in */
    uint8_t req[LSVC_REQ_MAX];
    size_t req_len;
    const void *bulk; /* Twrite's data, sent right after req (req's size and count include it) */
    size_t bulk_len;
    uint8_t rtype; /* the reply's type (its expected one, or P9_RLERROR) */
    uint8_t fixed[LSVC_FIXED_MAX];
    size_t fixed_len;
    void *data; /* Rread/Rreaddir's data goes here, at most data_cap bytes */
    size_t data_cap, data_len;
    struct lsvc_watch *watch; /* woken at the answer (lsvc_call_watch), or NULL */
    bool yielding;            /* its owner stepped aside for answered requests (conn.c, must_yield) */
    rt_sem_t wake;            /* ... and waits here until they are taken or its own answer came */
};

struct lsvc_stats {
    uint64_t requests, errors, timeouts; /* sent; failed (any errno); of which no answer in time */
    uint64_t sessions, lost;             /* Tversion done; sessions that ended with Linux's close */
    uint64_t bad_frames;                 /* framing lost: session dropped, channel reopened */
    uint64_t unknown_tags;               /* well-framed replies to nothing in flight (late, duplicate) */
    uint64_t bad_replies;                /* right tag, wrong type or malformed body: EIO to the caller */
};

/* A service's protocol, as the session sees it: frames, Tversion/Rversion (P9_TVERSION, tag P9_NOTAG,
 * msize[4] version[s] both ways) and Rlerror (P9_RLERROR, a Linux errno) are 9P's; the rest is this. */
struct lsvc_proto {
    const char *version;       /* Tversion's version string; Rversion must give it back */
    uint32_t msize, msize_min; /* the largest frame offered in Tversion; the least Rversion may lower to */
    uint8_t (*reply_type)(uint8_t t); /* the R type answering request type t; 0: t is no request */
    /* For a reply type r that carries data after its fixed fields (Rread): the fixed part's length,
     * whose last 4 bytes are the data's count; 0 for every other type (the whole body is fixed, at
     * most LSVC_FIXED_MAX bytes). */
    size_t (*bulk_at)(uint8_t r);
    int no_answer; /* the errno of a request without an answer in time (9P: ETIMEDOUT) */
};

/* 9P2000.L as Linux's diod serves it (files.c). */
extern const struct lsvc_proto lsvc_9p;

struct lsvc_conn {
    const char *chan_name;
    const struct lsvc_proto *proto;
    rt_chan_t *ch;
    rt_mutex_t lock;    /* slots, session fields, rx state: short sections only */
    rt_mutex_t tx;      /* one whole request at a time onto the channel */
    rt_mutex_t rx;      /* the reader's role */
    rt_mutex_t opening; /* opening the channel and the Tversion exchange */
    rt_sem_t free;      /* free slots */
    unsigned collect;   /* requests answered whose owners have not taken the result yet */
    bool ready;         /* the objects above are initialised */
    bool up;            /* Tversion answered in session `sess` */
    uint32_t sess;      /* changes at every session's end */
    uint32_t msize;
    uint16_t seq;
    /* the frame being read (kept across readers: a reader may stop in the middle at its deadline) */
    uint8_t hdr[P9_HDR];
    size_t hdr_len;
    struct p9_hdr cur;
    size_t body_pos;
    struct lsvc_slot *target; /* NULL: the frame is dropped */
    uint32_t count;           /* Rread/Rreaddir's count, once read */
    struct lsvc_stats stats;
    struct lsvc_slot *slots; /* n_slots of them, the caller's (lsvc_init) */
    unsigned n_slots, slot_bits;
    struct lsvc_watch *watches; /* callers waiting for channels too, and how many channels they name */
    unsigned watched;
};

/* Sets up `c` for the channel `chan_name` with `proto`'s messages and n_slots (1..LSVC_SLOTS_MAX) slots
 * of the caller's, which stay the session's (idempotent; the channel is opened at the first request). */
int lsvc_init(struct lsvc_conn *c, const char *chan_name, const struct lsvc_proto *proto,
              struct lsvc_slot *slots, unsigned n_slots);

/* A slot for one request, in the current session (opened, Tversion done if needed). Returns 0 or an
 * errno: ENOTCONN (Linux's end is not open), ENODEV (no such channel), EIO, ETIMEDOUT. *sess gets the
 * session number. The request goes into s->req with tag s->tag. */
int lsvc_get(struct lsvc_conn *c, struct lsvc_slot **s, uint32_t *sess);
/* Sends s->req (and s->bulk) and waits for the answer, at most `timeout`. Returns 0 (s->rtype, fixed,
 * data filled) or an errno. The slot stays the caller's until lsvc_put. */
int lsvc_call(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout);
void lsvc_put(struct lsvc_conn *c, struct lsvc_slot *s);

/* Watches: lsvc_watch_add sets w up (chans and n filled by the caller) and makes every reader wait on its
 * channels too (EAGAIN when the session's readers would wait on more than LSVC_WATCH_MAX). While it is
 * added, lsvc_call_watch is lsvc_call that also returns LSVC_FIRED, abandoning the request (its reply is
 * dropped when it comes), when one of w's channels was ready first. */
int lsvc_watch_add(struct lsvc_conn *c, struct lsvc_watch *w);
void lsvc_watch_del(struct lsvc_conn *c, struct lsvc_watch *w);
int lsvc_call_watch(struct lsvc_conn *c, struct lsvc_slot *s, rt_time_t timeout, struct lsvc_watch *w);

/* Whether session `sess` is still the current one. */
bool lsvc_current(struct lsvc_conn *c, uint32_t sess);
/* The largest Twrite/Tread payload of the current session (9P: msize less P9_IOHDR). */
uint32_t lsvc_iounit(struct lsvc_conn *c);
/* The msize of the current session (the protocol's offer until a session is up). */
uint32_t lsvc_msize(struct lsvc_conn *c);
void lsvc_get_stats(struct lsvc_conn *c, struct lsvc_stats *out);

#endif /* RTOS_LINUXSVC_CONN_H */
