/*
 * Virtual CPU interface for partitions that take interrupts through EL2 (Linux): physical interrupts
 * trap to EL2 (HCR_EL2.IMO/FMO), are acknowledged here and handed to the guest through list registers.
 * Interrupts the partition owns are injected hardware-mapped (the guest's EOI deactivates the physical
 * interrupt, no second trap); the emulated UART and guest SGIs are injected as purely virtual ones.
 * Priority drop happens here (ICC_CTLR_EL1.EOImode = 1), deactivation by the guest or by ICC_DIR.
 */
#include "arch/cpu.h"
#include "board.h"
#include "hyp/hyp.h"

#define MAINT_INTID     25u
#define HYPTIMER_INTID  26u  /* EL2 physical timer: console flush on the trapping CPU */
#define CONSOLE_TICK_HZ 250u /* drains partitions' output every 4 ms; a prompt shows after one quiet tick */
#define LR_PENDING      (1ull << 62)
#define LR_ACTIVE       (1ull << 63)
#define LR_HW           (1ull << 61)
#define LR_GROUP1       (1ull << 60)
#define LR_EOI          (1ull << 41)    /* with HW = 0: maintenance interrupt when the guest deactivates */
#define LR_PRIO         (0xa0ull << 48) /* Linux's default interrupt priority */
#define ICH_HCR_EN      (1u << 0)
#define ICH_HCR_UIE     (1u << 1) /* maintenance interrupt when at most one LR holds an interrupt */
#define ICH_MISR_EOI    (1u << 0)

#define GICR_SGI_BASE(cpu) (BOARD_GICR_BASE + (cpu)*BOARD_GICR_STRIDE + 0x10000u)

static uint64_t lr_read(unsigned n)
{
    switch (n) {
    case 0:
        return ARCH_RD(S3_4_C12_C12_0);
    case 1:
        return ARCH_RD(S3_4_C12_C12_1);
    case 2:
        return ARCH_RD(S3_4_C12_C12_2);
    case 3:
        return ARCH_RD(S3_4_C12_C12_3);
    case 4:
        return ARCH_RD(S3_4_C12_C12_4);
    case 5:
        return ARCH_RD(S3_4_C12_C12_5);
    case 6:
        return ARCH_RD(S3_4_C12_C12_6);
    default:
        return ARCH_RD(S3_4_C12_C12_7);
    }
}

static void lr_write(unsigned n, uint64_t v)
{
    switch (n) {
    case 0:
        ARCH_WR(S3_4_C12_C12_0, v);
        break;
    case 1:
        ARCH_WR(S3_4_C12_C12_1, v);
        break;
    case 2:
        ARCH_WR(S3_4_C12_C12_2, v);
        break;
    case 3:
        ARCH_WR(S3_4_C12_C12_3, v);
        break;
    case 4:
        ARCH_WR(S3_4_C12_C12_4, v);
        break;
    case 5:
        ARCH_WR(S3_4_C12_C12_5, v);
        break;
    case 6:
        ARCH_WR(S3_4_C12_C12_6, v);
        break;
    default:
        ARCH_WR(S3_4_C12_C12_7, v);
        break;
    }
}

