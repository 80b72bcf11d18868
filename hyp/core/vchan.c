/*
 * The hypervisor's end of the V-Bus's channels (hyp/vchan.h), on Linux's CPU: the rtos's rings read and
 * written as lib/vbus.h says, and Linux's buffers on a channel's two virtqueues copied into and out of
 * them. The rtos never waits for Linux and never reads Linux's memory; Linux's buffers are reached only
 * through core/virtq.c's checks, the rtos's indices only after the ring invariant is checked.
 *
 * Linux -> rtos: Linux's writes on the transmitq, copied into to_rtos. When to_rtos is full the write is
 * kept (held) and finished when the rtos frees room (its doorbell). Meanwhile Linux's write() has
 * already returned (its console driver does not wait for a port's buffers), further writes queue behind
 * it until the transmitq has no free entry; then a write blocks (EAGAIN when non-blocking, poll without
 * POLLOUT) until the used interrupt of a finished one wakes it. While the rtos has the channel closed (or
 * its region is not initialised), writes are dropped and counted: Linux writes only while the channel
 * is open for it, so these were queued before it learnt of the close.
 * rtos -> Linux: to_linux's bytes into Linux's receive buffers, each buffer returned at once with what it
 * got (a reader waits for no more than what is there).
 */
#include "hyp/vchan.h"

#include "drivers/gic.h"
#include "hyp/partition.h"
#include "hyp/virtq.h"
#include "hyp/vmmio.h"
#include "hyp/vpass.h"

static void drop_held(struct vchan *ch);
static void tx_flush(struct vchan *ch);
static void tx_discard_queued(struct vchan *ch);

static uint32_t min32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static struct virtq *rx_q(const struct vchan *ch)
{
    return &ch->t->q[ch->rxq];
}

static struct virtq *tx_q(const struct vchan *ch)
{
    return &ch->t->q[ch->rxq + 1u];
}

static void kick(struct vchan *ch)
{
    ch->r->kick |= 1u << ch->local;
}

