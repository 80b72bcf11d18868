/*
 * A hostile driver of the V-Bus device: booted in the Linux partition's place beside the rtos demo
 * (tests/system/configs/vbus-hostile.toml), it drives the hypervisor's virtio console the way Linux's
 * driver does (probe, control messages, a round trip through the rtos's echo), then, one attack after
 * the other, gives it bad rings or misuses its registers. After each attack it reads the device's
 * status and interrupt status (DEVICE_NEEDS_RESET and the configuration interrupt must be set), resets
 * the device, probes it again and makes a round trip: the device must work again. Every line it prints
 * that a test matches holds figures it read from the device.
 *
 * Boot arguments: vbus=IPA of the device (default the board's V-Bus page), attacks=N (how many of the
 * list below, default all). With storm=N it runs storm N (below) for ms=M milliseconds of guest time
 * (default 3000) instead of the attacks: work meant to keep the hypervisor busy on the CPU it shares
 * with the rtos, each register write as expensive as the device allows; with cpu=N (N > 0) the storm
 * runs on the partition's CPU N (started with PSCI CPU_ON) while its first CPU waits in WFI: the
 * hypervisor's passes then run on a CPU beside the shared one.
 */
#include "arm64/psci.h"
#include "guest.h"
#include "lib/virtio.h"

#define VBUS_DEFAULT_IPA 0x0a004000u
#define QN               8u   /* entries of every queue */
#define BUF              512u /* bytes of every buffer */
#define MAX_QUEUES       16u  /* up to 7 ports */
/* An IPA outside the guest's RAM: the rtos's RAM as a physical address (unmapped for this partition). */
#define FOREIGN_IPA 0x48000000ull

struct queue {
    struct virtq_desc desc[QN] __attribute__((aligned(16)));
    struct {
        uint16_t flags, idx, ring[QN];
    } avail __attribute__((aligned(4)));
    struct {
        uint16_t flags, idx;
        struct virtq_used_elem ring[QN];
    } used __attribute__((aligned(4)));
    uint8_t buf[QN][BUF] __attribute__((aligned(8)));
    uint16_t avail_idx, last_used;
};

static struct queue q[MAX_QUEUES];
static uintptr_t dev;
static unsigned nports, nqueues;

static uint32_t rd(uint32_t off)
{
    return *(volatile uint32_t *)(dev + off);
}

static void wr(uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(dev + off) = v;
}

static void barrier(void)
{
    __asm__ volatile("dsb sy" : : : "memory");
}

static uint64_t ipa(const void *p)
{
    return (uint64_t)(uintptr_t)p; /* MMU off: addresses are IPAs */
}

static unsigned rxq(unsigned port)
{
    return port == 0 ? 0u : 2u * port + 2u;
}

/* Buffer `slot` of queue qi made available with len bytes (device-writable for receive queues). */
static void add(unsigned qi, unsigned slot, uint32_t len)
{
    struct queue *x = &q[qi];
    x->desc[slot] = (struct virtq_desc){ipa(x->buf[slot]), len, qi % 2u == 0 ? VIRTQ_DESC_F_WRITE : 0, 0};
    x->avail.ring[x->avail_idx % QN] = (uint16_t)slot;
    barrier();
    x->avail_idx++;
    x->avail.idx = x->avail_idx;
    barrier();
}

static void notify(unsigned qi)
{
    wr(VIRTIO_MMIO_QUEUE_NOTIFY, qi);
}

/* The next used element of qi within `ms`, or false. */
static bool used(unsigned qi, uint32_t *id, uint32_t *len, unsigned ms)
{
    struct queue *x = &q[qi];
    uint64_t end = guest_counter() + guest_counter_hz() * ms / 1000u;
    while (*(volatile uint16_t *)&x->used.idx == x->last_used) {
        if (guest_counter() > end) {
            return false;
        }
    }
    barrier();
    *id = x->used.ring[x->last_used % QN].id;
    *len = x->used.ring[x->last_used % QN].len;
    x->last_used++;
    return true;
}

static void ctrl_send(uint32_t id, uint16_t event, uint16_t value)
{
    struct virtio_console_control m = {id, event, value};
    memcpy(q[VIRTIO_CONSOLE_CTRL_TX].buf[0], &m, sizeof(m));
    add(VIRTIO_CONSOLE_CTRL_TX, 0, sizeof(m));
    notify(VIRTIO_CONSOLE_CTRL_TX);
    uint32_t sid, len;
    (void)used(VIRTIO_CONSOLE_CTRL_TX, &sid, &len, 100); /* returned in the trap, or the device broke */
}