void vgic_cpu_init(struct vcpu *v)
{
    unsigned nlr = (unsigned)(ARCH_RD(ICH_VTR_EL2) & 0x1fu) + 1u;
    v->nlr = nlr > 8 ? 8 : nlr; /* lr_read/lr_write cover 8; QEMU implements 4 */
    for (unsigned i = 0; i < v->nlr; i++) {
        lr_write(i, 0);
    }
    ARCH_WR(ICH_AP1R0_EL2, 0);
    ARCH_WR(ICH_VMCR_EL2, 0);
    ARCH_WR(ICH_HCR_EL2, ICH_HCR_EN);
    /* Physical CPU interface at EL2: split priority drop / deactivation. */
    ARCH_WR(ICC_SRE_EL1, ARCH_RD(ICC_SRE_EL1) | 1u);
    arch_isb();
    ARCH_WR(ICC_CTLR_EL1, 1u << 1); /* EOImode */
    ARCH_WR(ICC_PMR_EL1, 0xffu);
    ARCH_WR(ICC_BPR1_EL1, 0);
    ARCH_WR(ICC_IGRPEN1_EL1, 1u);
    arch_isb();
    /* Wake this CPU's redistributor; SGIs/PPIs Group 1; the maintenance PPI on. */
    volatile uint32_t *waker = (volatile uint32_t *)(BOARD_GICR_BASE + v->cpu * BOARD_GICR_STRIDE + 0x14u);
    *waker &= ~(1u << 1);
    while (*waker & (1u << 2)) {
    }
    v->gicr_waker = 1u << 1; /* the guest finds its redistributor asleep, as after reset */
    uintptr_t sgi = GICR_SGI_BASE(v->cpu);
    *(volatile uint32_t *)(sgi + 0x80u) = 0xffffffffu;
    *(volatile uint8_t *)(sgi + 0x400u + MAINT_INTID) = 0x80u;
    *(volatile uint8_t *)(sgi + 0x400u + HYPTIMER_INTID) = 0x80u;
    *(volatile uint32_t *)(sgi + 0x100u) = (1u << MAINT_INTID) | (1u << HYPTIMER_INTID);
    ARCH_WR(cnthp_ctl_el2, 0);
}

static void console_tick_arm(void)
{
    ARCH_WR(cnthp_tval_el2, (ARCH_RD(cntfrq_el0) & 0xffffffffu) / CONSOLE_TICK_HZ);
    ARCH_WR(cnthp_ctl_el2, 1u); /* enabled, not masked */
}

void vgic_console_tick_start(void)
{
    console_tick_arm();
}

/* Index of the LR holding vintid, or -1. */
static int lr_find(struct vcpu *v, unsigned vintid, uint64_t *lr)
{
    uint64_t empty = ARCH_RD(ICH_ELRSR_EL2);
    for (unsigned i = 0; i < v->nlr; i++) {
        if (!((empty >> i) & 1u)) {
            uint64_t val = lr_read(i);
            if ((val & 0xffffffffu) == vintid) {
                *lr = val;
                return (int)i;
            }
        }
    }
    return -1;
}

static bool lr_put(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify)
{
    uint64_t empty = ARCH_RD(ICH_ELRSR_EL2);
    for (unsigned i = 0; i < v->nlr; i++) {
        if ((empty >> i) & 1u) {
            uint64_t val = LR_PENDING | LR_GROUP1 | LR_PRIO | vintid;
            if (pintid != 0) {
                val |= LR_HW | ((uint64_t)pintid << 32);
            } else if (eoi_notify) {
                val |= LR_EOI;
            }
            lr_write(i, val);
            return true;
        }
    }
    return false;
}

void vgic_inject(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify)
{
    uint64_t lr;
    int i = lr_find(v, vintid, &lr);
    if (i >= 0) {
        /* Already listed: a purely virtual interrupt that is active becomes active and pending. */
        if (pintid == 0 && !(lr & LR_PENDING)) {
            lr_write((unsigned)i, lr | LR_PENDING);
        }
        return;
    }
    if (!lr_put(v, vintid, pintid, eoi_notify)) {
        /* All LRs busy: queue it and ask for a maintenance interrupt when they drain. Hardware-mapped
         * interrupts stay active at the distributor meanwhile, so nothing is lost. */
        v->sw_pending[vintid / 32] |= 1u << (vintid % 32);
        ARCH_WR(ICH_HCR_EL2, ICH_HCR_EN | ICH_HCR_UIE);
    }
}

static void refill(struct vcpu *v)
{
    bool left = false;
    for (unsigned w = 0; w < HYP_MAX_INTID / 32 + 1; w++) {
        while (v->sw_pending[w] != 0) {
            unsigned bit = (unsigned)__builtin_ctz(v->sw_pending[w]);
            unsigned intid = w * 32u + bit;
            /* Owned SPIs and PPIs are hardware-mapped; SGIs and the UART are virtual. */
            unsigned pintid = (intid >= 16 && intid != BOARD_UART_INTID) ? intid : 0;
            if (!lr_put(v, intid, pintid, intid == BOARD_UART_INTID)) {
                left = true;
                break;
            }
            v->sw_pending[w] &= ~(1u << bit);
        }
    }
    ARCH_WR(ICH_HCR_EL2, left ? ICH_HCR_EN | ICH_HCR_UIE : ICH_HCR_EN);
}

