/*
 * The physical GICv3: what the hypervisor itself programs. Partitions reach the distributor only
 * through the filter in arch/arm64/vgicd.c.
 */
#include "drivers/gicv3.h"

#include "arm64/gicv3.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "hyp/limits.h"

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

static uintptr_t gicr_rd(unsigned cpu)
{
    return BOARD_GICR_BASE + cpu * BOARD_GICR_STRIDE;
}

static void dist_wait_rwp(void)
{
    while (*gicd32(GICD_CTLR) & GICD_CTLR_RWP) {
    }
}

void gicv3_dist_init(void)
{
    uint32_t lines = ((*gicd32(GICD_TYPER) & GICD_TYPER_LINES) + 1u) * 32u;
    *gicd32(GICD_CTLR) = 0;
    dist_wait_rwp();
    for (uint32_t i = GIC_SPI_BASE; i < lines && i < HYP_MAX_INTID; i += 32) {
        *gicd32(GICD_ICENABLER + i / 8u) = 0xffffffffu;
        *gicd32(GICD_IGROUPR + i / 8u) = 0xffffffffu;
    }
    *gicd32(GICD_CTLR) = GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS;
    dist_wait_rwp();
}

void gicv3_spi_route(unsigned intid, uint64_t aff, uint8_t prio)
{
    *(volatile uint8_t *)(BOARD_GICD_BASE + GICD_IPRIORITYR + intid) = prio;
    *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + intid * 8u) = aff;
    *gicd32(GICD_ISENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

void gicv3_redist_wake(unsigned cpu)
{
    volatile uint32_t *waker = (volatile uint32_t *)(gicr_rd(cpu) + GICR_WAKER);
    *waker &= ~GICR_WAKER_PS;
    while (*waker & GICR_WAKER_CA) {
    }
    *(volatile uint32_t *)(gicr_rd(cpu) + GICR_SGI_OFFSET + GICR_IGROUPR0) = 0xffffffffu;
}

void gicv3_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio)
{
    uintptr_t sgi = gicr_rd(cpu) + GICR_SGI_OFFSET;
    *(volatile uint8_t *)(sgi + GICR_IPRIORITYR0 + intid) = prio;
    *(volatile uint32_t *)(sgi + GICR_ISENABLER0) = 1u << intid;
}

static volatile uint32_t *gicr_sgi32(unsigned cpu, uint64_t off)
{
    return (volatile uint32_t *)(gicr_rd(cpu) + GICR_SGI_OFFSET + off);
}

void gicv3_spi_quiesce(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    uint64_t word = (intid / 32u) * 4u;
    *gicd32(GICD_ICENABLER + word) = bit;
    dist_wait_rwp();
    *gicd32(GICD_ICPENDR + word) = bit;
    *gicd32(GICD_ICACTIVER + word) = bit;
}

void gicv3_spi_place(unsigned intid, uint64_t aff)
{
    *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + intid * 8u) = aff;
}

void gicv3_ppi_quiesce(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ICENABLER0) = mask;
    while (*(volatile uint32_t *)(gicr_rd(cpu) + GICR_CTLR) & GICR_CTLR_RWP) {
    }
    *gicr_sgi32(cpu, GICR_ICPENDR0) = mask;
    *gicr_sgi32(cpu, GICR_ICACTIVER0) = mask;
}

void gicv3_ppi_disable(unsigned cpu, unsigned intid)
{
    *gicr_sgi32(cpu, GICR_ICENABLER0) = 1u << intid;
}

void gicv3_spi_disable(unsigned intid)
{
    *gicd32(GICD_ICENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

bool gicv3_irq_is_level(unsigned cpu, unsigned intid)
{
    uint32_t cfg = intid < GIC_SPI_BASE ? *gicr_sgi32(cpu, GICR_ICFGR0 + (intid / 16u) * 4u)
                                        : *gicd32(GICD_ICFGR + (intid / 16u) * 4u);
    return (cfg & GIC_ICFGR_EDGE(intid)) == 0;
}

bool gicv3_irq_is_pending(unsigned cpu, unsigned intid)
{
    uint32_t pend =
        intid < GIC_SPI_BASE ? *gicr_sgi32(cpu, GICR_ISPENDR0) : *gicd32(GICD_ISPENDR + (intid / 32u) * 4u);
    return ((pend >> (intid % 32u)) & 1u) != 0;
}

uint8_t gicv3_irq_priority(unsigned cpu, unsigned intid)
{
    uintptr_t reg = intid < GIC_SPI_BASE ? gicr_rd(cpu) + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + intid
                                         : BOARD_GICD_BASE + GICD_IPRIORITYR + intid;
    return *(volatile uint8_t *)reg;
}

void gicv3_spi_set_pending(unsigned intid)
{
    *gicd32(GICD_ISPENDR + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

void gicv3_spi_set_priority(unsigned intid, uint8_t prio)
{
    *(volatile uint8_t *)(BOARD_GICD_BASE + GICD_IPRIORITYR + intid) = prio;
}

void gicv3_private_set_pending(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ISPENDR0) = mask;
}

void gicv3_private_enable(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ISENABLER0) = mask;
}

void gicv3_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio)
{
    *(volatile uint8_t *)(gicr_rd(cpu) + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + intid) = prio;
}

void gicv3_send_sgi(uint64_t aff, unsigned sgi)
{
    uint64_t v = (1ull << (MPIDR_AFF0(aff) % ICC_SGI1R_TARGET_AFF0_MAX)) |
                 (MPIDR_AFF1(aff) << ICC_SGI1R_AFF1_SHIFT) |
                 ((uint64_t)(sgi % GIC_SGI_COUNT) << ICC_SGI1R_INTID_SHIFT) |
                 (MPIDR_AFF2(aff) << ICC_SGI1R_AFF2_SHIFT) | (MPIDR_AFF3(aff) << ICC_SGI1R_AFF3_SHIFT);
    __asm__ volatile("dsb ishst" : : : "memory");
    ARCH_WRITE_SYSREG(ICC_SGI1R_EL1, v);
    __asm__ volatile("isb" : : : "memory");
}
