/*
 * The physical GICv3 (drivers/gic.h): affinity routing, Group 1 non-secure, the system-register CPU
 * interface, and the virtual CPU interface's ICH_* registers. Partitions reach the distributor only
 * through the filter in arch/arm64/vgicd.c.
 */
#include "arm64/gicv3.h"
#include "arch/cpu.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "drivers/gic_driver.h"
#include "hyp/limits.h"

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

static uintptr_t gicr_rd(unsigned cpu)
{
    return BOARD_GICR_BASE + cpu * BOARD_GICR_STRIDE;
}

static volatile uint32_t *gicr_sgi32(unsigned cpu, uint64_t off)
{
    return (volatile uint32_t *)(gicr_rd(cpu) + GICR_SGI_OFFSET + off);
}

static void dist_wait_rwp(void)
{
    while (*gicd32(GICD_CTLR) & GICD_CTLR_RWP) {
    }
}

static void v3_dist_init(void)
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

static void v3_spi_set_priority(unsigned intid, uint8_t prio)
{
    *(volatile uint8_t *)(BOARD_GICD_BASE + GICD_IPRIORITYR + intid) = prio;
}

static void v3_spi_place(unsigned intid, uint64_t aff)
{
    *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + intid * 8u) = aff;
}

static void v3_spi_route(unsigned intid, uint64_t aff, uint8_t prio)
{
    v3_spi_set_priority(intid, prio);
    v3_spi_place(intid, aff);
    *gicd32(GICD_ISENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v3_spi_quiesce(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    uint64_t word = (intid / 32u) * 4u;
    *gicd32(GICD_ICENABLER + word) = bit;
    dist_wait_rwp();
    *gicd32(GICD_ICPENDR + word) = bit;
    *gicd32(GICD_ICACTIVER + word) = bit;
}

static void v3_spi_disable(unsigned intid)
{
    *gicd32(GICD_ICENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v3_spi_set_pending(unsigned intid)
{
    *gicd32(GICD_ISPENDR + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v3_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio)
{
    *(volatile uint8_t *)(gicr_rd(cpu) + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + intid) = prio;
}

static void v3_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio)
{
    v3_private_set_priority(cpu, intid, prio);
    *gicr_sgi32(cpu, GICR_ISENABLER0) = 1u << intid;
}

static void v3_ppi_quiesce(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ICENABLER0) = mask;
    while (*(volatile uint32_t *)(gicr_rd(cpu) + GICR_CTLR) & GICR_CTLR_RWP) {
    }
    *gicr_sgi32(cpu, GICR_ICPENDR0) = mask;
    *gicr_sgi32(cpu, GICR_ICACTIVER0) = mask;
}

static void v3_ppi_disable(unsigned cpu, unsigned intid)
{
    *gicr_sgi32(cpu, GICR_ICENABLER0) = 1u << intid;
}

static void v3_private_set_pending(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ISPENDR0) = mask;
}

static void v3_private_enable(unsigned cpu, uint32_t mask)
{
    *gicr_sgi32(cpu, GICR_ISENABLER0) = mask;
}

static bool v3_irq_is_level(unsigned cpu, unsigned intid)
{
    uint32_t cfg = intid < GIC_SPI_BASE ? *gicr_sgi32(cpu, GICR_ICFGR0 + (intid / 16u) * 4u)
                                        : *gicd32(GICD_ICFGR + (intid / 16u) * 4u);
    return (cfg & GIC_ICFGR_EDGE(intid)) == 0;
}

static bool v3_irq_is_pending(unsigned cpu, unsigned intid)
{
    uint32_t pend =
        intid < GIC_SPI_BASE ? *gicr_sgi32(cpu, GICR_ISPENDR0) : *gicd32(GICD_ISPENDR + (intid / 32u) * 4u);
    return ((pend >> (intid % 32u)) & 1u) != 0;
}

static uint8_t v3_irq_priority(unsigned cpu, unsigned intid)
{
    uintptr_t reg = intid < GIC_SPI_BASE ? gicr_rd(cpu) + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + intid
                                         : BOARD_GICD_BASE + GICD_IPRIORITYR + intid;
    return *(volatile uint8_t *)reg;
}

static void v3_send_sgi(uint64_t aff, unsigned sgi)
{
    uint64_t v = icc_sgi1r(aff, sgi);
    __asm__ volatile("dsb ishst" : : : "memory");
    ARCH_WRITE_SYSREG(ICC_SGI1R_EL1, v);
    arch_isb();
}

static void v3_cpu_init(unsigned cpu)
{
    /* EL1 may use the system-register interface (both the physical and the virtual one); so may EL2. */
    ARCH_WRITE_SYSREG(ICC_SRE_EL2, ICC_SRE_SRE | ICC_SRE_ENABLE);
    arch_isb();
    ARCH_WRITE_SYSREG(ICC_SRE_EL1, ARCH_READ_SYSREG(ICC_SRE_EL1) | ICC_SRE_SRE);
    arch_isb();
    volatile uint32_t *waker = (volatile uint32_t *)(gicr_rd(cpu) + GICR_WAKER);
    *waker &= ~GICR_WAKER_PS;
    while (*waker & GICR_WAKER_CA) {
    }
    *gicr_sgi32(cpu, GICR_IGROUPR0) = 0xffffffffu;
}

static void v3_hyp_cpuif(void)
{
    ARCH_WRITE_SYSREG(ICC_CTLR_EL1, ICC_CTLR_EOIMODE);
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, ICC_PMR_UNMASKED);
    ARCH_WRITE_SYSREG(ICC_BPR1_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, ICC_IGRPEN1_EN);
    arch_isb();
}

static uint32_t v3_ack(void)
{
    return (uint32_t)(ARCH_READ_SYSREG(ICC_IAR1_EL1) & GIC_INTID_MASK);
}

static void v3_drop(uint32_t ack)
{
    ARCH_WRITE_SYSREG(ICC_EOIR1_EL1, (uint64_t)ack);
}

static void v3_deactivate(uint32_t ack)
{
    ARCH_WRITE_SYSREG(ICC_DIR_EL1, (uint64_t)ack);
}

static unsigned v3_peek(void)
{
    return (unsigned)(ARCH_READ_SYSREG(ICC_HPPIR1_EL1) & GIC_INTID_MASK);
}

static void v3_cpuif_save(struct gic_cpuif_state *s)
{
    s->pmr = ARCH_READ_SYSREG(ICC_PMR_EL1);
    s->ctlr = ARCH_READ_SYSREG(ICC_CTLR_EL1);
    s->bpr = ARCH_READ_SYSREG(ICC_BPR1_EL1);
    s->grpen = ARCH_READ_SYSREG(ICC_IGRPEN1_EL1);
}

static void v3_cpuif_restore(const struct gic_cpuif_state *s)
{
    ARCH_WRITE_SYSREG(ICC_CTLR_EL1, s->ctlr);
    ARCH_WRITE_SYSREG(ICC_BPR1_EL1, s->bpr);
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, s->grpen);
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, s->pmr);
}

