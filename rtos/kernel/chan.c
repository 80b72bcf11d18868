/*
 * V-Bus channels (rtos/chan.h): the threads' API over the rtos's end of each channel
 * (drivers/vbus_ep.c) and the doorbells (drivers/vbus.c).
 *
 * Locking: every channel's state, and the shared ring indices the rtos owns, change only under the
 * kernel lock (the doorbell handler runs with interrupts masked, which is the same lock). Waiting: one
 * wait queue for every thread waiting on any channel; each doorbell from the hypervisor (bytes arrived,
 * room freed, a connection changed) and each close wakes them all, and each looks again at what it waits
 * for. Waiters are few (one or two threads per channel), so this costs less than a queue per condition
 * and lets one thread wait on several channels.
 */
#include "rtos/chan.h"

#include "arch/cpu.h"
#include "drivers/vbus.h"
#include "drivers/vbus_ep.h"
#include "kernel.h"
#include "lib/string.h"
#include "rtos/console.h"

/* Bytes copied under one hold of the kernel lock (interrupts masked) by a receive, or by a send longer
 * than a message: between chunks pending interrupts come in, so the latency a channel call adds stays
 * that of one chunk's copy. A send of at most RT_CHAN_MSG_MAX bytes is one copy written whole or not at
 * all (vbus_ep_write_all), so it reaches the ring whole, never interleaved with another sender's bytes.
 * Measured with make bench's Linux's-files case (icount; 10,000 periods of a 1 kHz thread beside a
 * thread on 8 KiB remote preads, whose 9P payloads sit at odd offsets in the ring; memcpy copying
 * doublewords at any alignment), worst / p99.9 / p99 in us, the case's remote writes, and make bench's
 * V-Bus case's echo throughput:
 *   256-byte chunks 0.912 / 0.848 / 0.832, 97.0 MB/s, echo 28.8 MB/s
 *   128-byte chunks 0.864 / 0.816 / 0.736, 90.1 MB/s, echo 27.8 MB/s (before these changes: 28.1)
 *    64-byte chunks 0.864 / 0.816 / 0.704, 77.7 MB/s
 * (the same thread beside a busy Linux without remote I/O: 0.656; alone 0.448). Smaller chunks save at
 * most 0.05 us of the worst case and cost throughput (each chunk's fixed work): below 128 bytes the copy
 * no longer sets the worst case, the kernel's own masked paths do (a thread blocking, a doorbell waking
 * one: a thread switch each, 0.3-0.4 us). With a bytewise memcpy 256-byte chunks gave 1.872 us and
 * 56.7 MB/s; before that, the V-Bus case: 1 KiB chunks gave 1.376 us under echo traffic, 256 B 0.960. */
#define CHAN_CHUNK 256u
_Static_assert(CHAN_CHUNK <= RT_CHAN_MSG_MAX, "a message is copied whole, a chunk at most as much");
_Static_assert(RT_CHAN_MSG_MAX <= VBUS_RING_MIN, "every ring can hold a whole message");

struct rt_chan {
    uint32_t magic;
    bool opened;
    unsigned latched;         /* RT_CHAN_CONNECT / RT_CHAN_DISCONNECT not reported yet */
    uint64_t sends, receives; /* calls that wrote or read something (rt_chan_stats' msgs) */
    struct vbus_ep ep;
    char name[VBUS_NAME_SIZE];
};

static struct rt_chan chans[VBUS_MAX_CHANNELS];
static unsigned nchans;
static struct vbus_region *region;
static struct k_waitq waiters;
static struct vbus_dt dt; /* only read at start-up; static for its size */

/* Lock held. */
static void kick(bool ring)
{
    if (ring) {
        vbus_kick();
    }
}

/* Acts on a new connection state of c, if any (lock held). */
static void sync(struct rt_chan *c)
{
    bool ring = false;
    unsigned ev = vbus_ep_sync(&c->ep, &ring);
    c->latched |= ((ev & VBUS_EV_CONNECT) ? RT_CHAN_CONNECT : 0u) |
                  ((ev & VBUS_EV_DISCONNECT) ? RT_CHAN_DISCONNECT : 0u);
    kick(ring);
}

static void wake_all(void)
{
    rt_thread_t *t;
    while ((t = k_waitq_first(&waiters)) != NULL) {
        k_wake(t, RT_OK);
    }
}

/* The hypervisor rang. Under the lock: a more urgent handler may nest here and use the kernel. */
static void doorbell(unsigned intid, void *arg)
{
    (void)intid;
    (void)arg;
    uint64_t f = k_lock();
    uint32_t bits = vbus_take_pending(region);
    for (unsigned i = 0; i < nchans; i++) {
        if ((bits >> i) & 1u) {
            sync(&chans[i]);
        }
    }
    if (bits != 0) {
        wake_all();
        k_reschedule();
    }
    k_unlock(f);
}

