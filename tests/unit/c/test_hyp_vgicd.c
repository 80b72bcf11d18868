/*
 * The distributor/redistributor filter (hyp/arch/arm64/vgicd.c) on a fake register file: whatever a
 * partition writes, wherever, it changes no bit that belongs to an interrupt (or a CPU) it does not own,
 * and it reads nothing of another partition's interrupts.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/vgic.h"
#include "arch/vgic_route.h"
#include "arch/vgicd.h"
#include "arm64/gicv2.h"
#include "arm64/gicv3.h"
#include "board.h"
#include "check.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "hyp_stubs.h"
#include "lib/vbus.h"
#include "vgic_stub.h"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS]; /* no CPU is shared here */
struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;

#define GICR_REGION (HYP_MAX_CPUS * BOARD_GICR_STRIDE)

static uint8_t *gicd, *gicr;
static struct vgicd_hw hw;

static void own(struct partition *p, unsigned intid)
{
    p->vgic.irqs[intid / 32] |= 1u << (intid % 32);
}

/* Partition A (Linux-like, CPU 1) owns SPIs 40, 41, 63, 64, 100; B (CPU 0) owns 33 and 42. */
static void setup(struct partition *a, struct partition *b, struct vcpu *va, struct vcpu *vb)
{
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    a->name = "a";
    a->cpu_mask = 1u << 1;
    b->name = "b";
    b->cpu_mask = 1u << 0;
    own(a, 40), own(a, 41), own(a, 63), own(a, 64), own(a, 100);
    own(b, 33), own(b, 42);
    memset(va, 0, sizeof(*va));
    memset(vb, 0, sizeof(*vb));
    va->part = a, va->cpu = 1;
    vb->part = b, vb->cpu = 0;
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].mpidr = c;
    }
}

/* The INTID a distributor bit belongs to, or -1 for bits that are no interrupt's (CTLR, IDs...). */
static int gicd_bit_owner(uint64_t byte_off, unsigned bit)
{
    if (byte_off >= GICD_IGROUPR && byte_off < GICD_IPRIORITYR) {
        return (int)(((byte_off - GICD_IGROUPR) % GICD_BITREG_SPAN) * 8u + bit);
    }
    if (byte_off >= GICD_IPRIORITYR && byte_off < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN) {
        return (int)(byte_off - GICD_IPRIORITYR);
    }
    if (byte_off >= GICD_ICFGR && byte_off < GICD_ICFGR + GICD_ICFGR_SPAN) {
        return (int)((byte_off - GICD_ICFGR) * 4u + bit / 2u);
    }
    if (byte_off >= GICD_IROUTER && byte_off < GICD_IROUTER_END) {
        return (int)((byte_off - GICD_IROUTER) / 8u);
    }
    return -1;
}

static uint64_t pattern(uint64_t i)
{
    return 0x9e3779b97f4a7c15ull * (i + 1u);
}

static void fill_gicd(void)
{
    for (uint64_t i = 0; i < GICD_SIZE; i++) {
        gicd[i] = (uint8_t)pattern(i);
    }
}

/* A distributor write through the filter, with the set/clear registers' hardware semantics
 * (ISENABLER..ICACTIVER: a 1 sets or clears that bit, a 0 does nothing), which plain memory lacks. */
static void gicd_write(struct vcpu *v, uint64_t off, uint64_t val, unsigned size)
{
    bool setclear = off >= GICD_ISENABLER && off < GICD_IPRIORITYR;
    uint32_t old = 0, written;
    if (setclear) {
        memcpy(&old, gicd + (off & ~3ull), 4);
    }
    (void)vgicd_mmio(v, &hw, off, true, &val, size);
    if (setclear) {
        memcpy(&written, gicd + (off & ~3ull), 4);
        bool set = ((off - GICD_ISENABLER) / GICD_BITREG_SPAN) % 2u == 0; /* IS* then IC* */
        uint32_t now = set ? old | written : old & ~written;
        memcpy(gicd + (off & ~3ull), &now, 4);
    }
}

/* The accesses the GICv3 architecture defines for a distributor offset: 32-bit everywhere, 64-bit for
 * IROUTER, byte accesses for IPRIORITYR. (Every other access reads as zero and is ignored: see
 * test_hostile_accesses, and fuzz_hyp_mmio for all of them.) */
static bool architected(uint64_t off, unsigned size)
{
    if (off % size != 0) {
        return false;
    }
    if (size == 4) {
        return true;
    }
    if (size == 8) {
        return off >= GICD_IROUTER && off < GICD_IROUTER_END;
    }
    return size == 1 && off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN;
}

/* Writes `val` with every architected access at every offset of the distributor as partition v, then
 * checks every changed bit belongs to an interrupt v's partition owns. */
static void test_gicd_writes_stay_owned(struct vcpu *v, uint64_t val)
{
    static uint8_t before[GICD_SIZE];
    unsigned stray = 0, changed = 0;
    for (unsigned size = 1; size <= 8; size *= 2) {
        fill_gicd();
        memcpy(before, gicd, GICD_SIZE);
        for (uint64_t off = 0; off < GICD_SIZE; off += size) {
            if (architected(off, size)) {
                gicd_write(v, off, val, size);
            }
        }
        for (uint64_t i = 0; i < GICD_SIZE; i++) {
            uint8_t diff = gicd[i] ^ before[i];
            for (unsigned bit = 0; bit < 8; bit++) {
                if (!((diff >> bit) & 1u)) {
                    continue;
                }
                changed++;
                int intid = gicd_bit_owner(i, bit);
                if (intid < 0 || !part_owns_irq(v->part, (unsigned)intid)) {
                    if (stray++ < 5) {
                        fprintf(stderr, "  size %u: bit %u of byte 0x%llx (INTID %d) changed\n", size, bit,
                                (unsigned long long)i, intid);
                    }
                }
            }
        }
    }
    CHECK(stray == 0);
    CHECK(changed > 0); /* the owned interrupts did change: the test can see writes */
}