/* Status, features, every queue, DRIVER_OK, the control exchange; the ports named and which are open.
 * Returns how many ports the rtos has open, or -1 when the device refused the probe. */
static int probe(bool quiet)
{
    wr(VIRTIO_MMIO_STATUS, 0);
    if (rd(VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC || rd(VIRTIO_MMIO_VERSION) != 2 ||
        rd(VIRTIO_MMIO_DEVICE_ID) != VIRTIO_ID_CONSOLE) {
        guest_printf("vbus-guest: no virtio console at 0x%lx\n", (unsigned long)dev);
        return -1;
    }
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << (VIRTIO_F_VERSION_1 - 32u));
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_CONSOLE_F_MULTIPORT);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    if (!(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
        return -1;
    }
    nports = rd(VIRTIO_MMIO_CONFIG + VIRTIO_CONSOLE_CFG_MAX_NR_PORTS);
    if (nports == 0 || 2u * (nports + 1u) > MAX_QUEUES) {
        guest_printf("vbus-guest: %u ports\n", nports);
        return -1;
    }
    nqueues = 2u * (nports + 1u);
    for (unsigned i = 0; i < nqueues; i++) {
        struct queue *x = &q[i];
        memset(x, 0, sizeof(*x));
        wr(VIRTIO_MMIO_QUEUE_SEL, i);
        wr(VIRTIO_MMIO_QUEUE_NUM, QN);
        wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)ipa(x->desc));
        wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(ipa(x->desc) >> 32));
        wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)ipa(&x->avail));
        wr(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(ipa(&x->avail) >> 32));
        wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)ipa(&x->used));
        wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(ipa(&x->used) >> 32));
        wr(VIRTIO_MMIO_QUEUE_READY, 1);
    }
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
                               VIRTIO_STATUS_DRIVER_OK);
    for (unsigned s = 0; s < QN; s++) {
        add(VIRTIO_CONSOLE_CTRL_RX, s, BUF);
    }
    notify(VIRTIO_CONSOLE_CTRL_RX);
    ctrl_send(VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1);
    /* The device's answers: PORT_ADD (answered with PORT_READY), PORT_NAME, PORT_OPEN. */
    char names[160];
    size_t nl = 0;
    int open = 0;
    uint32_t id, len;
    while (used(VIRTIO_CONSOLE_CTRL_RX, &id, &len, 200)) {
        struct virtio_console_control m;
        memcpy(&m, q[VIRTIO_CONSOLE_CTRL_RX].buf[id % QN], sizeof(m));
        if (m.event == VIRTIO_CONSOLE_DEVICE_ADD && m.id < nports) {
            for (unsigned s = 0; s < QN; s++) {
                add(rxq(m.id), s, BUF);
            }
            notify(rxq(m.id));
            ctrl_send(m.id, VIRTIO_CONSOLE_PORT_READY, 1);
        } else if (m.event == VIRTIO_CONSOLE_PORT_NAME && len > sizeof(m)) {
            for (uint32_t k = sizeof(m); k < len && nl + 2u < sizeof(names); k++) {
                names[nl++] = (char)q[VIRTIO_CONSOLE_CTRL_RX].buf[id % QN][k];
            }
            names[nl++] = ' ';
        } else if (m.event == VIRTIO_CONSOLE_PORT_OPEN && m.value == 1) {
            open++;
        }
        add(VIRTIO_CONSOLE_CTRL_RX, id % QN, BUF);
        notify(VIRTIO_CONSOLE_CTRL_RX);
    }
    names[nl > 0 ? nl - 1u : 0] = '\0';
    if (!quiet) {
        guest_printf("vbus-guest: %u ports named: %s; %d open on the rtos's side\n", nports, names, open);
    }
    return open;
}

