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
 *
 * Several CPUs per partition. The list registers are each CPU's own system registers, so an interrupt
 * for a virtual CPU is listed on its CPU only. A guest's SGI (a trapped ICC_SGI1R_EL1 write) to another
 * of its CPUs, and a level source routed to another CPU, are handed over: bits in the target's struct
 * vgic_cpu (sgi_in, resync; atomic), then the kick SGI (VGIC_SGI_KICK, a physical SGI of the
 * hypervisor's, enabled on every trapping CPU and hidden from the guest), which the target takes at EL2
 * and serves before it returns to its guest. A sender kicks only when the bits were clear before: the
 * target clears them (exchange) after taking the kick, so a bit set earlier is collected by that same
 * pass, and a bit set later finds them clear and kicks again. Targets are the sender's partition's CPUs
 * only (vgic_route.c), and only those that are on: an SGI for a CPU that is off is dropped, as Linux
 * never sends one.
 *
 * Priorities: each interrupt is listed with the priority the guest gave it, read where the guest wrote
 * it: its SGIs' and PPIs' in its CPU's physical redistributor (the physical SGIs 0..12 of a trapping CPU
 * are never raised, so their priority bytes are the guest's own), an owned SPI's in the distributor,
 * an emulated SPI's in its level source.
 */
#include "arch/vgic.h"

#include "arch/cpu.h"
#include "arch/stage2.h"
#include "arch/vgic_route.h"
#include "arm64/esr.h"
#include "arm64/gicv3.h"
#include "board.h"
#include "drivers/gic.h"
#include "hyp/assert.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "lib/prio.h"

/* Priority of the hypervisor's own PPIs at the physical GIC: in the band the rtos masks (lib/prio.h),
 * so that on a CPU shared with the rtos they wait while the rtos runs. Elsewhere only their order
 * against Linux's interrupts matters, and every pending one is taken in one pass. */
#define HYP_PPI_PRIO RTMUX_PRIO_HYP

/* Handlers of the hypervisor's own interrupts, by INTID (PPIs and SPIs below 64 are enough here). */
#define HYP_IRQ_SLOTS 64u
static vgic_hyp_irq_t hyp_irq[HYP_IRQ_SLOTS];

void vgic_set_hyp_irq(unsigned intid, vgic_hyp_irq_t fn)
{
    HYP_ASSERT(intid < HYP_IRQ_SLOTS);
    hyp_irq[intid] = fn;
}

/* Whether v's CPU is shared with an rtos (v is Linux's virtual CPU there). */
static bool cpu_shared(const struct vcpu *v)
{
    return hyp_rtos_vcpu[v->cpu].part != NULL;
}

/* Linux's private interrupts on a shared CPU back to reset: its view (enables, priorities) cleared, its
 * PPIs physically below the rtos's mask. */
static void shared_private_reset(struct vcpu *v)
{
    if (!cpu_shared(v)) {
        return;
    }
    v->vgic.priv_enabled = 0;
    for (unsigned i = 0; i < GIC_SPI_BASE; i++) {
        v->vgic.priv_prio[i] = 0;
        if (((VGIC_SHARED_LINUX_PPIS >> i) & 1u) != 0) {
            gic_private_set_priority(v->cpu, i, RTMUX_PRIO_LINUX);
        }
    }
}

void vgic_cpu_init(struct vcpu *v)
{
    v->vgic.nlr = gic_lr_count();
    gic_vif_reset();
    gic_hyp_cpuif(); /* physical CPU interface at EL2: split priority drop / deactivation */
    v->vgic.gicr_waker = GICR_WAKER_PS; /* the guest finds its redistributor asleep, as after reset */
    shared_private_reset(v);
    gic_ppi_enable(v->cpu, BOARD_INTID_GIC_MAINT, HYP_PPI_PRIO);
    gic_ppi_enable(v->cpu, BOARD_INTID_HYP_TIMER, HYP_PPI_PRIO);
    gic_ppi_enable(v->cpu, VBUS_SGI_TO_HYP, HYP_PPI_PRIO); /* handled if a V-Bus device registers it */
    gic_ppi_enable(v->cpu, VGIC_SGI_KICK, HYP_PPI_PRIO);
    ARCH_WRITE_SYSREG(cnthp_ctl_el2, 0);
}

void vgic_part_map(struct partition *p)
{
    /* Linux's CPU interface is the virtual one (list registers), the rtos's the physical one, which it
     * drives itself (no trap on its interrupt path). Both are banked per CPU, so a partition reaches its
     * own CPU's only. */
    uint64_t ipa, pa, size;
    if (gic_guest_cpuif(p->kind == PART_LINUX, &ipa, &pa, &size)) {
        s2_map(p->s2_root, ipa, pa, size, true);
    }
}

void vgic_shared_reclaim(const struct vcpu *v)
{
    gic_private_enable(v->cpu, VGIC_HYP_PPIS | (v->vgic.priv_enabled & VGIC_SHARED_LINUX_PPIS));
}

/* Whether intid, pending on v's CPU, is the rtos's that shares it (VGIC_SHARED_RTOS_PRIVATE, its SPIs). */
static bool rtos_irq(const struct vcpu *v, unsigned intid)
{
    const struct partition *r = hyp_rtos_vcpu[v->cpu].part;
    if (r == NULL || r->state != PART_RUNNING) {
        return false;
    }
    return intid < GIC_SPI_BASE ? ((VGIC_SHARED_RTOS_PRIVATE >> intid) & 1u) != 0 : part_owns_irq(r, intid);
}

static bool is_level_source(const struct vcpu *v, unsigned intid)
{
    return part_level(v->part, intid) != NULL;
}

static bool vcpu_on(const struct vcpu *v)
{
    return __atomic_load_n(&v->power, __ATOMIC_ACQUIRE) == VCPU_ON;
}

void vgic_cpu_reset(struct vcpu *v)
{
    /* A hardware-mapped interrupt in a list register, or queued for one, is active at the physical
     * GIC (acknowledged and priority-dropped here, waiting for the guest's deactivation): deactivate
     * it, or it never comes again. */
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        uint64_t lr = gic_lr_read(i);
        if ((lr & ICH_LR_HW) && (lr & (ICH_LR_PENDING | ICH_LR_ACTIVE))) {
            gic_deactivate((uint32_t)((lr >> ICH_LR_PINTID_SHIFT) & ICH_LR_PINTID_MASK));
        }
    }
    for (unsigned w = 0; w < HYP_INTID_WORDS; w++) {
        while (v->vgic.sw_pending[w] != 0) {
            unsigned bit = (unsigned)__builtin_ctz(v->vgic.sw_pending[w]);
            unsigned intid = w * 32u + bit;
            if (intid >= GIC_SGI_COUNT && !is_level_source(v, intid)) {
                gic_deactivate(intid);
            }
            v->vgic.sw_pending[w] &= ~(1u << bit);
        }
    }
    gic_vif_reset();
    v->vgic.gicr_waker = GICR_WAKER_PS;
    __atomic_store_n(&v->vgic.sgi_in, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&v->vgic.resync, 0u, __ATOMIC_RELEASE);
    shared_private_reset(v);
}