/* Reads of every offset never return another partition's interrupt state. */
static void test_gicd_reads_stay_owned(struct vcpu *v)
{
    fill_gicd();
    unsigned leaks = 0;
    for (uint64_t off = GICD_IGROUPR; off < GICD_IROUTER_END; off += 4) {
        uint64_t val = 0;
        (void)vgicd_mmio(v, &hw, off, false, &val, 4);
        for (unsigned bit = 0; bit < 32; bit++) {
            if ((val >> bit) & 1u) {
                int intid = gicd_bit_owner(off + bit / 8u, bit % 8u);
                leaks += intid < 0 || !part_owns_irq(v->part, (unsigned)intid);
            }
        }
    }
    CHECK(leaks == 0);
}

static void test_gicd_semantics(struct vcpu *va)
{
    memset(gicd, 0, GICD_SIZE);
    uint64_t val = 0xffffffffu;
    /* ISENABLER1 (SPIs 32..63): only A's 40, 41, 63. */
    gicd_write(va, GICD_ISENABLER + 4, val, 4);
    uint32_t en;
    memcpy(&en, gicd + GICD_ISENABLER + 4, 4);
    CHECK(en == ((1u << 8) | (1u << 9) | (1u << 31)));
    /* IGROUPR: a partition cannot move its interrupts out of Group 1, nor touch others'. */
    memset(gicd + GICD_IGROUPR + 4, 0xff, 4);
    val = 0;
    (void)vgicd_mmio(va, &hw, GICD_IGROUPR + 4, true, &val, 4);
    memcpy(&en, gicd + GICD_IGROUPR + 4, 4);
    CHECK(en == 0xffffffffu);
    /* IROUTER of an owned SPI goes to the owner's CPU whatever is written; another's is untouched. */
    val = 0x0000000700000003ull;
    (void)vgicd_mmio(va, &hw, GICD_IROUTER + 40 * 8, true, &val, 8);
    (void)vgicd_mmio(va, &hw, GICD_IROUTER + 33 * 8, true, &val, 8);
    uint64_t r40, r33;
    memcpy(&r40, gicd + GICD_IROUTER + 40 * 8, 8);
    memcpy(&r33, gicd + GICD_IROUTER + 33 * 8, 8);
    CHECK(r40 == 1); /* CPU 1's affinity */
    CHECK(r33 == 0);
    /* A 4-byte priority write over SPIs 40..43 changes 40 and 41 only (42 is B's, 43 nobody's). */
    val = 0x11223344u;
    (void)vgicd_mmio(va, &hw, GICD_IPRIORITYR + 40, true, &val, 4);
    CHECK(gicd[GICD_IPRIORITYR + 40] == 0x44 && gicd[GICD_IPRIORITYR + 41] == 0x33);
    CHECK(gicd[GICD_IPRIORITYR + 42] == 0 && gicd[GICD_IPRIORITYR + 43] == 0);
    /* CTLR and TYPER: never writable; TYPER reads without LPIs. */
    uint32_t typer = 0x0037ffffu;
    memcpy(gicd + GICD_TYPER, &typer, 4);
    val = 0;
    (void)vgicd_mmio(va, &hw, GICD_CTLR, true, &val, 4);
    (void)vgicd_mmio(va, &hw, GICD_TYPER, false, &val, 4);
    CHECK(val == (typer & ~GICD_TYPER_LPIS));
}

static void test_gicr(struct vcpu *va)
{
    memset(gicr, 0, GICR_REGION);
    uint64_t val = 0xffffffffu;
    /* CPU 0's frame is B's: A's writes to its SGI/PPI enables are ignored and it reads zeros. */
    (void)vgicr_mmio(va, &hw, 0 * BOARD_GICR_STRIDE + GICR_SGI_OFFSET + GICR_ISENABLER0, true, &val, 4);
    uint32_t en;
    memcpy(&en, gicr + GICR_SGI_OFFSET + GICR_ISENABLER0, 4);
    CHECK(en == 0);
    /* Its own frame (CPU 1): everything but the hypervisor's private interrupts (maintenance 25, EL2 timer
     * 26, the kick SGI 13, the V-Bus doorbell SGI 15). */
    uint64_t own = 1 * BOARD_GICR_STRIDE;
    (void)vgicr_mmio(va, &hw, own + GICR_SGI_OFFSET + GICR_ISENABLER0, true, &val, 4);
    memcpy(&en, gicr + own + GICR_SGI_OFFSET + GICR_ISENABLER0, 4);
    CHECK(en == (0xffffffffu & ~((1u << 25) | (1u << 26) | (1u << 13) | (1u << 15))));
    val = 0xffffffffffffffffull;
    (void)vgicr_mmio(va, &hw, own + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + 24, true, &val, 4);
    CHECK(gicr[own + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + 24] == 0xff);
    CHECK(gicr[own + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + 25] == 0);
    CHECK(gicr[own + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + 26] == 0);
    CHECK(gicr[own + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + 27] == 0xff);
    /* TYPER of any frame is readable (the guest scans for its own); Last marks the end of A's run. */
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        uint64_t t = (uint64_t)c << GICR_TYPER_AFF_SHIFT;
        memcpy(gicr + c * BOARD_GICR_STRIDE + GICR_TYPER, &t, 8);
    }
    (void)vgicr_mmio(va, &hw, own + GICR_TYPER, false, &val, 8);
    CHECK(val == ((1ull << GICR_TYPER_AFF_SHIFT) | GICR_TYPER_LAST));
    (void)vgicr_mmio(va, &hw, 0 * BOARD_GICR_STRIDE + GICR_TYPER, false, &val, 8);
    CHECK(val == 0); /* CPU 0: affinity 0, not Last (CPU 1 follows it in A's view) */
    /* GICR_WAKER: a virtual view; the physical register is never written. */
    val = 0;
    (void)vgicr_mmio(va, &hw, own + GICR_WAKER, true, &val, 4);
    (void)vgicr_mmio(va, &hw, own + GICR_WAKER, false, &val, 4);
    CHECK(val == 0 && va->vgic.gicr_waker == 0);
    CHECK(gicr[own + GICR_WAKER] == 0);
}