/* Port 0 (the rtos's echo) opened, `n` bytes written, the same bytes back within 2 s. */
static bool round_trip(unsigned n)
{
    ctrl_send(0, VIRTIO_CONSOLE_PORT_OPEN, 1);
    uint8_t *out = q[1].buf[0];
    for (unsigned i = 0; i < n; i++) {
        out[i] = (uint8_t)(guest_random() | 1u);
    }
    add(1, 0, n);
    notify(1);
    unsigned got = 0;
    uint32_t id, len;
    bool same = true;
    while (got < n && used(0, &id, &len, 2000)) {
        for (uint32_t k = 0; k < len && got < n; k++, got++) {
            same = same && q[0].buf[id % QN][k] == out[got];
        }
        add(0, id % QN, BUF);
        notify(0);
    }
    while (used(1, &id, &len, 0)) {
        /* the write itself, returned */
    }
    ctrl_send(0, VIRTIO_CONSOLE_PORT_OPEN, 0);
    return got == n && same;
}

/* ---------------------------------------------------------------- attacks */

/* Makes the transmit queue of port 0 take descriptor `d` as the head of a chain (and notifies). */
static void tx_chain(struct virtq_desc d0, struct virtq_desc d1)
{
    struct queue *x = &q[1];
    x->desc[0] = d0;
    x->desc[1] = d1;
    x->avail.ring[x->avail_idx % QN] = 0;
    barrier();
    x->avail_idx++;
    x->avail.idx = x->avail_idx;
    barrier();
    notify(1);
}

static void attack_loop(void)
{
    tx_chain((struct virtq_desc){ipa(q[1].buf[0]), 8, VIRTQ_DESC_F_NEXT, 1},
             (struct virtq_desc){ipa(q[1].buf[1]), 8, VIRTQ_DESC_F_NEXT, 0});
}

static void attack_foreign_buffer(void)
{
    tx_chain((struct virtq_desc){FOREIGN_IPA, 64, 0, 0}, (struct virtq_desc){0, 0, 0, 0});
}

static void attack_huge_length(void)
{
    tx_chain((struct virtq_desc){ipa(q[1].buf[0]), 0xffffffffu, 0, 0}, (struct virtq_desc){0, 0, 0, 0});
}

static void attack_wrong_direction(void)
{
    tx_chain((struct virtq_desc){ipa(q[1].buf[0]), 8, VIRTQ_DESC_F_WRITE, 0},
             (struct virtq_desc){0, 0, 0, 0});
}

static void attack_index_jump(void)
{
    struct queue *x = &q[1];
    x->avail_idx = (uint16_t)(x->avail_idx + 1000u);
    x->avail.idx = x->avail_idx;
    barrier();
    notify(1);
}

static void attack_head_beyond(void)
{
    struct queue *x = &q[1];
    x->avail.ring[x->avail_idx % QN] = 4000;
    barrier();
    x->avail_idx++;
    x->avail.idx = x->avail_idx;
    barrier();
    notify(1);
}

/* A queue set up again (after QueueReady 0) with a size that is not a power of two. */
static void attack_queue_size(void)
{
    wr(VIRTIO_MMIO_QUEUE_SEL, 1);
    wr(VIRTIO_MMIO_QUEUE_READY, 0);
    wr(VIRTIO_MMIO_QUEUE_NUM, 6);
    wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

/* A queue's used ring placed in the rtos's memory. */
static void attack_foreign_ring(void)
{
    wr(VIRTIO_MMIO_QUEUE_SEL, 1);
    wr(VIRTIO_MMIO_QUEUE_READY, 0);
    wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)FOREIGN_IPA);
    wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
    wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

/* A receive buffer in the rtos's memory: the device would write the echo there. */
static void attack_foreign_receive_buffer(void)
{
    ctrl_send(0, VIRTIO_CONSOLE_PORT_OPEN, 1);
    for (unsigned s = 0; s < QN; s++) {
        q[0].desc[s].addr = FOREIGN_IPA + s * BUF;
    }
    barrier();
    add(1, 0, 4);
    notify(1); /* 4 bytes to the echo; it sends them back into the receive buffers */
}

static void attack_no_version_1(void)
{
    wr(VIRTIO_MMIO_STATUS, 0);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 0);
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_CONSOLE_F_MULTIPORT);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
}

static void attack_control_port(void)
{
    ctrl_send(77, VIRTIO_CONSOLE_PORT_OPEN, 1);
}

/* Attack number a: runs it and returns its name (a switch, not a table: the guest keeps no absolute
 * addresses in data, common/start.S). NULL past the last. */
