/*
 * A V-Bus system on the host, for test_hyp_vbus.c and fuzz_hyp_vbus.c: the hypervisor's device model
 * (hyp/core/vbus.c, vmmio.c, vchan.c, vpass.c, virtq.c) between a small model of Linux's virtio console
 * driver (the sequence of drivers/char/virtio_console.c and drivers/virtio/virtio_mmio.c, one descriptor per
 * buffer) and the rtos's end of the channels (rtos/drivers/vbus_ep.c).
 *
 * Linux's RAM and the rtos's V-Bus region are mappings with an inaccessible page on each side, so an
 * access of the hypervisor outside them crashes the test (ASan reports the SEGV). The doorbells are
 * counted by the SGI stand-in and delivered by sim_settle, never from inside the device model.
 */
#ifndef UNIT_VBUS_SIM_H
#define UNIT_VBUS_SIM_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/vgic.h"
#include "drivers/gic.h"     /* the hypervisor's (-I hyp first) */
#include "drivers/vbus_ep.h" /* the rtos's */
#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vbus.h"
#include "hyp/vcpu.h"
#include "hyp_stubs.h"
#include "lib/virtio.h"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS]; /* no CPU is shared here */
struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;
struct vbus_config hyp_vbus; /* core/config.c's, in the hypervisor */

#define SIM_PAGE 4096u
#ifndef SIM_BUF
#define SIM_BUF SIM_PAGE /* Linux's receive buffers are a page; its writes here too */
#endif
#define SIM_RAM_IPA 0x48000000ull
#ifndef SIM_RAM_SIZE
#define SIM_RAM_SIZE (1u << 20)
#endif
#define SIM_RTOS_IPA 0x40000000ull
#ifndef SIM_REGION_SIZE
#define SIM_REGION_SIZE (256u * 1024u)
#endif
#define SIM_MAX_CHAN 4u
#define SIM_QN       8u /* entries of every queue the model driver makes */
#define SIM_MMIO_IPA 0x0a003e00ull
#define SIM_INTID    80u
#define SIM_IN_MAX   (1u << 18)

struct sim_q {
    unsigned index;
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    uint64_t desc_ipa, avail_ipa, used_ipa;
    uint16_t avail_idx, last_used;
    uint64_t buf_ipa[SIM_QN];
    bool busy[SIM_QN];
};

struct sim_port {
    char name[VBUS_NAME_SIZE];
    bool added, host_connected, open;
    bool paused;     /* the reader does not read: its receive buffers stay with it */
    uint16_t ev[64]; /* the control events the port got, in order */
    unsigned nev;
    uint8_t *in; /* what the port received while open */
    size_t in_len;
};

static struct {
    uint8_t *ram, *region;
    struct vcpu *lv;
    uint64_t next_ipa;
    unsigned nchan, nports, nqueues; /* nports: the channels' and VBUS_STATS_PORT (port nchan) */
    uint32_t ring_size[SIM_MAX_CHAN];
    struct sim_q q[2u * (SIM_MAX_CHAN + 2u)];
    struct sim_port port[SIM_MAX_CHAN + 1u];
    struct vbus_ep ep[SIM_MAX_CHAN];
    unsigned rtos_ev[SIM_MAX_CHAN]; /* VBUS_EV_* the rtos saw, or-ed */
    unsigned sgi_rtos, sgi_hyp;     /* doorbells sent, not yet delivered */
    unsigned sgi_rtos_total;        /* doorbells sent to the rtos since sim_setup */
    unsigned activity;
    bool probed;  /* the model driver set its queues up */
    bool lenient; /* the fuzzer: what the device returns need not make sense (its rings were changed) */
    bool shared;  /* Linux's CPU is shared with the rtos (set before sim_setup's vbus_init: tight passes) */
    unsigned rtos_soon; /* vgic_rtos_soon says yes this many more times */
    /* Called around every entry into the device model (the fuzzer checks what it wrote). */
    void (*before)(void);
    void (*after)(void);
} sim;