/* size bytes, then an inaccessible page: an access past the end crashes the test. */
static uint8_t *map_guarded(size_t size)
{
    uint8_t *m = mmap(NULL, size + 4096u, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + size, 4096u, PROT_NONE) != 0) {
        exit(2);
    }
    return m;
}

static uint64_t rd(struct vcpu *v, bool redist, uint64_t off, unsigned size)
{
    uint64_t val = 0x0123456789abcdefull;
    (void)(redist ? vgicr_mmio : vgicd_mmio)(v, &hw, off, false, &val, size);
    return val;
}

static void wr(struct vcpu *v, bool redist, uint64_t off, uint64_t val, unsigned size)
{
    (void)(redist ? vgicr_mmio : vgicd_mmio)(v, &hw, off, true, &val, size);
}

/* Accesses the architecture does not define, each once found to break the filter: they read as zero,
 * change nothing, and the hypervisor's own device accesses stay aligned and inside what exists. */
static void test_hostile_accesses(struct vcpu *va, struct vcpu *vb)
{
    /* A board with 2 CPUs: the redistributor frames of CPUs 2.. are unassigned space (inaccessible
     * here). IPA 0x080e0008 is CPU 2's GICR_TYPER: it read that frame, a data abort at EL2. */
    memset(gicr, 0x5a, 2 * BOARD_GICR_STRIDE);
    CHECK(mprotect(gicr + 2 * BOARD_GICR_STRIDE, GICR_REGION - 2 * BOARD_GICR_STRIDE, PROT_NONE) == 0);
    hw.ncpus = 2;
    CHECK(rd(va, true, 0x080e0008 - BOARD_GICR_BASE, 4) == 0);
    CHECK(rd(va, true, 2 * BOARD_GICR_STRIDE + GICR_TYPER, 8) == 0);
    CHECK(rd(vb, true, GICR_REGION - 4u, 4) == 0);
    wr(va, true, 3 * BOARD_GICR_STRIDE + GICR_SGI_OFFSET + GICR_ISENABLER0, ~0ull, 4);
    uint64_t t1 = rd(va, true, 1 * BOARD_GICR_STRIDE + GICR_TYPER, 8); /* the board's last CPU: Last */
    CHECK((t1 & GICR_TYPER_LAST) != 0 &&
          (t1 & ~GICR_TYPER_LAST) == (0x5a5a5a5a5a5a5a5aull & ~GICR_TYPER_LAST));
    hw.ncpus = HYP_MAX_CPUS;
    CHECK(mprotect(gicr, GICR_REGION, PROT_READ | PROT_WRITE) == 0);

    memset(gicd, 0, GICD_SIZE);
    memset(gicr, 0, GICR_REGION);
    /* B's byte write over ISENABLER bits of SPIs 40..47 (40, 41 are A's): the mask was computed for a
     * whole word at the wrong place, and the store unaligned. */
    wr(vb, false, GICD_ISENABLER + 5u, 0xff, 1);
    wr(vb, false, GICD_ISENABLER + 3u, ~0ull, 4);
    wr(vb, false, GICD_IGROUPR + 6u, ~0ull, 2);
    uint32_t word[3];
    memcpy(word, gicd + GICD_ISENABLER, sizeof(word));
    CHECK(word[0] == 0 && word[1] == 0 && word[2] == 0);
    CHECK(gicd[GICD_IGROUPR + 5] == 0 && gicd[GICD_IGROUPR + 6] == 0 && gicd[GICD_IGROUPR + 7] == 0);
    /* An 8-byte read at the distributor's last word ran past its end; odd sizes read more than asked. */
    memset(gicd + GICD_ID_START, 0xa5, GICD_SIZE - GICD_ID_START);
    CHECK(rd(va, false, GICD_SIZE - 4u, 8) == 0);
    CHECK(rd(va, false, GICD_SIZE - 4u, 4) == 0xa5a5a5a5u);
    CHECK(rd(va, false, GICD_SIZE - 4u, 1) == 0 && rd(va, false, GICD_SIZE - 2u, 2) == 0);
    CHECK(rd(va, false, GICD_TYPER, 1) == 0 && rd(va, false, GICD_CTLR, 8) == 0);
    /* An unaligned 8-byte read across IROUTER<40> (A's) and IROUTER<41> returned bits of both; an
     * unowned neighbour's bits must never show. */
    uint64_t r40 = 0x1111111111111111ull, r43 = 0x4343434343434343ull;
    memcpy(gicd + GICD_IROUTER + 40 * 8, &r40, 8);
    memcpy(gicd + GICD_IROUTER + 43 * 8, &r43, 8);
    CHECK(rd(va, false, GICD_IROUTER + 42 * 8 + 4, 8) == 0);
    CHECK(rd(va, false, GICD_IROUTER + 40 * 8 + 4, 8) == 0);
    CHECK(rd(va, false, GICD_IROUTER + 40 * 8 + 4, 4) == 0x11111111u); /* the high half alone: fine */
    CHECK(rd(va, false, GICD_IROUTER + 43 * 8, 4) == 0);
    /* An 8-byte write to the last PPI priorities shifted a mask by INTIDs 32..35 (undefined). */
    uint64_t own = 1 * BOARD_GICR_STRIDE + GICR_SGI_OFFSET;
    wr(va, true, own + GICR_IPRIORITYR0 + 28u, ~0ull, 8);
    wr(va, true, own + GICR_IPRIORITYR0 + 26u, ~0ull, 2);
    for (unsigned i = 24; i < 40; i++) {
        CHECK(gicr[own + GICR_IPRIORITYR0 + i] == 0);
    }
    /* Values are truncated to the access: a byte write to A's priority 40 carries one byte. */
    wr(va, false, GICD_IPRIORITYR + 40u, 0x7766554433221180ull, 1);
    CHECK(gicd[GICD_IPRIORITYR + 40] == 0x80 && gicd[GICD_IPRIORITYR + 41] == 0);
}