static const char *attack(unsigned a)
{
    switch (a) {
    case 0:
        attack_loop();
        return "loop";
    case 1:
        attack_foreign_buffer();
        return "foreign_buffer";
    case 2:
        attack_huge_length();
        return "huge_length";
    case 3:
        attack_wrong_direction();
        return "wrong_direction";
    case 4:
        attack_index_jump();
        return "index_jump";
    case 5:
        attack_head_beyond();
        return "head_beyond";
    case 6:
        attack_queue_size();
        return "queue_size";
    case 7:
        attack_foreign_ring();
        return "foreign_ring";
    case 8:
        attack_foreign_receive_buffer();
        return "foreign_receive_buffer";
    case 9:
        attack_no_version_1();
        return "no_version_1";
    case 10:
        attack_control_port();
        return "control_port";
    default:
        return NULL;
    }
}
#define NATTACKS 11u

/* ---------------------------------------------------------------- storms */

/* Every queue at the device's largest size (VBUS_QUEUE_MAX in hyp/core/vbus.c), for the storms. */
#define SQ 64u

struct squeue {
    struct virtq_desc desc[SQ] __attribute__((aligned(16)));
    struct {
        uint16_t flags, idx, ring[SQ];
    } avail __attribute__((aligned(4)));
    struct {
        uint16_t flags, idx;
        struct virtq_used_elem ring[SQ];
    } used __attribute__((aligned(4)));
    uint16_t avail_idx;
};

static struct squeue sq[MAX_QUEUES];
/* One 8-byte cell per descriptor slot of the control transmitq (a control message each), and one per
 * queue that every descriptor of that queue's long chain names. */
static struct virtio_console_control ctrl_cell[SQ];
static struct virtio_console_control queue_cell[MAX_QUEUES];

/* The longest register write seen by the storm, in counter ticks: what one trap cost this CPU. */
static uint64_t longest;

static void timed_wr(uint32_t off, uint32_t v)
{
    uint64_t t0 = guest_counter();
    wr(off, v);
    uint64_t t = guest_counter() - t0;
    longest = t > longest ? t : longest;
}

/* Queue qi's descriptors: one chain of all SQ (0 -> 1 -> ... -> SQ-1), each naming the queue's cell
 * (the control transmitq's slot k names ctrl_cell[k] instead); the right direction for the queue. */
static void chain_all(unsigned qi)
{
    struct squeue *x = &sq[qi];
    uint16_t dir = qi % 2u == 0 ? VIRTQ_DESC_F_WRITE : 0;
    for (unsigned k = 0; k < SQ; k++) {
        const void *cell =
            qi == VIRTIO_CONSOLE_CTRL_TX ? (const void *)&ctrl_cell[k] : (const void *)&queue_cell[qi];
        x->desc[k] =
            (struct virtq_desc){ipa(cell), sizeof(struct virtio_console_control),
                                (uint16_t)(dir | (k + 1u < SQ ? VIRTQ_DESC_F_NEXT : 0u)), (uint16_t)(k + 1u)};
    }
}

/* SQ more available entries on qi, entry k naming head heads(k): all 0 (same_head), or k. */
static void offer(unsigned qi, bool same_head)
{
    struct squeue *x = &sq[qi];
    for (unsigned k = 0; k < SQ; k++) {
        x->avail.ring[(x->avail_idx + k) % SQ] = same_head ? 0u : (uint16_t)k;
    }
    barrier();
    x->avail_idx = (uint16_t)(x->avail_idx + SQ);
    x->avail.idx = x->avail_idx;
    barrier();
}

/* A reset and every queue set up at SQ entries (status FEATURES_OK, not yet DRIVER_OK). */
static void storm_setup(void)
{
    wr(VIRTIO_MMIO_STATUS, 0);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << (VIRTIO_F_VERSION_1 - 32u));
    wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_CONSOLE_F_MULTIPORT);
    wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    for (unsigned i = 0; i < nqueues; i++) {
        struct squeue *x = &sq[i];
        memset(x, 0, sizeof(*x));
        chain_all(i);
        wr(VIRTIO_MMIO_QUEUE_SEL, i);
        wr(VIRTIO_MMIO_QUEUE_NUM, SQ);
        wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)ipa(x->desc));
        wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(ipa(x->desc) >> 32));
        wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)ipa(&x->avail));
        wr(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(ipa(&x->avail) >> 32));
        wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)ipa(&x->used));
        wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(ipa(&x->used) >> 32));
        wr(VIRTIO_MMIO_QUEUE_READY, 1);
    }
}