static void sim_trouble(const char *what, unsigned a, unsigned b)
{
    if (sim.lenient) {
        return;
    }
    fprintf(stderr, "vbus_sim: ");
    fprintf(stderr, what, a, b);
    fprintf(stderr, "\n");
    abort();
}

static void sim_before(void)
{
    if (sim.before != NULL) {
        sim.before();
    }
}

static void sim_after(void)
{
    if (sim.after != NULL) {
        sim.after();
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* The hypervisor's surroundings */

void vgic_levels_changed(struct partition *p, struct vcpu *self)
{
    (void)p;
    (void)self;
}

void gic_send_sgi(uint64_t aff, unsigned sgi)
{
    (void)aff;
    if (sgi == VBUS_SGI_TO_RTOS) {
        sim.sgi_rtos++;
        sim.sgi_rtos_total++;
    } else if (sgi == VBUS_SGI_TO_HYP) {
        sim.sgi_hyp++;
    } else {
        fprintf(stderr, "vbus_sim: SGI %u sent\n", sgi);
        abort();
    }
}

bool vgic_rtos_soon(const struct vcpu *v, uint64_t within)
{
    (void)v;
    (void)within;
    if (sim.rtos_soon == 0) {
        return false;
    }
    sim.rtos_soon--;
    return true;
}

void part_printf(struct partition *p, const char *fmt, ...)
{
    (void)p;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    hyp_printf("%s", line);
}

bool vgic_rtos_pending(const struct vcpu *v)
{
    (void)v;
    return false;
}

static bool sim_shared_next; /* sim_setup's `shared` (sim is cleared there) */

struct partition *part_rtos_sharing(unsigned cpu)
{
    return sim.shared && cpu == 1u ? &hyp_part[0] : NULL;
}

static struct mmio_region sim_mmio;

void mmio_register(struct partition *p, const char *name, uint64_t ipa, uint64_t size, mmio_handler_t handler,
                   void *ctx)
{
    (void)p;
    sim_mmio = (struct mmio_region){ipa, size, handler, ctx, name, 0};
}

static uint8_t *sim_map_guarded(size_t size)
{
    uint8_t *base = mmap(NULL, size + 2u * SIM_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base + SIM_PAGE, size, PROT_READ | PROT_WRITE) != 0) {
        perror("vbus_sim: mmap");
        exit(2);
    }
    return base + SIM_PAGE;
}

static void *sim_host(uint64_t ipa)
{
    return sim.ram + (ipa - SIM_RAM_IPA);
}

static uint64_t sim_alloc(uint64_t size, uint64_t align)
{
    uint64_t ipa = (sim.next_ipa + align - 1u) & ~(align - 1u);
    if (ipa + size > SIM_RAM_IPA + SIM_RAM_SIZE) {
        fprintf(stderr, "vbus_sim: Linux's RAM is full\n");
        exit(2);
    }
    sim.next_ipa = ipa + size;
    return ipa;
}

/* Two partitions: the rtos (CPU 0) serving nchan channels with rings of the given sizes, Linux (CPU 1)
 * with the device. */
static void sim_setup(unsigned nchan, const uint32_t *sizes)
{
    memset(&sim, 0, sizeof(sim));
    sim.shared = sim_shared_next;
    sim.nchan = nchan;
    sim.nports = nchan + 1u;
    sim.nqueues = 2u * (sim.nports + 1u);
    sim.port[nchan].in = malloc(SIM_IN_MAX);
    sim.ram = sim_map_guarded(SIM_RAM_SIZE);
    sim.region = sim_map_guarded(SIM_REGION_SIZE);
    sim.next_ipa = SIM_RAM_IPA;
    hyp_nparts = 2;
    struct partition *rtos = &hyp_part[0], *lin = &hyp_part[1];
    *rtos =
        (struct partition){.name = "rtos",
                           .kind = PART_RTOS,
                           .cpu_mask = 1,
                           .ram_ipa = SIM_RTOS_IPA,
                           .ram_pa = (uint64_t)(uintptr_t)sim.region,
                           .ram_size = SIM_REGION_SIZE,
                           .vbus = {(struct vbus_region *)(void *)sim.region, SIM_RTOS_IPA, SIM_REGION_SIZE},
                           .state = PART_RUNNING};
    *lin = (struct partition){.name = "linux",
                              .kind = PART_LINUX,
                              .cpu_mask = 2,
                              .ram_ipa = SIM_RAM_IPA,
                              .ram_pa = (uint64_t)(uintptr_t)sim.ram,
                              .ram_size = SIM_RAM_SIZE,
                              .state = PART_RUNNING};
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].cpu = c;
        hyp_vcpu[c].mpidr = c;
        hyp_vcpu[c].part = c == 0 ? rtos : c == 1 ? lin : NULL;
    }
    sim.lv = &hyp_vcpu[1];
    memset(&hyp_vbus, 0, sizeof(hyp_vbus));
    hyp_vbus.linux = lin;
    hyp_vbus.mmio_ipa = SIM_MMIO_IPA;
    hyp_vbus.intid = SIM_INTID;
    hyp_vbus.nchan = nchan;
    uint32_t off = VBUS_ALIGN + nchan * (uint32_t)sizeof(struct vbus_chan);
    for (unsigned i = 0; i < nchan; i++) {
        struct vbus_chan_config *c = &hyp_vbus.chan[i];
        static const char *const names[] = {"echo", "telemetry", "setpoint", "bulk"};
        snprintf(c->name, sizeof(c->name), "%s", names[i]);
        c->rtos = rtos;
        c->index = i;
        c->chan_off = VBUS_ALIGN + i * (uint32_t)sizeof(struct vbus_chan);
        c->to_linux_off = off;
        c->to_linux_size = sizes[i];
        off += VBUS_RING_HEADER_SIZE + sizes[i];
        c->to_rtos_off = off;
        c->to_rtos_size = sizes[i];
        off += VBUS_RING_HEADER_SIZE + sizes[i];
        sim.ring_size[i] = sizes[i];
        sim.port[i].in = malloc(SIM_IN_MAX);
        if (off > SIM_REGION_SIZE || sim.port[i].in == NULL) {
            fprintf(stderr, "vbus_sim: rings do not fit\n");
            exit(2);
        }
    }
    vbus_init();
}

