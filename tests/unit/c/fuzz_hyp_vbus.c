/*
 * Fuzzer of the V-Bus device (hyp/core/vbus.c, vmmio.c, vchan.c, vpass.c, virtq.c), built natively with
 * AddressSanitizer and UndefinedBehaviorSanitizer, on vbus_sim.h's system: Linux's RAM and the rtos's
 * region have an inaccessible page on each side. A hostile Linux drives the device through its MMIO handler
 * (any offset, size and value, mostly its registers), rewrites its rings with random bytes, chains and
 * indices, and sometimes behaves like the real driver (probe, writes, reads, port opens and closes); a
 * hostile rtos writes random values into its own words of the region; the rtos partition restarts and
 * Linux resets the device in between.
 *
 * Checked around every entry into the device model (a register access, a doorbell, a partition's stop
 * or start): it never touches memory outside Linux's RAM and the region (the guard pages), it writes
 * into Linux's RAM only inside the used ring of a ready queue or a device-writable buffer of a receive
 * queue's table (before or after the call), every buffer it returns is a valid chain of the queue's
 * direction with no more bytes than it holds, and it writes into the region only the hypervisor's words
 * (lib/vbus.h: the channel's second cache line, to_rtos's head and data, to_linux's tail, the pending
 * masks). Every
 * few thousand steps the device must recover: after Linux resets it and the rtos restarts, the real
 * driver's probe must work and bytes must go round trip unchanged on every channel.
 *
 *   fuzz_hyp_vbus [--seed N] [--seconds S] [--iterations N]
 *
 * Seeded and reproducible (the seed is printed first); a failure prints the seed, the step and the
 * command that replays it.
 */
#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "hyp/virtq.h"

/* The console device is compiled into this file, so the checks read its state (the queues it has, whether
 * it needs a reset, the writes its channels hold) without a register access, which would make it do work
 * itself; the transport, the channels and the passes are linked. */
#include "../../../hyp/core/vbus.c"

/* Smaller than the unit tests' (every device call is bracketed by a copy and a comparison of both). */
#define SIM_BUF         512u
#define SIM_RAM_SIZE    (64u * 1024u)
#define SIM_REGION_SIZE (32u * 1024u)
#include "vbus_sim.h"

static uint64_t rng, seed;
static const char *prog = "fuzz_hyp_vbus";

static struct {
    uint64_t iter;
    char what[160];
} cur;

static uint8_t data[SIM_BUF * 4]; /* what Linux and the rtos write */

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

static void print_case(void)
{
    fprintf(stderr, "fuzz: seed 0x%llx, step %llu: %s\n", (unsigned long long)seed,
            (unsigned long long)cur.iter, cur.what);
    fprintf(stderr, "fuzz: replay with: %s --seed 0x%llx --iterations %llu\n", prog, (unsigned long long)seed,
            (unsigned long long)cur.iter + 1u);
}

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz: FAILED: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    print_case();
    exit(1);
}