/* An emulated SPI (a level source: no physical line) has an enable bit of the partition's own: set and
 * cleared through ISENABLER/ICENABLER, read back, Group 1, and never written to the distributor; an
 * emulated SPI of another partition is invisible. */
/* vgic.c's: the distributor asks for its level sources to be looked at again (counted here). */
static unsigned level_syncs;
void vgic_levels_changed(struct partition *p, struct vcpu *self)
{
    CHECK(self != NULL && self->part == p); /* the writer's CPU: it knows where each source goes */
    level_syncs++;
}

static void test_emulated_spis(struct vcpu *va, struct vcpu *vb)
{
    const unsigned vi = 224, word = vi / 32u, bit = 1u << (vi % 32u);
    va->part->vgic.virqs[word] |= bit;
    fill_gicd();
    uint8_t before[GICD_SIZE];
    memcpy(before, gicd, GICD_SIZE);
    uint64_t v = 0;
    CHECK(!part_virq_enabled(va->part, vi));
    level_syncs = 0;
    gicd_write(va, GICD_ISENABLER + 4u * word, bit, 4);
    CHECK(part_virq_enabled(va->part, vi));
    CHECK(level_syncs == 1); /* enabled with its line high, it must be pending at once */
    gicd_write(va, GICD_ISENABLER + 4u * word, bit, 4);
    CHECK(level_syncs == 1); /* already enabled: nothing changed */
    (void)vgicd_mmio(va, &hw, GICD_ISENABLER + 4u * word, false, &v, 4);
    CHECK((v & bit) != 0);
    (void)vgicd_mmio(va, &hw, GICD_ICENABLER + 4u * word, false, &v, 4);
    CHECK((v & bit) != 0);
    v = 0;
    (void)vgicd_mmio(va, &hw, GICD_IGROUPR + 4u * word, false, &v, 4);
    CHECK((v & bit) != 0);
    /* the other partition sees none of it and cannot change it */
    v = 0;
    (void)vgicd_mmio(vb, &hw, GICD_ISENABLER + 4u * word, false, &v, 4);
    CHECK((v & bit) == 0);
    gicd_write(vb, GICD_ICENABLER + 4u * word, bit, 4);
    CHECK(part_virq_enabled(va->part, vi) && !part_virq_enabled(vb->part, vi));
    gicd_write(va, GICD_ICENABLER + 4u * word, bit, 4);
    CHECK(!part_virq_enabled(va->part, vi));
    CHECK(level_syncs == 1); /* disabling, and the other partition's writes, ask for nothing */
    CHECK(memcmp(before, gicd, GICD_SIZE) == 0); /* the distributor itself was never written */
    va->part->vgic.virqs[word] &= ~bit;
}

static uint64_t rd64_at(const uint8_t *base, uint64_t off)
{
    uint64_t v;
    memcpy(&v, base + off, 8);
    return v;
}

static uint32_t rd32_at(const uint8_t *base, uint64_t off)
{
    uint32_t v;
    memcpy(&v, base + off, 4);
    return v;
}

static bool line_high(const void *ctx)
{
    (void)ctx;
    return true;
}

/* Each of the hypervisor's SGIs (the kick 13, the V-Bus doorbell 15) and every SGI bit. */
#define HYP_SGIS ((1u << 13) | (1u << 15))
#define ALL_SGIS 0xffffu

/* A partition on several CPUs (A on CPUs 1, 2 and 3; B on CPU 0): SPI routing names any CPU of A and
 * only those; an emulated SPI's priority and route are its own; SGI state lives in the vGIC, per CPU. */
