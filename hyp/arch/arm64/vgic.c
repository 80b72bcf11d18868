/*
 * Virtual CPU interface for partitions that take interrupts through EL2 (Linux): physical interrupts
 * trap to EL2 (HCR_EL2.IMO/FMO), are acknowledged here and handed to the guest through list registers.
 * Interrupts the partition owns are injected hardware-mapped (the guest's EOI deactivates the physical
 * interrupt, no second trap); emulated devices' lines and guest SGIs are injected as purely virtual
 * ones. Priority drop happens here (ICC_CTLR_EL1.EOImode = 1), deactivation by the guest or by ICC_DIR.
 *
 * Level-triggered hardware interrupts and the guest's masked sections. Acknowledging an interrupt here
 * consumes its pending state, and a list register then holds it pending until the guest takes it. On
 * bare hardware the pending state of a level interrupt follows its line; a list register does not. So
 * when the guest cannot take an injected level interrupt at once (IRQs masked, e.g. in its handler
 * right after an EOI that came before clearing its device), ICH_HCR_EL2.TALL1 makes its next Group 1
 * CPU-interface access trap (the IAR read when it does take the interrupt): there every list register
 * still only pending with a level interrupt is checked against the physical pending state, and
 * withdrawn (its physical interrupt deactivated) if the line has dropped. The access then runs again
 * natively; an IAR with nothing left pending reads 1023, which GIC drivers ignore. A guest that can
 * take the interrupt at once takes no extra trap.
 */
#include "arch/vgic.h"

#include "arch/cpu.h"
#include "arm64/esr.h"
#include "arm64/gicv3.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "drivers/gicv3.h"
#include "hyp/assert.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"

/* Priority of the hypervisor's own PPIs at the physical GIC (mid-range; nothing else runs at EL2). */
#define HYP_PPI_PRIO 0x80u
/* The priority every injected interrupt gets: Linux's default (GICv3 driver, GICD_INT_DEF_PRI). */
#define VGIC_LR_PRIO 0xa0u

/* Handlers of the hypervisor's own interrupts, by INTID (PPIs and SPIs below 64 are enough here). */
#define HYP_IRQ_SLOTS 64u
static vgic_hyp_irq_t hyp_irq[HYP_IRQ_SLOTS];

void vgic_set_hyp_irq(unsigned intid, vgic_hyp_irq_t fn)
{
    HYP_ASSERT(intid < HYP_IRQ_SLOTS);
    hyp_irq[intid] = fn;
}

void vgic_cpu_init(struct vcpu *v)
{
    unsigned nlr = (unsigned)(ARCH_READ_SYSREG(ICH_VTR_EL2) & ICH_VTR_LISTREGS) + 1u;
    v->vgic.nlr = nlr > ICH_LR_MAX ? ICH_LR_MAX : nlr; /* QEMU implements 4 */
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        ich_lr_write(i, 0);
    }
    ARCH_WRITE_SYSREG(ICH_AP1R0_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_VMCR_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_HCR_EL2, ICH_HCR_EN);
    /* Physical CPU interface at EL2: split priority drop / deactivation. */
    ARCH_WRITE_SYSREG(ICC_SRE_EL1, ARCH_READ_SYSREG(ICC_SRE_EL1) | ICC_SRE_SRE);
    arch_isb();
    ARCH_WRITE_SYSREG(ICC_CTLR_EL1, ICC_CTLR_EOIMODE);
    ARCH_WRITE_SYSREG(ICC_PMR_EL1, ICC_PMR_UNMASKED);
    ARCH_WRITE_SYSREG(ICC_BPR1_EL1, 0);
    ARCH_WRITE_SYSREG(ICC_IGRPEN1_EL1, ICC_IGRPEN1_EN);
    arch_isb();
    gicv3_redist_wake(v->cpu);
    v->vgic.gicr_waker = GICR_WAKER_PS; /* the guest finds its redistributor asleep, as after reset */
    gicv3_ppi_enable(v->cpu, BOARD_INTID_GIC_MAINT, HYP_PPI_PRIO);
    gicv3_ppi_enable(v->cpu, BOARD_INTID_HYP_TIMER, HYP_PPI_PRIO);
    gicv3_ppi_enable(v->cpu, VBUS_SGI_TO_HYP, HYP_PPI_PRIO); /* handled if a V-Bus device registers it */
    ARCH_WRITE_SYSREG(cnthp_ctl_el2, 0);
}

static bool is_level_source(const struct vcpu *v, unsigned intid)
{
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        if (v->vgic.level[i].intid == intid && intid != 0) {
            return true;
        }
    }
    return false;
}

