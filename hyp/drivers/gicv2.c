/*
 * The physical GICv2 with the virtualization extensions (drivers/gic.h): every interrupt in Group 0,
 * which a GIC without the Security Extensions signals as IRQ (FIQEn stays clear) and which Linux's GICv2
 * driver also uses; the memory-mapped CPU interface (GICC) for the hypervisor's own interrupts and the
 * virtual interface control (GICH) for the guests' list registers. A CPU's SGI and PPI registers are
 * banked in the distributor: each CPU reaches its own only (the `cpu` arguments name the caller).
 *
 * CPU interface numbers: interface n is the CPU with Aff0 n (drivers/gic.h); gic_cpu_init checks it
 * against the CPU's own GICD_ITARGETSR0, which reads as its interface's bit.
 */
#include "arm64/gicv2.h"
#include "arch/cpu.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "drivers/gic_driver.h"
#include "hyp/limits.h"
#include "hyp/printf.h"

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

static volatile uint8_t *gicd8(uint64_t off)
{
    return (volatile uint8_t *)(BOARD_GICD_BASE + off);
}

static volatile uint32_t *gicc32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICC_BASE + off);
}

static volatile uint32_t *gich32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICH_BASE + off);
}

/* The GICD_ITARGETSR / GICD_SGIR bit of the CPU with affinity aff. */
static uint8_t target_of(uint64_t aff)
{
    return (uint8_t)(1u << (MPIDR_AFF0(aff) % GICV2_MAX_CPUS));
}

static void v2_dist_init(void)
{
    uint32_t lines = ((*gicd32(GICD_TYPER) & GICD_TYPER_LINES) + 1u) * 32u;
    *gicd32(GICD_CTLR) = 0;
    for (uint32_t i = GIC_SPI_BASE; i < lines && i < HYP_MAX_INTID; i += 32) {
        *gicd32(GICD_ICENABLER + i / 8u) = 0xffffffffu;
        *gicd32(GICD_IGROUPR + i / 8u) = 0;
    }
    *gicd32(GICD_CTLR) = GICD_CTLR_ENABLE_GRP0;
}

static void v2_spi_set_priority(unsigned intid, uint8_t prio)
{
    *gicd8(GICD_IPRIORITYR + intid) = prio;
}

static void v2_spi_place(unsigned intid, uint64_t aff)
{
    *gicd8(GICD_ITARGETSR + intid) = target_of(aff);
}