void k_chan_init(const void *dtb, unsigned irq_prio)
{
    if (vbus_dt_read(dtb, &dt) <= 0) {
        return; /* bare metal (or a malformed node, reported): no channel; every open fails */
    }
    k_waitq_init(&waiters);
    region = dt.region;
    for (unsigned i = 0; i < dt.nchan; i++) {
        const struct vbus_dt_chan *d = &dt.chan[i];
        struct rt_chan *c = &chans[i];
        vbus_ep_init(&c->ep, region, i, d->chan_off, d->to_linux_off, d->to_linux_size, d->to_rtos_off,
                     d->to_rtos_size);
        memcpy(c->name, d->name, sizeof(c->name));
        c->magic = K_MAGIC_CHAN;
    }
    int rc = vbus_doorbell_attach(&dt, irq_prio, doorbell);
    if (rc != RT_OK) {
        rt_printf("vbus: doorbell SGI %u not attached (%s); no channel\n", dt.sgi_to_rtos, rt_strerror(rc));
        return;
    }
    /* The RAM was wiped before this start: the region holds zeros until the magic says it is in use. */
    vbus_region_start(region, dt.nchan);
    nchans = dt.nchan;
    kick(vbus_ring_hyp(region, (uint32_t)((1ull << nchans) - 1u)));
}

static bool chan_ok(const rt_chan_t *c)
{
    return c != NULL && c >= chans && c < chans + nchans && c->magic == K_MAGIC_CHAN && c->opened;
}

int rt_chan_open(const char *name, rt_chan_t **out)
{
    if (name == NULL || out == NULL) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    int ret = RT_ENOENT;
    for (unsigned i = 0; i < nchans; i++) {
        struct rt_chan *c = &chans[i];
        size_t n = strlen(name);
        if (n + 1u > sizeof(c->name) || memcmp(c->name, name, n + 1u) != 0) {
            continue;
        }
        if (c->opened) {
            ret = RT_EBUSY;
            break;
        }
        bool ring = false;
        c->opened = true;
        c->latched = 0;
        vbus_ep_open(&c->ep, &ring);
        kick(ring);
        *out = c;
        ret = RT_OK;
        break;
    }
    k_unlock(f);
    return ret;
}

int rt_chan_close(rt_chan_t *c)
{
    uint64_t f = k_lock();
    if (!chan_ok(c)) {
        k_unlock(f);
        return RT_EINVAL;
    }
    bool ring = false;
    vbus_ep_close(&c->ep, &ring);
    kick(ring);
    c->opened = false;
    wake_all(); /* a waiter on it returns RT_EINVAL */
    k_reschedule();
    k_unlock(f);
    return RT_OK;
}

/* The deadline of a wait that may block, once per call (a wake-up that finds nothing blocks again until
 * the same deadline). */
static uint64_t deadline_of(rt_time_t timeout)
{
    return timeout == RT_NO_WAIT ? 0 : k_deadline(timeout);
}

/* Blocks on the channel wait queue until `deadline` (lock held, *f its flags): RT_OK when woken,
 * RT_ETIMEDOUT. A woken thread lets pending interrupts in before it looks again: every doorbell wakes
 * every waiter, and one that finds nothing blocks again, two thread switches with interrupts masked
 * from the doorbell's entry on if it did not. */
static int wait_until(uint64_t deadline, uint64_t *f)
{
    if (deadline != K_TICKS_NEVER && arch_counter() >= deadline) {
        return RT_ETIMEDOUT;
    }
    int rc = k_block(&waiters, deadline);
    if (rc == RT_OK) {
        k_unlock(*f);
        *f = k_lock();
    }
    return rc;
}

int rt_chan_send(rt_chan_t *c, const void *buf, size_t len, rt_time_t timeout)
{
    if ((buf == NULL && len != 0) || len > INT32_MAX) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t deadline = deadline_of(timeout);
    size_t done = 0;
    int ret;
    uint64_t f = k_lock();
    for (;;) {
        if (!chan_ok(c)) {
            ret = done > 0 ? (int)done : RT_EINVAL;
            break;
        }
        sync(c);
        if (!vbus_ep_connected(&c->ep)) {
            ret = done > 0 ? (int)done : RT_ENOTCONN;
            break;
        }
        bool ring = false;
        size_t chunk = len - done < CHAN_CHUNK ? len - done : CHAN_CHUNK;
        /* A short send waits until the ring has room for all of it: a part written now would let a more
         * urgent sender's bytes in behind it while this one waits for the rest. */
        uint32_t put = len <= RT_CHAN_MSG_MAX
                           ? vbus_ep_write_all(&c->ep, buf, (uint32_t)len, &ring)
                           : vbus_ep_write(&c->ep, (const uint8_t *)buf + done, (uint32_t)chunk, &ring);
        done += put;
        kick(ring);
        if (done == len) {
            ret = (int)len;
            break;
        }
        if (put == chunk) {
            k_unlock(f); /* a chunk done and room left: interrupts may come in now */
            f = k_lock();
            continue;
        }
        int rc = timeout == RT_NO_WAIT ? RT_EWOULDBLOCK : wait_until(deadline, &f);
        if (rc != RT_OK) {
            ret = done > 0 ? (int)done : rc;
            break;
        }
    }
    if (done > 0) {
        c->sends++;
    }
    k_unlock(f);
    return ret;
}

