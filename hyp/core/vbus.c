/*
 * The V-Bus device: a virtio-mmio console device (modern interface, version 2) with
 * VIRTIO_CONSOLE_F_MULTIPORT in the Linux partition, one named port per channel, whose bytes move between
 * Linux's virtqueues and the rtos partitions' rings (lib/vbus.h) here, on Linux's CPU: in the trap of
 * Linux's register accesses (a queue notification), and in the hypervisor interrupt the rtos rings
 * (VBUS_SGI_TO_HYP). The rtos never waits for Linux and never reads Linux's memory.
 *
 * Facts of Linux's drivers (drivers/char/virtio_console.c, drivers/virtio/virtio_mmio.c) this relies on:
 *  - queues: port 0's receiveq and transmitq are 0 and 1, the control receiveq and transmitq 2 and 3,
 *    port n's (n >= 1) are 2n + 2 and 2n + 3; (max_nr_ports + 1) * 2 queues, max_nr_ports read from the
 *    configuration space with a 4-byte access;
 *  - start: the driver sends DEVICE_READY once its control receiveq is full; the device answers with
 *    PORT_ADD per port; the driver answers each with PORT_READY, the device with PORT_NAME (the name
 *    follows the 8-byte message) and PORT_OPEN 1 when the other side is open. No port is made a console
 *    (CONSOLE_PORT), so every port is a file /dev/vportNpM that one program at a time may open;
 *  - the driver busy-waits until the device returns each control transmitq buffer (and each console
 *    write), so both are served here, in the notification's trap; an ordinary port write does not wait:
 *    the driver queues the buffer and returns;
 *  - while the device has not sent PORT_OPEN 1 a read returns 0 (EOF), poll reports POLLHUP, and a write
 *    blocks (EAGAIN when non-blocking); data arriving while the port is closed is dropped by the driver;
 *  - receive buffers are PAGE_SIZE (one descriptor), writes are cut at 32 KiB per call (one descriptor,
 *    or one per page when spliced); the control messages are 8 bytes.
 *
 * Everything Linux provides goes through core/virtq.c's checks or the register rules below; a violation
 * sets DEVICE_NEEDS_RESET, raises the configuration-change interrupt, logs one line with the reason and
 * stops the device (every port closed for the rtos) until Linux writes status 0.
 *
 * Bounded passes: whatever Linux puts in its rings, one trap (a register access, the doorbell) does at
 * most a budget of work (descriptor visits, bytes copied, and on Linux's other CPUs when one is shared
 * with the rtos, time), and on a CPU shared with the rtos it stops before any step once the rtos needs
 * the CPU (vgic_rtos_soon, as the console drain). What is left is taken up by the next pass, which the device
 * asks for itself: it sends VBUS_SGI_TO_HYP to its own CPU, a hypervisor interrupt that traps as soon as
 * Linux runs there again (after the rtos, on a shared CPU). Every step keeps the device's state whole,
 * so stopping between two is invisible to Linux but for the time it takes.
 */
#include "hyp/vbus.h"

#include "arch/cpu.h"
#include "arch/spinlock.h"
#include "arch/vgic.h"
#include "drivers/gicv3.h"
#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"
#include "hyp/virtq.h"
#include "lib/string.h"
#include "lib/virtio.h"

/*
 * The budget of one pass. PASS_DESCS descriptor visits and PASS_BYTES bytes: far above what one of
 * Linux's notifications needs (a 32 KiB write is one to sixteen descriptors, a receive buffer one page)
 * and far below the ~13,000 visits of a queue whose 64 entries name one 64-descriptor chain. A chain is
 * never cut (up to three walks of it: the check and a copy across the ring's wrap), so a pass may pass
 * PASS_DESCS by up to 3 * VBUS_QUEUE_MAX visits.
 * Where Linux shares a CPU with the rtos (tight), a pass copies in steps of PASS_STEP_TIGHT bytes (at
 * most ~4 us by bytes in icount, ~0.4 us by doublewords); on the shared CPU it stops before any step
 * when the rtos needs the CPU within PASS_GUARD_NS (the console drain's guard: a step stays below it, so
 * the rtos's timer never waits for one), and on Linux's other CPUs it ends after PASS_TIGHT_NS of the
 * counter: the device's lock, which a trap on the shared CPU may wait for with interrupts masked, is
 * never held longer than that and a step.
 */
#define PASS_DESCS      512u
#define PASS_BYTES      (64u * 1024u)
#define PASS_STEP_TIGHT 1024u
#define PASS_TIGHT_NS   4000u
#define PASS_GUARD_NS   5000u

/* The largest queue Linux may make: 64 receive buffers of a page per port (256 KiB of Linux's memory),
 * 64 writes of up to 32 KiB in flight. */
#define VBUS_QUEUE_MAX 64u
#define VBUS_PORTS     (VBUS_MAX_CHANNELS + 1u) /* the channels', then VBUS_STATS_PORT */
#define VBUS_QUEUES    (2u * (VBUS_PORTS + 1u))
/* The counters' snapshot VBUS_STATS_PORT reads: a header, the device's line and one line per channel
 * (at most about 360 characters: a name of 31, two partition names of 31, eleven 20-digit counters). */
#define STATS_TEXT_MAX (512u + 400u * VBUS_MAX_CHANNELS)
#define VBUS_VENDOR    0x584d5452u /* "RTMX" read as a little-endian word */
#define VBUS_MMIO_PAGE 4096u       /* the device's page in the Linux partition (registers: its first 0x200) */
#define VBUS_FEATURES  ((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT))
#define STATUS_BITS                                                               \
    (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_DRIVER_OK | \
     VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DEVICE_NEEDS_RESET | VIRTIO_STATUS_FAILED)
/* Every line the device prints is caused by a partition (Linux's driver, the rtos's indices) and goes
 * through that partition's line limit (part_printf): a guest breaking the device in a loop, or sending
 * DEVICE_READY(0) as fast as it can, does not flood the shared console. */
#define NO_QUEUE (~0u)

/* Control messages waiting for a control receive buffer, per port, sent in this order. */
#define PEND_ADD  0x1u
#define PEND_NAME 0x2u
#define PEND_OPEN 0x4u

/* An rtos partition's region. state is written by the rtos partition's CPU (under the lock) and read by
 * the Linux CPU; online is the Linux CPU's own view. */
enum region_state { REGION_OFF, REGION_WAIT };

struct region {
    struct partition *part;
    struct vbus_region *hdr;
    uint64_t rtos_aff; /* where VBUS_SGI_TO_RTOS goes */
    volatile int state;
    volatile uint32_t gen; /* counts the times the region was lost (stop, restart) */
    uint32_t gen_seen;
    bool online; /* magic seen since the region was last lost */
    bool bad_logged;
    unsigned nchan;
    uint8_t chan[VBUS_MAX_CHANNELS]; /* hyp_vbus index of region channel N */
    uint32_t kick;                   /* channels to ring the rtos about at the end of this pass */
};

struct port {
    bool is_stats;                      /* VBUS_STATS_PORT: the hypervisor's own, no channel behind it */
    const struct vbus_chan_config *cfg; /* the channel (NULL for VBUS_STATS_PORT) */
    struct region *r;
    unsigned local; /* the channel's number in its region */
    struct vbus_chan *c;
    struct vbus_ring *to_linux, *to_rtos;
    /* Linux's side */
    bool ready;      /* PORT_READY 1 came */
    bool linux_open; /* a Linux program has the port open */
    bool told_open;  /* the PORT_OPEN value Linux was last sent */
    uint8_t pend;
    /* A write Linux queued that to_rtos had no room for, or that a pass stopped in: its head, bytes
     * copied so far and in all. */
    bool held;
    uint16_t held_head;
    uint32_t held_done, held_total;
    /* Writes on the transmitq before this entry (a count of the queue's taken entries) belong to an
     * earlier connection: dropped, not delivered (tx_discard_queued). */
    uint64_t discard_to;
    /* the rtos's side, while its region is online */
    bool rtos_open;        /* open, with the session below acknowledged */
    uint32_t session;      /* the rtos_session acknowledged */
    uint32_t epoch;        /* the linux_epoch last published */
    bool acked;            /* the rtos acted on epoch and its to_linux_start was applied */
    uint32_t to_rtos_head; /* the hypervisor's own indices (lib/vbus.h: never read back) */
    uint32_t to_linux_tail;
    bool bad_logged;
    struct vbus_chan_stats stats;
};