static const uint32_t DRIVER_OK_STATUS =
    VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK;

/* Waits (at most 100 ms) until the device returned everything offered on qi, or stopped. */
static void settle(unsigned qi)
{
    uint64_t end = guest_counter() + guest_counter_hz() / 10u;
    while (*(volatile uint16_t *)&sq[qi].used.idx != sq[qi].avail_idx && guest_counter() < end &&
           (rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET) == 0) {
    }
}

/* Storm n for the given guest time: 0 when n is not a storm, else rounds done; *refused counts the
 * rounds that ended in DEVICE_NEEDS_RESET (the device refused what it was given). */
static uint64_t storm(unsigned n, uint64_t ms, uint64_t *refused, const char **name)
{
    const uint32_t stats = nports - 1u; /* the hypervisor's counters port, the last */
    uint64_t end = guest_counter() + guest_counter_hz() * ms / 1000u;
    uint64_t rounds = 0;
    bool set_up = false;
    switch (n) { /* a switch, not a table: no absolute addresses in data (common/start.S) */
    case 1:
        *name = "reset-load-driver-ok";
        break;
    case 2:
        *name = "same-head";
        break;
    case 3:
        *name = "shared-chains";
        break;
    case 4:
        *name = "stats-opens";
        break;
    case 5:
        *name = "ready-0";
        break;
    default:
        return 0;
    }
    for (unsigned q0 = 0; q0 < MAX_QUEUES; q0++) {
        queue_cell[q0] = (struct virtio_console_control){0, 0, 0};
    }
    queue_cell[VIRTIO_CONSOLE_CTRL_TX] =
        (struct virtio_console_control){VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1};
    while (guest_counter() < end) {
        for (unsigned k = 0; k < SQ; k++) {
            if (n == 4) { /* 32 opens and 32 closes of the counters port */
                ctrl_cell[k] =
                    (struct virtio_console_control){stats, VIRTIO_CONSOLE_PORT_OPEN, (uint16_t)(k % 2u == 0)};
            } else if (n == 5) { /* the driver's "could not start" and "could not set up a port" */
                ctrl_cell[k] = k % 2u == 0 ? (struct virtio_console_control){VIRTIO_CONSOLE_BAD_ID,
                                                                             VIRTIO_CONSOLE_DEVICE_READY, 0}
                                           : (struct virtio_console_control){0, VIRTIO_CONSOLE_PORT_READY, 0};
            } else { /* closing a port nobody opened: no work but the walk */
                ctrl_cell[k] = (struct virtio_console_control){stats, VIRTIO_CONSOLE_PORT_OPEN, 0};
            }
        }
        if (n == 1) {
            /* A reset, every queue loaded with SQ entries naming its whole chain, then DRIVER_OK: the
             * device takes up every queue in that one write. */
            storm_setup();
            for (unsigned i = 0; i < nqueues; i++) {
                offer(i, true);
            }
            timed_wr(VIRTIO_MMIO_STATUS, DRIVER_OK_STATUS);
            rounds++;
            continue;
        }
        if (!set_up || (rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET) != 0) {
            *refused += set_up ? 1u : 0u;
            storm_setup();
            wr(VIRTIO_MMIO_STATUS, DRIVER_OK_STATUS);
            set_up = true;
        }
        if (n == 3) {
            /* distinct heads, each chain running to the table's end: SQ * (SQ + 1) / 2 descriptors */
            offer(VIRTIO_CONSOLE_CTRL_TX, false);
        } else if (n == 4 || n == 5) {
            for (unsigned k = 0; k < SQ; k++) { /* one descriptor each */
                sq[VIRTIO_CONSOLE_CTRL_TX].desc[k].flags = 0;
            }
            offer(VIRTIO_CONSOLE_CTRL_TX, false);
        } else {
            offer(VIRTIO_CONSOLE_CTRL_TX, true); /* the same 64-descriptor chain 64 times */
        }
        timed_wr(VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_CONSOLE_CTRL_TX);
        settle(VIRTIO_CONSOLE_CTRL_TX);
        rounds++;
    }
    return rounds;
}

/* The storm run on a further CPU (cpu=N): its arguments and results, handed over with `done`. */
static struct {
    uint64_t ms, rounds, refused;
    const char *name;
    volatile bool done;
} storm_cpu;