void vgic_cpu_reset(struct vcpu *v)
{
    /* A hardware-mapped interrupt in a list register, or queued for one, is active at the physical
     * GIC (acknowledged and priority-dropped here, waiting for the guest's deactivation): deactivate
     * it, or it never comes again. */
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        uint64_t lr = ich_lr_read(i);
        if ((lr & ICH_LR_HW) && (lr & (ICH_LR_PENDING | ICH_LR_ACTIVE))) {
            ARCH_WRITE_SYSREG(ICC_DIR_EL1, (lr >> ICH_LR_PINTID_SHIFT) & ICH_LR_PINTID_MASK);
        }
        ich_lr_write(i, 0);
    }
    for (unsigned w = 0; w < HYP_INTID_WORDS; w++) {
        while (v->vgic.sw_pending[w] != 0) {
            unsigned bit = (unsigned)__builtin_ctz(v->vgic.sw_pending[w]);
            unsigned intid = w * 32u + bit;
            if (intid >= GIC_SGI_COUNT && !is_level_source(v, intid)) {
                ARCH_WRITE_SYSREG(ICC_DIR_EL1, intid);
            }
            v->vgic.sw_pending[w] &= ~(1u << bit);
        }
    }
    ARCH_WRITE_SYSREG(ICH_AP0R0_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_AP1R0_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_VMCR_EL2, 0);
    ARCH_WRITE_SYSREG(ICH_HCR_EL2, ICH_HCR_EN);
    v->vgic.gicr_waker = GICR_WAKER_PS;
    arch_isb();
}

void vgic_add_level(struct vcpu *v, unsigned intid, bool (*line)(const void *ctx), const void *ctx)
{
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        if (v->vgic.level[i].intid == 0) {
            v->vgic.level[i] = (struct vgic_level){intid, line, ctx};
            if (intid >= GIC_SPI_BASE && intid < HYP_MAX_INTID) {
                v->part->virqs[intid / 32u] |= 1u << (intid % 32u);
            }
            return;
        }
    }
    HYP_ASSERT(false && "VGIC_MAX_LEVELS level sources per CPU");
}

/* Index of the LR holding vintid, or -1. */
static int lr_find(struct vcpu *v, unsigned vintid, uint64_t *lr)
{
    uint64_t empty = ARCH_READ_SYSREG(ICH_ELRSR_EL2);
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if (!((empty >> i) & 1u)) {
            uint64_t val = ich_lr_read(i);
            if ((val & ICH_LR_VINTID_MASK) == vintid) {
                *lr = val;
                return (int)i;
            }
        }
    }
    return -1;
}

static bool lr_put(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify)
{
    uint64_t empty = ARCH_READ_SYSREG(ICH_ELRSR_EL2);
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if ((empty >> i) & 1u) {
            uint64_t val =
                ICH_LR_PENDING | ICH_LR_GROUP1 | ((uint64_t)VGIC_LR_PRIO << ICH_LR_PRIO_SHIFT) | vintid;
            if (pintid != 0) {
                val |= ICH_LR_HW | ((uint64_t)pintid << ICH_LR_PINTID_SHIFT);
            } else if (eoi_notify) {
                val |= ICH_LR_EOI;
            }
            ich_lr_write(i, val);
            return true;
        }
    }
    return false;
}

void vgic_inject(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify)
{
    HYP_ASSERT(vintid < HYP_MAX_INTID);
    uint64_t lr;
    int i = lr_find(v, vintid, &lr);
    if (i >= 0) {
        /* Already listed: a purely virtual interrupt that is active becomes active and pending. */
        if (pintid == 0 && !(lr & ICH_LR_PENDING)) {
            ich_lr_write((unsigned)i, lr | ICH_LR_PENDING);
        }
        return;
    }
    if (!lr_put(v, vintid, pintid, eoi_notify)) {
        /* All LRs busy: queue it and ask for a maintenance interrupt when they drain. Hardware-mapped
         * interrupts stay active at the distributor meanwhile, so nothing is lost. */
        v->vgic.sw_pending[vintid / 32] |= 1u << (vintid % 32);
        ARCH_WRITE_SYSREG(ICH_HCR_EL2, ARCH_READ_SYSREG(ICH_HCR_EL2) | ICH_HCR_UIE);
    }
}

static void refill(struct vcpu *v)
{
    bool left = false;
    for (unsigned w = 0; w < HYP_INTID_WORDS; w++) {
        while (v->vgic.sw_pending[w] != 0) {
            unsigned bit = (unsigned)__builtin_ctz(v->vgic.sw_pending[w]);
            unsigned intid = w * 32u + bit;
            /* Owned SPIs and PPIs are hardware-mapped; SGIs and emulated devices' lines are virtual. */
            bool level = is_level_source(v, intid);
            unsigned pintid = (intid >= GIC_SGI_COUNT && !level) ? intid : 0;
            if (!lr_put(v, intid, pintid, level)) {
                left = true;
                break;
            }
            v->vgic.sw_pending[w] &= ~(1u << bit);
        }
    }
    uint64_t hcr = ARCH_READ_SYSREG(ICH_HCR_EL2) & ~(uint64_t)ICH_HCR_UIE;
    ARCH_WRITE_SYSREG(ICH_HCR_EL2, left ? hcr | ICH_HCR_UIE : hcr);
}