/* ------------------------------------------------------------------------------------------------ */
/* Register accesses, as Linux's CPU makes them */

static uint64_t sim_access(uint64_t off, bool write, uint64_t val, unsigned size)
{
    uint64_t v = write ? val : 0;
    sim_before();
    (void)sim_mmio.handler(sim.lv, sim_mmio.ctx, off, write, &v, size);
    sim_after();
    return v;
}

static uint32_t sim_r(uint64_t off)
{
    return (uint32_t)sim_access(off, false, 0, 4);
}

static void sim_w(uint64_t off, uint32_t v)
{
    (void)sim_access(off, true, v, 4);
}

static bool sim_needs_reset(void)
{
    return (sim_r(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET) != 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* The model of Linux's driver */

static unsigned sim_rxq(unsigned port)
{
    return port == 0 ? 0u : 2u * port + 2u;
}

static void sim_notify(unsigned qi)
{
    sim_w(VIRTIO_MMIO_QUEUE_NOTIFY, qi);
}

/* Makes buffer `slot` of queue qi available with len bytes; the caller notifies. */
static void sim_add(unsigned qi, unsigned slot, uint32_t len, bool device_writes)
{
    struct sim_q *q = &sim.q[qi];
    q->desc[slot].addr = q->buf_ipa[slot];
    q->desc[slot].len = len;
    q->desc[slot].flags = device_writes ? VIRTQ_DESC_F_WRITE : 0;
    q->desc[slot].next = 0;
    q->avail->ring[q->avail_idx % SIM_QN] = (uint16_t)slot;
    q->avail_idx++;
    __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
    q->busy[slot] = true;
}

/* The next buffer the device returned on qi: its slot and length, or false. */
static bool sim_used(unsigned qi, unsigned *slot, uint32_t *len)
{
    struct sim_q *q = &sim.q[qi];
    if (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) == q->last_used) {
        return false;
    }
    volatile struct virtq_used_elem *e = &q->used->ring[q->last_used % SIM_QN];
    q->last_used++;
    if (e->id >= SIM_QN || !q->busy[e->id]) {
        sim_trouble("the device returned buffer %u of queue %u, which it did not have", e->id, qi);
        return false;
    }
    *slot = e->id;
    *len = e->len;
    q->busy[e->id] = false;
    return true;
}

static void sim_ctrl_send(uint32_t id, uint16_t event, uint16_t value)
{
    struct sim_q *q = &sim.q[VIRTIO_CONSOLE_CTRL_TX];
    struct virtio_console_control m = {id, event, value};
    memcpy(sim_host(q->buf_ipa[0]), &m, sizeof(m));
    sim_add(VIRTIO_CONSOLE_CTRL_TX, 0, sizeof(m), false);
    sim_notify(VIRTIO_CONSOLE_CTRL_TX);
    unsigned slot;
    uint32_t len;
    /* Linux spins until the device returns it: a device that does not would hang it. A pass that
     * stopped (for the rtos, or its budget) asked for the rest with the device's own interrupt, which
     * the spinning CPU takes: delivered here, a few times at most. */
    bool back = sim_used(VIRTIO_CONSOLE_CTRL_TX, &slot, &len);
    for (unsigned k = 0; !back && sim.sgi_hyp != 0 && k < 16u; k++) {
        sim.sgi_hyp = 0;
        sim_before();
        vbus_doorbell(sim.lv);
        sim_after();
        back = sim_used(VIRTIO_CONSOLE_CTRL_TX, &slot, &len);
    }
    if (!back && !sim_needs_reset()) {
        sim_trouble("control message %u of port %u not returned at once", event, id);
        q->busy[0] = false;
    }
}

static void sim_fill_rx(unsigned qi)
{
    for (unsigned s = 0; s < SIM_QN; s++) {
        if (!sim.q[qi].busy[s]) {
            sim_add(qi, s, SIM_BUF, true);
        }
    }
    sim_notify(qi);
}

static void sim_port_event(unsigned id, uint16_t event)
{
    struct sim_port *p = &sim.port[id];
    if (p->nev < sizeof(p->ev) / sizeof(p->ev[0])) {
        p->ev[p->nev++] = event;
    }
}

/* One control message from the device, handled as handle_control_message does. */
static void sim_ctrl_message(const uint8_t *buf, uint32_t len)
{
    struct virtio_console_control m;
    if (len < sizeof(m) || len > SIM_BUF) {
        sim_trouble("control message of %u bytes%.0u", len, 0);
        return;
    }
    memcpy(&m, buf, sizeof(m));
    if (m.id >= sim.nports) {
        sim_trouble("control message for port %u%.0u", m.id, 0);
        return;
    }
    struct sim_port *p = &sim.port[m.id];
    sim_port_event(m.id, m.event);
    switch (m.event) {
    case VIRTIO_CONSOLE_DEVICE_ADD:
        if (!p->added) {
            p->added = true;
            sim_fill_rx(sim_rxq(m.id));
        }
        sim_ctrl_send(m.id, VIRTIO_CONSOLE_PORT_READY, 1);
        break;
    case VIRTIO_CONSOLE_PORT_NAME: {
        uint32_t n = len - (uint32_t)sizeof(m);
        if (n >= sizeof(p->name)) {
            n = sizeof(p->name) - 1u;
        }
        memcpy(p->name, buf + sizeof(m), n);
        p->name[n] = '\0';
        break;
    }
    case VIRTIO_CONSOLE_PORT_OPEN:
        p->host_connected = m.value != 0;
        break;
    default:
        break;
    }
}

static void sim_set_features(uint64_t f)
{
    sim_w(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    sim_w(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(f >> 32));
    sim_w(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    sim_w(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)f);
}

/* Sets up queue qi as vm_setup_vq does (rings in fresh RAM, buffers of buf_size bytes). */
static void sim_setup_queue(unsigned qi, uint32_t buf_size)
{
    struct sim_q *q = &sim.q[qi];
    memset(q, 0, sizeof(*q));
    q->index = qi;
    q->desc_ipa = sim_alloc(VIRTQ_DESC_BYTES(SIM_QN), 16);
    q->avail_ipa = sim_alloc(VIRTQ_AVAIL_BYTES(SIM_QN), 2);
    q->used_ipa = sim_alloc(VIRTQ_USED_BYTES(SIM_QN), 64);
    q->desc = sim_host(q->desc_ipa);
    q->avail = sim_host(q->avail_ipa);
    q->used = sim_host(q->used_ipa);
    memset((void *)q->desc, 0, VIRTQ_DESC_BYTES(SIM_QN));
    memset((void *)q->avail, 0, VIRTQ_AVAIL_BYTES(SIM_QN));
    memset((void *)q->used, 0, VIRTQ_USED_BYTES(SIM_QN));
    for (unsigned s = 0; s < SIM_QN; s++) {
        q->buf_ipa[s] = sim_alloc(buf_size, 8);
    }
    sim_w(VIRTIO_MMIO_QUEUE_SEL, qi);
    if (sim_r(VIRTIO_MMIO_QUEUE_READY) != 0 || sim_r(VIRTIO_MMIO_QUEUE_NUM_MAX) < SIM_QN) {
        sim_trouble("queue %u not available%.0u", qi, 0);
    }
    sim_w(VIRTIO_MMIO_QUEUE_NUM, SIM_QN);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)q->desc_ipa);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(q->desc_ipa >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)q->avail_ipa);
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(q->avail_ipa >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)q->used_ipa);
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(q->used_ipa >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
}