static void test_several_cpus(struct vcpu *va, struct vcpu *vb)
{
    struct partition *a = va->part;
    a->cpu_mask = 0xe;
    struct vcpu *v2 = &hyp_vcpu[2], *v3 = &hyp_vcpu[3];
    v2->part = a, v2->cpu = 2;
    v3->part = a, v3->cpu = 3;
    memset(gicd, 0, GICD_SIZE);
    memset(gicr, 0, GICR_REGION);
    /* IROUTER of an owned SPI: the CPU named when A has it; else A's boot CPU (1): B's CPU 0, a CPU
     * beyond A, 1-of-N routing (IRM, bit 31), an affinity with Aff3 set. */
    const uint64_t r40 = GICD_IROUTER + 40 * 8;
    wr(v2, false, r40, 2, 8);
    CHECK(rd64_at(gicd, r40) == 2);
    wr(v2, false, r40, 0, 8);
    CHECK(rd64_at(gicd, r40) == 1);
    wr(v2, false, r40, 7, 8);
    CHECK(rd64_at(gicd, r40) == 1);
    wr(v2, false, r40, (1ull << 31) | 3u, 8);
    CHECK(rd64_at(gicd, r40) == 1);
    wr(v2, false, r40, 3, 4); /* the low half alone */
    CHECK(rd64_at(gicd, r40) == 3 && rd(v3, false, r40, 8) == 3);
    wr(v2, false, r40 + 4, 1, 4); /* Aff3 = 1: no such CPU */
    CHECK(rd64_at(gicd, r40) == 1);
    wr(vb, false, r40, 2, 8); /* B cannot route A's SPI */
    CHECK(rd64_at(gicd, r40) == 1);

    /* An emulated SPI (a level source): priority and route in the source, never in the distributor. */
    const unsigned vi = 224;
    a->vgic.level[0] = (struct vgic_level){vi, line_high, NULL, 0, 1};
    a->vgic.virqs[vi / 32u] |= 1u << (vi % 32u);
    wr(v3, false, GICD_IPRIORITYR + vi, 0xa0, 1);
    CHECK(a->vgic.level[0].prio == 0xa0);
    wr(v3, false, GICD_IPRIORITYR + vi, 0x10203040u, 4); /* 224..227: only 224 is A's */
    CHECK(a->vgic.level[0].prio == 0x40 && rd32_at(gicd, GICD_IPRIORITYR + vi) == 0);
    CHECK(rd(v3, false, GICD_IPRIORITYR + vi, 4) == 0x40 && rd(vb, false, GICD_IPRIORITYR + vi, 1) == 0);
    wr(v3, false, GICD_IROUTER + vi * 8u, 3, 8);
    CHECK(a->vgic.level[0].cpu == 3 && rd(v2, false, GICD_IROUTER + vi * 8u, 8) == 3);
    wr(v3, false, GICD_IROUTER + vi * 8u, 0, 8);
    CHECK(a->vgic.level[0].cpu == 1);
    wr(vb, false, GICD_IROUTER + vi * 8u, 3, 8);
    CHECK(a->vgic.level[0].cpu == 1 && rd64_at(gicd, GICD_IROUTER + vi * 8u) == 0);
    a->vgic.level[0] = (struct vgic_level){0};
    a->vgic.virqs[vi / 32u] = 0;

    /* SGIs through CPU 2's own frame: the vGIC's state (vgic_stub), never the physical pending and
     * active bits; the hypervisor's SGIs untouched. PPIs stay physical. */
    memset(&vgic_stub, 0, sizeof(vgic_stub));
    const uint64_t f2 = 2 * BOARD_GICR_STRIDE + GICR_SGI_OFFSET, f3 = 3 * BOARD_GICR_STRIDE + GICR_SGI_OFFSET;
    wr(v2, true, f2 + GICR_ISPENDR0, 0xffffffffu, 4);
    CHECK(vgic_stub.pending[2] == (ALL_SGIS & ~HYP_SGIS));
    CHECK(rd32_at(gicr, f2 + GICR_ISPENDR0) == (0xffff0000u & ~((1u << 25) | (1u << 26))));
    CHECK(rd(v2, true, f2 + GICR_ISPENDR0, 4) == (0xffffffffu & ~HYP_SGIS & ~((1u << 25) | (1u << 26))));
    wr(v2, true, f2 + GICR_ICPENDR0, 1u << 3, 4);
    CHECK(vgic_stub.pending[2] == (ALL_SGIS & ~HYP_SGIS & ~(1u << 3)));
    CHECK(rd32_at(gicr, f2 + GICR_ICPENDR0) == 0);
    wr(v2, true, f2 + GICR_ISACTIVER0, (1u << 4) | (1u << 13), 4);
    CHECK(vgic_stub.active[2] == 1u << 4);
    CHECK(rd(v2, true, f2 + GICR_ISACTIVER0, 4) == 1u << 4);
    wr(v2, true, f2 + GICR_ICACTIVER0, 1u << 4, 4);
    CHECK(vgic_stub.active[2] == 0);
    /* CPU 3's frame from CPU 2: set-pending sends the SGI to CPU 3; its SGI state reads as zero and a
     * clear does nothing (CPU 3's list registers are not CPU 2's to change). */
    wr(v2, true, f3 + GICR_ISPENDR0, 1u << 5, 4);
    CHECK(vgic_stub.pending[3] == 1u << 5 && vgic_stub.posts == 1);
    wr(v2, true, f3 + GICR_ICPENDR0, 1u << 5, 4);
    CHECK(vgic_stub.pending[3] == 1u << 5 && rd(v2, true, f3 + GICR_ISPENDR0, 4) == 0);
    /* B's CPU 0: nothing reaches it, through its frame or from B's own side to A's. */
    wr(v2, true, GICR_SGI_OFFSET + GICR_ISPENDR0, 0xffffffffu, 4);
    CHECK(vgic_stub.pending[0] == 0 && rd32_at(gicr, GICR_SGI_OFFSET + GICR_ISPENDR0) == 0);
    wr(vb, true, f2 + GICR_ISPENDR0, 1u << 6, 4);
    CHECK((vgic_stub.pending[2] & (1u << 6)) == (ALL_SGIS & ~HYP_SGIS & (1u << 6)) && vgic_stub.posts == 1);
    /* Each CPU's GICR_WAKER is its own, whichever of A's CPUs writes it. */
    v2->vgic.gicr_waker = GICR_WAKER_PS;
    v3->vgic.gicr_waker = GICR_WAKER_PS;
    wr(v2, true, 3 * BOARD_GICR_STRIDE + GICR_WAKER, 0, 4);
    CHECK(v3->vgic.gicr_waker == 0 && v2->vgic.gicr_waker == GICR_WAKER_PS);

    /* SGI targets (ICC_SGI1R_EL1): A's CPUs only. IRM: all of A's but the sender. */
    const uint64_t irm = 1ull << 40, aff1 = 1ull << 16, rs1 = 1ull << 44;
    CHECK(vgic_sgi_targets(a, 2, irm | (5ull << 24)) == 0xa);
    CHECK(vgic_sgi_targets(a, 2, 0xffff) == 0xe);  /* CPU 0 (B's) dropped, CPUs 4.. not A's */
    CHECK(vgic_sgi_targets(a, 2, 1u << 2) == 0x4); /* itself */
    CHECK(vgic_sgi_targets(a, 2, 0) == 0);
    CHECK(vgic_sgi_targets(a, 2, aff1 | 0xffff) == 0 && vgic_sgi_targets(a, 2, rs1 | 0xffff) == 0);
    CHECK(vgic_sgi_targets(vb->part, 0, irm) == 0 && vgic_sgi_targets(vb->part, 0, 0xffff) == 1);
    /* Affinities are compared whole: with CPU 3 at Aff1 1, Aff0 17 (RS 1, bit 1), only that names it. */
    hyp_vcpu[3].mpidr = 0x111;
    CHECK(vgic_sgi_targets(a, 2, aff1 | rs1 | (1u << 1)) == 0x8);
    CHECK(vgic_sgi_targets(a, 2, 0xffff) == 0x6);
    CHECK(vgic_irouter_cpu(a, 0x111) == 3 && vgic_irouter_of(3) == 0x111);
    CHECK(vgic_irouter_cpu(a, 0x11) == 1);
    hyp_vcpu[3].mpidr = 3;

    a->cpu_mask = 1u << 1;
    v2->part = v3->part = NULL;
}