void vgic_add_level(struct partition *p, unsigned intid, bool (*line)(const void *ctx), const void *ctx)
{
    HYP_ASSERT(intid >= GIC_SPI_BASE && intid < HYP_MAX_INTID); /* an emulated device's SPI */
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        if (p->vgic.level[i].intid == 0) {
            p->vgic.level[i] = (struct vgic_level){intid, line, ctx, 0, (uint8_t)part_boot_cpu(p)};
            p->vgic.virqs[intid / 32u] |= 1u << (intid % 32u);
            return;
        }
    }
    HYP_ASSERT(false && "VGIC_MAX_LEVELS level sources per partition");
}

void vgic_part_reset(struct partition *p)
{
    for (unsigned w = 0; w < HYP_INTID_WORDS; w++) {
        p->vgic.virq_enabled[w] = 0; /* as the physical SPIs: a new start enables what it uses */
    }
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        p->vgic.level[i].prio = 0;
        p->vgic.level[i].cpu = (uint8_t)part_boot_cpu(p);
    }
}

/* The priority the guest gave intid (header comment), as a list register holds it. */
static uint8_t irq_prio(const struct vcpu *v, unsigned intid)
{
    const struct vgic_level *l = intid >= GIC_SPI_BASE ? part_level(v->part, intid) : NULL;
    if (l != NULL) {
        return l->prio;
    }
    /* Sharing a CPU with the rtos, Linux's priorities are kept apart from the physical ones (vgicd.c). */
    if (intid < GIC_SPI_BASE && cpu_shared(v)) {
        return v->vgic.priv_prio[intid];
    }
    if (intid >= GIC_SPI_BASE && v->part->share.mask != 0) {
        return v->part->vgic.spi_prio[intid];
    }
    return gic_irq_priority(v->cpu, intid);
}

