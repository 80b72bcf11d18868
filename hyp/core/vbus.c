/*
 * The V-Bus device: a virtio console (modern interface, version 2) with VIRTIO_CONSOLE_F_MULTIPORT in the
 * Linux partition, on the virtio-mmio transport (core/vmmio.c). Port n is channel n of hyp_vbus, whose
 * bytes move between Linux's virtqueues and the serving rtos partition's rings in core/vchan.c, on
 * Linux's CPU; the last port is the hypervisor's own counters (VBUS_STATS_PORT). This file is the
 * console device proper (the control queues, each port's life as Linux's driver sees it, what is behind
 * each port) and the V-Bus's entry points: the trap of Linux's register accesses, the hypervisor
 * interrupt the rtos rings (VBUS_SGI_TO_HYP), and a partition's stop and start. Each entry does one
 * bounded pass (core/vpass.c) under the device's lock. The rtos never waits for Linux and never reads
 * Linux's memory.
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
 * Everything Linux provides goes through core/virtq.c's checks or the transport's register rules; a
 * violation sets DEVICE_NEEDS_RESET, raises the configuration-change interrupt, logs one line with the
 * reason and stops the device (every port closed for the rtos) until Linux writes status 0. Every line
 * the device and its channels print is caused by a partition (Linux's driver, the rtos's indices) and
 * goes through that partition's line limit (part_printf): a guest breaking the device in a loop, or
 * sending DEVICE_READY(0) as fast as it can, does not flood the shared console.
 *
 * The device's state is one instance of struct vbus_dev (vbus_dev below): the transport, the pass, the
 * channels and the regions are parts of it, each reached through the pointer its module is given.
 */
#include "hyp/vbus.h"

#include "arch/cpu.h"
#include "arch/spinlock.h"
#include "arch/vgic.h"
#include "drivers/gic.h"
#include "hyp/limits.h"
#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vchan.h"
#include "hyp/vcpu.h"
#include "hyp/virtq.h"
#include "hyp/vmmio.h"
#include "hyp/vpass.h"
#include "lib/string.h"
#include "lib/virtio.h"

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

_Static_assert(VBUS_QUEUE_MAX <= VIRTQ_TRACK_MAX, "virtq.c tracks every head of a queue in flight");
_Static_assert(VIRTIO_CONSOLE_CFG_SIZE <= VMMIO_CONFIG_MAX, "the console's configuration space fits");

/* Control messages waiting for a control receive buffer, per port, sent in this order. */
#define PEND_ADD  0x1u
#define PEND_NAME 0x2u
#define PEND_OPEN 0x4u

struct vbus_dev;
struct vbus_port;

/*
 * What is behind a port: one of the rtos's channels (core/vchan.c), or a service of the hypervisor's own
 * (VBUS_STATS_PORT). The console device reaches a port's other side only through these, so a port of
 * another kind is another table here, not a branch inside the channels or the control queues.
 */
struct port_ops {
    const char *(*name)(const struct vbus_port *p);
    /* The other side is there: what PORT_OPEN tells Linux. */
    bool (*host_open)(const struct vbus_port *p);
    /* A Linux program opened or closed the port (p->linux_open is already the new state). */
    void (*linux_open)(struct vbus_dev *d, struct vbus_port *p, bool open);
    /* Linux's rings are gone (the device broke or is reset): nothing of them is kept. */
    void (*linux_lost)(struct vbus_port *p);
    /* The port's transmitq starts again from entry 0 (QueueReady, a reset). */
    void (*tx_restart)(struct vbus_port *p);
    /* A violation on the port's queues (counted with its errors). */
    void (*violation)(struct vbus_port *p);
    /* Everything the port can do now, within the pass. */
    void (*pass)(struct vbus_dev *d, struct vbus_port *p);
};

struct vbus_port {
    const struct port_ops *ops;
    struct vchan *chan; /* a channel's port: the channel behind it */
    /* Linux's side */
    bool ready;      /* PORT_READY 1 came */
    bool linux_open; /* a Linux program has the port open */
    bool told_open;  /* the PORT_OPEN value Linux was last sent */
    uint8_t pend;
};

