/*
 * GICv3 driver. The rtos uses Group 1 non-secure interrupts only, routed to its own CPU. It programs
 * the distributor only for the SPIs it attaches, so inside an rtmux partition it touches nothing that
 * belongs to Linux.
 */
#include "drivers/gicv3.h"

#include "arch/cpu.h"
#include "arm64/gicv3.h"
#include "board.h"
#include "lib/prio.h"

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
        if ((typer >> GICR_TYPER_AFF_SHIFT) == aff) {
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
    *reg32(gicr_rd, GICR_WAKER) &= ~GICR_WAKER_PS;
    while (*reg32(gicr_rd, GICR_WAKER) & GICR_WAKER_CA) {
    }
    /* SGIs and PPIs: all Group 1, all disabled until attached. */
    *reg32(gicr_sgi, GICR_IGROUPR0) = 0xffffffffu;
    *reg32(gicr_sgi, GICR_ICENABLER0) = 0xffffffffu;

    /* Distributor: affinity routing and Group 1 on. Setting bits that are already set is harmless
     * if a hypervisor or an earlier stage did this first. */
    uint32_t ctlr = *reg32(BOARD_GICD_BASE, GICD_CTLR);
    *reg32(BOARD_GICD_BASE, GICD_CTLR) = ctlr | GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS;
    gicd_wait_rwp();

    /* CPU interface: system registers, every priority unmasked, no preemption grouping. */
    ARCH_WRITE_SYSREG(ICC_SRE_EL1, ARCH_READ_SYSREG(ICC_SRE_EL1) | ICC_SRE_SRE);
    arch_isb();
    /* Priorities from RTMUX_PRIO_RTOS_PMR down are the hypervisor's and Linux's on a shared CPU: never
     * ours (rt_irq_attach keeps the rtos's above them). */
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, RTMUX_PRIO_RTOS_PMR);
    ARCH_WRITE_SYSREG(ICC_BPR1_EL1, 0u);
    ARCH_WRITE_SYSREG(ICC_CTLR_EL1, 0u); /* EOImode 0: EOI also deactivates */
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, ICC_IGRPEN1_EN);
    arch_isb();
    return 0;
}

void gic_set_priority(unsigned intid, uint8_t gic_prio)
{
    if (intid < GIC_SPI_BASE) {
        *reg8(gicr_sgi, GICR_IPRIORITYR0 + intid) = gic_prio;
    } else {
        *reg8(BOARD_GICD_BASE, GICD_IPRIORITYR + intid) = gic_prio;
    }
}

void gic_set_trigger(unsigned intid, bool edge)
{
    if (intid < GIC_SGI_COUNT) {
        return; /* SGIs are always edge-triggered */
    }
    uintptr_t base = intid < GIC_SPI_BASE ? gicr_sgi : BOARD_GICD_BASE;
    volatile uint32_t *cfg = reg32(base, GICD_ICFGR + (intid / 16u) * 4u);
    uint32_t bit = 2u << ((intid % 16u) * 2u);
    *cfg = edge ? (*cfg | bit) : (*cfg & ~bit);
}

void gic_enable(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    if (intid < GIC_SPI_BASE) {
        *reg32(gicr_sgi, GICR_ISENABLER0) = bit;
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
    if (intid < GIC_SPI_BASE) {
        *reg32(gicr_sgi, GICR_ICENABLER0) = bit;
    } else {
        *reg32(BOARD_GICD_BASE, GICD_ICENABLER + (intid / 32u) * 4u) = bit;
        gicd_wait_rwp();
    }
}

void gic_send_sgi_self(unsigned sgi)
{
    gic_send_sgi(arch_mpidr_affinity(), sgi);
}

void gic_send_sgi(uint64_t aff, unsigned sgi)
{
    /* TargetList bit Aff0 (Aff0 < 16 on QEMU virt), Aff1..3, INTID. */
    uint64_t v = (1ull << (MPIDR_AFF0(aff) % ICC_SGI1R_TARGET_AFF0_MAX)) |
                 (MPIDR_AFF1(aff) << ICC_SGI1R_AFF1_SHIFT) |
                 ((uint64_t)(sgi % GIC_SGI_COUNT) << ICC_SGI1R_INTID_SHIFT) |
                 (MPIDR_AFF2(aff) << ICC_SGI1R_AFF2_SHIFT) | (MPIDR_AFF3(aff) << ICC_SGI1R_AFF3_SHIFT);
    __asm__ volatile("dsb ishst" : : : "memory");
    ARCH_WRITE_SYSREG(ICC_SGI1R_EL1, v);
    arch_isb();
}

unsigned gic_ack(void)
{
    return (unsigned)(ARCH_READ_SYSREG(ICC_IAR1_EL1) & GIC_INTID_MASK);
}

void gic_eoi(unsigned intid)
{
    ARCH_WRITE_SYSREG(ICC_EOIR1_EL1, intid);
}