/* ---- GICv2 (vgicd_v2_mmio): the 4 KiB distributor with each CPU's banked SGI/PPI words ---- */

/* What a GICv2 distributor bit belongs to: an SPI (its INTID), a banked private interrupt of the
 * calling CPU (its INTID, below 32), or nothing (-1: CTLR, IDs, SGIR, the SGI pending bytes). */
static int v2_bit_owner(uint64_t byte_off, unsigned bit)
{
    if (byte_off >= GICD_ITARGETSR && byte_off < GICD_ITARGETSR + GICD_ITARGETSR_SPAN) {
        return (int)(byte_off - GICD_ITARGETSR);
    }
    if (byte_off >= GICD_CPENDSGIR && byte_off < GICD_CPENDSGIR + 2u * GICD_SGIR_SPAN) {
        return (int)(byte_off % GICD_SGIR_SPAN); /* one byte per SGI of the calling CPU (banked) */
    }
    return byte_off < GICD_ITARGETSR || byte_off >= GICD_ICFGR ? gicd_bit_owner(byte_off, bit) : -1;
}

/* With the set/clear registers' hardware semantics, as gicd_write (32-bit accesses: the only ones
 * those registers have). */
static void v2_write(struct vcpu *v, uint64_t off, uint64_t val, unsigned size)
{
    bool setclear = size == 4 && off >= GICD_ISENABLER && off < GICD_IPRIORITYR;
    uint32_t old = 0, written;
    if (setclear) {
        memcpy(&old, gicd + (off & ~3ull), 4);
    }
    (void)vgicd_v2_mmio(v, &hw, off, true, &val, size);
    if (setclear) {
        memcpy(&written, gicd + (off & ~3ull), 4);
        bool set = ((off - GICD_ISENABLER) / GICD_BITREG_SPAN) % 2u == 0;
        uint32_t now = set ? old | written : old & ~written;
        memcpy(gicd + (off & ~3ull), &now, 4);
    }
}

/* Every 8- and 32-bit write at every offset of the 4 KiB, as Linux (a) and as the rtos (b): a changed
 * bit is an SPI the writer owns or, for the rtos only, its own CPU's banked one; Linux changes no
 * banked bit of the hypervisor's PPIs, and nobody writes GICD_SGIR's word (SGIs are sent, not stored). */
static void test_v2_writes_stay_owned(struct vcpu *v, uint64_t val)
{
    static uint8_t before[GICV2_GICD_SIZE];
    unsigned stray = 0, changed = 0;
    for (unsigned size = 1; size <= 4; size *= 4) {
        fill_gicd();
        memcpy(before, gicd, GICV2_GICD_SIZE);
        for (uint64_t off = 0; off < GICV2_GICD_SIZE; off += size) {
            v2_write(v, off, val, size);
        }
        for (uint64_t i = 0; i < GICV2_GICD_SIZE; i++) {
            uint8_t diff = gicd[i] ^ before[i];
            for (unsigned bit = 0; bit < 8; bit++) {
                if (!((diff >> bit) & 1u)) {
                    continue;
                }
                changed++;
                int intid = v2_bit_owner(i, bit);
                bool ok = intid >= (int)GIC_SPI_BASE ? part_owns_irq(v->part, (unsigned)intid)
                          : intid >= 0 ? v->part->kind != PART_LINUX || ((VGIC_HYP_PPIS >> intid) & 1u) == 0
                                       : false;
                if (!ok && stray++ < 5) {
                    fprintf(stderr, "  v2 size %u: bit %u of byte 0x%llx (INTID %d) changed\n", size, bit,
                            (unsigned long long)i, intid);
                }
            }
        }
    }
    CHECK(stray == 0);
    CHECK(changed > 0);
}