/* VBUS_STATS_PORT's snapshot, taken for Linux's open of it (due until it is); text_off of it went to
 * Linux so far. */
struct vbus_counters {
    char text[STATS_TEXT_MAX];
    uint32_t text_len, text_off;
    bool due; /* the snapshot is being taken: step is its next step */
    unsigned step;
};

/* Port numbers: channel i of hyp_vbus is port i; VBUS_STATS_PORT is port nchan, the last. */
struct vbus_dev {
    spinlock_t lock;
    bool present;
    struct vmmio mmio; /* the registers; its dev is this instance, its queues q */
    struct virtq q[VBUS_QUEUES];
    struct vpass pass; /* the pass under way (under lock) */
    unsigned nports;
    struct vbus_port port[VBUS_PORTS];
    struct vchan chan[VBUS_MAX_CHANNELS];
    struct vchan_region region[HYP_MAX_PARTITIONS];
    unsigned nregions;
    uint64_t ctrl_errors;
    unsigned rotate; /* the port a resumed pass starts with (each gets its turn first) */
    struct vbus_counters stats;
};

static struct vbus_dev vbus_dev;

static unsigned rx_queue(unsigned port)
{
    return port == 0 ? 0u : 2u * port + 2u;
}

/* The port whose receiveq or transmitq qi is (qi not a control queue). */
static unsigned queue_port(unsigned qi)
{
    return qi <= 1u ? 0u : qi / 2u - 1u;
}

/* Whether Linux should see the port open, and the PORT_OPEN that tells it when not. */
static void linux_view(struct vbus_port *p)
{
    if (p->ready && p->ops->host_open(p) != p->told_open) {
        p->pend |= PEND_OPEN;
    }
}

static void port_pass(struct vbus_dev *d, struct vbus_port *p)
{
    p->ops->pass(d, p);
}

/* ------------------------------------------------------------------------------------------------ */
/* Ports behind a channel */

/* The channel's rtos end may have opened or closed (vchan's `changed`). */
static void chan_changed(void *ctx)
{
    linux_view(ctx);
}

static const char *chan_name(const struct vbus_port *p)
{
    return p->chan->cfg->name;
}

static bool chan_host_open(const struct vbus_port *p)
{
    return vchan_host_open(p->chan);
}

static void chan_linux_open(struct vbus_dev *d, struct vbus_port *p, bool open)
{
    (void)d;
    vchan_linux_open(p->chan, open);
}

static void chan_linux_lost(struct vbus_port *p)
{
    vchan_linux_lost(p->chan);
}

static void chan_tx_restart(struct vbus_port *p)
{
    vchan_tx_restart(p->chan);
}

static void chan_violation(struct vbus_port *p)
{
    p->chan->stats.errors++;
}

static void chan_pass(struct vbus_dev *d, struct vbus_port *p)
{
    (void)d;
    vchan_pass(p->chan);
}

static const struct port_ops chan_port = {
    .name = chan_name,
    .host_open = chan_host_open,
    .linux_open = chan_linux_open,
    .linux_lost = chan_linux_lost,
    .tx_restart = chan_tx_restart,
    .violation = chan_violation,
    .pass = chan_pass,
};

/* ------------------------------------------------------------------------------------------------ */
/* VBUS_STATS_PORT: the counters, a service of the hypervisor's own */

/* The snapshot's free part (hyp_snprintf's buffer and size), and its length grown by what hyp_snprintf
 * put there (cut to fit: the buffer has room for the longest snapshot). */
#define TEXT_FREE(st) ((st)->text + (st)->text_len), (STATS_TEXT_MAX - (st)->text_len)
static void text_added(struct vbus_counters *st, int n)
{
    uint32_t room = STATS_TEXT_MAX - st->text_len;
    st->text_len += n <= 0 ? 0u : (uint32_t)n < room ? (uint32_t)n : room - 1u;
}