void vgic_sync_levels(struct vcpu *v)
{
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        const struct vgic_level *l = &v->vgic.level[i];
        if (l->intid != 0 && part_virq_enabled(v->part, l->intid) && l->line(l->ctx)) {
            vgic_inject(v, l->intid, 0, true);
        }
    }
}

static void maintenance(struct vcpu *v)
{
    uint64_t misr = ARCH_READ_SYSREG(ICH_MISR_EL2);
    uint64_t eisr = ARCH_READ_SYSREG(ICH_EISR_EL2); /* LRs with EOI maintenance done */
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if ((eisr >> i) & 1u) {
            ich_lr_write(i, 0); /* the guest is done with it: free the LR */
        }
    }
    refill(v);
    if (misr & ICH_MISR_EOI) {
        vgic_sync_levels(v); /* a level interrupt still asserted after the guest's EOI comes back */
    }
}

/* True when the guest would take an interrupt injected now at once, on its return: IRQs unmasked,
 * Group 1 enabled, its priority mask open to VGIC_LR_PRIO and nothing active (every injected interrupt
 * has that one priority, so any active one blocks the next). ICH_AP1R0_EL2 holds every active priority
 * while the virtual interface implements at most 5 priority bits (QEMU's; vgic_cpu_reset makes the
 * same assumption). */
static bool guest_takes_now(const struct vcpu *v)
{
    uint64_t vmcr = ARCH_READ_SYSREG(ICH_VMCR_EL2);
    return (v->guest.spsr & SPSR_I) == 0 && (vmcr & ICH_VMCR_VENG1) != 0 &&
           ((vmcr >> ICH_VMCR_VPMR_SHIFT) & 0xffu) > VGIC_LR_PRIO && ARCH_READ_SYSREG(ICH_AP1R0_EL2) == 0;
}

/* A hardware interrupt waiting for the guest (acknowledged here, so active at the physical GIC) that is
 * level-sensitive and whose line has dropped since: bare hardware would not deliver it any more. */
static bool hw_line_dropped(const struct vcpu *v, unsigned pintid)
{
    return gicv3_irq_is_level(v->cpu, pintid) && !gicv3_irq_is_pending(v->cpu, pintid);
}

/* Withdraws every injected level interrupt whose line has dropped (header comment): the list registers
 * still only pending (an active one is the guest's already) and the ones queued for a list register. */
static void resample_levels(struct vcpu *v)
{
    uint64_t *withdrawn = &v->part->stats.withdrawn;
    uint64_t empty = ARCH_READ_SYSREG(ICH_ELRSR_EL2);
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        uint64_t lr = ich_lr_read(i);
        if (((empty >> i) & 1u) ||
            (lr & (ICH_LR_HW | ICH_LR_PENDING | ICH_LR_ACTIVE)) != (ICH_LR_HW | ICH_LR_PENDING)) {
            continue;
        }
        unsigned pintid = (unsigned)((lr >> ICH_LR_PINTID_SHIFT) & ICH_LR_PINTID_MASK);
        if (hw_line_dropped(v, pintid)) {
            ich_lr_write(i, 0);
            ARCH_WRITE_SYSREG(ICC_DIR_EL1, pintid); /* EOImode 1: the priority was dropped at the ack */
            (*withdrawn)++;
        }
    }
    for (unsigned w = 0; w < HYP_INTID_WORDS; w++) {
        uint32_t bits = v->vgic.sw_pending[w];
        while (bits != 0) {
            unsigned bit = (unsigned)__builtin_ctz(bits);
            unsigned intid = w * 32u + bit;
            bits &= bits - 1u;
            /* Queued hardware interrupts: owned PPIs and SPIs, not an emulated device's line. */
            if (intid >= GIC_SGI_COUNT && !is_level_source(v, intid) && hw_line_dropped(v, intid)) {
                v->vgic.sw_pending[w] &= ~(1u << bit);
                ARCH_WRITE_SYSREG(ICC_DIR_EL1, intid);
                (*withdrawn)++;
            }
        }
    }
    arch_isb();
}