static void print_case_on_sanitizer_report(void)
{
    typedef void (*set_cb_t)(void (*)(void));
    __sanitizer_set_death_callback(print_case);
    void *ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (ubsan != NULL) {
        set_cb_t set = (set_cb_t)dlsym(ubsan, "__sanitizer_set_death_callback");
        if (set != NULL) {
            set(print_case);
        }
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* What the device may write */

static uint8_t *ram_before, *region_before;
static uint8_t *allowed;    /* per byte of Linux's RAM */
static uint8_t *region_hyp; /* per byte of the region: the hypervisor's words */

static void allow(uint64_t ipa, uint64_t len)
{
    if (ipa < SIM_RAM_IPA || ipa >= SIM_RAM_IPA + SIM_RAM_SIZE) {
        return;
    }
    uint64_t end = len > SIM_RAM_IPA + SIM_RAM_SIZE - ipa ? SIM_RAM_IPA + SIM_RAM_SIZE : ipa + len;
    memset(allowed + (ipa - SIM_RAM_IPA), 1, end - ipa);
}

/* Every ready queue's used ring and, for receive queues, every device-writable buffer of its table, as
 * the device has the queues and `ram` holds the tables. */
static void allow_from(const uint8_t *ram)
{
    for (unsigned qi = 0; qi < vbus_dev.mmio.nqueues; qi++) {
        const struct virtq *q = &vbus_dev.q[qi];
        if (!q->ready) {
            continue;
        }
        allow(q->used_ipa, VIRTQ_USED_BYTES(q->num));
        if (!q->device_writes) {
            continue;
        }
        for (uint64_t i = 0; i < q->num; i++) {
            uint64_t at = q->desc_ipa + 16u * i;
            if (at < SIM_RAM_IPA || at + 16u > SIM_RAM_IPA + SIM_RAM_SIZE) {
                continue;
            }
            struct virtq_desc d;
            memcpy(&d, ram + (at - SIM_RAM_IPA), sizeof(d));
            if (d.flags & VIRTQ_DESC_F_WRITE) {
                allow(d.addr, d.len);
            }
        }
    }
}

static bool broken_before;
static struct virtq queue_before[VBUS_QUEUES];
static bool held_before[VBUS_MAX_CHANNELS + 1u];
static uint16_t held_head_before[VBUS_MAX_CHANNELS + 1u];

/* Whether the chain at head is one the device may return with `len` bytes written, in `ram`: every
 * descriptor in the table, of the queue's direction, inside RAM, no loop, len within its bytes. */
static bool chain_ok(const struct virtq *q, const uint8_t *ram, uint32_t head, uint32_t len)
{
    uint64_t total = 0;
    uint32_t i = head;
    for (uint32_t steps = 0; steps < q->num; steps++) {
        if (i >= q->num) {
            return false;
        }
        struct virtq_desc d;
        uint64_t at = q->desc_ipa + 16u * i;
        memcpy(&d, ram + (at - SIM_RAM_IPA), sizeof(d));
        if ((d.flags & ~(VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE)) != 0 ||
            ((d.flags & VIRTQ_DESC_F_WRITE) != 0) != q->device_writes || d.addr < SIM_RAM_IPA ||
            d.addr - SIM_RAM_IPA > SIM_RAM_SIZE || d.len > SIM_RAM_SIZE - (d.addr - SIM_RAM_IPA)) {
            return false;
        }
        total += d.len;
        if (!(d.flags & VIRTQ_DESC_F_NEXT)) {
            return q->device_writes ? len <= total : len == 0;
        }
        i = d.next;
    }
    return false;
}

/* Every buffer the device returned in the call passed its checks (in the tables before or after). */
static void check_returned(void)
{
    for (unsigned qi = 0; qi < vbus_dev.mmio.nqueues; qi++) {
        const struct virtq *b = &queue_before[qi], *q = &vbus_dev.q[qi];
        if (!b->ready || !q->ready || b->used_ipa != q->used_ipa || b->desc_ipa != q->desc_ipa ||
            b->num != q->num) {
            continue;
        }
        for (uint16_t u = b->used_idx; u != q->used_idx; u++) {
            struct virtq_used_elem e;
            uint64_t at = q->used_ipa + 4u + 8u * (u & (q->num - 1u));
            memcpy(&e, sim.ram + (at - SIM_RAM_IPA), sizeof(e));
            /* A write the device held (checked when taken) goes back as it is now, with nothing in it. */
            unsigned port = qi <= 1u ? 0u : qi / 2u - 1u;
            bool was_held = qi % 2u == 1u && qi != VIRTIO_CONSOLE_CTRL_TX && held_before[port] &&
                            e.id == held_head_before[port] && e.len == 0;
            if (!was_held && !chain_ok(q, ram_before, e.id, e.len) && !chain_ok(q, sim.ram, e.id, e.len)) {
                fail("queue %u: the device returned chain %u with %u bytes, which is not a valid buffer of "
                     "the queue",
                     qi, e.id, e.len);
            }
        }
    }
}

static void before_device(void)
{
    memcpy(ram_before, sim.ram, SIM_RAM_SIZE);
    memcpy(region_before, sim.region, SIM_REGION_SIZE);
    memcpy(queue_before, vbus_dev.q, sizeof(queue_before));
    for (unsigned i = 0; i < vbus_dev.nports; i++) {
        const struct vchan *ch = vbus_dev.port[i].chan; /* NULL: the counters' port, which holds nothing */
        held_before[i] = ch != NULL && ch->held;
        held_head_before[i] = ch != NULL ? ch->held_head : 0u;
    }
    broken_before = vbus_dev.mmio.broken;
}

static void after_device(void)
{
    if (memcmp(ram_before, sim.ram, SIM_RAM_SIZE) != 0) {
        memset(allowed, 0, SIM_RAM_SIZE);
        if (broken_before) {
            /* Needing a reset, the device only gives control messages back (unread, 0 bytes). */
            const struct virtq *q = &vbus_dev.q[VIRTIO_CONSOLE_CTRL_TX];
            if (q->ready) {
                allow(q->used_ipa, VIRTQ_USED_BYTES(q->num));
            }
            for (size_t i = 0; i < SIM_RAM_SIZE; i++) {
                if (sim.ram[i] != ram_before[i] && !allowed[i]) {
                    fail("the device wrote Linux's RAM (IPA 0x%llx) while it needed a reset",
                         (unsigned long long)(SIM_RAM_IPA + i));
                }
            }
            check_returned();
        } else {
            allow_from(ram_before);
            allow_from(sim.ram);
            check_returned();
            for (size_t i = 0; i < SIM_RAM_SIZE; i++) {
                if (sim.ram[i] != ram_before[i] && !allowed[i]) {
                    fail("the device wrote Linux's RAM at IPA 0x%llx, outside every used ring and receive "
                         "buffer",
                         (unsigned long long)(SIM_RAM_IPA + i));
                }
            }
        }
    }
    for (size_t b = 0; b < SIM_REGION_SIZE; b += VBUS_ALIGN) {
        if (memcmp(sim.region + b, region_before + b, VBUS_ALIGN) == 0) {
            continue;
        }
        for (size_t i = b; i < b + VBUS_ALIGN; i++) {
            if (sim.region[i] != region_before[i] && !region_hyp[i]) {
                fail("the device wrote the rtos's word at region offset 0x%zx", i);
            }
        }
    }
}

static void mark(size_t off, size_t len)
{
    memset(region_hyp + off, 1, len);
}

static void map_hyp_words(void)
{
    mark(offsetof(struct vbus_region, hyp_pending), 4);
    mark(offsetof(struct vbus_region, rtos_pending), 4);
    for (unsigned i = 0; i < sim.nchan; i++) {
        const struct vbus_chan_config *c = &hyp_vbus.chan[i];
        mark(c->chan_off + offsetof(struct vbus_chan, linux_open), VBUS_ALIGN);
        mark(c->to_rtos_off + offsetof(struct vbus_ring, head), 4);
        mark(c->to_rtos_off + VBUS_RING_HEADER_SIZE, c->to_rtos_size);
        mark(c->to_linux_off + offsetof(struct vbus_ring, tail), 4);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Steps */

static uint32_t pick_value(void)
{
    switch (below(8)) {
    case 0:
        return 0;
    case 1:
        return 0xffffffffu;
    case 2:
        return 1u << below(32);
    case 3:
        return (uint32_t)below(sim.nqueues + 2u);
    case 4:
        return (uint32_t)(SIM_RAM_IPA + below(SIM_RAM_SIZE + 8192u) - 4096u);
    case 5:
        return (uint32_t)below(256);
    default:
        return (uint32_t)rnd();
    }
}

static void step_register(void)
{
    static const uint32_t regs[] = {
        VIRTIO_MMIO_DEVICE_FEATURES_SEL, VIRTIO_MMIO_DRIVER_FEATURES,   VIRTIO_MMIO_DRIVER_FEATURES_SEL,
        VIRTIO_MMIO_QUEUE_SEL,           VIRTIO_MMIO_QUEUE_NUM,         VIRTIO_MMIO_QUEUE_READY,
        VIRTIO_MMIO_QUEUE_NOTIFY,        VIRTIO_MMIO_INTERRUPT_ACK,     VIRTIO_MMIO_STATUS,
        VIRTIO_MMIO_QUEUE_DESC_LOW,      VIRTIO_MMIO_QUEUE_DESC_HIGH,   VIRTIO_MMIO_QUEUE_DRIVER_LOW,
        VIRTIO_MMIO_QUEUE_DRIVER_HIGH,   VIRTIO_MMIO_QUEUE_DEVICE_LOW,  VIRTIO_MMIO_QUEUE_DEVICE_HIGH,
        VIRTIO_MMIO_MAGIC_VALUE,         VIRTIO_MMIO_CONFIG_GENERATION, VIRTIO_MMIO_SHM_SEL,
    };
    uint64_t off = below(4) != 0 ? regs[below(sizeof(regs) / sizeof(regs[0]))] : below(VIRTIO_MMIO_SIZE);
    unsigned size = below(5) != 0 ? 4u : 1u << below(4);
    bool write = below(3) != 0;
    uint32_t v = pick_value();
    if (off == VIRTIO_MMIO_STATUS && below(2)) {
        static const uint32_t steps[] = {0, 1, 3, 11, 15, 0x8b, 0x4f};
        v = steps[below(sizeof(steps) / sizeof(steps[0]))];
    }
    snprintf(cur.what, sizeof(cur.what), "%s of %u bytes at 0x%llx value 0x%x", write ? "write" : "read",
             size, (unsigned long long)off, v);
    (void)sim_access(off, write, v, size);
}

/* An address near what matters: a buffer of the queue, RAM's edges, outside RAM, anything. */
static uint64_t pick_addr(const struct sim_q *q)
{
    uint64_t end = SIM_RAM_IPA + SIM_RAM_SIZE;
    switch (below(8)) {
    case 0:
    case 1:
    case 2:
        return q->buf_ipa[below(SIM_QN)] + (below(4) == 0 ? below(SIM_BUF) : 0);
    case 3:
        return end - below(2 * SIM_BUF);
    case 4:
        return SIM_RAM_IPA - below(64) + below(64);
    case 5:
        return q->desc_ipa + below(VIRTQ_DESC_BYTES(SIM_QN)); /* a buffer over the rings themselves */
    case 6:
        return below(2) ? end + below(SIM_BUF) : ~0ull - below(SIM_BUF);
    default:
        return rnd();
    }
}

static uint32_t pick_len(void)
{
    switch (below(8)) {
    case 0:
        return 0;
    case 1:
        return 1u + (uint32_t)below(8);
    case 2:
    case 3:
    case 4:
        return (uint32_t)below(2 * SIM_BUF);
    case 5:
        return 0xffffffffu - (uint32_t)below(16);
    case 6:
        return (uint32_t)below(SIM_RAM_SIZE + 1u);
    default:
        return (uint32_t)rnd();
    }
}

/* Something for the device to use the queue's next buffer for: a notification, bytes from the rtos for
 * a receive queue, a change the control receive queue reports. */
static void trigger(unsigned qi)
{
    if (qi == VIRTIO_CONSOLE_CTRL_RX) {
        unsigned i = (unsigned)below(sim.nchan);
        if (sim.ep[i].open) {
            sim_rtos_close(i);
        } else {
            sim_rtos_open(i);
        }
    } else if (qi % 2u == 0) {
        unsigned port = qi == 0 ? 0u : qi / 2u - 1u;
        if (port < sim.nchan) {
            (void)sim_rtos_write(port, data, 1u + below(SIM_BUF));
        } else if (!sim.port[port].open) {
            sim_port_open(port); /* VBUS_STATS_PORT: an open makes the device fill its receive buffers */
        } else {
            sim_port_close(port);
        }
    }
    sim_notify(qi);
    sim_settle();
}

/* The model driver's rings changed: a descriptor (or a chain of them) made of edge values and made
 * available, random bytes in a ring, or an available index moved; then the device is made to use it. */
static void step_corrupt(void)
{
    unsigned qi = (unsigned)below(sim.nqueues);
    struct sim_q *q = &sim.q[qi];
    if (q->desc == NULL) {
        return;
    }
    unsigned slot = (unsigned)below(SIM_QN);
    switch (below(6)) {
    case 0:
    case 1:
    case 2: { /* one descriptor, or a chain from it, of edge values */
        unsigned n = below(3) == 0 ? 1u + (unsigned)below(SIM_QN + 1u) : 1u;
        unsigned s = slot;
        for (unsigned k = 0; k < n; k++) {
            bool last = k + 1u == n;
            uint16_t flags = qi % 2u == 0 ? VIRTQ_DESC_F_WRITE : 0;
            if (below(6) == 0) {
                flags = (uint16_t)(below(8) | (below(8) == 0 ? 1u << below(16) : 0u));
            }
            unsigned next = below(6) == 0 ? (unsigned)below(65536) : (s + 1u + (unsigned)below(2)) % SIM_QN;
            struct virtq_desc d = {pick_addr(q), pick_len(),
                                   (uint16_t)(last ? flags : flags | VIRTQ_DESC_F_NEXT), (uint16_t)next};
            q->desc[s] = d;
            s = next % SIM_QN;
        }
        q->avail->ring[q->avail_idx % SIM_QN] = (uint16_t)(below(16) ? slot : below(65536));
        q->avail_idx++;
        __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
        q->busy[slot] = true;
        snprintf(cur.what, sizeof(cur.what),
                 "queue %u: chain of %u from descriptor %u (0x%llx+%u flags 0x%x)", qi, n, slot,
                 (unsigned long long)q->desc[slot].addr, q->desc[slot].len, q->desc[slot].flags);
        break;
    }
    case 3: { /* the available index moved by an odd amount */
        uint16_t by = below(2) ? (uint16_t)below(3) : (uint16_t)rnd();
        q->avail_idx = (uint16_t)(q->avail_idx + by);
        __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
        snprintf(cur.what, sizeof(cur.what), "queue %u: available index moved by %u", qi, by);
        break;
    }
    default: { /* random bytes in one of the queue's areas, or anywhere in RAM */
        uint64_t ipa;
        unsigned n = 1u + (unsigned)below(16);
        switch (below(4)) {
        case 0:
            ipa = q->desc_ipa + below(VIRTQ_DESC_BYTES(SIM_QN));
            break;
        case 1:
            ipa = q->avail_ipa + below(VIRTQ_AVAIL_BYTES(SIM_QN));
            break;
        case 2:
            ipa = q->used_ipa + below(VIRTQ_USED_BYTES(SIM_QN));
            break;
        default:
            ipa = SIM_RAM_IPA + below(SIM_RAM_SIZE);
            break;
        }
        for (unsigned i = 0; i < n && ipa + i < SIM_RAM_IPA + SIM_RAM_SIZE; i++) {
            sim.ram[ipa + i - SIM_RAM_IPA] = (uint8_t)rnd();
        }
        snprintf(cur.what, sizeof(cur.what), "%u random bytes at IPA 0x%llx, queue %u used", n,
                 (unsigned long long)ipa, qi);
        break;
    }
    }
    trigger(qi);
}

/* The device back in use after a violation, as a driver that resets it would do. */
static void reprobe(void)
{
    snprintf(cur.what, sizeof(cur.what), "Linux resets and probes the device again");
    if (!sim_probe()) {
        return;
    }
    for (unsigned i = 0; i < sim.nchan; i++) {
        if (below(4) != 0) {
            sim_port_open(i);
        }
    }
    sim_settle();
}

static void step_linux(void)
{
    unsigned i = (unsigned)below(sim.nchan);
    switch (below(9)) {
    case 0:
    case 6:
    case 7:
        snprintf(cur.what, sizeof(cur.what), "Linux writes on port %u", i);
        (void)sim_port_write(i, data, 1u + below(sizeof(data) - 1u));
        sim_settle();
        break;
    case 1:
        snprintf(cur.what, sizeof(cur.what), "Linux opens port %u", i);
        sim_port_open(i);
        break;
    case 2:
        snprintf(cur.what, sizeof(cur.what), "Linux closes port %u", i);
        sim_port_close(i);
        break;
    case 3:
        snprintf(cur.what, sizeof(cur.what), "Linux sends a control message");
        sim_ctrl_send(below(4) ? (uint32_t)below(sim.nports + 1u) : (uint32_t)rnd(), (uint16_t)below(9),
                      (uint16_t)below(3));
        break;
    case 4:
        if (below(4) == 0) {
            reprobe();
        }
        break;
    default:
        snprintf(cur.what, sizeof(cur.what), "Linux takes its interrupt");
        sim_linux_poll();
        break;
    }
}

static void step_rtos(void)
{
    unsigned i = (unsigned)below(sim.nchan);
    struct vbus_ep *ep = &sim.ep[i];
    uint8_t buf[512];
    switch (below(7)) {
    case 0:
        snprintf(cur.what, sizeof(cur.what), "the rtos opens channel %u", i);
        sim_rtos_open(i);
        break;
    case 1:
        snprintf(cur.what, sizeof(cur.what), "the rtos closes channel %u", i);
        sim_rtos_close(i);
        break;
    case 2:
        snprintf(cur.what, sizeof(cur.what), "the rtos reads channel %u", i);
        (void)sim_rtos_read(i, buf, 1u + below(sizeof(buf) - 1u));
        break;
    case 3:
        snprintf(cur.what, sizeof(cur.what), "the rtos writes channel %u", i);
        (void)sim_rtos_write(i, data, 1u + below(sizeof(buf) - 1u));
        break;
    case 4: { /* a hostile rtos: a random value in one of its own words, then the doorbell */
        uint32_t *words[] = {&ep->c->rtos_open,      &ep->c->rtos_epoch_seen, &ep->c->rtos_session,
                             &ep->c->to_linux_start, &ep->tx->head,           &ep->rx->tail,
                             &ep->region->magic,     &ep->region->nchan};
        unsigned w = (unsigned)below(sizeof(words) / sizeof(words[0]));
        uint32_t v = below(2) ? (uint32_t)rnd() : *words[w] + (uint32_t)below(600) - 300u;
        snprintf(cur.what, sizeof(cur.what), "the rtos writes 0x%x into its word %u of channel %u", v, w, i);
        *words[w] = v;
        sim_ring(vbus_ring_hyp(ep->region, ep->bit));
        break;
    }
    default:
        snprintf(cur.what, sizeof(cur.what), "doorbells delivered");
        sim_settle();
        break;
    }
}

/* Linux resets the device, the rtos restarts, the real driver probes: bytes must go round trip. */
static void recovery(void)
{
    snprintf(cur.what, sizeof(cur.what), "recovery: reset, rtos restart, probe, round trips");
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim.probed = false; /* the driver's old rings are forgotten with the reset */
    sim.lenient = false;
    sim_rtos_restart();
    for (unsigned i = 0; i < sim.nchan; i++) {
        sim_rtos_open(i);
    }
    sim_settle();
    if (!sim_probe()) {
        fail("the driver's probe failed after a reset: %s", hyp_log);
    }
    sim_settle();
    for (unsigned i = 0; i < sim.nchan; i++) {
        sim_port_open(i);
    }
    sim_settle();
    for (unsigned i = 0; i < sim.nchan; i++) {
        uint8_t msg[300], back[300];
        for (unsigned k = 0; k < sizeof(msg); k++) {
            msg[k] = (uint8_t)rnd();
        }
        sim.port[i].in_len = 0;
        if (!vbus_ep_connected(&sim.ep[i]) || sim_port_write(i, msg, sizeof(msg)) != sizeof(msg)) {
            fail("channel %u not connected after recovery", i);
        }
        sim_settle();
        size_t got = 0;
        for (unsigned r = 0; r < 16 && got < sizeof(back); r++) {
            got += sim_rtos_read(i, back + got, sizeof(back) - got);
            sim_settle();
        }
        size_t sent = 0;
        for (unsigned r = 0; r < 16 && sent < got; r++) {
            sent += sim_rtos_write(i, back + sent, got - sent);
            sim_settle();
        }
        if (got != sizeof(msg) || memcmp(back, msg, sizeof(msg)) != 0 || sim.port[i].in_len != sizeof(msg) ||
            memcmp(sim.port[i].in, msg, sizeof(msg)) != 0) {
            fail("channel %u: round trip after recovery lost or changed bytes (%zu to the rtos, %zu back)", i,
                 got, sim.port[i].in_len);
        }
    }
    sim.lenient = true;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    uint64_t iterations = UINT64_MAX;
    prog = argv[0];
    seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = strtoull(argv[++i], NULL, 0);
            seconds = 1e9;
        } else {
            fprintf(stderr, "usage: %s [--seed N] [--seconds S] [--iterations N]\n", prog);
            return 2;
        }
    }
    rng = seed;
    print_case_on_sanitizer_report();
    hyp_log_quiet = true;
    uint32_t sizes[SIM_MAX_CHAN];
    for (unsigned i = 0; i < SIM_MAX_CHAN; i++) {
        sizes[i] = VBUS_RING_MIN << below(5);
    }
    unsigned nchan = 1u + (unsigned)below(3);
    sim_shared_next = below(2) == 0; /* Linux's CPU shared with the rtos: passes stop for it too */
    sim_setup(nchan, sizes);
    ram_before = malloc(SIM_RAM_SIZE);
    region_before = malloc(SIM_REGION_SIZE);
    allowed = malloc(SIM_RAM_SIZE);
    region_hyp = calloc(1, SIM_REGION_SIZE);
    if (ram_before == NULL || region_before == NULL || allowed == NULL || region_hyp == NULL) {
        return 2;
    }
    for (size_t k = 0; k < sizeof(data); k++) {
        data[k] = (uint8_t)rnd();
    }
    map_hyp_words();
    sim.before = before_device;
    sim.after = after_device;
    printf("fuzz_hyp_vbus: seed 0x%llx, %u channels%s\n", (unsigned long long)seed, nchan,
           sim.shared ? ", Linux's CPU shared with the rtos" : "");
    fflush(stdout);
    cur.iter = 0;
    recovery(); /* a working system to start from */
    double start = now();
    uint64_t n = 0, recoveries = 1, counts[4] = {0};
    for (; n < iterations; n++) {
        if ((n & 63u) == 0 && now() - start > seconds) {
            break;
        }
        cur.iter = n;
        if (n % 3000u == 2999u) {
            recovery();
            recoveries++;
            continue;
        }
        uint64_t r = below(100);
        /* the rtos's timer due at some of the next steps' checks: passes stop there, the rest later */
        sim.rtos_soon = sim.shared && below(4) == 0 ? (unsigned)below(4) : 0u;
        if (vbus_dev.mmio.broken && below(3) == 0) {
            reprobe();
        } else if (r < 15) {
            counts[0]++;
            step_register();
        } else if (r < 45) {
            counts[1]++;
            step_corrupt();
        } else if (r < 75) {
            counts[2]++;
            step_linux();
        } else if (r < 98) {
            counts[3]++;
            step_rtos();
        } else if (r < 99) {
            snprintf(cur.what, sizeof(cur.what), "the rtos partition restarts");
            sim_rtos_restart();
        } else {
            snprintf(cur.what, sizeof(cur.what), "Linux's partition restarts");
            sim_before();
            vbus_part_down(&hyp_part[1]);
            sim_after();
            sim.probed = false;
        }
    }
    cur.iter = n;
    recovery();
    printf(
        "fuzz_hyp_vbus: %llu steps (%llu register accesses, %llu ring corruptions, %llu driver steps, %llu "
        "rtos steps), %llu recoveries, %llu device violations, in %.1f s: no failure\n",
        (unsigned long long)n, (unsigned long long)counts[0], (unsigned long long)counts[1],
        (unsigned long long)counts[2], (unsigned long long)counts[3], (unsigned long long)recoveries + 1u,
        (unsigned long long)vbus_dev.mmio.breaks, now() - start);
    return 0;
}