/* Index of the LR holding vintid, or -1. */
static int lr_find(struct vcpu *v, unsigned vintid, uint64_t *lr)
{
    uint64_t empty = gic_lr_empty();
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if (!((empty >> i) & 1u)) {
            uint64_t val = gic_lr_read(i);
            if ((val & ICH_LR_VINTID_MASK) == vintid) {
                *lr = val;
                return (int)i;
            }
        }
    }
    return -1;
}

/* Lists vintid in a free LR with `state` (ICH_LR_PENDING and/or ICH_LR_ACTIVE); false when none is free. */
static bool lr_put(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify, uint64_t state)
{
    uint64_t empty = gic_lr_empty();
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if ((empty >> i) & 1u) {
            uint64_t val =
                state | ICH_LR_GROUP1 | ((uint64_t)irq_prio(v, vintid) << ICH_LR_PRIO_SHIFT) | vintid;
            if (pintid != 0) {
                val |= ICH_LR_HW | ((uint64_t)pintid << ICH_LR_PINTID_SHIFT);
            } else if (eoi_notify) {
                val |= ICH_LR_EOI;
            }
            gic_lr_write(i, val);
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
            gic_lr_write((unsigned)i, lr | ICH_LR_PENDING);
        }
        return;
    }
    if (!lr_put(v, vintid, pintid, eoi_notify, ICH_LR_PENDING)) {
        /* All LRs busy: queue it and ask for a maintenance interrupt when they drain. Hardware-mapped
         * interrupts stay active at the distributor meanwhile, so nothing is lost. */
        v->vgic.sw_pending[vintid / 32] |= 1u << (vintid % 32);
        gic_vif_set_hcr(gic_vif_hcr() | ICH_HCR_UIE);
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
            if (!lr_put(v, intid, pintid, level, ICH_LR_PENDING)) {
                left = true;
                break;
            }
            v->vgic.sw_pending[w] &= ~(1u << bit);
        }
    }
    uint64_t hcr = gic_vif_hcr() & ~(uint64_t)ICH_HCR_UIE;
    gic_vif_set_hcr(left ? hcr | ICH_HCR_UIE : hcr);
}

/* The CPU that takes level source l now: the one its route names while that CPU is on, else p's first
 * CPU that is on (Linux moves its interrupts off a CPU before turning it off; this covers the moment in
 * between, and a guest that does not); -1 when none is. */
static int level_target(const struct partition *p, const struct vgic_level *l)
{
    if (vcpu_on(&hyp_vcpu[l->cpu])) {
        return l->cpu;
    }
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((p->cpu_mask >> c) & 1u) != 0 && vcpu_on(&hyp_vcpu[c])) {
            return (int)c;
        }
    }
    return -1;
}

void vgic_kick(const struct vcpu *t)
{
    gic_send_sgi(t->mpidr, VGIC_SGI_KICK);
}

void vgic_post_sgi(struct vcpu *t, unsigned sgi)
{
    if (!vcpu_on(t)) {
        return;
    }
    if (__atomic_fetch_or(&t->vgic.sgi_in, 1u << (sgi % GIC_SGI_COUNT), __ATOMIC_ACQ_REL) == 0) {
        vgic_kick(t);
    }
}

static void post_resync(struct vcpu *t)
{
    if (__atomic_exchange_n(&t->vgic.resync, 1u, __ATOMIC_ACQ_REL) == 0) {
        vgic_kick(t);
    }
}

void vgic_sync_levels(struct vcpu *v)
{
    if (!vcpu_on(v)) {
        return;
    }
    struct partition *p = v->part;
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        const struct vgic_level *l = &p->vgic.level[i];
        if (l->intid != 0 && part_virq_enabled(p, l->intid) && level_target(p, l) == (int)v->cpu &&
            l->line(l->ctx)) {
            vgic_inject(v, l->intid, 0, true);
        }
    }
}

void vgic_levels_changed(struct partition *p, struct vcpu *self)
{
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        const struct vgic_level *l = &p->vgic.level[i];
        if (l->intid == 0 || !part_virq_enabled(p, l->intid) || !l->line(l->ctx)) {
            continue;
        }
        int t = level_target(p, l);
        if (t < 0) {
            continue;
        }
        if (self != NULL && self->part == p && (int)self->cpu == t) {
            vgic_inject(self, l->intid, 0, true);
        } else {
            post_resync(&hyp_vcpu[t]);
        }
    }
}