void vgic_update_uart(struct vcpu *v)
{
    if (vuart_irq_line(v->part)) {
        vgic_inject(v, BOARD_UART_INTID, 0, true);
    }
}

static void maintenance(struct vcpu *v)
{
    uint64_t misr = ARCH_RD(S3_4_C12_C11_2); /* ICH_MISR_EL2 */
    uint64_t eisr = ARCH_RD(S3_4_C12_C11_3); /* ICH_EISR_EL2: LRs with EOI maintenance done */
    for (unsigned i = 0; i < v->nlr; i++) {
        if ((eisr >> i) & 1u) {
            lr_write(i, 0); /* the guest is done with it: free the LR */
        }
    }
    refill(v);
    if (misr & ICH_MISR_EOI) {
        vgic_update_uart(v); /* a level interrupt still asserted after the guest's EOI comes back */
    }
}

void vgic_handle_irq(struct vcpu *v)
{
    for (;;) {
        unsigned intid = (unsigned)(ARCH_RD(ICC_IAR1_EL1) & 0xffffffu);
        if (intid >= 1020) {
            return;
        }
        ARCH_WR(ICC_EOIR1_EL1, intid); /* priority drop only (EOImode 1) */
        if (intid == MAINT_INTID) {
            ARCH_WR(ICC_DIR_EL1, intid);
            maintenance(v);
        } else if (intid == HYPTIMER_INTID) {
            console_tick_arm(); /* level interrupt: the new deadline lowers it before deactivation */
            ARCH_WR(ICC_DIR_EL1, intid);
            con_drain(true);
        } else if (intid == BOARD_UART_INTID) {
            con_rx_irq();
            ARCH_WR(ICC_DIR_EL1, intid);
            if (v->part != NULL && v->part == con_focus && v->part->state == PART_RUNNING) {
                vgic_update_uart(v);
            }
        } else if (v->part != NULL && v->part->state == PART_RUNNING && intid >= 16 &&
                   (intid < 32 || part_owns_irq(v->part, intid))) {
            vgic_inject(v, intid, intid, false); /* the guest's EOI deactivates it */
        } else {
            ARCH_WR(ICC_DIR_EL1, intid); /* not the partition's (or it is stopped): dropped */
        }
    }
}

bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr)
{
    /* ISS: Op0 [21:20], Op2 [19:17], Op1 [16:14], CRn [13:10], Rt [9:5], CRm [4:1], read [0]. */
    unsigned op0 = (esr >> 20) & 3u, op2 = (esr >> 17) & 7u, op1 = (esr >> 14) & 7u;
    unsigned crn = (esr >> 10) & 15u, rt = (esr >> 5) & 31u, crm = (esr >> 1) & 15u;
    bool read = esr & 1u;
    bool sgi1r = op0 == 3 && op1 == 0 && crn == 12 && crm == 11 && op2 == 5;
    bool sgi_other = op0 == 3 && crn == 12 && crm == 11 && ((op1 == 0 && op2 == 6) || (op1 == 0 && op2 == 7));
    if (!sgi1r && !sgi_other) {
        return false;
    }
    v->guest.elr += 4;
    if (read || !sgi1r) {
        if (read && rt != 31) {
            v->guest.x[rt] = 0;
        }
        return true; /* Group 0 / alias SGIs: not used by Linux here, ignored */
    }
    uint64_t val = rt == 31 ? 0 : v->guest.x[rt];
    unsigned sgi = (unsigned)(val >> 24) & 15u;
    bool broadcast = (val >> 40) & 1u; /* IRM: all but self */
    uint64_t aff1 = (val >> 16) & 0xffu;
    /* A partition's SGIs stay inside it; with one CPU per partition only self-targets remain. */
    if (!broadcast && aff1 == ((v->mpidr >> 8) & 0xffu) && ((val >> (v->mpidr & 0xfu)) & 1u)) {
        vgic_inject(v, sgi, 0, false);
    }
    return true;
}