/* Port numbers: channel i of hyp_vbus is port i; VBUS_STATS_PORT is port nchan, the last. */

static struct {
    spinlock_t lock;
    bool present;
    unsigned nports, nqueues;
    struct virtq_ram ram; /* Linux's */
    /* registers */
    uint32_t status, isr, dev_sel, drv_sel, queue_sel, shm_sel;
    uint64_t drv_features;
    bool drv_features_beyond; /* a feature word beyond the second was written non-zero */
    bool broken;              /* NEEDS_RESET: nothing is processed until status 0 */
    struct virtq q[VBUS_QUEUES];
    struct port port[VBUS_PORTS];
    struct region region[HYP_MAX_PARTITIONS];
    unsigned nregions;
    uint64_t resets, breaks, ctrl_errors;
    /* VBUS_STATS_PORT's snapshot, taken for Linux's open of it (stats_due until it is); text_off of it
     * went to Linux so far. */
    char text[STATS_TEXT_MAX];
    uint32_t text_len, text_off;
    bool stats_due; /* the snapshot is being taken: stats_step is its next step */
    unsigned stats_step;
    bool tight;           /* Linux shares a CPU with an rtos: small copy steps, passes bounded in time */
    uint64_t shared_cpus; /* those of Linux's CPUs that an rtos shares */
    bool more;            /* a pass stopped with work left: the next VBUS_SGI_TO_HYP takes it up */
    unsigned rotate;      /* the port a resumed pass starts with (each gets its turn first) */
} dev;

/* The pass under way (under dev.lock): what it may still do, and whether it stopped. */
static struct {
    const struct vcpu *v; /* the CPU's Linux virtual CPU, for the rtos that may share it; NULL: none */
    bool shared;          /* v's CPU is shared with the rtos: the pass steps aside for it */
    uint64_t visits0;     /* virtq_visits at its start */
    uint32_t bytes;       /* copied so far */
    uint32_t step;        /* bytes per copy step (vbus_init) */
    uint64_t t0, ticks;   /* its start, and its length when tight (vbus_init) */
    uint64_t guard;       /* the rtos's guard in counter ticks (vbus_init) */
    bool cut;             /* it stopped with work left */
    bool for_rtos;        /* it stopped because the rtos needs the CPU */
} pass;

/* A pass begins (dev.lock held) on v's CPU (NULL: not in one of Linux's traps). Only a tight device
 * reads the counter (Linux's round trips cross several passes each). */
static void pass_begin(const struct vcpu *v)
{
    pass.v = v;
    pass.visits0 = virtq_visits;
    pass.bytes = 0;
    pass.cut = false;
    pass.for_rtos = false;
    pass.shared = v != NULL && ((dev.shared_cpus >> v->cpu) & 1u) != 0;
    if (dev.tight && !pass.shared) {
        pass.t0 = arch_counter();
    }
}

/* Whether the pass may take one more step (a chain, a copy step, a message); once it may not, it has
 * stopped (pass.cut) and says no until its end. */
static bool pass_ok(void)
{
    if (pass.cut) {
        return false;
    }
    if (virtq_visits - pass.visits0 >= PASS_DESCS || pass.bytes >= PASS_BYTES ||
        (dev.tight && !pass.shared && arch_counter() - pass.t0 >= pass.ticks)) {
        pass.cut = true;
        return false;
    }
    if (pass.shared && vgic_rtos_soon(pass.v, pass.guard)) {
        pass.cut = pass.for_rtos = true;
        return false;
    }
    return true;
}

/* The pass ends (dev.lock held): work left is asked for with the device's own interrupt on this CPU.
 * Returns the virtual CPU whose rtos the pass stopped for, or NULL (pass_wait_rtos). */
static const struct vcpu *pass_end(void)
{
    if (!pass.cut) {
        return NULL;
    }
    dev.more = true;
    gicv3_send_sgi(arch_mpidr_affinity(), VBUS_SGI_TO_HYP);
    return pass.for_rtos ? pass.v : NULL;
}

/* After a pass that stopped for the rtos's timer, due within the guard (dev.lock released: Linux's other
 * CPUs go on): waits until it fires, at most the guard. Taken as soon as this trap returns, it gives the
 * CPU to the rtos, and the request for the rest waits behind it. Returning at once would only bring the
 * request back, trap after trap, each of them a delay for the timer that fires meanwhile. */
static void pass_wait_rtos(const struct vcpu *v, uint64_t guard)
{
    while (v != NULL && !vgic_rtos_pending(v) && vgic_rtos_soon(v, guard)) {
        arch_yield();
    }
}

static unsigned rx_queue(unsigned port)
{
    return port == 0 ? 0u : 2u * port + 2u;
}

static bool can_run(void)
{
    return (dev.status & (VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FAILED)) == VIRTIO_STATUS_DRIVER_OK &&
           !dev.broken;
}

static const char *port_name(const struct port *p)
{
    return p->is_stats ? VBUS_STATS_PORT : p->cfg->name;
}

/* Whether the other side is there: the channel's rtos has it open (never for VBUS_STATS_PORT, which
 * Linux reads to its end of file). */
static bool host_open(const struct port *p)
{
    return !p->is_stats && p->rtos_open && p->r->online;
}

static void kick(struct port *p)
{
    p->r->kick |= 1u << p->local;
}

/* ------------------------------------------------------------------------------------------------ */
/* Violations */

static void epoch_change(struct port *p);
static void drop_held(struct port *p);
static void tx_flush(struct port *p);
static void tx_discard_queued(struct port *p);

/* What Linux gave is wrong: NEEDS_RESET, the configuration-change interrupt, one log line, and every port
 * closed for the rtos (the device does nothing more until Linux resets it). */
static void violation(unsigned queue, const char *why)
{
    if (dev.broken) {
        return;
    }
    dev.broken = true;
    dev.status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    dev.isr |= VIRTIO_MMIO_INT_CONFIG;
    dev.breaks++;
    if (queue != NO_QUEUE && queue >= 4u) {
        dev.port[queue / 2u - 1u].stats.errors++;
    } else if (queue <= 1u) {
        dev.port[0].stats.errors++;
    } else {
        dev.ctrl_errors++;
    }
    char where[24] = "registers";
    if (queue != NO_QUEUE) {
        (void)hyp_snprintf(where, sizeof(where), "queue %u", queue);
    }
    part_printf(hyp_vbus.linux, "rtmux: vbus: %s: %s: %s; device needs reset (%lu so far)\n",
                hyp_vbus.linux->name, where, why, (unsigned long)dev.breaks);
    for (unsigned i = 0; i < dev.nports; i++) {
        struct port *p = &dev.port[i];
        if (p->held) {
            p->stats.discarded += p->held_total - p->held_done;
        }
        p->held = false; /* Linux gets its buffers back only by resetting the device */
        if (p->linux_open) {
            p->linux_open = false;
            epoch_change(p);
        }
    }
}