/* The rtos wrote an index or start outside its ring: logged once per region start, counted, clamped. */
static void bad_rtos(struct vchan *ch, const char *what)
{
    ch->stats.errors++;
    if (!ch->bad_logged) {
        ch->bad_logged = true;
        part_printf(ch->r->part, "rtmux: vbus: channel %s: the rtos's %s is outside its ring; not followed\n",
                    ch->cfg->name, what);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* The rtos's side */

/* Publishes a change of the connection for the rtos (lib/vbus.h, "Connection"). */
static void epoch_change(struct vchan *ch)
{
    ch->acked = false;
    if (!ch->r->online) {
        return; /* the region's start publishes the state then */
    }
    ch->epoch++;
    ch->c->to_rtos_start = ch->to_rtos_head;
    ch->c->rtos_session_seen = ch->session;
    ch->c->linux_open = ch->linux_open ? 1u : 0u;
    __atomic_store_n(&ch->c->linux_epoch, ch->epoch, __ATOMIC_RELEASE);
    /* While the rtos has the channel closed the change waits in the region unrung: its next open is a new
     * session, whose epoch rings it (chan_poll), and until then nothing crosses. So a Linux program that
     * opens or closes a port the rtos does not use never interrupts the rtos (nor makes it ring back). */
    if (ch->rtos_open) {
        kick(ch);
    }
}

/* The rtos's channel state (open, session, its acknowledgement of the last epoch), read once per pass. */
static void chan_poll(struct vchan *ch)
{
    if (!ch->r->online) {
        return;
    }
    struct vbus_chan *c = ch->c;
    uint32_t open = __atomic_load_n(&c->rtos_open, __ATOMIC_ACQUIRE);
    uint32_t session = __atomic_load_n(&c->rtos_session, __ATOMIC_RELAXED);
    if (open != 0 && session != ch->session) {
        /* A new open: what Linux wrote for an earlier one is dropped, and the open acknowledged. */
        ch->rtos_open = false;
        tx_discard_queued(ch);
        ch->session = session;
        ch->rtos_open = true;
        epoch_change(ch);
    } else if (open != 0) {
        ch->rtos_open = true;
    } else if (ch->rtos_open) {
        ch->rtos_open = false;
        drop_held(ch);
    }
    ch->changed(ch->ctx);
    if (!ch->acked && __atomic_load_n(&c->rtos_epoch_seen, __ATOMIC_ACQUIRE) == ch->epoch) {
        struct vbus_ring *ring = ch->to_linux;
        uint32_t start = __atomic_load_n(&c->to_linux_start, __ATOMIC_RELAXED);
        uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
        uint32_t tail = ch->to_linux_tail;
        if (head - tail > ch->cfg->to_linux_size) {
            bad_rtos(ch, "to_linux head");
            return;
        }
        if (start - tail > head - tail) {
            bad_rtos(ch, "to_linux_start");
            start = head;
        }
        /* What the rtos wrote before it knew of the change: not for this connection. */
        ch->stats.discarded += start - tail;
        ch->to_linux_tail = start;
        __atomic_store_n(&ring->tail, start, __ATOMIC_RELEASE);
        ch->acked = true;
        if (start != tail) {
            kick(ch);
        }
    }
}

/* The region is gone (its partition stopped or restarts): the channel closed for Linux, the
 * hypervisor's indices back to an empty ring. */
static void rtos_lost(struct vchan *ch)
{
    drop_held(ch);
    ch->rtos_open = false;
    tx_flush(ch); /* what Linux queued for the rtos that went away: dropped, counted */
    ch->session = 0;
    ch->acked = false;
    ch->to_rtos_head = 0;
    ch->to_linux_tail = 0;
    ch->bad_logged = false;
    ch->changed(ch->ctx);
}

void vchan_region_poll(struct vchan_region *r)
{
    uint32_t gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
    if (gen != r->gen_seen) {
        r->gen_seen = gen;
        r->online = false;
        r->bad_logged = false;
        r->kick = 0;
        for (unsigned n = 0; n < r->nchan; n++) {
            rtos_lost(r->chan[n]);
        }
    }
    if (r->online || __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != VCHAN_REGION_WAIT ||
        __atomic_load_n(&r->hdr->magic, __ATOMIC_ACQUIRE) != VBUS_MAGIC) {
        return;
    }
    if (r->hdr->nchan != r->nchan) {
        if (!r->bad_logged) {
            r->bad_logged = true;
            part_printf(
                r->part,
                "rtmux: vbus: partition %s initialised its region with %u channels, not %u: not used\n",
                r->part->name, r->hdr->nchan, r->nchan);
        }
        return;
    }
    r->online = true;
    for (unsigned n = 0; n < r->nchan; n++) {
        struct vchan *ch = r->chan[n];
        epoch_change(ch); /* the wiped region's hypervisor fields, and the epoch it starts from */
        chan_poll(ch);
    }
}

void vchan_region_rang(struct vchan_region *r, bool serve)
{
    if (!r->online) {
        return;
    }
    uint32_t rang = __atomic_exchange_n(&r->hdr->hyp_pending, 0u, __ATOMIC_ACQ_REL);
    for (unsigned n = 0; n < r->nchan && serve; n++) {
        if ((rang >> n) & 1u) {
            vchan_pass(r->chan[n]);
        }
    }
}

void vchan_region_ring(struct vchan_region *r)
{
    if (r->online && r->kick != 0) {
        uint32_t was = __atomic_fetch_or(&r->hdr->rtos_pending, r->kick, __ATOMIC_ACQ_REL);
        if (was == 0) {
            gic_send_sgi(r->rtos_aff, VBUS_SGI_TO_RTOS);
        }
    }
    r->kick = 0;
}

void vchan_region_down(struct vchan_region *r)
{
    /* What the rings still hold goes with the RAM: counted as dropped (indices the rtos broke are not
     * followed, as everywhere). */
    for (unsigned n = 0; r->online && n < r->nchan; n++) {
        struct vchan *ch = r->chan[n];
        uint32_t unread = ch->to_rtos_head - __atomic_load_n(&ch->to_rtos->tail, __ATOMIC_ACQUIRE);
        uint32_t unsent = __atomic_load_n(&ch->to_linux->head, __ATOMIC_ACQUIRE) - ch->to_linux_tail;
        ch->stats.discarded +=
            (unread <= ch->cfg->to_rtos_size ? unread : 0) + (unsent <= ch->cfg->to_linux_size ? unsent : 0);
    }
    /* The Linux CPU stops using the region at its next pass (it holds the lock for whole passes, so none
     * is under way now); the wipe that may follow cannot be seen as the rtos's writes. */
    __atomic_store_n(&r->state, VCHAN_REGION_OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&r->gen, r->gen + 1u, __ATOMIC_RELEASE);
}

void vchan_region_up(struct vchan_region *r)
{
    __atomic_store_n(&r->state, VCHAN_REGION_WAIT, __ATOMIC_RELEASE); /* the RAM is wiped: magic is 0 */
}

void vchan_rtos_counters(const struct vchan *ch, uint64_t *full, uint64_t *discarded)
{
    bool online = ch->r->online;
    *full = online ? __atomic_load_n(&ch->c->rtos_full, __ATOMIC_RELAXED) : 0u;
    *discarded = online ? __atomic_load_n(&ch->c->rtos_discarded, __ATOMIC_RELAXED) : 0u;
}

/* ------------------------------------------------------------------------------------------------ */
/* Linux's side */

void vchan_linux_open(struct vchan *ch, bool open)
{
    if (open) {
        tx_discard_queued(ch); /* what an earlier program queued is not the new one's */
    }
    ch->linux_open = open;
    epoch_change(ch);
}

void vchan_linux_lost(struct vchan *ch)
{
    if (ch->held) {
        ch->stats.discarded += ch->held_total - ch->held_done; /* gone with Linux's rings */
    }
    ch->held = false;
}

void vchan_tx_restart(struct vchan *ch)
{
    ch->held = false;
    ch->discard_to = 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Moving bytes */

/* Copies up to n bytes between the chain at head of queue qi (from byte off) and a byte ring (from index
 * idx, wrapping), in the pass's steps: the first always (the caller asked vpass_ok before the chain),
 * each further one while the pass may go on. *copied: how many; -1 after a violation. */
static int ring_copy(struct vchan *ch, unsigned qi, uint16_t head, uint32_t off, struct vbus_ring *ring,
                     uint32_t size, uint32_t idx, uint32_t n, bool to_chain, uint32_t *copied)
{
    struct vmmio *t = ch->t;
    const char *why = NULL;
    uint32_t done = 0;
    while (done < n && (done == 0 || vpass_ok(ch->pass))) {
        uint32_t k = min32(n - done, ch->pass->step);
        uint32_t at = (idx + done) & (size - 1u);
        uint32_t first = min32(k, size - at);
        if (virtq_copy(&t->q[qi], &t->ram, head, off + done, ring->data + at, first, to_chain, &why) != 0 ||
            virtq_copy(&t->q[qi], &t->ram, head, off + done + first, ring->data, k - first, to_chain, &why) !=
                0) {
            vmmio_fail(t, qi, why);
            return -1;
        }
        done += k;
        vpass_copied(ch->pass, k);
    }
    *copied = done;
    return 0;
}

/* Gives Linux back the write that waits for room, its rest dropped (the rtos closed or went away). */
static void drop_held(struct vchan *ch)
{
    if (!ch->held) {
        return;
    }
    ch->held = false;
    ch->stats.discarded += ch->held_total - ch->held_done;
    struct virtq *q = tx_q(ch);
    if (vmmio_running(ch->t) && q->ready && virtq_push(q, ch->held_head, 0)) {
        vmmio_used(ch->t);
    }
}

/* Linux -> rtos (the file's comment). */
static void tx_flush(struct vchan *ch)
{
    unsigned qi = ch->rxq + 1u;
    struct virtq *q = tx_q(ch);
    if (!vmmio_running(ch->t) || !q->ready) {
        return;
    }
    bool deliver = ch->r->online && ch->rtos_open;
    if (deliver && !ch->acked) {
        return; /* the rtos has not acted on the last change yet: these bytes are after its start */
    }
    struct vbus_ring *ring = ch->to_rtos;
    uint32_t size = ch->cfg->to_rtos_size;
    bool irq = false;
    for (unsigned turns = 0; turns <= q->num && vpass_ok(ch->pass); turns++) {
        const char *why = NULL;
        uint16_t head;
        uint32_t total, done = 0;
        bool old = false; /* a write of an earlier connection (tx_discard_queued) */
        if (ch->held) {
            head = ch->held_head;
            done = ch->held_done;
        } else {
            old = q->taken < ch->discard_to;
            int rc = virtq_pop(q, &head, &why);
            if (rc < 0) {
                vmmio_fail(ch->t, qi, why);
                return;
            }
            if (rc == 0) {
                break;
            }
        }
        if (virtq_chain_check(q, &ch->t->ram, head, &total, &why) != 0 || total < done) {
            vmmio_fail(ch->t, qi, why != NULL ? why : "write buffer shorter than it was");
            return;
        }
        if (!ch->held) {
            ch->stats.to_rtos_msgs++;
        }
        uint32_t n = 0;
        bool full = false; /* to_rtos had no room for the rest */
        if (deliver && !old) {
            uint32_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
            uint32_t used = ch->to_rtos_head - tail;
            if (used > size) {
                bad_rtos(ch, "to_rtos tail");
                used = size; /* taken as full: nothing is written over */
            }
            n = min32(size - used, total - done);
            full = n < total - done;
            if (n > 0) {
                uint32_t room = n;
                if (ring_copy(ch, qi, head, done, ring, size, ch->to_rtos_head, n, false, &n) != 0) {
                    return;
                }
                full = full && n == room; /* else the pass stopped in the copy */
                ch->to_rtos_head += n;
                __atomic_store_n(&ring->head, ch->to_rtos_head, __ATOMIC_RELEASE);
                ch->stats.to_rtos_bytes += n;
                kick(ch);
            }
        } else {
            ch->stats.discarded += total - done;
            n = total - done;
        }
        done += n;
        if (done < total) {
            if (full && (!ch->held || n > 0)) {
                ch->stats.full++;
            }
            ch->held = true;
            ch->held_head = head;
            ch->held_done = done;
            ch->held_total = total;
            break;
        }
        ch->held = false;
        irq |= virtq_push(q, head, 0);
    }
    if (irq) {
        vmmio_used(ch->t);
    }
}

/* Every write Linux queued on the channel until now is an earlier connection's (its earlier program's,
 * or sent to an earlier rtos open): dropped and counted, not delivered. They go in passes like any write:
 * tx_flush drops the entries before discard_to, and delivers those after (the new connection's). */
static void tx_discard_queued(struct vchan *ch)
{
    drop_held(ch);
    struct virtq *q = tx_q(ch);
    if (vmmio_running(ch->t) && q->ready) {
        ch->discard_to = virtq_published(q);
    }
}

/* rtos -> Linux (the file's comment). */
static void rx_flush(struct vchan *ch)
{
    unsigned qi = ch->rxq;
    struct virtq *q = rx_q(ch);
    if (!vmmio_running(ch->t) || !q->ready || !ch->r->online || !ch->linux_open || !ch->acked) {
        return;
    }
    struct vbus_ring *ring = ch->to_linux;
    uint32_t size = ch->cfg->to_linux_size;
    uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    uint32_t left = head - ch->to_linux_tail;
    if (left > size) {
        bad_rtos(ch, "to_linux head");
        return;
    }
    uint32_t start = ch->to_linux_tail;
    bool irq = false;
    while (left > 0 && vpass_ok(ch->pass)) {
        uint16_t h;
        uint32_t total;
        int rc = vmmio_rx_next(ch->t, qi, &h, &total);
        if (rc < 0) {
            return;
        }
        if (rc == 0) {
            break; /* Linux posts more when a reader took what it has (a notification) */
        }
        uint32_t n = min32(left, total);
        if (ring_copy(ch, qi, h, 0, ring, size, ch->to_linux_tail, n, true, &n) != 0) {
            return;
        } /* a buffer the pass stopped in goes back with what it got */
        ch->to_linux_tail += n;
        left -= n;
        ch->stats.to_linux_bytes += n;
        ch->stats.to_linux_msgs++;
        irq |= virtq_push(q, h, n);
    }
    if (ch->to_linux_tail != start) {
        __atomic_store_n(&ring->tail, ch->to_linux_tail, __ATOMIC_RELEASE);
        kick(ch);
    }
    if (irq) {
        vmmio_used(ch->t);
    }
}

void vchan_pass(struct vchan *ch)
{
    chan_poll(ch);
    tx_flush(ch);
    rx_flush(ch);
}

/* ------------------------------------------------------------------------------------------------ */
/* Set-up */

static bool ring_fits(uint64_t region, uint32_t off, uint32_t size)
{
    return (size & (size - 1u)) == 0 && size >= VBUS_RING_MIN && size <= VBUS_RING_MAX &&
           off % VBUS_ALIGN == 0 && (uint64_t)off + VBUS_RING_HEADER_SIZE + size <= region;
}

void vchan_region_init(struct vchan_region *r, struct partition *part)
{
    r->part = part;
    r->hdr = part->vbus.region; /* config_parse checked it lies in the partition's RAM */
    r->rtos_aff = part_first_affinity(part);
    r->state = VCHAN_REGION_WAIT; /* part_setup wiped the RAM */
}

bool vchan_init(struct vchan *ch, const struct vbus_chan_config *cfg, struct vchan_region *r, struct vmmio *t,
                unsigned rxq, struct vpass *pass, void (*changed)(void *ctx), void *ctx)
{
    uint64_t size = r->part->vbus.size;
    if (cfg->name[0] == '\0' || cfg->name[VBUS_NAME_SIZE - 1u] != '\0' || cfg->index != r->nchan ||
        (uint64_t)cfg->chan_off + sizeof(struct vbus_chan) > size || cfg->chan_off % VBUS_ALIGN != 0 ||
        !ring_fits(size, cfg->to_linux_off, cfg->to_linux_size) ||
        !ring_fits(size, cfg->to_rtos_off, cfg->to_rtos_size)) {
        return false;
    }
    ch->cfg = cfg;
    ch->r = r;
    ch->local = r->nchan;
    r->chan[r->nchan++] = ch;
    uintptr_t base = (uintptr_t)r->hdr;
    ch->c = (struct vbus_chan *)(base + cfg->chan_off);
    ch->to_linux = (struct vbus_ring *)(base + cfg->to_linux_off);
    ch->to_rtos = (struct vbus_ring *)(base + cfg->to_rtos_off);
    ch->t = t;
    ch->rxq = rxq;
    ch->pass = pass;
    ch->changed = changed;
    ch->ctx = ctx;
    return true;
}
