/*
 * GICv2 driver (drivers/intc.h): Group 0 interrupts (signalled as IRQ: FIQEn stays clear), routed to the
 * rtos's CPU through GICD_ITARGETSR, taken through the memory-mapped CPU interface. As on GICv3 it
 * programs the distributor only for what it attaches; inside an rtmux partition the distributor traps
 * to the hypervisor's filter and the CPU interface is the physical one, mapped at the board's address.
 *
 * SGI targets: GICD_SGIR names CPU interfaces, not affinities. On the boards rtmux supports with a
 * GICv2 (QEMU virt, the Raspberry Pi 4's GIC-400: one cluster of at most 8 CPUs) CPU interface n is the
 * CPU with Aff0 n, which the hypervisor checks at boot against each CPU's GICD_ITARGETSR0.
 */
#include <stddef.h>

#include "drivers/intc_driver.h"

#include "arch/cpu.h"
#include "arm64/gicv2.h"
#include "board.h"
#include "lib/prio.h"

static inline volatile uint32_t *gicd32(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

static inline volatile uint8_t *gicd8(uintptr_t off)
{
    return (volatile uint8_t *)(BOARD_GICD_BASE + off);
}

static inline volatile uint32_t *gicc32(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_GICC_BASE + off);
}

/* This CPU's interface bit: GICD_ITARGETSR0..7 are banked, and each reads as the reading CPU's own. */
static uint8_t self_target;

static const char *v2_init(void)
{
    self_target = *gicd8(GICD_ITARGETSR);
    /* A GIC with one CPU interface implements no targets (GICD_ITARGETSR RAZ/WI): interface 0. */
    if (self_target == 0 && ((*gicd32(GICD_TYPER) >> GICD_TYPER_CPUS_SHIFT) & GICD_TYPER_CPUS_MASK) == 0) {
        self_target = 1;
    }
    if (self_target == 0) {
        return "the GICv2 distributor names no CPU interface for this CPU (GICD_ITARGETSR0 reads 0)";
    }
    /* SGIs and PPIs (the banked first word): Group 0, disabled until attached. */
    *gicd32(GICD_ICENABLER) = 0xffffffffu;
    *gicd32(GICD_IGROUPR) = 0;
    /* Setting what a hypervisor or an earlier stage set already is harmless. */
    *gicd32(GICD_CTLR) = *gicd32(GICD_CTLR) | GICD_CTLR_ENABLE_GRP0;
    /* Priorities from RTMUX_PRIO_RTOS_PMR down are the hypervisor's and Linux's on a shared CPU: never
     * ours (rt_irq_attach keeps the rtos's above them). No preemption grouping; EOImode 0 (EOIR also
     * deactivates). */
    *gicc32(GICC_PMR) = RTMUX_PRIO_RTOS_PMR;
    *gicc32(GICC_BPR) = 0;
    *gicc32(GICC_CTLR) = GICC_CTLR_ENABLE_GRP0;
    return NULL;
}

static void v2_set_priority(unsigned intid, uint8_t prio)
{
    *gicd8(GICD_IPRIORITYR + intid) = prio;
}

static void v2_set_trigger(unsigned intid, bool edge)
{
    if (intid < GIC_SGI_COUNT) {
        return; /* SGIs are always edge-triggered */
    }
    volatile uint32_t *cfg = gicd32(GICD_ICFGR + (intid / 16u) * 4u);
    uint32_t bit = GIC_ICFGR_EDGE(intid);
    *cfg = edge ? (*cfg | bit) : (*cfg & ~bit);
}

static void v2_enable(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    if (intid >= GIC_SPI_BASE) {
        /* Group 0, to this CPU only, then enabled. */
        *gicd32(GICD_IGROUPR + (intid / 32u) * 4u) &= ~bit;
        *gicd8(GICD_ITARGETSR + intid) = self_target;
    }
    *gicd32(GICD_ISENABLER + (intid / 32u) * 4u) = bit;
}

static void v2_disable(unsigned intid)
{
    /* GICv2 has no RWP: the disable takes effect for interrupts the CPU interface has not yet been
     * offered, which is all rt_irq_disable promises. */
    *gicd32(GICD_ICENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void sgir_write(uint32_t v)
{
    __asm__ volatile("dsb ishst" : : : "memory");
    *gicd32(GICD_SGIR) = v;
}

static void v2_send_sgi(uint64_t aff, unsigned sgi)
{
    uint32_t target = 1u << (MPIDR_AFF0(aff) % GICV2_MAX_CPUS);
    sgir_write((GICD_SGIR_FILTER_LIST << GICD_SGIR_FILTER_SHIFT) | (target << GICD_SGIR_TARGETS_SHIFT) |
               (sgi & GICD_SGIR_INTID_MASK));
}

static void v2_send_sgi_self(unsigned sgi)
{
    sgir_write((GICD_SGIR_FILTER_SELF << GICD_SGIR_FILTER_SHIFT) | (sgi & GICD_SGIR_INTID_MASK));
}

static void v2_cpu_ppi_init(unsigned intid, uint8_t prio)
{
    *gicd32(GICD_IGROUPR) &= ~(1u << intid);
    *gicd8(GICD_IPRIORITYR + intid) = prio;
    *gicd32(GICD_ISENABLER) = 1u << intid;
    *gicd32(GICD_CTLR) = *gicd32(GICD_CTLR) | GICD_CTLR_ENABLE_GRP0;
    *gicc32(GICC_PMR) = 0xffu;
    *gicc32(GICC_CTLR) = GICC_CTLR_ENABLE_GRP0;
}

const struct intc_driver intc_gicv2 = {
    .init = v2_init,
    .set_priority = v2_set_priority,
    .set_trigger = v2_set_trigger,
    .enable = v2_enable,
    .disable = v2_disable,
    .send_sgi = v2_send_sgi,
    .send_sgi_self = v2_send_sgi_self,
    .cpuif = (volatile uint32_t *)BOARD_GICC_BASE,
    .cpu_ppi_init = v2_cpu_ppi_init,
};