/* ITARGETSR names a CPU of the owner whatever is written; SGIR reaches the sender's CPUs (Linux:
 * virtual, its own only) or, from the rtos, its own CPU and the V-Bus doorbell's. */
static void test_v2_routing_and_sgis(struct vcpu *va, struct vcpu *vb)
{
    fill_gicd();
    v2_write(va, GICD_ITARGETSR + 40, 0xff, 1); /* every CPU named: a's CPU 1 only */
    CHECK(gicd[GICD_ITARGETSR + 40] == 1u << 1);
    v2_write(va, GICD_ITARGETSR + 40, 0x01, 1); /* the rtos's CPU 0: a's boot CPU instead */
    CHECK(gicd[GICD_ITARGETSR + 40] == 1u << 1);
    uint8_t other = gicd[GICD_ITARGETSR + 33];
    v2_write(va, GICD_ITARGETSR + 33, 0x02, 1); /* b's SPI: untouched */
    CHECK(gicd[GICD_ITARGETSR + 33] == other);
    uint64_t v = 0;
    (void)vgicd_v2_mmio(va, &hw, GICD_ITARGETSR + 32, false, &v, 4); /* SPIs 32..35: a owns none */
    CHECK(v == 0);

    memset(&vgic_stub, 0, sizeof(vgic_stub));
    vgic_stub.gic = 2;
    v2_write(va, GICD_SGIR, (0u << GICD_SGIR_FILTER_SHIFT) | (0xffu << GICD_SGIR_TARGETS_SHIFT) | 3u, 4);
    CHECK(vgic_stub.pending[1] == 1u << 3 && vgic_stub.pending[0] == 0 && vgic_stub.posts == 0);
    v2_write(va, GICD_SGIR, (1u << GICD_SGIR_FILTER_SHIFT) | 4u, 4); /* every other CPU of a: none */
    CHECK(vgic_stub.pending[0] == 0 && vgic_stub.posts == 0);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        CHECK(vgic_stub.phys_sgis[c] == 0); /* Linux's SGIs never reach the physical GIC */
    }
    vb->part->kind = PART_RTOS;
    hyp_vcpu[1].part = va->part;
    v2_write(vb, GICD_SGIR, (0x02u << GICD_SGIR_TARGETS_SHIFT) | 5u, 4); /* to Linux's CPU: refused */
    CHECK(vgic_stub.phys_sgis[1] == 0);
    v2_write(vb, GICD_SGIR, (0x02u << GICD_SGIR_TARGETS_SHIFT) | VBUS_SGI_TO_HYP, 4); /* the doorbell */
    CHECK(vgic_stub.phys_sgis[1] == 1u << VBUS_SGI_TO_HYP);
    v2_write(vb, GICD_SGIR, (2u << GICD_SGIR_FILTER_SHIFT) | 6u, 4); /* to itself */
    CHECK(vgic_stub.phys_sgis[0] == 1u << 6);
    CHECK(gicd[GICD_SGIR] == (uint8_t)pattern(GICD_SGIR)); /* sent, never stored */
    vb->part->kind = 0;
    vgic_stub.gic = 0;
}

/* GICv2 (vgicd_v2_mmio): A is a Linux partition on CPU 1 (its distributor accesses filtered, its SGIs
 * virtual), B the rtos on CPU 0 (its own bank unfiltered, its SGIs physical). What the hostile guest's
 * gic-sgir attack does, checked where the system test cannot look: no write of A's ever sends a physical
 * SGI or marks B's CPU, and no SPI target it writes names a CPU that is not A's. */
static void v2_wr(struct vcpu *v, uint64_t off, uint64_t val, unsigned size)
{
    (void)vgicd_v2_mmio(v, &hw, off, true, &val, size);
}

static uint64_t v2_rd(struct vcpu *v, uint64_t off, unsigned size)
{
    uint64_t val = 0x0123456789abcdefull;
    (void)vgicd_v2_mmio(v, &hw, off, false, &val, size);
    return val;
}

static void test_gicv2(struct vcpu *va, struct vcpu *vb)
{
    vgic_stub.gic = 2;
    va->part->kind = PART_LINUX;
    vb->part->kind = PART_RTOS;
    test_v2_writes_stay_owned(va, 0xffffffffffffffffull);
    test_v2_writes_stay_owned(va, 0x5a5a5a5a5a5a5a5aull);
    test_v2_writes_stay_owned(vb, 0xffffffffffffffffull);
    test_v2_routing_and_sgis(va, vb);
    va->part->kind = vb->part->kind = 0;
    vgic_stub.gic = 0;
}