/* The kick (header comment): lists what other CPUs handed over; an off CPU just forgets it. */
static void kicked(struct vcpu *v)
{
    uint32_t sgis = __atomic_exchange_n(&v->vgic.sgi_in, 0u, __ATOMIC_ACQ_REL);
    bool resync = __atomic_exchange_n(&v->vgic.resync, 0u, __ATOMIC_ACQ_REL) != 0;
    if (v->part == NULL || v->part->state != PART_RUNNING || !vcpu_on(v)) {
        return;
    }
    while (sgis != 0) {
        unsigned sgi = (unsigned)__builtin_ctz(sgis);
        sgis &= sgis - 1u;
        vgic_inject(v, sgi, 0, false);
    }
    if (resync) {
        vgic_sync_levels(v);
    }
}

static void maintenance(struct vcpu *v)
{
    uint64_t misr = gic_vif_misr();
    uint64_t eisr = gic_lr_eoi_done(); /* LRs with EOI maintenance done */
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        if ((eisr >> i) & 1u) {
            gic_lr_write(i, 0); /* the guest is done with it: free the LR */
        }
    }
    refill(v);
    if (misr & ICH_MISR_EOI) {
        vgic_sync_levels(v); /* a level interrupt still asserted after the guest's EOI comes back */
    }
}

/* True when the guest would take an interrupt of priority prio injected now at once, on its return:
 * IRQs unmasked and its virtual interface ready for prio (gic_vif_guest_takes). An answer no costs at
 * most one extra trap (the resample). */
static bool guest_takes_now(const struct vcpu *v, uint8_t prio)
{
    return (v->guest.spsr & SPSR_I) == 0 && gic_vif_guest_takes(prio);
}

/* A hardware interrupt waiting for the guest (acknowledged here, so active at the physical GIC) that is
 * level-sensitive and whose line has dropped since: bare hardware would not deliver it any more. */
static bool hw_line_dropped(const struct vcpu *v, unsigned pintid)
{
    return gic_irq_is_level(v->cpu, pintid) && !gic_irq_is_pending(v->cpu, pintid);
}

/* Withdraws every injected level interrupt whose line has dropped (header comment): the list registers
 * still only pending (an active one is the guest's already) and the ones queued for a list register. */
static void resample_levels(struct vcpu *v)
{
    uint64_t *withdrawn = &v->part->stats.withdrawn;
    uint64_t empty = gic_lr_empty();
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        uint64_t lr = gic_lr_read(i);
        if (((empty >> i) & 1u) ||
            (lr & (ICH_LR_HW | ICH_LR_PENDING | ICH_LR_ACTIVE)) != (ICH_LR_HW | ICH_LR_PENDING)) {
            continue;
        }
        unsigned pintid = (unsigned)((lr >> ICH_LR_PINTID_SHIFT) & ICH_LR_PINTID_MASK);
        if (hw_line_dropped(v, pintid)) {
            gic_lr_write(i, 0);
            gic_deactivate(pintid); /* EOImode 1: the priority was dropped at the ack */
            __atomic_fetch_add(withdrawn, 1u, __ATOMIC_RELAXED);
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
                gic_deactivate(intid);
                __atomic_fetch_add(withdrawn, 1u, __ATOMIC_RELAXED);
            }
        }
    }
    arch_isb();
}

/* A CPU of p that is on, other than v's, or -1 (the first, for determinism). */
static int other_on_cpu(const struct partition *p, const struct vcpu *v)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((p->cpu_mask >> c) & 1u) != 0 && c != v->cpu && vcpu_on(&hyp_vcpu[c])) {
            return (int)c;
        }
    }
    return -1;
}

bool vgic_rtos_pending(const struct vcpu *v)
{
    return cpu_shared(v) && rtos_irq(v, gic_peek());
}

bool vgic_rtos_soon(const struct vcpu *v, uint64_t within)
{
    if (!cpu_shared(v) || hyp_rtos_vcpu[v->cpu].part->state != PART_RUNNING) {
        return false;
    }
    if (vgic_rtos_pending(v)) {
        return true;
    }
    /* The rtos's kernel timer on a CPU it shares: the EL1 physical one (timer=phys), which only the rtos
     * programs there; its deadline is the rtos's next certain interrupt. */
    uint64_t ctl = ARCH_READ_SYSREG(cntp_ctl_el0);
    if ((ctl & (CNT_CTL_ENABLE | CNT_CTL_IMASK)) != CNT_CTL_ENABLE) {
        return false;
    }
    return (int64_t)(ARCH_READ_SYSREG(cntp_cval_el0) - arch_counter()) < (int64_t)within;
}