void guest_secondary(uint64_t ctx)
{
    (void)ctx;
    storm_cpu.rounds =
        storm((unsigned)guest_arg_u64("storm", 0), storm_cpu.ms, &storm_cpu.refused, &storm_cpu.name);
    __atomic_store_n(&storm_cpu.done, true, __ATOMIC_RELEASE);
    guest_halt();
}

/* ---------------------------------------------------------------- the guest */

bool guest_on_sync(struct guest_frame *f)
{
    (void)f;
    return false; /* nothing here should fault: any abort is a finding */
}

void guest_on_irq(struct guest_frame *f)
{
    (void)f;
}

void guest_main(void)
{
    dev = (uintptr_t)guest_arg_u64("vbus", VBUS_DEFAULT_IPA);
    unsigned n = (unsigned)guest_arg_u64("attacks", NATTACKS);
    int open = probe(false);
    if (open < 0) {
        guest_power_off();
    }
    guest_printf("vbus-guest: round trip before the attacks: %s\n", round_trip(64) ? "ok" : "FAILED");
    const char *sname = "";
    uint64_t refused = 0, ms = guest_arg_u64("ms", 3000);
    uint64_t rounds = 0;
    unsigned cpu = (unsigned)guest_arg_u64("cpu", 0);
    if (cpu != 0 && guest_arg_u64("storm", 0) != 0) {
        storm_cpu.ms = ms;
        int64_t rc = guest_hvc(PSCI_CPU_ON_64, cpu, (uint64_t)(uintptr_t)guest_secondary_entry, 1);
        while (rc == 0 && !__atomic_load_n(&storm_cpu.done, __ATOMIC_ACQUIRE)) {
            __asm__ volatile("wfi"); /* woken at least by the rtos's interrupts, taken at EL2 */
        }
        rounds = storm_cpu.rounds;
        refused = storm_cpu.refused;
        sname = storm_cpu.name;
        guest_printf("vbus-guest: storm on CPU %u (CPU_ON %ld)\n", cpu, (long)rc);
    } else {
        rounds = storm((unsigned)guest_arg_u64("storm", 0), ms, &refused, &sname);
    }
    if (rounds > 0) {
        bool again = probe(true) >= 0 && round_trip(32);
        guest_printf(
            "vbus-guest: storm %s: %lu rounds in %lu ms, %lu refused (needs reset), longest register "
            "write %lu us; after a reset: %s\n",
            sname, (unsigned long)rounds, (unsigned long)ms, (unsigned long)refused,
            (unsigned long)(longest * 1000000u / guest_counter_hz()), again ? "works" : "FAILED");
        guest_power_off();
    }
    unsigned recovered = 0;
    for (unsigned a = 0; a < n && a < NATTACKS; a++) {
        const char *name = attack(a);
        /* Some violations show only once the other side has acted (the echo's reply into a foreign
         * receive buffer needs the rtos to run first), and when it runs depends on the emulator's
         * scheduling of the two vCPUs: wait for the flag, within a bound far above the rtos's reply. */
        uint64_t end = guest_counter() + guest_counter_hz() / 5u;
        while ((rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET) == 0 && guest_counter() < end) {
        }
        uint32_t status = rd(VIRTIO_MMIO_STATUS), isr = rd(VIRTIO_MMIO_INTERRUPT_STATUS);
        /* Once stopped, the device takes no notification and returns nothing: a good write now, after
         * what it returned before it stopped, stays unanswered. */
        uint32_t id, len;
        while (used(1, &id, &len, 0)) {
        }
        add(1, 2, 8);
        notify(1);
        bool quiet = !used(1, &id, &len, 50);
        bool again = probe(true) >= 0 && round_trip(32);
        recovered += again ? 1u : 0u;
        guest_printf(
            "vbus-guest: attack %s: needs-reset %u, config interrupt %u, stopped %u; after a reset: %s\n",
            name, (status & VIRTIO_STATUS_DEVICE_NEEDS_RESET) ? 1u : 0u,
            (isr & VIRTIO_MMIO_INT_CONFIG) ? 1u : 0u, quiet ? 1u : 0u, again ? "works" : "FAILED");
    }
    guest_printf("vbus-guest: %u attacks, %u recovered\n", n < NATTACKS ? n : (unsigned)NATTACKS, recovered);
    guest_power_off();
}