static void v2_spi_route(unsigned intid, uint64_t aff, uint8_t prio)
{
    v2_spi_set_priority(intid, prio);
    v2_spi_place(intid, aff);
    *gicd32(GICD_ISENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v2_spi_quiesce(unsigned intid)
{
    uint32_t bit = 1u << (intid % 32u);
    uint64_t word = (intid / 32u) * 4u;
    *gicd32(GICD_ICENABLER + word) = bit;
    *gicd32(GICD_ICPENDR + word) = bit;
    *gicd32(GICD_ICACTIVER + word) = bit;
}

static void v2_spi_disable(unsigned intid)
{
    *gicd32(GICD_ICENABLER + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v2_spi_set_pending(unsigned intid)
{
    *gicd32(GICD_ISPENDR + (intid / 32u) * 4u) = 1u << (intid % 32u);
}

static void v2_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio)
{
    (void)cpu;
    *gicd8(GICD_IPRIORITYR + intid) = prio;
}

static void v2_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio)
{
    v2_private_set_priority(cpu, intid, prio);
    *gicd32(GICD_ISENABLER) = 1u << intid;
}

/* Every SGI's pending state, from whichever CPU sent it: its byte in GICD_CPENDSGIR (ICPENDR0's SGI
 * bits are read-only on a GICv2). */
static void sgis_clear_pending(uint32_t mask)
{
    for (unsigned sgi = 0; sgi < GIC_SGI_COUNT; sgi++) {
        if ((mask >> sgi) & 1u) {
            *gicd8(GICD_CPENDSGIR + sgi) = 0xffu;
        }
    }
}

static void v2_ppi_quiesce(unsigned cpu, uint32_t mask)
{
    (void)cpu;
    *gicd32(GICD_ICENABLER) = mask;
    *gicd32(GICD_ICPENDR) = mask;
    sgis_clear_pending(mask);
    *gicd32(GICD_ICACTIVER) = mask;
}

static void v2_ppi_disable(unsigned cpu, unsigned intid)
{
    (void)cpu;
    *gicd32(GICD_ICENABLER) = 1u << intid;
}

static void v2_private_set_pending(unsigned cpu, uint32_t mask)
{
    (void)cpu;
    uint8_t self = *gicd8(GICD_ITARGETSR); /* this CPU's interface, as the SGI's source */
    for (unsigned sgi = 0; sgi < GIC_SGI_COUNT; sgi++) {
        if ((mask >> sgi) & 1u) {
            *gicd8(GICD_SPENDSGIR + sgi) = self != 0 ? self : 1u;
        }
    }
    *gicd32(GICD_ISPENDR) = mask & ~((1u << GIC_SGI_COUNT) - 1u);
}

static void v2_private_enable(unsigned cpu, uint32_t mask)
{
    (void)cpu;
    *gicd32(GICD_ISENABLER) = mask;
}

static bool v2_irq_is_level(unsigned cpu, unsigned intid)
{
    (void)cpu;
    return (*gicd32(GICD_ICFGR + (intid / 16u) * 4u) & GIC_ICFGR_EDGE(intid)) == 0;
}

static bool v2_irq_is_pending(unsigned cpu, unsigned intid)
{
    (void)cpu;
    return ((*gicd32(GICD_ISPENDR + (intid / 32u) * 4u) >> (intid % 32u)) & 1u) != 0;
}

static uint8_t v2_irq_priority(unsigned cpu, unsigned intid)
{
    (void)cpu;
    return *gicd8(GICD_IPRIORITYR + intid);
}

static void v2_send_sgi(uint64_t aff, unsigned sgi)
{
    __asm__ volatile("dsb ishst" : : : "memory");
    *gicd32(GICD_SGIR) = (GICD_SGIR_FILTER_LIST << GICD_SGIR_FILTER_SHIFT) |
                         ((uint32_t)target_of(aff) << GICD_SGIR_TARGETS_SHIFT) | (sgi & GICD_SGIR_INTID_MASK);
}

static void v2_cpu_init(unsigned cpu)
{
    uint64_t aff = arch_mpidr_affinity();
    uint8_t self = *gicd8(GICD_ITARGETSR);
    unsigned interfaces = ((*gicd32(GICD_TYPER) >> GICD_TYPER_CPUS_SHIFT) & GICD_TYPER_CPUS_MASK) + 1u;
    /* One CPU interface implements no targets (RAZ): it is interface 0. */
    if ((self != 0 || interfaces != 1u) && self != target_of(aff)) {
        hyp_panic("GICv2: CPU %u (MPIDR affinity 0x%lx) is CPU interface mask 0x%x, not its Aff0's: rtmux "
                  "cannot address its SGIs and SPIs",
                  cpu, (unsigned long)aff, (unsigned)self);
    }
    if (MPIDR_AFF0(aff) >= GICV2_MAX_CPUS || aff > MPIDR_AFF0(aff)) {
        hyp_panic("GICv2: CPU %u has MPIDR affinity 0x%lx: a GICv2 serves Aff0 0..7 of one cluster", cpu,
                  (unsigned long)aff);
    }
    *gicd32(GICD_IGROUPR) = 0; /* this CPU's SGIs and PPIs (banked): Group 0 */
}

static void v2_hyp_cpuif(void)
{
    *gicc32(GICC_PMR) = 0xffu;
    *gicc32(GICC_BPR) = 0;
    *gicc32(GICC_CTLR) = GICC_CTLR_ENABLE_GRP0 | GICC_CTLR_EOIMODE;
    arch_isb();
}

static uint32_t v2_ack(void)
{
    return *gicc32(GICC_IAR);
}

static void v2_drop(uint32_t ack)
{
    *gicc32(GICC_EOIR) = ack;
}

static void v2_deactivate(uint32_t ack)
{
    *gicc32(GICC_DIR) = ack;
}

static unsigned v2_peek(void)
{
    return *gicc32(GICC_HPPIR) & GICC_IAR_INTID;
}

static void v2_cpuif_save(struct gic_cpuif_state *s)
{
    s->pmr = *gicc32(GICC_PMR);
    s->ctlr = *gicc32(GICC_CTLR);
    s->bpr = *gicc32(GICC_BPR);
    s->grpen = 0; /* the group enables are in GICC_CTLR */
}

static void v2_cpuif_restore(const struct gic_cpuif_state *s)
{
    *gicc32(GICC_BPR) = (uint32_t)s->bpr;
    *gicc32(GICC_CTLR) = (uint32_t)s->ctlr;
    *gicc32(GICC_PMR) = (uint32_t)s->pmr;
}

static void v2_cpuif_reset(void)
{
    *gicc32(GICC_CTLR) = 0;
    *gicc32(GICC_PMR) = 0;
    *gicc32(GICC_APR0) = 0;
    *gicc32(GICC_BPR) = 0;
}

static unsigned v2_lr_count(void)
{
    unsigned nlr = (*gich32(GICH_VTR) & GICH_VTR_LISTREGS) + 1u;
    return nlr > ICH_LR_MAX ? ICH_LR_MAX : nlr; /* QEMU implements 4; vgic.c keeps at most 16 */
}

/* GICH_LR (arm64/gicv2.h) to and from ICH_LR_EL2's layout (drivers/gic.h). */
static uint64_t v2_lr_read(unsigned i)
{
    uint32_t lr = *gich32(GICH_LR0 + 4u * i);
    uint64_t v = lr & GICH_LR_VID_MASK;
    v |= (uint64_t)(((lr >> GICH_LR_PRIO_SHIFT) & GICH_LR_PRIO_MASK) << 3) << ICH_LR_PRIO_SHIFT;
    v |= (lr & GICH_LR_PENDING) ? ICH_LR_PENDING : 0u;
    v |= (lr & GICH_LR_ACTIVE) ? ICH_LR_ACTIVE : 0u;
    v |= (lr & GICH_LR_GROUP1) ? ICH_LR_GROUP1 : 0u;
    if (lr & GICH_LR_HW) {
        v |= ICH_LR_HW | (uint64_t)((lr >> GICH_LR_PID_SHIFT) & GICH_LR_PID_MASK) << ICH_LR_PINTID_SHIFT;
    } else if (lr & GICH_LR_EOI) {
        v |= ICH_LR_EOI;
    }
    return v;
}

static void v2_lr_write(unsigned i, uint64_t v)
{
    /* Group 0 always (drivers/gic.h); a virtual SGI names CPU interface 0 as its source, which Linux's
     * GICv2 driver only hands back with its EOI. */
    uint32_t lr = (uint32_t)(v & GICH_LR_VID_MASK);
    lr |= (uint32_t)(((v >> ICH_LR_PRIO_SHIFT) & 0xffu) >> 3) << GICH_LR_PRIO_SHIFT;
    lr |= (v & ICH_LR_PENDING) ? GICH_LR_PENDING : 0u;
    lr |= (v & ICH_LR_ACTIVE) ? GICH_LR_ACTIVE : 0u;
    if (v & ICH_LR_HW) {
        lr |= GICH_LR_HW | (uint32_t)(((v >> ICH_LR_PINTID_SHIFT) & GICH_LR_PID_MASK) << GICH_LR_PID_SHIFT);
    } else if (v & ICH_LR_EOI) {
        lr |= GICH_LR_EOI;
    }
    *gich32(GICH_LR0 + 4u * i) = lr;
}

static uint64_t lr_bits(uint64_t reg0)
{
    uint64_t bits = *gich32(reg0);
    if (v2_lr_count() > 32u) {
        bits |= (uint64_t)*gich32(reg0 + 4u) << 32;
    }
    return bits;
}

static uint64_t v2_lr_empty(void)
{
    return lr_bits(GICH_ELRSR0);
}

static uint64_t v2_lr_eoi_done(void)
{
    return lr_bits(GICH_EISR0);
}

static uint64_t v2_vif_hcr(void)
{
    return *gich32(GICH_HCR) & (GICH_HCR_EN | GICH_HCR_UIE); /* the same bits as ICH_HCR_EN, _UIE */
}

static void v2_vif_set_hcr(uint64_t hcr)
{
    *gich32(GICH_HCR) = (uint32_t)(hcr & (ICH_HCR_EN | ICH_HCR_UIE));
}

static uint64_t v2_vif_misr(void)
{
    return *gich32(GICH_MISR) & GICH_MISR_EOI; /* ICH_MISR_EOI's bit */
}

static bool v2_vif_traps_ack(void)
{
    return false;
}

/* GICH_APR holds every active priority (the virtual interface implements 5 priority bits). */
static bool v2_vif_guest_takes(uint8_t prio)
{
    uint32_t vmcr = *gich32(GICH_VMCR);
    uint32_t pmr = ((vmcr >> GICH_VMCR_PMR_SHIFT) & GICH_VMCR_PMR_MASK) << 3;
    return (vmcr & GICH_VMCR_GRP0EN) != 0 && pmr > prio && *gich32(GICH_APR) == 0;
}

static void v2_vif_reset(void)
{
    for (unsigned i = 0; i < v2_lr_count(); i++) {
        *gich32(GICH_LR0 + 4u * i) = 0;
    }
    *gich32(GICH_APR) = 0;
    *gich32(GICH_VMCR) = 0;
    *gich32(GICH_HCR) = GICH_HCR_EN;
}

static bool v2_guest_cpuif(bool trapping, uint64_t *ipa, uint64_t *pa, uint64_t *size)
{
    *ipa = BOARD_GICC_BASE;
    *pa = trapping ? BOARD_GICV_BASE : BOARD_GICC_BASE;
    *size = GICC_SIZE; /* both pages: GICC_DIR / GICV_DIR is in the second */
    return true;
}

const struct gic_driver gic_v2_driver = {
    .version = 2,
    .dist_size = GICV2_GICD_SIZE,
    .dist_init = v2_dist_init,
    .spi_route = v2_spi_route,
    .spi_place = v2_spi_place,
    .spi_quiesce = v2_spi_quiesce,
    .spi_disable = v2_spi_disable,
    .spi_set_pending = v2_spi_set_pending,
    .spi_set_priority = v2_spi_set_priority,
    .ppi_enable = v2_ppi_enable,
    .ppi_quiesce = v2_ppi_quiesce,
    .ppi_disable = v2_ppi_disable,
    .private_set_pending = v2_private_set_pending,
    .private_enable = v2_private_enable,
    .private_set_priority = v2_private_set_priority,
    .irq_is_level = v2_irq_is_level,
    .irq_is_pending = v2_irq_is_pending,
    .irq_priority = v2_irq_priority,
    .send_sgi = v2_send_sgi,
    .cpu_init = v2_cpu_init,
    .hyp_cpuif = v2_hyp_cpuif,
    .ack = v2_ack,
    .drop = v2_drop,
    .deactivate = v2_deactivate,
    .peek = v2_peek,
    .cpuif_save = v2_cpuif_save,
    .cpuif_restore = v2_cpuif_restore,
    .cpuif_reset = v2_cpuif_reset,
    .lr_count = v2_lr_count,
    .lr_read = v2_lr_read,
    .lr_write = v2_lr_write,
    .lr_empty = v2_lr_empty,
    .lr_eoi_done = v2_lr_eoi_done,
    .vif_hcr = v2_vif_hcr,
    .vif_set_hcr = v2_vif_set_hcr,
    .vif_misr = v2_vif_misr,
    .vif_traps_ack = v2_vif_traps_ack,
    .vif_guest_takes = v2_vif_guest_takes,
    .vif_reset = v2_vif_reset,
    .guest_cpuif = v2_guest_cpuif,
};