void vgic_handle_irq(struct vcpu *v)
{
    for (;;) {
        unsigned intid = (unsigned)(ARCH_READ_SYSREG(ICC_IAR1_EL1) & GIC_INTID_MASK);
        if (intid >= GIC_INTID_SPECIAL) {
            return;
        }
        ARCH_WRITE_SYSREG(ICC_EOIR1_EL1, intid); /* priority drop only (EOImode 1) */
        if (intid == BOARD_INTID_GIC_MAINT) {
            ARCH_WRITE_SYSREG(ICC_DIR_EL1, intid);
            maintenance(v);
        } else if (intid < HYP_IRQ_SLOTS && hyp_irq[intid] != NULL) {
            hyp_irq[intid](v);
            ARCH_WRITE_SYSREG(ICC_DIR_EL1, intid);
        } else if (v->part != NULL && v->part->state == PART_RUNNING && intid >= GIC_SGI_COUNT &&
                   (intid < GIC_SPI_BASE || part_owns_irq(v->part, intid))) {
            vgic_inject(v, intid, intid, false); /* the guest's EOI deactivates it */
            /* Devices' lines (SPIs) only: a PPI is a CPU's own timer or PMU, whose driver handles a stale
             * interrupt itself (it reads the timer's status), and the timer fires in every idle WFI with
             * IRQs masked: re-checking it cost Linux one more trap per tick (cyclictest min/avg 5/5 us
             * against 4/4 without, icount, deterministic mode, seed 1). */
            if (intid >= GIC_SPI_BASE && !guest_takes_now(v) && gicv3_irq_is_level(v->cpu, intid)) {
                ARCH_WRITE_SYSREG(ICH_HCR_EL2, ARCH_READ_SYSREG(ICH_HCR_EL2) | ICH_HCR_TALL1);
            }
        } else {
            /* Not the partition's, or it has stopped: dropped, and disabled so that a level that stays
             * asserted (a stopped guest's timer) cannot keep this CPU in EL2. */
            if (intid >= GIC_SPI_BASE) {
                gicv3_spi_disable(intid);
            } else if (!((VGIC_HYP_PPIS >> intid) & 1u)) {
                gicv3_ppi_disable(v->cpu, intid);
            }
            ARCH_WRITE_SYSREG(ICC_DIR_EL1, intid);
        }
    }
}

bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr)
{
    unsigned op0 = ESR_SYSREG_OP0(esr), op2 = ESR_SYSREG_OP2(esr), op1 = ESR_SYSREG_OP1(esr);
    unsigned crn = ESR_SYSREG_CRN(esr), rt = ESR_SYSREG_RT(esr), crm = ESR_SYSREG_CRM(esr);
    bool read = ESR_SYSREG_READ(esr) != 0;
    bool sgi_space = op0 == ICC_SGIR_OP0 && op1 == ICC_SGIR_OP1 && crn == ICC_SGIR_CRN && crm == ICC_SGIR_CRM;
    bool sgi1r = sgi_space && op2 == ICC_SGI1R_OP2;
    bool sgi_other = sgi_space && (op2 == ICC_ASGI1R_OP2 || op2 == ICC_SGI0R_OP2);
    uint64_t hcr = ARCH_READ_SYSREG(ICH_HCR_EL2);
    if (!sgi_space && op0 == ICC_EL1_OP0 && op1 == ICC_EL1_OP1 && crn == ICC_EL1_CRN &&
        (hcr & ICH_HCR_TALL1)) {
        /* The Group 1 access TALL1 was set for (vgic_handle_irq): withdraw what the line no longer
         * asserts, stop trapping, and let the access run again natively (the PC stays on it). */
        v->part->stats.resamples++;
        resample_levels(v);
        ARCH_WRITE_SYSREG(ICH_HCR_EL2, hcr & ~(uint64_t)ICH_HCR_TALL1);
        return true;
    }
    if (!sgi1r && !sgi_other) {
        return false;
    }
    v->guest.elr += 4;
    if (read || !sgi1r) {
        if (read && rt != ESR_REG_ZR) {
            v->guest.x[rt] = 0;
        }
        return true; /* Group 0 / alias SGIs: not used by Linux here, ignored */
    }
    uint64_t val = rt == ESR_REG_ZR ? 0 : v->guest.x[rt];
    unsigned sgi = (unsigned)(val >> ICC_SGI1R_INTID_SHIFT) % GIC_SGI_COUNT;
    bool broadcast = (val & ICC_SGI1R_IRM) != 0; /* all but self */
    uint64_t aff1 = (val >> ICC_SGI1R_AFF1_SHIFT) & 0xffu;
    /* A partition's SGIs stay inside it; with one CPU per partition only self-targets remain. */
    if (!broadcast && aff1 == MPIDR_AFF1(v->mpidr) &&
        ((val >> (MPIDR_AFF0(v->mpidr) % ICC_SGI1R_TARGET_AFF0_MAX)) & 1u)) {
        vgic_inject(v, sgi, 0, false);
    }
    return true;
}