static void v3_cpuif_reset(void)
{
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_AP1R0_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_BPR1_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_CTLR_EL1, 0);
}

static unsigned v3_lr_count(void)
{
    unsigned nlr = (unsigned)(ARCH_READ_SYSREG(ICH_VTR_EL2) & ICH_VTR_LISTREGS) + 1u;
    return nlr > ICH_LR_MAX ? ICH_LR_MAX : nlr; /* QEMU implements 4 */
}

static uint64_t v3_lr_read(unsigned i)
{
    return ich_lr_read(i);
}

static void v3_lr_write(unsigned i, uint64_t val)
{
    ich_lr_write(i, val);
}

static uint64_t v3_lr_empty(void)
{
    return ARCH_READ_SYSREG(ICH_ELRSR_EL2);
}

static uint64_t v3_lr_eoi_done(void)
{
    return ARCH_READ_SYSREG(ICH_EISR_EL2);
}

static uint64_t v3_vif_hcr(void)
{
    return ARCH_READ_SYSREG(ICH_HCR_EL2);
}

static void v3_vif_set_hcr(uint64_t hcr)
{
    ARCH_WRITE_SYSREG(ICH_HCR_EL2, hcr);
}

static uint64_t v3_vif_misr(void)
{
    return ARCH_READ_SYSREG(ICH_MISR_EL2);
}