/* Step `step` of the counters' snapshot into d->stats.text (format: docs/architecture.md, "V-Bus
 * counters"): the header, the device's line, then each channel's line in two halves; false once there is
 * none left. A step is a few microseconds of formatting (a whole snapshot of three channels took 10 us
 * in icount), so a pass can stop between two for the rtos. The rtos's own counters are read from its
 * region as numbers only: nothing is followed. */
static bool stats_snapshot_step(struct vbus_dev *d, unsigned step)
{
    struct vbus_counters *st = &d->stats;
    uint64_t hz = arch_counter_hz();
    int n;
    if (step == 0) {
        n = hyp_snprintf(TEXT_FREE(st), "rtmux-stats 1 uptime_us=%lu\n",
                         (unsigned long)(hz >= 1000000u ? arch_counter() / (hz / 1000000u) : 0u));
        text_added(st, n);
        return true;
    }
    if (step == 1) {
        n = hyp_snprintf(
            TEXT_FREE(st),
            "device partition=%s status=0x%02x needs_reset=%u resets=%lu violations=%lu control_errors=%lu\n",
            hyp_vbus.linux->name, (unsigned)d->mmio.status, d->mmio.broken ? 1u : 0u,
            (unsigned long)d->mmio.resets, (unsigned long)d->mmio.breaks, (unsigned long)d->ctrl_errors);
        text_added(st, n);
        return true;
    }
    unsigned i = (step - 2u) / 2u;
    if (i >= hyp_vbus.nchan) {
        return false;
    }
    const struct vbus_port *p = &d->port[i];
    const struct vchan *ch = &d->chan[i];
    const struct vbus_chan_stats *s = &ch->stats;
    if (step % 2u == 0) {
        n = hyp_snprintf(
            TEXT_FREE(st),
            "channel name=%s rtos=%s linux_open=%u rtos_open=%u to_rtos_bytes=%lu to_rtos_writes=%lu "
            "to_linux_bytes=%lu to_linux_buffers=%lu",
            ch->cfg->name, ch->r->part->name, p->linux_open ? 1u : 0u, vchan_host_open(ch) ? 1u : 0u,
            (unsigned long)s->to_rtos_bytes, (unsigned long)s->to_rtos_msgs, (unsigned long)s->to_linux_bytes,
            (unsigned long)s->to_linux_msgs);
        text_added(st, n);
        return true;
    }
    uint64_t rtos_full, rtos_discarded;
    vchan_rtos_counters(ch, &rtos_full, &rtos_discarded);
    n = hyp_snprintf(TEXT_FREE(st),
                     " linux_full=%lu rtos_full=%lu discarded=%lu rtos_discarded=%lu errors=%lu\n",
                     (unsigned long)s->full, (unsigned long)rtos_full, (unsigned long)s->discarded,
                     (unsigned long)rtos_discarded, (unsigned long)s->errors);
    text_added(st, n);
    return true;
}

/* The snapshot into Linux's receive buffers on VBUS_STATS_PORT while it is open; what is left waits for
 * buffers Linux posts later. Since the device never says the port's other side is open, a read after
 * the whole snapshot is end of file. */
static void stats_flush(struct vbus_dev *d, struct vbus_port *p)
{
    struct vbus_counters *st = &d->stats;
    unsigned qi = rx_queue((unsigned)(p - d->port));
    struct virtq *q = &d->q[qi];
    if (!vmmio_running(&d->mmio) || !q->ready || !p->linux_open) {
        return;
    }
    /* One snapshot per open, however many opens came before it (taken for the last), in steps; Linux
     * gets it only whole: a read that finds the port empty before its end would be end of file. */
    while (st->due) {
        if (!vpass_ok(&d->pass)) {
            return;
        }
        st->due = stats_snapshot_step(d, st->step++);
    }
    if (st->text_off < st->text_len && !vpass_ok(&d->pass)) {
        return;
    }
    bool irq = false;
    while (st->text_off < st->text_len) { /* at most STATS_TEXT_MAX bytes: one step */
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        int rc = vmmio_rx_next(&d->mmio, qi, &h, &total);
        if (rc < 0) {
            return;
        }
        if (rc == 0) {
            break;
        }
        uint32_t n = total < st->text_len - st->text_off ? total : st->text_len - st->text_off;
        if (virtq_copy(q, &d->mmio.ram, h, 0, (uint8_t *)st->text + st->text_off, n, true, &why) != 0) {
            vmmio_fail(&d->mmio, qi, why);
            return;
        }
        st->text_off += n;
        vpass_copied(&d->pass, n);
        irq |= virtq_push(q, h, n);
    }
    if (irq) {
        vmmio_used(&d->mmio);
    }
}