/* The rtos wrote an index or start outside its ring: logged once per region start, counted, clamped. */
static void bad_rtos(struct port *p, const char *what)
{
    p->stats.errors++;
    if (!p->bad_logged) {
        p->bad_logged = true;
        part_printf(p->r->part, "rtmux: vbus: channel %s: the rtos's %s is outside its ring; not followed\n",
                    p->cfg->name, what);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* The rtos's side */

/* Publishes a change of the connection for the rtos (lib/vbus.h, "Connection"). */
static void epoch_change(struct port *p)
{
    p->acked = false;
    if (p->is_stats || !p->r->online) {
        return; /* the region's start publishes the state then */
    }
    p->epoch++;
    p->c->to_rtos_start = p->to_rtos_head;
    p->c->rtos_session_seen = p->session;
    p->c->linux_open = p->linux_open ? 1u : 0u;
    __atomic_store_n(&p->c->linux_epoch, p->epoch, __ATOMIC_RELEASE);
    kick(p);
}

/* Whether Linux should see the port open, and the PORT_OPEN that tells it when not. */
static void linux_view(struct port *p)
{
    if (p->ready && host_open(p) != p->told_open) {
        p->pend |= PEND_OPEN;
    }
}

/* The rtos's channel state (open, session, its acknowledgement of the last epoch), read once per pass. */
static void chan_poll(struct port *p)
{
    if (!p->r->online) {
        return;
    }
    struct vbus_chan *c = p->c;
    uint32_t open = __atomic_load_n(&c->rtos_open, __ATOMIC_ACQUIRE);
    uint32_t session = __atomic_load_n(&c->rtos_session, __ATOMIC_RELAXED);
    if (open != 0 && session != p->session) {
        /* A new open: what Linux wrote for an earlier one is dropped, and the open acknowledged. */
        p->rtos_open = false;
        tx_discard_queued(p);
        p->session = session;
        p->rtos_open = true;
        epoch_change(p);
    } else if (open != 0) {
        p->rtos_open = true;
    } else if (p->rtos_open) {
        p->rtos_open = false;
        drop_held(p);
    }
    linux_view(p);
    if (!p->acked && __atomic_load_n(&c->rtos_epoch_seen, __ATOMIC_ACQUIRE) == p->epoch) {
        struct vbus_ring *ring = p->to_linux;
        uint32_t start = __atomic_load_n(&c->to_linux_start, __ATOMIC_RELAXED);
        uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
        uint32_t tail = p->to_linux_tail;
        if (head - tail > p->cfg->to_linux_size) {
            bad_rtos(p, "to_linux head");
            return;
        }
        if (start - tail > head - tail) {
            bad_rtos(p, "to_linux_start");
            start = head;
        }
        /* What the rtos wrote before it knew of the change: not for this connection. */
        p->stats.discarded += start - tail;
        p->to_linux_tail = start;
        __atomic_store_n(&ring->tail, start, __ATOMIC_RELEASE);
        p->acked = true;
        if (start != tail) {
            kick(p);
        }
    }
}

/* The region is gone (its partition stopped or restarts): every channel closed for Linux, the
 * hypervisor's indices back to an empty ring. */
static void port_lost(struct port *p)
{
    drop_held(p);
    p->rtos_open = false;
    tx_flush(p); /* what Linux queued for the rtos that went away: dropped, counted */
    p->session = 0;
    p->acked = false;
    p->to_rtos_head = 0;
    p->to_linux_tail = 0;
    p->bad_logged = false;
    linux_view(p);
}

static void region_poll(struct region *r)
{
    uint32_t gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
    if (gen != r->gen_seen) {
        r->gen_seen = gen;
        r->online = false;
        r->bad_logged = false;
        r->kick = 0;
        for (unsigned n = 0; n < r->nchan; n++) {
            port_lost(&dev.port[r->chan[n]]);
        }
    }
    if (r->online || __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != REGION_WAIT ||
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
        struct port *p = &dev.port[r->chan[n]];
        epoch_change(p); /* the wiped region's hypervisor fields, and the epoch it starts from */
        chan_poll(p);
    }
}

/* Rings the rtos for what this pass changed (lib/vbus.h, "Doorbells"). */
static void ring_rtos(void)
{
    for (unsigned i = 0; i < dev.nregions; i++) {
        struct region *r = &dev.region[i];
        if (r->online && r->kick != 0) {
            uint32_t was = __atomic_fetch_or(&r->hdr->rtos_pending, r->kick, __ATOMIC_ACQ_REL);
            if (was == 0) {
                gicv3_send_sgi(r->rtos_aff, VBUS_SGI_TO_RTOS);
            }
        }
        r->kick = 0;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Moving bytes */

static uint32_t min32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* Copies up to n bytes between the chain at head (from byte off) and a byte ring (from index idx,
 * wrapping), in the pass's steps: the first always (the caller asked pass_ok before the chain), each
 * further one while the pass may go on. *copied: how many; -1 after a violation. */
static int ring_copy(unsigned qi, uint16_t head, uint32_t off, struct vbus_ring *ring, uint32_t size,
                     uint32_t idx, uint32_t n, bool to_chain, uint32_t *copied)
{
    const char *why = NULL;
    uint32_t done = 0;
    while (done < n && (done == 0 || pass_ok())) {
        uint32_t k = min32(n - done, pass.step);
        uint32_t at = (idx + done) & (size - 1u);
        uint32_t first = min32(k, size - at);
        if (virtq_copy(&dev.q[qi], &dev.ram, head, off + done, ring->data + at, first, to_chain, &why) != 0 ||
            virtq_copy(&dev.q[qi], &dev.ram, head, off + done + first, ring->data, k - first, to_chain,
                       &why) != 0) {
            violation(qi, why);
            return -1;
        }
        done += k;
        pass.bytes += k;
    }
    *copied = done;
    return 0;
}

/* Gives Linux back the write that waits for room, its rest dropped (the rtos closed or went away). */
static void drop_held(struct port *p)
{
    if (!p->held) {
        return;
    }
    p->held = false;
    p->stats.discarded += p->held_total - p->held_done;
    struct virtq *q = &dev.q[rx_queue((unsigned)(p - dev.port)) + 1u];
    if (can_run() && q->ready && virtq_push(q, p->held_head, 0)) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/*
 * Linux -> rtos: Linux's writes on port p's transmitq, copied into to_rtos. When to_rtos is full the
 * write is kept (held) and finished when the rtos frees room (its doorbell). Meanwhile Linux's write()
 * has already returned (the driver does not wait for a port's buffers), further writes queue behind it
 * until the transmitq has no free entry; then a write blocks in wait_port_writable (EAGAIN when
 * non-blocking, poll without POLLOUT) until the used interrupt of a finished one wakes it.
 * While the rtos has the channel closed (or its region is not initialised), writes are dropped and
 * counted: the driver writes only while the port is open for it, so these were queued before it learnt
 * of the close.
 */
static void tx_flush(struct port *p)
{
    unsigned qi = rx_queue((unsigned)(p - dev.port)) + 1u;
    struct virtq *q = &dev.q[qi];
    if (!can_run() || !q->ready) {
        return;
    }
    bool deliver = p->r->online && p->rtos_open;
    if (deliver && !p->acked) {
        return; /* the rtos has not acted on the last change yet: these bytes are after its start */
    }
    struct vbus_ring *ring = p->to_rtos;
    uint32_t size = p->cfg->to_rtos_size;
    bool irq = false;
    for (unsigned turns = 0; turns <= q->num && pass_ok(); turns++) {
        const char *why = NULL;
        uint16_t head;
        uint32_t total, done = 0;
        bool old = false; /* a write of an earlier connection (tx_discard_queued) */
        if (p->held) {
            head = p->held_head;
            done = p->held_done;
        } else {
            old = q->taken < p->discard_to;
            int rc = virtq_pop(q, &head, &why);
            if (rc < 0) {
                violation(qi, why);
                return;
            }
            if (rc == 0) {
                break;
            }
        }
        if (virtq_chain_check(q, &dev.ram, head, &total, &why) != 0 || total < done) {
            violation(qi, why != NULL ? why : "write buffer shorter than it was");
            return;
        }
        if (!p->held) {
            p->stats.to_rtos_msgs++;
        }
        uint32_t n = 0;
        bool full = false; /* to_rtos had no room for the rest */
        if (deliver && !old) {
            uint32_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
            uint32_t used = p->to_rtos_head - tail;
            if (used > size) {
                bad_rtos(p, "to_rtos tail");
                used = size; /* taken as full: nothing is written over */
            }
            n = min32(size - used, total - done);
            full = n < total - done;
            if (n > 0) {
                uint32_t room = n;
                if (ring_copy(qi, head, done, ring, size, p->to_rtos_head, n, false, &n) != 0) {
                    return;
                }
                full = full && n == room; /* else the pass stopped in the copy */
                p->to_rtos_head += n;
                __atomic_store_n(&ring->head, p->to_rtos_head, __ATOMIC_RELEASE);
                p->stats.to_rtos_bytes += n;
                kick(p);
            }
        } else {
            p->stats.discarded += total - done;
            n = total - done;
        }
        done += n;
        if (done < total) {
            if (full && (!p->held || n > 0)) {
                p->stats.full++;
            }
            p->held = true;
            p->held_head = head;
            p->held_done = done;
            p->held_total = total;
            break;
        }
        p->held = false;
        irq |= virtq_push(q, head, 0);
    }
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/* Every write Linux queued on p until now is an earlier connection's (its earlier program's, or sent
 * to an earlier rtos open): dropped and counted, not delivered. They go in passes like any write:
 * tx_flush drops the entries before discard_to, and delivers those after (the new connection's). */
static void tx_discard_queued(struct port *p)
{
    drop_held(p);
    struct virtq *q = &dev.q[rx_queue((unsigned)(p - dev.port)) + 1u];
    if (can_run() && q->ready) {
        p->discard_to = virtq_published(q);
    }
}

/* The next receive buffer Linux posted on queue qi, checked: 1 with its head and length, 0 when there is
 * none, -1 after a violation (the device is then broken). */
static int rx_next(unsigned qi, uint16_t *h, uint32_t *total)
{
    struct virtq *q = &dev.q[qi];
    const char *why = NULL;
    int rc = virtq_pop(q, h, &why);
    if (rc < 0) {
        violation(qi, why);
        return -1;
    }
    if (rc == 0) {
        return 0;
    }
    if (virtq_chain_check(q, &dev.ram, *h, total, &why) != 0 || *total == 0) {
        violation(qi, why != NULL ? why : "receive buffer of 0 bytes");
        return -1;
    }
    return 1;
}

/* rtos -> Linux: to_linux's bytes into Linux's receive buffers on port p, each buffer returned at once
 * with what it got (a reader waits for no more than what is there). */
static void rx_flush(struct port *p)
{
    unsigned qi = rx_queue((unsigned)(p - dev.port));
    struct virtq *q = &dev.q[qi];
    if (!can_run() || !q->ready || !p->r->online || !p->linux_open || !p->acked) {
        return;
    }
    struct vbus_ring *ring = p->to_linux;
    uint32_t size = p->cfg->to_linux_size;
    uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    uint32_t left = head - p->to_linux_tail;
    if (left > size) {
        bad_rtos(p, "to_linux head");
        return;
    }
    uint32_t start = p->to_linux_tail;
    bool irq = false;
    while (left > 0 && pass_ok()) {
        uint16_t h;
        uint32_t total;
        int rc = rx_next(qi, &h, &total);
        if (rc < 0) {
            return;
        }
        if (rc == 0) {
            break; /* Linux posts more when a reader took what it has (a notification) */
        }
        uint32_t n = min32(left, total);
        if (ring_copy(qi, h, 0, ring, size, p->to_linux_tail, n, true, &n) != 0) {
            return;
        } /* a buffer the pass stopped in goes back with what it got */
        p->to_linux_tail += n;
        left -= n;
        p->stats.to_linux_bytes += n;
        p->stats.to_linux_msgs++;
        irq |= virtq_push(q, h, n);
    }
    if (p->to_linux_tail != start) {
        __atomic_store_n(&ring->tail, p->to_linux_tail, __ATOMIC_RELEASE);
        kick(p);
    }
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* VBUS_STATS_PORT */

/* dev.text's free part (hyp_snprintf's buffer and size), and its length grown by what hyp_snprintf put
 * there (cut to fit: the buffer has room for the longest snapshot). */
#define TEXT_FREE (dev.text + dev.text_len), (STATS_TEXT_MAX - dev.text_len)
static void text_added(int n)
{
    uint32_t room = STATS_TEXT_MAX - dev.text_len;
    dev.text_len += n <= 0 ? 0u : (uint32_t)n < room ? (uint32_t)n : room - 1u;
}

/* Step `step` of the counters' snapshot into dev.text (format: docs/architecture.md, "V-Bus counters"):
 * the header, the device's line, then each channel's line in two halves; false once there is none left.
 * A step is a few microseconds of formatting (a whole snapshot of three channels took 10 us in icount),
 * so a pass can stop between two for the rtos. The rtos's own counters are read from its region as
 * numbers only: nothing is followed. */
static bool stats_snapshot_step(unsigned step)
{
    uint64_t hz = arch_counter_hz();
    if (step == 0) {
        text_added(hyp_snprintf(TEXT_FREE, "rtmux-stats 1 uptime_us=%lu\n",
                                (unsigned long)(hz >= 1000000u ? arch_counter() / (hz / 1000000u) : 0u)));
        return true;
    }
    if (step == 1) {
        text_added(hyp_snprintf(
            TEXT_FREE,
            "device partition=%s status=0x%02x needs_reset=%u resets=%lu violations=%lu control_errors=%lu\n",
            hyp_vbus.linux->name, (unsigned)dev.status, dev.broken ? 1u : 0u, (unsigned long)dev.resets,
            (unsigned long)dev.breaks, (unsigned long)dev.ctrl_errors));
        return true;
    }
    unsigned i = (step - 2u) / 2u;
    if (i >= hyp_vbus.nchan) {
        return false;
    }
    const struct port *p = &dev.port[i];
    const struct vbus_chan_stats *st = &p->stats;
    if (step % 2u == 0) {
        text_added(hyp_snprintf(
            TEXT_FREE,
            "channel name=%s rtos=%s linux_open=%u rtos_open=%u to_rtos_bytes=%lu to_rtos_writes=%lu "
            "to_linux_bytes=%lu to_linux_buffers=%lu",
            p->cfg->name, p->r->part->name, p->linux_open ? 1u : 0u, host_open(p) ? 1u : 0u,
            (unsigned long)st->to_rtos_bytes, (unsigned long)st->to_rtos_msgs,
            (unsigned long)st->to_linux_bytes, (unsigned long)st->to_linux_msgs));
        return true;
    }
    bool online = p->r->online;
    uint64_t rtos_full = online ? __atomic_load_n(&p->c->rtos_full, __ATOMIC_RELAXED) : 0u;
    uint64_t rtos_discarded = online ? __atomic_load_n(&p->c->rtos_discarded, __ATOMIC_RELAXED) : 0u;
    text_added(hyp_snprintf(TEXT_FREE,
                            " linux_full=%lu rtos_full=%lu discarded=%lu rtos_discarded=%lu errors=%lu\n",
                            (unsigned long)st->full, (unsigned long)rtos_full, (unsigned long)st->discarded,
                            (unsigned long)rtos_discarded, (unsigned long)st->errors));
    return true;
}

/* The snapshot into Linux's receive buffers on VBUS_STATS_PORT while it is open; what is left waits for
 * buffers Linux posts later. Since the device never says the port's other side is open, a read after
 * the whole snapshot is end of file. */
static void stats_flush(struct port *p)
{
    unsigned qi = rx_queue((unsigned)(p - dev.port));
    struct virtq *q = &dev.q[qi];
    if (!can_run() || !q->ready || !p->linux_open) {
        return;
    }
    /* One snapshot per open, however many opens came before it (taken for the last), in steps; Linux
     * gets it only whole: a read that finds the port empty before its end would be end of file. */
    while (dev.stats_due) {
        if (!pass_ok()) {
            return;
        }
        dev.stats_due = stats_snapshot_step(dev.stats_step++);
    }
    if (dev.text_off < dev.text_len && !pass_ok()) {
        return;
    }
    bool irq = false;
    while (dev.text_off < dev.text_len) { /* at most STATS_TEXT_MAX bytes: one step */
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        int rc = rx_next(qi, &h, &total);
        if (rc < 0) {
            return;
        }
        if (rc == 0) {
            break;
        }
        uint32_t n = min32(total, dev.text_len - dev.text_off);
        if (virtq_copy(q, &dev.ram, h, 0, (uint8_t *)dev.text + dev.text_off, n, true, &why) != 0) {
            violation(qi, why);
            return;
        }
        dev.text_off += n;
        pass.bytes += n;
        irq |= virtq_push(q, h, n);
    }
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Control queues */

/* The control messages waiting for Linux's control receive buffers, as far as it has posted some. */
static void ctrl_rx_flush(void)
{
    struct virtq *q = &dev.q[VIRTIO_CONSOLE_CTRL_RX];
    if (!can_run() || !q->ready) {
        return;
    }
    bool irq = false;
    for (unsigned i = 0; i < dev.nports; i++) {
        struct port *p = &dev.port[i];
        while (p->pend != 0) {
            bool open = host_open(p);
            uint8_t bit = (p->pend & PEND_ADD) ? PEND_ADD : (p->pend & PEND_NAME) ? PEND_NAME : PEND_OPEN;
            if (bit == PEND_OPEN && open == p->told_open) {
                p->pend &= (uint8_t)~PEND_OPEN; /* changed back before it was sent */
                continue;
            }
            if (!pass_ok()) {
                goto out;
            }
            uint8_t msg[sizeof(struct virtio_console_control) + VBUS_NAME_SIZE];
            struct virtio_console_control m = {.id = i};
            uint32_t len = sizeof(m);
            if (bit == PEND_ADD) {
                m.event = VIRTIO_CONSOLE_DEVICE_ADD;
                m.value = 1;
            } else if (bit == PEND_NAME) {
                m.event = VIRTIO_CONSOLE_PORT_NAME;
                m.value = 1;
                const char *name = port_name(p);
                uint32_t n = 0;
                while (n < VBUS_NAME_SIZE - 1u && name[n] != '\0') {
                    n++;
                }
                memcpy(msg + sizeof(m), name, n);
                len += n;
            } else {
                m.event = VIRTIO_CONSOLE_PORT_OPEN;
                m.value = open ? 1u : 0u;
            }
            memcpy(msg, &m, sizeof(m));
            const char *why = NULL;
            uint16_t h;
            uint32_t total;
            int rc = virtq_pop(q, &h, &why);
            if (rc < 0) {
                violation(VIRTIO_CONSOLE_CTRL_RX, why);
                return;
            }
            if (rc == 0) {
                goto out; /* Linux gives buffers back as its control work handles them */
            }
            if (virtq_chain_check(q, &dev.ram, h, &total, &why) != 0 || total < len) {
                violation(VIRTIO_CONSOLE_CTRL_RX, why != NULL ? why : "control receive buffer too small");
                return;
            }
            if (virtq_copy(q, &dev.ram, h, 0, msg, len, true, &why) != 0) {
                violation(VIRTIO_CONSOLE_CTRL_RX, why);
                return;
            }
            irq |= virtq_push(q, h, len);
            p->pend &= (uint8_t)~bit;
            if (bit == PEND_OPEN) {
                p->told_open = open;
            }
        }
    }
out:
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/*
 * While the device waits for a reset it still gives back the driver's control messages, unread and with
 * nothing done for them: Linux's driver spins until each returns, and Debian's never resets a device
 * that asks for it (virtio_config_changed only tells the console driver), so the next program closing
 * its port would hang Linux's CPU for good. Given back, Linux stays usable and recovers by rebinding its
 * driver, which resets the device (README). A ring the violation left unreadable gives nothing
 * back (virtq_pop or the chain check refuses it); nothing else is read or moved until the reset.
 */
static void ctrl_tx_unread(void)
{
    struct virtq *q = &dev.q[VIRTIO_CONSOLE_CTRL_TX];
    if (!(dev.status & VIRTIO_STATUS_DRIVER_OK) || !q->ready) {
        return;
    }
    bool irq = false;
    for (unsigned turns = 0; turns < q->num && pass_ok(); turns++) {
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        if (virtq_pop(q, &h, &why) <= 0 || virtq_chain_check(q, &dev.ram, h, &total, &why) != 0) {
            break;
        }
        irq |= virtq_push(q, h, 0);
    }
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

static void ctrl_message(const struct virtio_console_control *m)
{
    if (m->event == VIRTIO_CONSOLE_DEVICE_READY) {
        if (m->value == 0) {
            part_printf(hyp_vbus.linux, "rtmux: vbus: %s's console driver failed to start\n",
                        hyp_vbus.linux->name);
            return;
        }
        for (unsigned i = 0; i < dev.nports; i++) {
            dev.port[i].pend |= PEND_ADD;
        }
        return;
    }
    if (m->event != VIRTIO_CONSOLE_PORT_READY && m->event != VIRTIO_CONSOLE_PORT_OPEN) {
        violation(VIRTIO_CONSOLE_CTRL_TX, "unknown control event from the driver");
        return;
    }
    if (m->id >= dev.nports) {
        violation(VIRTIO_CONSOLE_CTRL_TX, "control message for a port that does not exist");
        return;
    }
    struct port *p = &dev.port[m->id];
    if (m->event == VIRTIO_CONSOLE_PORT_READY) {
        if (m->value == 0) {
            part_printf(hyp_vbus.linux, "rtmux: vbus: %s could not set up port %u (%s)\n",
                        hyp_vbus.linux->name, m->id, port_name(p));
            return;
        }
        p->ready = true;
        p->pend |= PEND_NAME;
        p->told_open = false; /* the driver's port starts closed */
        linux_view(p);
        return;
    }
    bool open = m->value != 0;
    if (open == p->linux_open) {
        return;
    }
    if (p->is_stats) {
        p->linux_open = open;
        dev.stats_due = open;
        dev.stats_step = 0;
        dev.text_len = dev.text_off = 0; /* nothing of an earlier open's snapshot */
        if (open) {
            stats_flush(p);
        }
        return;
    }
    if (open) {
        tx_discard_queued(p); /* what an earlier program queued is not the new one's */
    }
    p->linux_open = open;
    epoch_change(p);
}

/* The driver's control messages, each returned at once (it spins until then). */
static void ctrl_tx(void)
{
    struct virtq *q = &dev.q[VIRTIO_CONSOLE_CTRL_TX];
    bool irq = false;
    for (unsigned turns = 0; turns < q->num && can_run() && q->ready && pass_ok(); turns++) {
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        struct virtio_console_control m;
        int rc = virtq_pop(q, &h, &why);
        if (rc == 0) {
            break;
        }
        if (rc < 0 || virtq_chain_check(q, &dev.ram, h, &total, &why) != 0 || total < sizeof(m) ||
            virtq_copy(q, &dev.ram, h, 0, (uint8_t *)&m, sizeof(m), false, &why) != 0) {
            violation(VIRTIO_CONSOLE_CTRL_TX, why != NULL ? why : "control message shorter than 8 bytes");
            return;
        }
        irq |= virtq_push(q, h, 0);
        ctrl_message(&m);
    }
    if (irq) {
        dev.isr |= VIRTIO_MMIO_INT_VRING;
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Processing passes */

/* Everything one port can do now. */
static void port_pass(struct port *p)
{
    if (p->is_stats) {
        stats_flush(p);
        return;
    }
    chan_poll(p);
    tx_flush(p);
    rx_flush(p);
}

static void notify(unsigned qi)
{
    if (dev.broken) {
        if (qi == VIRTIO_CONSOLE_CTRL_TX) {
            ctrl_tx_unread();
        }
        return;
    }
    if (!can_run() || !dev.q[qi].ready) {
        return; /* before DRIVER_OK: taken up when it is set */
    }
    if (qi == VIRTIO_CONSOLE_CTRL_TX) {
        ctrl_tx();
    } else if (qi != VIRTIO_CONSOLE_CTRL_RX) {
        port_pass(&dev.port[qi <= 1u ? 0u : qi / 2u - 1u]);
    }
    ctrl_rx_flush();
}

static void all_pass(void)
{
    for (unsigned i = 0; i < dev.nregions; i++) {
        region_poll(&dev.region[i]);
    }
    ctrl_tx();
    unsigned first = dev.rotate++ % dev.nports; /* a pass that stops early leaves the others a turn */
    for (unsigned k = 0; k < dev.nports; k++) {
        port_pass(&dev.port[(first + k) % dev.nports]);
    }
    ctrl_rx_flush();
}

/* ------------------------------------------------------------------------------------------------ */
/* Registers */

static void device_reset(void)
{
    if (dev.status != 0) {
        dev.resets++;
    }
    for (unsigned i = 0; i < dev.nqueues; i++) {
        struct virtq *q = &dev.q[i];
        virtq_disable(q);
        q->num = 0;
        q->desc_ipa = q->avail_ipa = q->used_ipa = 0;
    }
    dev.status = dev.isr = dev.dev_sel = dev.drv_sel = dev.queue_sel = dev.shm_sel = 0;
    dev.drv_features = 0;
    dev.drv_features_beyond = false;
    dev.broken = false;
    dev.more = false;
    dev.stats_due = false;
    for (unsigned i = 0; i < dev.nports; i++) {
        struct port *p = &dev.port[i];
        if (p->held) {
            p->stats.discarded += p->held_total - p->held_done; /* gone with Linux's rings */
        }
        p->held = false;
        p->discard_to = 0;
        p->ready = false;
        p->told_open = false;
        p->pend = 0;
        if (p->linux_open) {
            p->linux_open = false;
            epoch_change(p);
        }
    }
}

static void status_write(uint32_t val)
{
    if (val == 0) {
        device_reset();
        return;
    }
    if (dev.broken) {
        return; /* only a reset brings it back */
    }
    uint32_t cur = dev.status;
    if ((val & ~STATUS_BITS) != 0) {
        violation(NO_QUEUE, "unknown device status bits");
        return;
    }
    /* NEEDS_RESET is the device's alone: not set here (the device is not broken), ignored if written. */
    uint32_t next = val & ~VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    if ((next & cur) != cur) {
        violation(NO_QUEUE, "device status bits cleared without a reset");
        return;
    }
    bool ack = next & VIRTIO_STATUS_ACKNOWLEDGE, drv = next & VIRTIO_STATUS_DRIVER;
    bool fok = next & VIRTIO_STATUS_FEATURES_OK, dok = next & VIRTIO_STATUS_DRIVER_OK;
    if ((drv && !ack) || (fok && !drv) || (dok && !fok)) {
        violation(NO_QUEUE, "device status bits set out of order");
        return;
    }
    if (fok && !(cur & VIRTIO_STATUS_FEATURES_OK)) {
        if ((dev.drv_features & ~VBUS_FEATURES) != 0 || dev.drv_features_beyond) {
            violation(NO_QUEUE, "driver accepted features the device does not offer");
            return;
        }
        if (!(dev.drv_features & (1ull << VIRTIO_F_VERSION_1))) {
            violation(NO_QUEUE, "driver did not accept VIRTIO_F_VERSION_1");
            return;
        }
    }
    dev.status = next;
    if (dok && !(cur & VIRTIO_STATUS_DRIVER_OK)) {
        all_pass(); /* notifications that came before DRIVER_OK */
    }
}

static uint32_t config_read(uint64_t off, unsigned size)
{
    uint8_t cfg[VIRTIO_CONSOLE_CFG_SIZE] = {0};
    uint32_t ports = dev.nports;
    memcpy(cfg + VIRTIO_CONSOLE_CFG_MAX_NR_PORTS, &ports, sizeof(ports));
    if ((size != 1 && size != 2 && size != 4) || off % size != 0 || off + size > sizeof(cfg)) {
        return 0;
    }
    uint32_t v = 0;
    memcpy(&v, cfg + off, size);
    return v;
}

static uint32_t reg_read(uint64_t off)
{
    bool qok = dev.queue_sel < dev.nqueues;
    const struct virtq *q = qok ? &dev.q[dev.queue_sel] : NULL;
    switch (off) {
    case VIRTIO_MMIO_MAGIC_VALUE:
        return VIRTIO_MMIO_MAGIC;
    case VIRTIO_MMIO_VERSION:
        return VIRTIO_MMIO_VERSION_MODERN;
    case VIRTIO_MMIO_DEVICE_ID:
        return VIRTIO_ID_CONSOLE;
    case VIRTIO_MMIO_VENDOR_ID:
        return VBUS_VENDOR;
    case VIRTIO_MMIO_DEVICE_FEATURES:
        return dev.dev_sel == 0   ? (uint32_t)VBUS_FEATURES
               : dev.dev_sel == 1 ? (uint32_t)(VBUS_FEATURES >> 32)
                                  : 0;
    case VIRTIO_MMIO_QUEUE_NUM_MAX:
        return qok ? VBUS_QUEUE_MAX : 0;
    case VIRTIO_MMIO_QUEUE_NUM:
        return qok ? q->num : 0;
    case VIRTIO_MMIO_QUEUE_READY:
        return qok && q->ready ? 1u : 0u;
    case VIRTIO_MMIO_QUEUE_DESC_LOW:
        return qok ? (uint32_t)q->desc_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DESC_HIGH:
        return qok ? (uint32_t)(q->desc_ipa >> 32) : 0;
    case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
        return qok ? (uint32_t)q->avail_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
        return qok ? (uint32_t)(q->avail_ipa >> 32) : 0;
    case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
        return qok ? (uint32_t)q->used_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
        return qok ? (uint32_t)(q->used_ipa >> 32) : 0;
    case VIRTIO_MMIO_INTERRUPT_STATUS:
        return dev.isr;
    case VIRTIO_MMIO_STATUS:
        return dev.status;
    case VIRTIO_MMIO_SHM_LEN_LOW:
    case VIRTIO_MMIO_SHM_LEN_HIGH:
        return 0xffffffffu; /* no shared memory region */
    default:
        return 0; /* write-only and reserved registers, CONFIG_GENERATION (the space never changes) */
    }
}

/* The selected queue's configuration registers: only while it is not ready, once features are agreed. */
static struct virtq *queue_for_setup(void)
{
    if (dev.queue_sel >= dev.nqueues) {
        violation(NO_QUEUE, "queue register written for a queue that does not exist");
        return NULL;
    }
    if (!(dev.status & VIRTIO_STATUS_FEATURES_OK)) {
        violation(NO_QUEUE, "queue register written before FEATURES_OK");
        return NULL;
    }
    struct virtq *q = &dev.q[dev.queue_sel];
    if (q->ready) {
        violation(dev.queue_sel, "queue register written while the queue is ready");
        return NULL;
    }
    return q;
}

static void set_half(uint64_t *r, bool high, uint32_t v)
{
    *r = high ? (*r & 0xffffffffull) | ((uint64_t)v << 32) : (*r & ~0xffffffffull) | v;
}

static void reg_write(uint64_t off, uint32_t v)
{
    if (dev.broken && off != VIRTIO_MMIO_STATUS && off != VIRTIO_MMIO_INTERRUPT_ACK &&
        off != VIRTIO_MMIO_QUEUE_SEL && off != VIRTIO_MMIO_DEVICE_FEATURES_SEL &&
        off != VIRTIO_MMIO_DRIVER_FEATURES_SEL && off != VIRTIO_MMIO_SHM_SEL &&
        off != VIRTIO_MMIO_QUEUE_NOTIFY) {
        return; /* stopped until a reset (the selectors change nothing but what reads show; a notification
                 * only gets control messages back: ctrl_tx_unread) */
    }
    struct virtq *q;
    switch (off) {
    case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
        dev.dev_sel = v;
        return;
    case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
        dev.drv_sel = v;
        return;
    case VIRTIO_MMIO_DRIVER_FEATURES:
        if ((dev.status & (VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK)) != VIRTIO_STATUS_DRIVER) {
            violation(NO_QUEUE, "driver features written outside feature negotiation");
        } else if (dev.drv_sel <= 1) {
            set_half(&dev.drv_features, dev.drv_sel == 1, v);
        } else if (v != 0) {
            dev.drv_features_beyond = true;
        }
        return;
    case VIRTIO_MMIO_QUEUE_SEL:
        dev.queue_sel = v;
        return;
    case VIRTIO_MMIO_SHM_SEL:
        dev.shm_sel = v;
        return;
    case VIRTIO_MMIO_QUEUE_NUM:
        if ((q = queue_for_setup()) != NULL) {
            q->num = v;
        }
        return;
    case VIRTIO_MMIO_QUEUE_DESC_LOW:
    case VIRTIO_MMIO_QUEUE_DESC_HIGH:
        if ((q = queue_for_setup()) != NULL) {
            set_half(&q->desc_ipa, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
    case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
        if ((q = queue_for_setup()) != NULL) {
            set_half(&q->avail_ipa, off == VIRTIO_MMIO_QUEUE_DRIVER_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
    case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
        if ((q = queue_for_setup()) != NULL) {
            set_half(&q->used_ipa, off == VIRTIO_MMIO_QUEUE_DEVICE_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_READY:
        if (dev.queue_sel >= dev.nqueues || v > 1) {
            violation(NO_QUEUE, "QueueReady written with a bad value or queue");
            return;
        }
        q = &dev.q[dev.queue_sel];
        if (dev.queue_sel == 1 || (dev.queue_sel >= 4 && dev.queue_sel % 2u == 1u)) {
            /* a port's transmitq starts again from entry 0: nothing held, nothing to drop */
            struct port *tp = &dev.port[dev.queue_sel == 1 ? 0u : dev.queue_sel / 2u - 1u];
            if (v == 0 || !q->ready) {
                tp->held = false;
                tp->discard_to = 0;
            }
        }
        if (v == 0) {
            virtq_disable(q);
            return;
        }
        if (!q->ready && queue_for_setup() != NULL) {
            const char *why = virtq_enable(q, &dev.ram, VBUS_QUEUE_MAX);
            if (why != NULL) {
                violation(dev.queue_sel, why);
            }
        }
        return;
    case VIRTIO_MMIO_QUEUE_NOTIFY:
        if (v >= dev.nqueues) {
            violation(NO_QUEUE, "notification of a queue that does not exist");
            return;
        }
        notify(v);
        return;
    case VIRTIO_MMIO_INTERRUPT_ACK:
        dev.isr &= ~v;
        return;
    case VIRTIO_MMIO_STATUS:
        status_write(v);
        return;
    default:
        violation(NO_QUEUE, "write to a read-only or reserved register");
        return;
    }
}

static void reg_access(uint64_t off, bool write, uint64_t *val, unsigned size)
{
    if (off >= VIRTIO_MMIO_CONFIG) {
        /* The configuration space: any aligned 1, 2 or 4 bytes read; nothing in it is writable. */
        if (!write) {
            *val = config_read(off - VIRTIO_MMIO_CONFIG, size);
        }
        return;
    }
    if (size != 4 || off % 4u != 0) {
        /* A driver uses 32-bit aligned accesses only (virtio 1.1, 4.2.2.2): another write is a violation;
         * another read returns zero and changes nothing (reads have no effect here). */
        if (write) {
            violation(NO_QUEUE, "register write not 32-bit aligned");
        } else {
            *val = 0;
        }
        return;
    }
    if (write) {
        reg_write(off, (uint32_t)*val);
    } else {
        *val = reg_read(off);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Entry points */

static bool linux_running(void)
{
    return hyp_vbus.linux != NULL && hyp_vbus.linux->state == PART_RUNNING;
}

bool vbus_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    (void)ctx;
    spin_lock(&dev.lock);
    pass_begin(v);
    for (unsigned i = 0; i < dev.nregions; i++) {
        region_poll(&dev.region[i]);
    }
    reg_access(off, write, val, size);
    ctrl_rx_flush(); /* what the regions' changes queued for Linux */
    ring_rtos();
    const struct vcpu *wait = pass_end();
    uint64_t guard = pass.guard;
    spin_unlock(&dev.lock);
    if (linux_running()) {
        vgic_levels_changed(hyp_vbus.linux, v); /* its line, to the Linux CPU it is routed to */
    }
    pass_wait_rtos(wait, guard); /* last: from the timer's firing on, nothing but the way to the rtos */
    return true;
}

bool vbus_irq_line(const void *ctx)
{
    (void)ctx;
    return __atomic_load_n(&dev.isr, __ATOMIC_RELAXED) != 0;
}

void vbus_doorbell(struct vcpu *v)
{
    if (!dev.present) {
        return;
    }
    spin_lock(&dev.lock);
    pass_begin(v);
    bool more = dev.more;
    dev.more = false;
    for (unsigned i = 0; i < dev.nregions; i++) {
        struct region *r = &dev.region[i];
        region_poll(r);
        if (!r->online) {
            continue;
        }
        uint32_t rang = __atomic_exchange_n(&r->hdr->hyp_pending, 0u, __ATOMIC_ACQ_REL);
        for (unsigned n = 0; n < r->nchan && !more; n++) {
            if ((rang >> n) & 1u) {
                port_pass(&dev.port[r->chan[n]]);
            }
        }
    }
    if (more && dev.broken) {
        ctrl_tx_unread(); /* what an earlier pass left of the control messages to give back */
    } else if (more && can_run()) {
        all_pass(); /* what an earlier pass left, and the rtos's rings */
    }
    ctrl_rx_flush();
    ring_rtos();
    const struct vcpu *wait = pass_end();
    uint64_t guard = pass.guard;
    spin_unlock(&dev.lock);
    if (linux_running()) {
        vgic_levels_changed(hyp_vbus.linux, v); /* its line, to the Linux CPU it is routed to */
    }
    pass_wait_rtos(wait, guard); /* last: from the timer's firing on, nothing but the way to the rtos */
}

static struct region *region_of(const struct partition *p)
{
    for (unsigned i = 0; i < dev.nregions; i++) {
        if (dev.region[i].part == p) {
            return &dev.region[i];
        }
    }
    return NULL;
}

void vbus_part_down(struct partition *p)
{
    if (!dev.present) {
        return;
    }
    spin_lock(&dev.lock);
    pass_begin(NULL); /* not a pass that leaves work: the region goes, or the device is reset */
    struct region *r = region_of(p);
    if (r != NULL) {
        /* What the rings still hold goes with the RAM: counted as dropped (indices the rtos broke are not
         * followed, as everywhere). */
        for (unsigned n = 0; r->online && n < r->nchan; n++) {
            struct port *c = &dev.port[r->chan[n]];
            uint32_t unread = c->to_rtos_head - __atomic_load_n(&c->to_rtos->tail, __ATOMIC_ACQUIRE);
            uint32_t unsent = __atomic_load_n(&c->to_linux->head, __ATOMIC_ACQUIRE) - c->to_linux_tail;
            c->stats.discarded += (unread <= c->cfg->to_rtos_size ? unread : 0) +
                                  (unsent <= c->cfg->to_linux_size ? unsent : 0);
        }
        /* The Linux CPU stops using the region at its next pass (it holds the lock for whole passes, so
         * none is under way now); the wipe that may follow cannot be seen as the rtos's writes. */
        __atomic_store_n(&r->state, REGION_OFF, __ATOMIC_RELEASE);
        __atomic_store_n(&r->gen, r->gen + 1u, __ATOMIC_RELEASE);
    }
    if (p == hyp_vbus.linux) {
        for (unsigned i = 0; i < dev.nregions; i++) {
            region_poll(&dev.region[i]);
        }
        device_reset(); /* before the wipe: nothing of Linux's old rings is used again */
        ring_rtos();
    }
    spin_unlock(&dev.lock);
    if (r != NULL) {
        /* Tell Linux's CPU now: its ports close at once, not at Linux's next access. */
        gicv3_send_sgi(part_first_affinity(hyp_vbus.linux), VBUS_SGI_TO_HYP);
    }
}

void vbus_part_up(struct partition *p)
{
    if (!dev.present) {
        return;
    }
    spin_lock(&dev.lock);
    struct region *r = region_of(p);
    if (r != NULL) {
        __atomic_store_n(&r->state, REGION_WAIT, __ATOMIC_RELEASE); /* the RAM is wiped: magic is 0 */
    }
    spin_unlock(&dev.lock);
}

struct vbus_chan_stats vbus_stats(unsigned chan)
{
    spin_lock(&dev.lock);
    struct vbus_chan_stats s = chan < hyp_vbus.nchan ? dev.port[chan].stats : (struct vbus_chan_stats){0};
    spin_unlock(&dev.lock);
    return s;
}

void vbus_report(void)
{
    if (!dev.present) {
        return;
    }

    for (unsigned i = 0; i < hyp_vbus.nchan; i++) {
        struct vbus_chan_stats s = vbus_stats(i);
        hyp_printf("rtmux: vbus: channel %s: to-rtos %lu bytes in %lu writes (%lu times full), to-linux %lu "
                   "bytes in %lu buffers, %lu discarded, %lu errors\n",
                   dev.port[i].cfg->name, (unsigned long)s.to_rtos_bytes, (unsigned long)s.to_rtos_msgs,
                   (unsigned long)s.full, (unsigned long)s.to_linux_bytes, (unsigned long)s.to_linux_msgs,
                   (unsigned long)s.discarded, (unsigned long)s.errors);
    }
    hyp_printf("rtmux: vbus: device in %s: %lu resets, %lu violations (NEEDS_RESET), %lu on control queues\n",
               hyp_vbus.linux->name, (unsigned long)dev.resets, (unsigned long)dev.breaks,
               (unsigned long)dev.ctrl_errors);
}

/* ------------------------------------------------------------------------------------------------ */
/* Set-up */

static bool ring_fits(uint64_t region, uint32_t off, uint32_t size)
{
    return (size & (size - 1u)) == 0 && size >= VBUS_RING_MIN && size <= VBUS_RING_MAX &&
           off % VBUS_ALIGN == 0 && (uint64_t)off + VBUS_RING_HEADER_SIZE + size <= region;
}

void vbus_init(void)
{
    const struct vbus_config *cfg = &hyp_vbus;
    if (cfg->nchan == 0) {
        return;
    }
    struct partition *lp = cfg->linux;
    if (lp == NULL || cfg->nchan > VBUS_MAX_CHANNELS) {
        hyp_panic("vbus: %u channels without a Linux partition, or more than %u", cfg->nchan,
                  VBUS_MAX_CHANNELS);
    }
    for (unsigned d = 0; d < lp->ndev; d++) {
        if (cfg->mmio_ipa < lp->dev[d].ipa + lp->dev[d].size &&
            lp->dev[d].ipa < cfg->mmio_ipa + VBUS_MMIO_PAGE) {
            hyp_panic("vbus: the device at IPA 0x%lx lies in a range passed through to %s",
                      (unsigned long)cfg->mmio_ipa, lp->name);
        }
    }
    dev.ram = (struct virtq_ram){.ipa = lp->ram_ipa, .size = lp->ram_size, .host = (uintptr_t)lp->ram_pa};
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((lp->cpu_mask >> c) & 1u) != 0 && part_rtos_sharing(c) != NULL) {
            dev.shared_cpus |= 1ull << c;
        }
    }
    dev.tight = dev.shared_cpus != 0;
    uint64_t hz = arch_counter_hz();
    pass.step = dev.tight ? PASS_STEP_TIGHT : PASS_BYTES;
    pass.ticks = hz * PASS_TIGHT_NS / 1000000000u;
    pass.guard = hz * PASS_GUARD_NS / 1000000000u;
    dev.nports = cfg->nchan + 1u;
    dev.nqueues = 2u * (dev.nports + 1u);
    dev.port[cfg->nchan].is_stats = true;
    for (unsigned i = 0; i < dev.nqueues; i++) {
        /* Receive queues (device -> driver): each port's first, and the control receiveq. */
        dev.q[i].device_writes = i % 2u == 0;
    }
    for (unsigned i = 0; i < cfg->nchan; i++) {
        const struct vbus_chan_config *cc = &cfg->chan[i];
        struct partition *rp = cc->rtos;
        struct region *r = region_of(rp);
        if (r == NULL) {
            if (rp == NULL || rp->vbus == NULL) {
                hyp_panic("vbus: channel %s: its rtos partition has no V-Bus region", cc->name);
            }
            r = &dev.region[dev.nregions++];
            r->part = rp;
            r->hdr = rp->vbus; /* config_parse checked it lies in the partition's RAM */
            r->rtos_aff = part_first_affinity(rp);
            r->state = REGION_WAIT; /* part_setup wiped the RAM */
        }
        if (cc->name[0] == '\0' || cc->name[VBUS_NAME_SIZE - 1u] != '\0' || cc->index != r->nchan ||
            (uint64_t)cc->chan_off + sizeof(struct vbus_chan) > rp->vbus_size ||
            cc->chan_off % VBUS_ALIGN != 0 ||
            !ring_fits(rp->vbus_size, cc->to_linux_off, cc->to_linux_size) ||
            !ring_fits(rp->vbus_size, cc->to_rtos_off, cc->to_rtos_size)) {
            hyp_panic("vbus: channel %u: its name, control block or rings do not fit its region", i);
        }
        struct port *p = &dev.port[i];
        p->cfg = cc;
        p->r = r;
        p->local = r->nchan;
        r->chan[r->nchan++] = (uint8_t)i;
        uintptr_t base = (uintptr_t)r->hdr;
        p->c = (struct vbus_chan *)(base + cc->chan_off);
        p->to_linux = (struct vbus_ring *)(base + cc->to_linux_off);
        p->to_rtos = (struct vbus_ring *)(base + cc->to_rtos_off);
    }
    dev.present = true;
    /* The whole page (the blob's place for the device): what lies past the registers and the
     * configuration space reads as zero and ignores writes, as on a virtio-mmio page of QEMU's. */
    mmio_register(lp, "vbus", cfg->mmio_ipa, VBUS_MMIO_PAGE, vbus_mmio, NULL);
    hyp_printf("rtmux: vbus: %u channels, virtio console at IPA 0x%lx (interrupt %u) in %s\n", cfg->nchan,
               (unsigned long)cfg->mmio_ipa, cfg->intid, lp->name);
}
