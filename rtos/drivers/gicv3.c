/*
 * GICv3 driver. The rtos uses Group 1 non-secure interrupts only, routed to its own CPU. It programs
 * the distributor only for the SPIs it attaches, so inside an rtmux partition it touches nothing that
 * belongs to Linux.
 */
#include "gicv3.h"

#include "arch/cpu.h"
#include "board.h"

#define GICD_CTLR        0x0000u
#define GICD_CTLR_RWP    (1u << 31)
#define GICD_CTLR_ARE_NS (1u << 4)
#define GICD_CTLR_GRP1NS (1u << 1)
#define GICD_IGROUPR     0x0080u
#define GICD_ISENABLER   0x0100u
#define GICD_ICENABLER   0x0180u
#define GICD_IPRIORITYR  0x0400u
#define GICD_ICFGR       0x0c00u
#define GICD_IROUTER     0x6000u

#define GICR_CTLR          0x0000u
#define GICR_TYPER         0x0008u
#define GICR_TYPER_LAST    (1ull << 4)
#define GICR_WAKER         0x0014u
#define GICR_WAKER_PSLEEP  (1u << 1)
#define GICR_WAKER_CASLEEP (1u << 2)
#define GICR_SGI_OFFSET    0x10000u /* SGI_base frame follows RD_base */

static uintptr_t gicr_rd;  /* this CPU's RD_base */
static uintptr_t gicr_sgi; /* this CPU's SGI_base */

static inline volatile uint32_t *reg32(uintptr_t base, uintptr_t off)
{
    return (volatile uint32_t *)(base + off);
}

static inline volatile uint8_t *reg8(uintptr_t base, uintptr_t off)
{
    return (volatile uint8_t *)(base + off);
}

static void gicd_wait_rwp(void)
{
    while (*reg32(BOARD_GICD_BASE, GICD_CTLR) & GICD_CTLR_RWP) {
    }
}

static int find_redistributor(void)
{
    uint64_t aff = arch_mpidr_affinity();
    for (unsigned i = 0; i < BOARD_GICR_MAX; i++) {
        uintptr_t rd = BOARD_GICR_BASE + i * BOARD_GICR_STRIDE;
        uint64_t typer = *(volatile uint64_t *)(rd + GICR_TYPER);
        if ((typer >> 32) == aff) {
            gicr_rd = rd;
            gicr_sgi = rd + GICR_SGI_OFFSET;
            return 0;
        }
        if (typer & GICR_TYPER_LAST) {
            break;
        }
    }
    return -1;
}

int gic_init(void)
{
    if (find_redistributor() != 0) {
        return -1;
    }
    /* Wake our redistributor: clear ProcessorSleep, wait for ChildrenAsleep to clear. */
    *reg32(gicr_rd, GICR_WAKER) &= ~GICR_WAKER_PSLEEP;
    while (*reg32(gicr_rd, GICR_WAKER) & GICR_WAKER_CASLEEP) {
    }
    /* SGIs and PPIs: all Group 1, all disabled until attached. */
    *reg32(gicr_sgi, GICD_IGROUPR) = 0xffffffffu;
    *reg32(gicr_sgi, GICD_ICENABLER) = 0xffffffffu;

    /* Distributor: affinity routing and Group 1 on. Setting bits that are already set is harmless
     * if a hypervisor or an earlier stage did this first. */
    uint32_t ctlr = *reg32(BOARD_GICD_BASE, GICD_CTLR);
    *reg32(BOARD_GICD_BASE, GICD_CTLR) = ctlr | GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS;
    gicd_wait_rwp();

    /* CPU interface: system registers, every priority unmasked, no preemption grouping. */
    uint64_t sre = ARCH_READ_SYSREG(S3_0_C12_C12_5); /* ICC_SRE_EL1 */
    ARCH_WRITE_SYSREG(S3_0_C12_C12_5, sre | 1u);
    arch_isb();
    ARCH_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu); /* ICC_PMR_EL1 */
    ARCH_WRITE_SYSREG(S3_0_C12_C12_3, 0u);  /* ICC_BPR1_EL1 */
    ARCH_WRITE_SYSREG(S3_0_C12_C12_4, 0u);  /* ICC_CTLR_EL1: EOImode 0, EOI also deactivates */
    ARCH_WRITE_SYSREG(S3_0_C12_C12_7, 1u);  /* ICC_IGRPEN1_EL1 */
    arch_isb();
    return 0;
}

void gic_set_priority(unsigned intid, uint8_t gic_prio)
{
    if (intid < 32) {
        *reg8(gicr_sgi, GICD_IPRIORITYR + intid) = gic_prio;
    } else {
        *reg8(BOARD_GICD_BASE, GICD_IPRIORITYR + intid) = gic_prio;
    }
}

void gic_set_trigger(unsigned intid, bool edge)
{
    if (intid < 16) {
        return; /* SGIs are always edge-triggered */
    }
    uintptr_t base = intid < 32 ? gicr_sgi : BOARD_GICD_BASE;
    volatile uint32_t *cfg = reg32(base, GICD_ICFGR + (intid / 16u) * 4u);
    uint32_t bit = 2u << ((intid % 16u) * 2u);
    *cfg = edge ? (*cfg | bit) : (*cfg & ~bit);
}

void gic_enable(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    if (intid < 32) {
        *reg32(gicr_sgi, GICD_ISENABLER) = bit;
        return;
    }
    /* SPI: Group 1, routed to this CPU, then enabled. */
    volatile uint32_t *grp = reg32(BOARD_GICD_BASE, GICD_IGROUPR + (intid / 32u) * 4u);
    *grp |= bit;
    *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + intid * 8u) = arch_mpidr_affinity();
    *reg32(BOARD_GICD_BASE, GICD_ISENABLER + (intid / 32u) * 4u) = bit;
}

void gic_disable(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    if (intid < 32) {
        *reg32(gicr_sgi, GICD_ICENABLER) = bit;
    } else {
        *reg32(BOARD_GICD_BASE, GICD_ICENABLER + (intid / 32u) * 4u) = bit;
        gicd_wait_rwp();
    }
}

void gic_send_sgi_self(unsigned sgi)
{
    uint64_t aff = arch_mpidr_affinity();
    /* ICC_SGI1R_EL1: TargetList bit Aff0 (Aff0 < 16 on QEMU virt), Aff1..3, INTID in [27:24]. */
    uint64_t v = (1ull << (aff & 0xfu)) | (((aff >> 8) & 0xffu) << 16) | ((uint64_t)(sgi & 0xfu) << 24) |
                 (((aff >> 16) & 0xffu) << 32) | (((aff >> 24) & 0xffu) << 48);
    __asm__ volatile("dsb ishst" : : : "memory");
    ARCH_WRITE_SYSREG(S3_0_C12_C11_5, v);
    arch_isb();
}

unsigned gic_ack(void)
{
    return (unsigned)(ARCH_READ_SYSREG(S3_0_C12_C12_0) & 0xffffffu); /* ICC_IAR1_EL1 */
}

void gic_eoi(unsigned intid)
{
    ARCH_WRITE_SYSREG(S3_0_C12_C12_1, intid); /* ICC_EOIR1_EL1 */
}