int rt_chan_recv(rt_chan_t *c, void *buf, size_t len, rt_time_t timeout)
{
    if ((buf == NULL && len != 0) || len > INT32_MAX) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t deadline = deadline_of(timeout);
    int ret;
    uint64_t f = k_lock();
    for (;;) {
        if (!chan_ok(c)) {
            ret = RT_EINVAL;
            break;
        }
        sync(c);
        bool ring = false;
        size_t got = 0;
        uint32_t n;
        do {
            size_t chunk = len - got < CHAN_CHUNK ? len - got : CHAN_CHUNK;
            n = vbus_ep_read(&c->ep, (uint8_t *)buf + got, (uint32_t)chunk, &ring);
            got += n;
            if (n == chunk && got < len) {
                k_unlock(f); /* as in rt_chan_send */
                f = k_lock();
                if (!chan_ok(c)) {
                    break;
                }
            }
        } while (n > 0 && got < len);
        kick(ring);
        if (got > 0 || len == 0) {
            c->receives += got > 0;
            ret = (int)got;
            break;
        }
        int rc = timeout == RT_NO_WAIT ? RT_EWOULDBLOCK : wait_until(deadline, &f);
        if (rc != RT_OK) {
            ret = rc;
            break;
        }
    }
    k_unlock(f);
    return ret;
}

/* c's conditions now (lock held, c synced). */
static unsigned conditions(const struct rt_chan *c)
{
    return (vbus_ep_readable(&c->ep) > 0 ? RT_CHAN_READABLE : 0u) |
           (vbus_ep_room(&c->ep) > 0 ? RT_CHAN_WRITABLE : 0u) | c->latched;
}

int rt_chan_wait(rt_chan_t *const list[], unsigned n, unsigned want, unsigned ready[], rt_time_t timeout)
{
    const unsigned all = RT_CHAN_READABLE | RT_CHAN_WRITABLE | RT_CHAN_CONNECT | RT_CHAN_DISCONNECT;
    if (list == NULL || ready == NULL || n == 0 || n > VBUS_MAX_CHANNELS || want == 0 || (want & ~all) != 0) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t deadline = deadline_of(timeout);
    int ret;
    uint64_t f = k_lock();
    for (;;) {
        int count = 0;
        for (unsigned i = 0; i < n && count >= 0; i++) {
            struct rt_chan *c = list[i];
            if (!chan_ok(c)) {
                count = RT_EINVAL;
                break;
            }
            sync(c);
            ready[i] = conditions(c) & want;
            count += ready[i] != 0 ? 1 : 0;
        }
        if (count != 0) {
            if (count > 0) {
                for (unsigned i = 0; i < n; i++) {
                    list[i]->latched &= ~ready[i]; /* the events reported */
                }
            }
            ret = count;
            break;
        }
        int rc = timeout == RT_NO_WAIT ? RT_EWOULDBLOCK : wait_until(deadline, &f);
        if (rc != RT_OK) {
            ret = rc;
            break;
        }
    }
    k_unlock(f);
    return ret;
}

bool rt_chan_connected(rt_chan_t *c)
{
    uint64_t f = k_lock();
    bool on = false;
    if (chan_ok(c)) {
        sync(c);
        on = vbus_ep_connected(&c->ep);
    }
    k_unlock(f);
    return on;
}

unsigned rt_chan_events(rt_chan_t *c)
{
    uint64_t f = k_lock();
    unsigned ev = 0;
    if (chan_ok(c)) {
        sync(c);
        ev = c->latched;
        c->latched = 0;
    }
    k_unlock(f);
    return ev;
}

int rt_chan_stats(rt_chan_t *c, struct rt_chan_stats *out)
{
    if (out == NULL) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    if (!chan_ok(c)) {
        k_unlock(f);
        return RT_EINVAL;
    }
    const struct vbus_ep_stats *s = &c->ep.stats;
    *out = (struct rt_chan_stats){s->sent_bytes, c->sends,     s->received_bytes, c->receives,
                                  s->full,       s->discarded, s->connects,       s->disconnects};
    k_unlock(f);
    return RT_OK;
}

const char *rt_chan_name(const rt_chan_t *c)
{
    return c != NULL && c >= chans && c < chans + nchans ? c->name : "?";
}

unsigned rt_chan_count(void)
{
    return nchans;
}