bool vgic_handle_irq(struct vcpu *v)
{
    bool shared = cpu_shared(v);
    for (;;) {
        /* The rtos's interrupts are above every other (lib/prio.h): if one is pending it is the highest,
         * and it is left for the rtos to acknowledge. */
        if (shared && rtos_irq(v, gic_peek())) {
            return true;
        }
        uint32_t ack = gic_ack();
        unsigned intid = GIC_ACK_INTID(ack);
        if (intid >= GIC_INTID_SPECIAL) {
            return false;
        }
        gic_drop(ack); /* priority drop only (EOImode 1) */
        if (shared && rtos_irq(v, intid)) {
            /* Raised between the peek and the acknowledge: given back. A level interrupt is pending again
             * once inactive while its line is high; an edge one (an SGI) is made pending again. */
            bool level = gic_irq_is_level(v->cpu, intid);
            gic_deactivate(ack);
            if (!level && intid < GIC_SPI_BASE) {
                gic_private_set_pending(v->cpu, 1u << intid);
            } else if (!level) {
                gic_spi_set_pending(intid);
            }
            return true;
        }
        struct partition *p = v->part;
        bool running = p != NULL && p->state == PART_RUNNING;
        int other;
        if (intid == BOARD_INTID_GIC_MAINT) {
            gic_deactivate(ack);
            maintenance(v);
        } else if (intid == VGIC_SGI_KICK) {
            gic_deactivate(ack);
            kicked(v);
        } else if (intid < HYP_IRQ_SLOTS && hyp_irq[intid] != NULL) {
            hyp_irq[intid](v);
            gic_deactivate(ack);
        } else if (running && vcpu_on(v) && intid >= GIC_SGI_COUNT &&
                   (intid < GIC_SPI_BASE || part_owns_irq(p, intid))) {
            vgic_inject(v, intid, intid, false); /* the guest's EOI deactivates it */
            /* Devices' lines (SPIs) only: a PPI is a CPU's own timer or PMU, whose driver handles a stale
             * interrupt itself (it reads the timer's status), and the timer fires in every idle WFI with
             * IRQs masked: re-checking it cost Linux one more trap per tick (cyclictest min/avg 5/5 us
             * against 4/4 without, icount, deterministic mode, seed 1). */
            if (intid >= GIC_SPI_BASE && gic_vif_traps_ack() && !guest_takes_now(v, irq_prio(v, intid)) &&
                gic_irq_is_level(v->cpu, intid)) {
                gic_vif_set_hcr(gic_vif_hcr() | ICH_HCR_TALL1);
            }
        } else if (running && !p->going_down && part_owns_irq(p, intid) &&
                   (other = other_on_cpu(p, v)) >= 0) {
            /* The partition's SPI reached a CPU of it that is off (Linux moves its interrupts before it
             * turns a CPU off, so this is one in flight, or a guest that did not): routed to a CPU that
             * is on and made pending again there; the deactivation here lets it go. */
            gic_spi_place(intid, vgic_irouter_of((unsigned)other));
            gic_spi_set_pending(intid);
            gic_deactivate(ack);
        } else {
            /* Not the partition's, or it has stopped: dropped, and disabled so that a level that stays
             * asserted (a stopped guest's timer) cannot keep this CPU in EL2. */
            if (intid >= GIC_SPI_BASE) {
                gic_spi_disable(intid);
            } else if (!((VGIC_HYP_PPIS >> intid) & 1u) && !(shared && rtos_irq(v, intid))) {
                gic_ppi_disable(v->cpu, intid);
            }
            gic_deactivate(ack);
        }
    }
}

void vgic_private_state(struct vcpu *v, uint32_t *pending, uint32_t *active)
{
    uint32_t pend = 0, act = 0;
    uint64_t empty = gic_lr_empty();
    for (unsigned i = 0; i < v->vgic.nlr; i++) {
        uint64_t lr = gic_lr_read(i);
        unsigned id = (unsigned)(lr & ICH_LR_VINTID_MASK);
        if (((empty >> i) & 1u) == 0 && id < GIC_SPI_BASE) {
            pend |= (lr & ICH_LR_PENDING) ? 1u << id : 0u;
            act |= (lr & ICH_LR_ACTIVE) ? 1u << id : 0u;
        }
    }
    *pending = pend | v->vgic.sw_pending[0] | __atomic_load_n(&v->vgic.sgi_in, __ATOMIC_ACQUIRE);
    *active = act;
}