static bool v3_vif_traps_ack(void)
{
    return true;
}

/* ICH_AP1R0_EL2 holds every active priority while the virtual interface implements at most 5 priority
 * bits (QEMU's; v3_vif_reset makes the same assumption). */
static bool v3_vif_guest_takes(uint8_t prio)
{
    uint64_t vmcr = ARCH_READ_SYSREG(ICH_VMCR_EL2);
    return (vmcr & ICH_VMCR_VENG1) != 0 && ((vmcr >> ICH_VMCR_VPMR_SHIFT) & 0xffu) > prio &&
           ARCH_READ_SYSREG(ICH_AP1R0_EL2) == 0;
}

static void v3_vif_reset(void)
{
    for (unsigned i = 0; i < v3_lr_count(); i++) {
        ich_lr_write(i, 0);
    }
    ARCH_WRITE_SYSREG(ICH_AP0R0_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_AP1R0_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_VMCR_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_HCR_EL2, ICH_HCR_EN);
    arch_isb();
}

static bool v3_guest_cpuif(bool trapping, uint64_t *ipa, uint64_t *pa, uint64_t *size)
{
    (void)trapping;
    (void)ipa;
    (void)pa;
    (void)size;
    return false;
}

const struct gic_driver gic_v3_driver = {
    .version = 3,
    .dist_size = GICD_SIZE,
    .dist_init = v3_dist_init,
    .spi_route = v3_spi_route,
    .spi_place = v3_spi_place,
    .spi_quiesce = v3_spi_quiesce,
    .spi_disable = v3_spi_disable,
    .spi_set_pending = v3_spi_set_pending,
    .spi_set_priority = v3_spi_set_priority,
    .ppi_enable = v3_ppi_enable,
    .ppi_quiesce = v3_ppi_quiesce,
    .ppi_disable = v3_ppi_disable,
    .private_set_pending = v3_private_set_pending,
    .private_enable = v3_private_enable,
    .private_set_priority = v3_private_set_priority,
    .irq_is_level = v3_irq_is_level,
    .irq_is_pending = v3_irq_is_pending,
    .irq_priority = v3_irq_priority,
    .send_sgi = v3_send_sgi,
    .cpu_init = v3_cpu_init,
    .hyp_cpuif = v3_hyp_cpuif,
    .ack = v3_ack,
    .drop = v3_drop,
    .deactivate = v3_deactivate,
    .peek = v3_peek,
    .cpuif_save = v3_cpuif_save,
    .cpuif_restore = v3_cpuif_restore,
    .cpuif_reset = v3_cpuif_reset,
    .lr_count = v3_lr_count,
    .lr_read = v3_lr_read,
    .lr_write = v3_lr_write,
    .lr_empty = v3_lr_empty,
    .lr_eoi_done = v3_lr_eoi_done,
    .vif_hcr = v3_vif_hcr,
    .vif_set_hcr = v3_vif_set_hcr,
    .vif_misr = v3_vif_misr,
    .vif_traps_ack = v3_vif_traps_ack,
    .vif_guest_takes = v3_vif_guest_takes,
    .vif_reset = v3_vif_reset,
    .guest_cpuif = v3_guest_cpuif,
};