static const char *stats_name(const struct vbus_port *p)
{
    (void)p;
    return VBUS_STATS_PORT;
}

/* Never: Linux reads the port to its end of file. */
static bool stats_host_open(const struct vbus_port *p)
{
    (void)p;
    return false;
}

static void stats_linux_open(struct vbus_dev *d, struct vbus_port *p, bool open)
{
    d->stats.due = open;
    d->stats.step = 0;
    d->stats.text_len = d->stats.text_off = 0; /* nothing of an earlier open's snapshot */
    if (open) {
        stats_flush(d, p);
    }
}

/* Nothing is held for Linux, and nothing reports the port's errors. */
static void stats_nothing(struct vbus_port *p)
{
    (void)p;
}

static const struct port_ops stats_port = {
    .name = stats_name,
    .host_open = stats_host_open,
    .linux_open = stats_linux_open,
    .linux_lost = stats_nothing,
    .tx_restart = stats_nothing,
    .violation = stats_nothing,
    .pass = stats_flush,
};

/* ------------------------------------------------------------------------------------------------ */
/* Control queues */

/* The control messages waiting for Linux's control receive buffers, as far as it has posted some. */
static void ctrl_rx_flush(struct vbus_dev *d)
{
    struct virtq *q = &d->q[VIRTIO_CONSOLE_CTRL_RX];
    if (!vmmio_running(&d->mmio) || !q->ready) {
        return;
    }
    bool irq = false;
    for (unsigned i = 0; i < d->nports; i++) {
        struct vbus_port *p = &d->port[i];
        while (p->pend != 0) {
            bool open = p->ops->host_open(p);
            uint8_t bit = (p->pend & PEND_ADD) ? PEND_ADD : (p->pend & PEND_NAME) ? PEND_NAME : PEND_OPEN;
            if (bit == PEND_OPEN && open == p->told_open) {
                p->pend &= (uint8_t)~PEND_OPEN; /* changed back before it was sent */
                continue;
            }
            if (!vpass_ok(&d->pass)) {
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
                const char *name = p->ops->name(p);
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
                vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_RX, why);
                return;
            }
            if (rc == 0) {
                goto out; /* Linux gives buffers back as its control work handles them */
            }
            if (virtq_chain_check(q, &d->mmio.ram, h, &total, &why) != 0 || total < len) {
                vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_RX,
                           why != NULL ? why : "control receive buffer too small");
                return;
            }
            if (virtq_copy(q, &d->mmio.ram, h, 0, msg, len, true, &why) != 0) {
                vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_RX, why);
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
        vmmio_used(&d->mmio);
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
static void ctrl_tx_unread(struct vbus_dev *d)
{
    struct virtq *q = &d->q[VIRTIO_CONSOLE_CTRL_TX];
    if (!(d->mmio.status & VIRTIO_STATUS_DRIVER_OK) || !q->ready) {
        return;
    }
    bool irq = false;
    for (unsigned turns = 0; turns < q->num && vpass_ok(&d->pass); turns++) {
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        if (virtq_pop(q, &h, &why) <= 0 || virtq_chain_check(q, &d->mmio.ram, h, &total, &why) != 0) {
            break;
        }
        irq |= virtq_push(q, h, 0);
    }
    if (irq) {
        vmmio_used(&d->mmio);
    }
}

static void ctrl_message(struct vbus_dev *d, const struct virtio_console_control *m)
{
    if (m->event == VIRTIO_CONSOLE_DEVICE_READY) {
        if (m->value == 0) {
            part_printf(hyp_vbus.linux, "rtmux: vbus: %s's console driver failed to start\n",
                        hyp_vbus.linux->name);
            return;
        }
        for (unsigned i = 0; i < d->nports; i++) {
            d->port[i].pend |= PEND_ADD;
        }
        return;
    }
    if (m->event != VIRTIO_CONSOLE_PORT_READY && m->event != VIRTIO_CONSOLE_PORT_OPEN) {
        vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_TX, "unknown control event from the driver");
        return;
    }
    if (m->id >= d->nports) {
        vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_TX, "control message for a port that does not exist");
        return;
    }
    struct vbus_port *p = &d->port[m->id];
    if (m->event == VIRTIO_CONSOLE_PORT_READY) {
        if (m->value == 0) {
            part_printf(hyp_vbus.linux, "rtmux: vbus: %s could not set up port %u (%s)\n",
                        hyp_vbus.linux->name, m->id, p->ops->name(p));
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
    p->linux_open = open;
    p->ops->linux_open(d, p, open);
}

/* The driver's control messages, each returned at once (it spins until then). */
static void ctrl_tx(struct vbus_dev *d)
{
    struct virtq *q = &d->q[VIRTIO_CONSOLE_CTRL_TX];
    bool irq = false;
    for (unsigned turns = 0; turns < q->num && vmmio_running(&d->mmio) && q->ready && vpass_ok(&d->pass);
         turns++) {
        const char *why = NULL;
        uint16_t h;
        uint32_t total;
        struct virtio_console_control m;
        int rc = virtq_pop(q, &h, &why);
        if (rc == 0) {
            break;
        }
        if (rc < 0 || virtq_chain_check(q, &d->mmio.ram, h, &total, &why) != 0 || total < sizeof(m) ||
            virtq_copy(q, &d->mmio.ram, h, 0, (uint8_t *)&m, sizeof(m), false, &why) != 0) {
            vmmio_fail(&d->mmio, VIRTIO_CONSOLE_CTRL_TX,
                       why != NULL ? why : "control message shorter than 8 bytes");
            return;
        }
        irq |= virtq_push(q, h, 0);
        ctrl_message(d, &m);
    }
    if (irq) {
        vmmio_used(&d->mmio);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Processing passes */

static void regions_poll(struct vbus_dev *d)
{
    for (unsigned i = 0; i < d->nregions; i++) {
        vchan_region_poll(&d->region[i]);
    }
}

/* Rings each rtos for what this pass changed in its region. */
static void regions_ring(struct vbus_dev *d)
{
    for (unsigned i = 0; i < d->nregions; i++) {
        vchan_region_ring(&d->region[i]);
    }
}

static void all_pass(struct vbus_dev *d)
{
    regions_poll(d);
    ctrl_tx(d);
    unsigned first = d->rotate++ % d->nports; /* a pass that stops early leaves the others a turn */
    for (unsigned k = 0; k < d->nports; k++) {
        port_pass(d, &d->port[(first + k) % d->nports]);
    }
    ctrl_rx_flush(d);
}

/* ------------------------------------------------------------------------------------------------ */
/* The console device on the transport (struct vmmio_type) */

static void console_config(void *ctx, uint8_t *space)
{
    const struct vbus_dev *d = ctx;
    uint32_t ports = d->nports;
    memcpy(space + VIRTIO_CONSOLE_CFG_MAX_NR_PORTS, &ports, sizeof(ports));
}

static void console_notify(void *ctx, unsigned qi)
{
    struct vbus_dev *d = ctx;
    if (d->mmio.broken) {
        if (qi == VIRTIO_CONSOLE_CTRL_TX) {
            ctrl_tx_unread(d);
        }
        return;
    }
    if (!vmmio_running(&d->mmio) || !d->q[qi].ready) {
        return; /* before DRIVER_OK: taken up when it is set */
    }
    if (qi == VIRTIO_CONSOLE_CTRL_TX) {
        ctrl_tx(d);
    } else if (qi != VIRTIO_CONSOLE_CTRL_RX) {
        port_pass(d, &d->port[queue_port(qi)]);
    }
    ctrl_rx_flush(d);
}

static void console_queue_restart(void *ctx, unsigned qi)
{
    struct vbus_dev *d = ctx;
    if (qi == 1u || (qi >= 4u && qi % 2u == 1u)) {
        /* a port's transmitq starts again from entry 0: nothing held, nothing to drop */
        struct vbus_port *p = &d->port[queue_port(qi)];
        p->ops->tx_restart(p);
    }
}

static void console_driver_ok(void *ctx)
{
    all_pass(ctx); /* notifications that came before DRIVER_OK */
}

static void console_reset(void *ctx)
{
    struct vbus_dev *d = ctx;
    d->pass.more = false; /* what an earlier pass left is gone with Linux's rings */
    d->stats.due = false;
    for (unsigned i = 0; i < d->nports; i++) {
        struct vbus_port *p = &d->port[i];
        p->ops->linux_lost(p);
        p->ops->tx_restart(p);
        p->ready = false;
        p->told_open = false;
        p->pend = 0;
        if (p->linux_open) {
            p->linux_open = false;
            p->ops->linux_open(d, p, false);
        }
    }
}

/* NEEDS_RESET: counted, one log line, and every port closed for the rtos (the device does nothing more
 * until Linux resets it). */
static void console_failed(void *ctx, unsigned queue, const char *why)
{
    struct vbus_dev *d = ctx;
    if (queue != VMMIO_NO_QUEUE && queue >= 4u) {
        struct vbus_port *p = &d->port[queue_port(queue)];
        p->ops->violation(p);
    } else if (queue <= 1u) {
        d->port[0].ops->violation(&d->port[0]);
    } else {
        d->ctrl_errors++;
    }
    char where[24] = "registers";
    if (queue != VMMIO_NO_QUEUE) {
        (void)hyp_snprintf(where, sizeof(where), "queue %u", queue);
    }
    part_printf(hyp_vbus.linux, "rtmux: vbus: %s: %s: %s; device needs reset (%lu so far)\n",
                hyp_vbus.linux->name, where, why, (unsigned long)d->mmio.breaks);
    for (unsigned i = 0; i < d->nports; i++) {
        struct vbus_port *p = &d->port[i];
        p->ops->linux_lost(p); /* Linux gets its buffers back only by resetting the device */
        if (p->linux_open) {
            p->linux_open = false;
            p->ops->linux_open(d, p, false);
        }
    }
}

static const struct vmmio_type console_type = {
    .device_id = VIRTIO_ID_CONSOLE,
    .vendor_id = VBUS_VENDOR,
    .features = VBUS_FEATURES,
    .queue_max = VBUS_QUEUE_MAX,
    .config_size = VIRTIO_CONSOLE_CFG_SIZE,
    .config = console_config,
    .notify = console_notify,
    .queue_restart = console_queue_restart,
    .driver_ok = console_driver_ok,
    .reset = console_reset,
    .failed = console_failed,
};

/* ------------------------------------------------------------------------------------------------ */
/* Entry points */

static bool linux_running(void)
{
    return hyp_vbus.linux != NULL && hyp_vbus.linux->state == PART_RUNNING;
}

/* The device's registers (mmio_handler_t; ctx: the device). */
static bool vbus_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    struct vbus_dev *d = ctx;
    spin_lock(&d->lock);
    vpass_begin(&d->pass, v);
    regions_poll(d);
    vmmio_access(&d->mmio, off, write, val, size);
    ctrl_rx_flush(d); /* what the regions' changes queued for Linux */
    regions_ring(d);
    const struct vcpu *wait = vpass_end(&d->pass);
    uint64_t guard = d->pass.guard;
    spin_unlock(&d->lock);
    if (linux_running()) {
        vgic_levels_changed(hyp_vbus.linux, v); /* its line, to the Linux CPU it is routed to */
    }
    vpass_wait_rtos(wait, guard); /* last: from the timer's firing on, nothing but the way to the rtos */
    return true;
}

bool vbus_irq_line(const void *ctx)
{
    (void)ctx;
    return vmmio_irq_line(&vbus_dev.mmio);
}

void vbus_doorbell(struct vcpu *v)
{
    struct vbus_dev *d = &vbus_dev;
    if (!d->present) {
        return;
    }
    spin_lock(&d->lock);
    vpass_begin(&d->pass, v);
    bool more = vpass_take_more(&d->pass);
    for (unsigned i = 0; i < d->nregions; i++) {
        struct vchan_region *r = &d->region[i];
        vchan_region_poll(r);
        vchan_region_rang(r, !more); /* with more, every channel's pass follows */
    }
    if (more && d->mmio.broken) {
        ctrl_tx_unread(d); /* what an earlier pass left of the control messages to give back */
    } else if (more && vmmio_running(&d->mmio)) {
        all_pass(d); /* what an earlier pass left, and the rtos's rings */
    }
    ctrl_rx_flush(d);
    regions_ring(d);
    const struct vcpu *wait = vpass_end(&d->pass);
    uint64_t guard = d->pass.guard;
    spin_unlock(&d->lock);
    if (linux_running()) {
        vgic_levels_changed(hyp_vbus.linux, v); /* its line, to the Linux CPU it is routed to */
    }
    vpass_wait_rtos(wait, guard); /* last: from the timer's firing on, nothing but the way to the rtos */
}

static struct vchan_region *region_of(struct vbus_dev *d, const struct partition *p)
{
    for (unsigned i = 0; i < d->nregions; i++) {
        if (d->region[i].part == p) {
            return &d->region[i];
        }
    }
    return NULL;
}

void vbus_part_down(struct partition *p)
{
    struct vbus_dev *d = &vbus_dev;
    if (!d->present) {
        return;
    }
    spin_lock(&d->lock);
    vpass_begin(&d->pass, NULL); /* not a pass that leaves work: the region goes, or the device is reset */
    struct vchan_region *r = region_of(d, p);
    if (r != NULL) {
        vchan_region_down(r);
    }
    if (p == hyp_vbus.linux) {
        regions_poll(d);
        vmmio_reset(&d->mmio); /* before the wipe: nothing of Linux's old rings is used again */
        regions_ring(d);
    }
    spin_unlock(&d->lock);
    if (r != NULL) {
        /* Tell Linux's CPU now: its ports close at once, not at Linux's next access. */
        gic_send_sgi(part_first_affinity(hyp_vbus.linux), VBUS_SGI_TO_HYP);
    }
}

void vbus_part_up(struct partition *p)
{
    struct vbus_dev *d = &vbus_dev;
    if (!d->present) {
        return;
    }
    spin_lock(&d->lock);
    struct vchan_region *r = region_of(d, p);
    if (r != NULL) {
        vchan_region_up(r);
    }
    spin_unlock(&d->lock);
}

struct vbus_chan_stats vbus_stats(unsigned chan)
{
    struct vbus_dev *d = &vbus_dev;
    spin_lock(&d->lock);
    struct vbus_chan_stats s = chan < hyp_vbus.nchan ? d->chan[chan].stats : (struct vbus_chan_stats){0};
    spin_unlock(&d->lock);
    return s;
}

void vbus_report(void)
{
    struct vbus_dev *d = &vbus_dev;
    if (!d->present) {
        return;
    }

    for (unsigned i = 0; i < hyp_vbus.nchan; i++) {
        struct vbus_chan_stats s = vbus_stats(i);
        hyp_printf("rtmux: vbus: channel %s: to-rtos %lu bytes in %lu writes (%lu times full), to-linux %lu "
                   "bytes in %lu buffers, %lu discarded, %lu errors\n",
                   d->chan[i].cfg->name, (unsigned long)s.to_rtos_bytes, (unsigned long)s.to_rtos_msgs,
                   (unsigned long)s.full, (unsigned long)s.to_linux_bytes, (unsigned long)s.to_linux_msgs,
                   (unsigned long)s.discarded, (unsigned long)s.errors);
    }
    hyp_printf("rtmux: vbus: device in %s: %lu resets, %lu violations (NEEDS_RESET), %lu on control queues\n",
               hyp_vbus.linux->name, (unsigned long)d->mmio.resets, (unsigned long)d->mmio.breaks,
               (unsigned long)d->ctrl_errors);
}

/* ------------------------------------------------------------------------------------------------ */
/* Set-up */

void vbus_init(void)
{
    struct vbus_dev *d = &vbus_dev;
    const struct vbus_config *cfg = &hyp_vbus;
    if (cfg->nchan == 0) {
        return;
    }
    struct partition *lp = cfg->linux;
    if (lp == NULL || cfg->nchan > VBUS_MAX_CHANNELS) {
        hyp_panic("vbus: %u channels without a Linux partition, or more than %u", cfg->nchan,
                  VBUS_MAX_CHANNELS);
    }
    for (unsigned i = 0; i < lp->ndev; i++) {
        if (cfg->mmio_ipa < lp->dev[i].ipa + lp->dev[i].size &&
            lp->dev[i].ipa < cfg->mmio_ipa + VBUS_MMIO_PAGE) {
            hyp_panic("vbus: the device at IPA 0x%lx lies in a range passed through to %s",
                      (unsigned long)cfg->mmio_ipa, lp->name);
        }
    }
    uint64_t shared_cpus = 0; /* Linux's CPUs that an rtos shares: its passes step aside there */
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((lp->cpu_mask >> c) & 1u) != 0 && part_rtos_sharing(c) != NULL) {
            shared_cpus |= 1ull << c;
        }
    }
    vpass_init(&d->pass, shared_cpus, VBUS_SGI_TO_HYP);
    d->nports = cfg->nchan + 1u;
    unsigned nqueues = 2u * (d->nports + 1u);
    for (unsigned i = 0; i < nqueues; i++) {
        /* Receive queues (device -> driver): each port's first, and the control receiveq. */
        d->q[i].device_writes = i % 2u == 0;
    }
    vmmio_init(&d->mmio, &console_type, d, d->q, nqueues,
               (struct virtq_ram){.ipa = lp->ram_ipa, .size = lp->ram_size, .host = (uintptr_t)lp->ram_pa});
    for (unsigned i = 0; i < cfg->nchan; i++) {
        const struct vbus_chan_config *cc = &cfg->chan[i];
        struct partition *rp = cc->rtos;
        struct vchan_region *r = region_of(d, rp);
        if (r == NULL) {
            if (rp == NULL || rp->vbus.region == NULL) {
                hyp_panic("vbus: channel %s: its rtos partition has no V-Bus region", cc->name);
            }
            r = &d->region[d->nregions++];
            vchan_region_init(r, rp);
        }
        struct vbus_port *p = &d->port[i];
        p->ops = &chan_port;
        p->chan = &d->chan[i];
        if (!vchan_init(p->chan, cc, r, &d->mmio, rx_queue(i), &d->pass, chan_changed, p)) {
            hyp_panic("vbus: channel %u: its name, control block or rings do not fit its region", i);
        }
    }
    d->port[cfg->nchan].ops = &stats_port;
    d->present = true;
    /* The whole page (the blob's place for the device): what lies past the registers and the
     * configuration space reads as zero and ignores writes, as on a virtio-mmio page of QEMU's. */
    mmio_register(lp, "vbus", cfg->mmio_ipa, VBUS_MMIO_PAGE, vbus_mmio, d);
    hyp_printf("rtmux: vbus: %u channels, virtio console at IPA 0x%lx (interrupt %u) in %s\n", cfg->nchan,
               (unsigned long)cfg->mmio_ipa, cfg->intid, lp->name);
}