static void test_gicv2_misuse(struct vcpu *va, struct vcpu *vb)
{
    struct partition *a = va->part, *b = vb->part;
    a->kind = PART_LINUX;
    b->kind = PART_RTOS;
    vgic_stub.gic = 2;
    memset(&vgic_stub.pending, 0, sizeof(vgic_stub.pending));
    memset(&vgic_stub.phys_sgis, 0, sizeof(vgic_stub.phys_sgis));
    vgic_stub.posts = 0;
    /* GICD_SGIR from A: every filter (3 is reserved), target list and INTID. Only those naming CPU 1
     * (interface bit 1: list 0x02, or filter 2) reach A's own CPU, virtually; A has no other CPU. */
    unsigned named = 0;
    for (uint32_t filter = 0; filter < 4; filter++) {
        for (uint32_t list = 0; list < 256; list++) {
            for (uint32_t sgi = 0; sgi < 16; sgi++) {
                vgic_stub.pending[1] = 0;
                v2_wr(va, GICD_SGIR, filter << 24 | list << 16 | sgi, 4);
                bool self = filter == 2 || (filter == 0 && (list & 2u) != 0);
                named += self;
                CHECK(vgic_stub.pending[1] == (self ? 1u << sgi : 0u));
            }
        }
    }
    CHECK(named == 16u * (256u + 128u));
    CHECK(vgic_stub.pending[0] == 0 && vgic_stub.posts == 0);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        CHECK(vgic_stub.phys_sgis[c] == 0);
    }
    /* GICD_SPENDSGIR / CPENDSGIR from A: its own SGIs' pending state, the hypervisor's 13 and 15 never. */
    vgic_stub.pending[1] = 0;
    for (unsigned sgi = 0; sgi < 16; sgi++) {
        v2_wr(va, GICD_SPENDSGIR + sgi, 0x80, 1);
    }
    CHECK(vgic_stub.pending[1] == (ALL_SGIS & ~HYP_SGIS) && vgic_stub.pending[0] == 0);
    CHECK(v2_rd(va, GICD_SPENDSGIR, 4) == 0x01010101u);      /* SGIs 0..3, as from interface 0 */
    CHECK(v2_rd(va, GICD_SPENDSGIR + 12, 4) == 0x00010001u); /* 12 and 14; not 13 and 15 */
    v2_wr(va, GICD_CPENDSGIR + 4, 0xffffffffu, 4);
    CHECK(vgic_stub.pending[1] == (ALL_SGIS & ~HYP_SGIS & ~0xf0u));
    /* GICD_ITARGETSR of every SPI, from A, naming CPU 0's interface (B's) or every interface: A's SPIs
     * (40, 41, 63, 64, 100) name CPU 1, every other byte is untouched. */
    fill_gicd();
    uint8_t before[GICV2_GICD_SIZE];
    memcpy(before, gicd, sizeof(before));
    for (unsigned intid = GIC_SPI_BASE; intid < 1020; intid++) {
        v2_wr(va, GICD_ITARGETSR + intid, intid % 2u ? 0x01u : 0xffu, 1);
    }
    for (unsigned w = GIC_SPI_BASE; w < 1020; w += 4) {
        v2_wr(va, GICD_ITARGETSR + w, 0x01010101u, 4);
    }
    unsigned stray = 0;
    for (unsigned intid = GIC_SPI_BASE; intid < 1020; intid++) {
        uint8_t now = gicd[GICD_ITARGETSR + intid];
        stray += part_owns_irq(a, intid) ? now != 0x02u : now != before[GICD_ITARGETSR + intid];
    }
    CHECK(stray == 0);
    CHECK(v2_rd(va, GICD_ITARGETSR + 40, 1) == 0x02 && v2_rd(va, GICD_ITARGETSR + 42, 1) == 0);
    /* The banked targets (SGIs and PPIs) and CTLR/TYPER: read-only for A. */
    v2_wr(va, GICD_ITARGETSR, 0xffffffffu, 4);
    v2_wr(va, GICD_CTLR, 0, 4);
    CHECK(memcmp(gicd + GICD_ITARGETSR, before + GICD_ITARGETSR, 32) == 0);
    CHECK(memcmp(gicd, before, 0x10) == 0);
    /* B (direct): its SGIs are physical, to its own CPU, and to another only for the V-Bus doorbell. */
    memset(&vgic_stub.phys_sgis, 0, sizeof(vgic_stub.phys_sgis));
    v2_wr(vb, GICD_SGIR, 2u << 24 | 3u, 4);    /* itself */
    v2_wr(vb, GICD_SGIR, 0xffu << 16 | 4u, 4); /* every interface: its own CPU only */
    v2_wr(vb, GICD_SGIR, 1u << 24 | 5u, 4);    /* every other CPU: none */
    v2_wr(vb, GICD_SGIR, 0x02u << 16 | VBUS_SGI_TO_HYP, 4);
    CHECK(vgic_stub.phys_sgis[0] == ((1u << 3) | (1u << 4)));
    CHECK(vgic_stub.phys_sgis[1] == 1u << VBUS_SGI_TO_HYP);
    CHECK(vgic_stub.pending[0] == 0);

    vgic_stub.gic = 0;
    a->kind = b->kind = 0;
}

int main(void)
{
    gicd = map_guarded(GICD_SIZE);
    gicr = map_guarded(GICR_REGION);
    hw = (struct vgicd_hw){(uintptr_t)gicd, (uintptr_t)gicr, HYP_MAX_CPUS};
    struct partition *a = &hyp_part[0], *b = &hyp_part[1];
    struct vcpu *va = &hyp_vcpu[1], *vb = &hyp_vcpu[0];
    setup(a, b, va, vb);
    test_gicd_writes_stay_owned(va, 0xffffffffffffffffull);
    test_gicd_writes_stay_owned(va, 0);
    test_gicd_writes_stay_owned(vb, 0xffffffffffffffffull);
    test_gicd_writes_stay_owned(vb, 0x5a5a5a5a5a5a5a5aull);
    test_gicd_reads_stay_owned(va);
    test_gicd_reads_stay_owned(vb);
    test_gicd_semantics(va);
    test_gicr(va);
    test_hostile_accesses(va, vb);
    test_emulated_spis(va, vb);
    test_several_cpus(va, vb);
    test_gicv2(va, vb);
    test_gicv2_misuse(va, vb);
    UNIT_DONE("hyp vgicd");
}