/* Status, features, queues and DRIVER_OK; false if the device refused (the caller checks why). */
static bool sim_probe_to_queues(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    if (sim_r(VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC || sim_r(VIRTIO_MMIO_VERSION) != 2 ||
        sim_r(VIRTIO_MMIO_DEVICE_ID) != VIRTIO_ID_CONSOLE) {
        return false;
    }
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_w(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
    uint64_t f = (uint64_t)sim_r(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
    sim_w(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
    f |= sim_r(VIRTIO_MMIO_DEVICE_FEATURES);
    /* Linux's console driver knows SIZE and MULTIPORT; the ring and the core keep VERSION_1. */
    uint64_t want = f & ((1ull << VIRTIO_CONSOLE_F_SIZE) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT) |
                         (1ull << VIRTIO_F_VERSION_1));
    sim_set_features(want);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    if (!(sim_r(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
        return false;
    }
    uint8_t b[4];
    for (unsigned i = 0; i < 4; i++) {
        b[i] = (uint8_t)sim_access(VIRTIO_MMIO_CONFIG + VIRTIO_CONSOLE_CFG_MAX_NR_PORTS + i, false, 0, 1);
    }
    uint32_t ports = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (ports != sim.nports || sim_r(VIRTIO_MMIO_CONFIG + VIRTIO_CONSOLE_CFG_MAX_NR_PORTS) != ports) {
        sim_trouble("max_nr_ports %u, expected %u", ports, sim.nports);
        return false;
    }
    sim.next_ipa = SIM_RAM_IPA; /* a new probe: the old rings are Linux's free memory again */
    for (unsigned qi = 0; qi < sim.nqueues; qi++) {
        sim_setup_queue(qi, qi == VIRTIO_CONSOLE_CTRL_TX ? 64u : SIM_BUF);
    }
    sim.probed = true;
    for (unsigned i = 0; i < sim.nports; i++) {
        struct sim_port *p = &sim.port[i];
        p->added = p->host_connected = p->open = false;
        p->nev = 0;
        p->name[0] = '\0';
        p->in_len = 0;
    }
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                                  VIRTIO_STATUS_DRIVER_OK);
    return true;
}

/* What Linux's interrupt handler and its control work do, and its readers (unless paused). */
static void sim_linux_poll(void)
{
    if (!sim.probed) {
        return;
    }
    uint32_t isr = sim_r(VIRTIO_MMIO_INTERRUPT_STATUS);
    if (isr != 0) {
        sim_w(VIRTIO_MMIO_INTERRUPT_ACK, isr);
        sim.activity++;
    }
    if (sim_needs_reset()) {
        return;
    }
    unsigned slot;
    uint32_t len;
    bool again = false;
    while (sim_used(VIRTIO_CONSOLE_CTRL_RX, &slot, &len)) {
        sim.activity++;
        sim_ctrl_message(sim_host(sim.q[VIRTIO_CONSOLE_CTRL_RX].buf_ipa[slot]), len);
        sim_add(VIRTIO_CONSOLE_CTRL_RX, slot, SIM_BUF, true);
        again = true;
    }
    if (again) {
        sim_notify(VIRTIO_CONSOLE_CTRL_RX);
    }
    for (unsigned i = 0; i < sim.nports; i++) {
        struct sim_port *p = &sim.port[i];
        unsigned rx = sim_rxq(i);
        while (sim_used(rx + 1u, &slot, &len)) {
            sim.activity++; /* a write done: its slot is free */
        }
        if (p->paused) {
            continue;
        }
        bool refill = false;
        while (sim_used(rx, &slot, &len)) {
            sim.activity++;
            if (len > SIM_BUF) {
                sim_trouble("used length %u beyond the buffer of queue %u", len, rx);
                len = 0;
            }
            if (p->open && p->in_len + len <= SIM_IN_MAX) {
                memcpy(p->in + p->in_len, sim_host(sim.q[rx].buf_ipa[slot]), len);
                p->in_len += len;
            }
            sim_add(rx, slot, SIM_BUF, true);
            refill = true;
        }
        if (refill) {
            sim_notify(rx);
        }
    }
}

/* The whole probe up to the ports being named: false if the device refused something. */
static bool sim_probe(void)
{
    if (!sim_probe_to_queues()) {
        return false;
    }
    sim_fill_rx(VIRTIO_CONSOLE_CTRL_RX);
    sim_ctrl_send(VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1);
    for (unsigned round = 0; round < 16; round++) {
        sim_linux_poll();
    }
    return !sim_needs_reset();
}

static void sim_port_open(unsigned i)
{
    sim.port[i].open = true;
    sim.port[i].in_len = 0;
    sim_ctrl_send(i, VIRTIO_CONSOLE_PORT_OPEN, 1);
}

static void sim_port_close(unsigned i)
{
    sim_ctrl_send(i, VIRTIO_CONSOLE_PORT_OPEN, 0);
    sim.port[i].open = false;
}

/* write(): as much of data as free transmit buffers take (a page each), only while the host is
 * connected (else Linux blocks); returns the bytes queued. */
static size_t sim_port_write(unsigned i, const uint8_t *data, size_t n)
{
    struct sim_port *p = &sim.port[i];
    unsigned tx = sim_rxq(i) + 1u;
    size_t done = 0;
    if (!p->host_connected || sim_needs_reset()) {
        return 0;
    }
    for (unsigned s = 0; s < SIM_QN && done < n; s++) {
        if (sim.q[tx].busy[s]) {
            continue;
        }
        uint32_t k = (uint32_t)(n - done < SIM_BUF ? n - done : SIM_BUF);
        memcpy(sim_host(sim.q[tx].buf_ipa[s]), data + done, k);
        sim_add(tx, s, k, false);
        done += k;
    }
    if (done > 0) {
        sim_notify(tx);
    }
    return done;
}

/* ------------------------------------------------------------------------------------------------ */
/* The rtos's end */

static void sim_ring(bool need)
{
    if (need) {
        sim.sgi_hyp++;
    }
}

static void sim_rtos_start(void)
{
    struct vbus_region *r = (struct vbus_region *)sim.region;
    for (unsigned i = 0; i < sim.nchan; i++) {
        const struct vbus_chan_config *c = &hyp_vbus.chan[i];
        vbus_ep_init(&sim.ep[i], r, i, c->chan_off, c->to_linux_off, c->to_linux_size, c->to_rtos_off,
                     c->to_rtos_size);
        sim.rtos_ev[i] = 0;
    }
    vbus_region_start(r, sim.nchan);
    sim_ring(vbus_ring_hyp(r, (1u << sim.nchan) - 1u));
}

static void sim_rtos_open(unsigned i)
{
    bool need = false;
    vbus_ep_open(&sim.ep[i], &need);
    sim_ring(need);
}

static void sim_rtos_close(unsigned i)
{
    bool need = false;
    vbus_ep_close(&sim.ep[i], &need);
    sim_ring(need);
}

/* The rtos's doorbell handler: what the hypervisor rang for. */
static void sim_rtos_poll(void)
{
    if (sim.sgi_rtos == 0) {
        return;
    }
    sim.sgi_rtos = 0;
    sim.activity++;
    uint32_t bits = vbus_take_pending((struct vbus_region *)sim.region);
    for (unsigned i = 0; i < sim.nchan; i++) {
        if ((bits >> i) & 1u) {
            bool need = false;
            sim.rtos_ev[i] |= vbus_ep_sync(&sim.ep[i], &need);
            sim_ring(need);
        }
    }
}

static size_t sim_rtos_read(unsigned i, uint8_t *buf, size_t n)
{
    bool need = false;
    sim.rtos_ev[i] |= vbus_ep_sync(&sim.ep[i], &need);
    uint32_t got = vbus_ep_read(&sim.ep[i], buf, (uint32_t)n, &need);
    sim_ring(need);
    return got;
}

static size_t sim_rtos_write(unsigned i, const uint8_t *buf, size_t n)
{
    bool need = false;
    sim.rtos_ev[i] |= vbus_ep_sync(&sim.ep[i], &need);
    uint32_t put = vbus_ep_write(&sim.ep[i], buf, (uint32_t)n, &need);
    sim_ring(need);
    return put;
}

/* Delivers doorbells and lets both drivers react until nothing moves. */
static void sim_settle(void)
{
    for (unsigned round = 0; round < 256; round++) {
        unsigned before = sim.activity;
        if (sim.sgi_hyp != 0) {
            sim.sgi_hyp = 0;
            sim.activity++;
            sim_before();
            vbus_doorbell(sim.lv);
            sim_after();
        }
        sim_rtos_poll();
        sim_linux_poll();
        if (sim.activity == before && sim.sgi_hyp == 0 && sim.sgi_rtos == 0) {
            return;
        }
    }
}

/* The rtos partition stops and starts again: its RAM (the region) wiped in between. */
static inline void sim_rtos_restart(void)
{
    sim_before();
    vbus_part_down(&hyp_part[0]);
    sim_after();
    sim_settle();
    memset(sim.region, 0, SIM_REGION_SIZE);
    sim_before();
    vbus_part_up(&hyp_part[0]);
    sim_after();
    sim_rtos_start();
    sim_settle();
}

#endif /* UNIT_VBUS_SIM_H */