void vgic_sgi_write(struct vcpu *v, uint64_t reg, uint32_t sgis)
{
    sgis &= (1u << GIC_SGI_COUNT) - 1u;
    while (sgis != 0) {
        unsigned sgi = (unsigned)__builtin_ctz(sgis);
        uint32_t bit = 1u << sgi;
        sgis &= sgis - 1u;
        uint64_t lr = 0;
        int i = lr_find(v, sgi, &lr);
        if (reg == GICR_ISPENDR0) {
            vgic_inject(v, sgi, 0, false);
        } else if (reg == GICR_ICPENDR0) {
            /* Pending wherever it waits: its list register (active stays), the queue, a handover. */
            if (i >= 0) {
                gic_lr_write((unsigned)i, (lr & ICH_LR_ACTIVE) ? lr & ~(uint64_t)ICH_LR_PENDING : 0u);
            }
            v->vgic.sw_pending[0] &= ~bit;
            __atomic_fetch_and(&v->vgic.sgi_in, ~bit, __ATOMIC_ACQ_REL);
        } else if (reg == GICR_ISACTIVER0) {
            /* With every list register busy, an SGI that is not listed cannot be made active: ignored
             * (4 list registers on QEMU; a guest making more than that active at once is not served). */
            if (i >= 0) {
                gic_lr_write((unsigned)i, lr | ICH_LR_ACTIVE);
            } else {
                (void)lr_put(v, sgi, 0, false, ICH_LR_ACTIVE);
            }
        } else if (reg == GICR_ICACTIVER0 && i >= 0 && (lr & ICH_LR_ACTIVE)) {
            gic_lr_write((unsigned)i, (lr & ICH_LR_PENDING) ? lr & ~(uint64_t)ICH_LR_ACTIVE : 0u);
        }
    }
    arch_isb();
}

bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr)
{
    unsigned op0 = ESR_SYSREG_OP0(esr), op2 = ESR_SYSREG_OP2(esr), op1 = ESR_SYSREG_OP1(esr);
    unsigned crn = ESR_SYSREG_CRN(esr), rt = ESR_SYSREG_RT(esr), crm = ESR_SYSREG_CRM(esr);
    bool read = ESR_SYSREG_READ(esr) != 0;
    bool sgi_space = op0 == ICC_SGIR_OP0 && op1 == ICC_SGIR_OP1 && crn == ICC_SGIR_CRN && crm == ICC_SGIR_CRM;
    bool sgi1r = sgi_space && op2 == ICC_SGI1R_OP2;
    bool sgi_other = sgi_space && (op2 == ICC_ASGI1R_OP2 || op2 == ICC_SGI0R_OP2);
    uint64_t hcr = gic_vif_hcr();
    if (!sgi_space && op0 == ICC_EL1_OP0 && op1 == ICC_EL1_OP1 && crn == ICC_EL1_CRN &&
        (hcr & ICH_HCR_TALL1)) {
        /* The Group 1 access TALL1 was set for (vgic_handle_irq): withdraw what the line no longer
         * asserts, stop trapping, and let the access run again natively (the PC stays on it). */
        __atomic_fetch_add(&v->part->stats.resamples, 1u, __ATOMIC_RELAXED);
        resample_levels(v);
        gic_vif_set_hcr(hcr & ~(uint64_t)ICH_HCR_TALL1);
        return true;
    }
    if (!sgi1r && !sgi_other) {
        return false;
    }
    guest_skip_insn(&v->guest);
    if (read || !sgi1r) {
        if (read && rt != ESR_REG_ZR) {
            v->guest.x[rt] = 0;
        }
        return true; /* Group 0 / alias SGIs: not used by Linux here, ignored */
    }
    uint64_t val = rt == ESR_REG_ZR ? 0 : v->guest.x[rt];
    unsigned sgi = (unsigned)(val >> ICC_SGI1R_INTID_SHIFT) % GIC_SGI_COUNT;
    /* A partition's SGIs stay inside it (vgic_route.c), to its CPUs that are on. */
    vgic_send_sgi(v, sgi, vgic_sgi_targets(v->part, v->cpu, val));
    return true;
}

void vgic_send_sgi(struct vcpu *v, unsigned sgi, uint64_t targets)
{
    while (targets != 0) {
        unsigned c = (unsigned)__builtin_ctzll(targets);
        targets &= targets - 1u;
        if (c == v->cpu) {
            vgic_inject(v, sgi, 0, false);
        } else {
            vgic_post_sgi(&hyp_vcpu[c], sgi);
        }
    }
}
