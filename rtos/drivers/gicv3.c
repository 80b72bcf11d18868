/*
 * GICv3 driver (drivers/intc.h): Group 1 non-secure interrupts, routed to the rtos's CPU with affinity
 * routing, taken through the system-register CPU interface. It programs the distributor only for the
 * SPIs it attaches, so inside an rtmux partition it touches nothing that belongs to Linux.
 */
#include <stddef.h>

#include "drivers/intc_driver.h"

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

static int find_redistributor(uint64_t aff, uintptr_t *rd_out)
{
    for (unsigned i = 0; i < BOARD_GICR_MAX; i++) {
        uintptr_t rd = BOARD_GICR_BASE + i * BOARD_GICR_STRIDE;
        uint64_t typer = *(volatile uint64_t *)(rd + GICR_TYPER);
        if ((typer >> GICR_TYPER_AFF_SHIFT) == aff) {
            *rd_out = rd;
            return 0;
        }
        if (typer & GICR_TYPER_LAST) {
            break;
        }
    }
    return -1;
}

/* Clears ProcessorSleep and waits for ChildrenAsleep to clear. */
static void redist_wake(uintptr_t rd)
{
    *reg32(rd, GICR_WAKER) &= ~GICR_WAKER_PS;
    while (*reg32(rd, GICR_WAKER) & GICR_WAKER_CA) {
    }
}

static const char *v3_init(void)
{
    if (find_redistributor(arch_mpidr_affinity(), &gicr_rd) != 0) {
        return "no GICv3 redistributor matches this CPU's MPIDR affinity";
    }
    gicr_sgi = gicr_rd + GICR_SGI_OFFSET;
    redist_wake(gicr_rd);
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
    return NULL;
}

static void v3_set_priority(unsigned intid, uint8_t gic_prio)
{
    if (intid < GIC_SPI_BASE) {
        *reg8(gicr_sgi, GICR_IPRIORITYR0 + intid) = gic_prio;
    } else {
        *reg8(BOARD_GICD_BASE, GICD_IPRIORITYR + intid) = gic_prio;
    }
}

static void v3_set_trigger(unsigned intid, bool edge)
{
    if (intid < GIC_SGI_COUNT) {
        return; /* SGIs are always edge-triggered */
    }
    uintptr_t base = intid < GIC_SPI_BASE ? gicr_sgi : BOARD_GICD_BASE;
    volatile uint32_t *cfg = reg32(base, GICD_ICFGR + (intid / 16u) * 4u);
    uint32_t bit = 2u << ((intid % 16u) * 2u);
    *cfg = edge ? (*cfg | bit) : (*cfg & ~bit);
}

static void v3_enable(unsigned intid)
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

static void v3_disable(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    if (intid < GIC_SPI_BASE) {
        *reg32(gicr_sgi, GICR_ICENABLER0) = bit;
    } else {
        *reg32(BOARD_GICD_BASE, GICD_ICENABLER + (intid / 32u) * 4u) = bit;
        gicd_wait_rwp();
    }
}

static void v3_send_sgi(uint64_t aff, unsigned sgi)
{
    /* TargetList bit Aff0 (Aff0 < 16 on QEMU virt), Aff1..3, INTID. */
    uint64_t v = icc_sgi1r(aff, sgi);
    __asm__ volatile("dsb ishst" : : : "memory");
    ARCH_WRITE_SYSREG(ICC_SGI1R_EL1, v);
    arch_isb();
}

static void v3_send_sgi_self(unsigned sgi)
{
    v3_send_sgi(arch_mpidr_affinity(), sgi);
}

static void v3_cpu_ppi_init(unsigned intid, uint8_t prio)
{
    uintptr_t rd = 0;
    if (find_redistributor(arch_mpidr_affinity(), &rd) == 0) {
        uintptr_t sgi = rd + GICR_SGI_OFFSET;
        redist_wake(rd);
        *reg32(sgi, GICR_IGROUPR0) |= 1u << intid;
        *reg8(sgi, GICR_IPRIORITYR0 + intid) = prio;
        *reg32(sgi, GICR_ISENABLER0) = 1u << intid;
    }
    ARCH_WRITE_SYSREG(ICC_SRE_EL1, ARCH_READ_SYSREG(ICC_SRE_EL1) | ICC_SRE_SRE);
    arch_isb();
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, ICC_PMR_UNMASKED);
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, ICC_IGRPEN1_EN);
    arch_isb();
}

const struct intc_driver intc_gicv3 = {
    .init = v3_init,
    .set_priority = v3_set_priority,
    .set_trigger = v3_set_trigger,
    .enable = v3_enable,
    .disable = v3_disable,
    .send_sgi = v3_send_sgi,
    .send_sgi_self = v3_send_sgi_self,
    .cpuif = NULL,
    .cpu_ppi_init = v3_cpu_ppi_init,
};
