/*
 * Exceptions from the partitions: MMIO emulation on stage-2 faults, PSCI calls, GIC system-register
 * traps, and everything else reported with the partition's name.
 */
#include "arch/cpu.h"
#include "arch/entry.h"
#include "arch/psci.h"
#include "arch/spinlock.h"
#include "arch/vgic.h"
#include "arm64/esr.h"
#include "arm64/pgtable.h"
#include "arm64/sysreg.h"
#include "hyp/lifecycle.h"
#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"

/* HPFAR_EL2.FIPA holds IPA[47:12] from bit 4; FAR_EL2 gives the offset in the page. */
#define HPFAR_FIPA_SHIFT 4
/* System instructions (op0 = 1) that trap with HCR_EL2.TSW: DC ISW, DC CSW, DC CISW (CRn 7, op2 2). */
#define SYS_CACHE_CRN   7u
#define SYS_SETWAY_OP2  2u
#define SYS_DC_ISW_CRM  6u
#define SYS_DC_CSW_CRM  10u
#define SYS_DC_CISW_CRM 14u
/* PMU registers: op0 3, op1 3, CRn 9 (PMCR..PMOVSSET) or CRn 14 (event counters and types, PMCCFILTR). */
#define SYSREG_PMU_OP1  3u
#define SYSREG_PMU_CRN  9u
#define SYSREG_PMEV_CRN 14u
/* ACTLR_EL1: op0 3, op1 0, CRn 1, CRm 0, op2 1. */
#define SYSREG_ACTLR_CRN 1u
#define SYSREG_ACTLR_OP2 1u

static struct vcpu *this_vcpu(void)
{
    return (struct vcpu *)(uintptr_t)ARCH_READ_SYSREG(tpidr_el2);
}

/* Reports go through the partition's line limit (hyp/partition.h): *suppressed is how many of its lines
 * were not printed since the last one that was. */
static bool report_allowed(struct partition *p, uint64_t *suppressed)
{
    return part_line_allowed(p, suppressed);
}

/* Takes the guest to its EL1 synchronous exception vector with ESR_EL1 = esr_el1 and FAR_EL1 = far, as
 * the hardware would: the same-EL or lower-EL vector from its SPSR, registers set for its ERET. */
static void inject_sync(struct vcpu *v, uint64_t esr_el1, uint64_t far)
{
    uint64_t spsr = v->guest.spsr;
    uint64_t vbar = ARCH_READ_SYSREG(vbar_el1);
    bool from_el0 = (spsr & SPSR_M_MASK) == 0;
    uint64_t offset = !from_el0                 ? ((spsr & SPSR_M_SPX) ? VECTOR_CUR_SPX : VECTOR_CUR_SP0)
                      : (spsr & SPSR_M_AARCH32) ? VECTOR_LOW_A32
                                                : VECTOR_LOW_A64;
    ARCH_WRITE_SYSREG(esr_el1, esr_el1);
    ARCH_WRITE_SYSREG(far_el1, far);
    ARCH_WRITE_SYSREG(elr_el1, v->guest.elr);
    ARCH_WRITE_SYSREG(spsr_el1, spsr);
    v->guest.elr = vbar + offset;
    v->guest.spsr = SPSR_EL1H_MASKED;
}

/* Makes the faulting access look like a synchronous external abort to the guest at EL1. */
static void inject_abort(struct vcpu *v, uint64_t esr, uint64_t far)
{
    bool from_el0 = (v->guest.spsr & SPSR_M_MASK) == 0;
    /* Same class, same-EL or lower-EL variant, ISS: synchronous external abort, WnR kept. */
    uint64_t ec = ESR_EC(esr);
    if (!from_el0) {
        ec |= ESR_EC_CUR_EL; /* 0x20 -> 0x21, 0x24 -> 0x25: taken from the current EL */
    } else {
        ec &= ~(uint64_t)ESR_EC_CUR_EL;
    }
    uint64_t iss = (esr & ESR_DABT_WNR) | ESR_FSC_SEA;
    inject_sync(v, (ec << ESR_EC_SHIFT) | ESR_IL | iss, far);
}

/* An undefined instruction at the guest's PC (a system register it may not use). */
static void inject_undef(struct vcpu *v)
{
    inject_sync(v, ((uint64_t)ESR_EC_UNKNOWN << ESR_EC_SHIFT) | ESR_IL, 0);
}

static void data_abort(struct vcpu *v, uint64_t esr)
{
    uint64_t far = ARCH_READ_SYSREG(far_el2);
    uint64_t ipa =
        ((ARCH_READ_SYSREG(hpfar_el2) >> HPFAR_FIPA_SHIFT) << PAGE_SHIFT) | (far & (PAGE_SIZE - 1u));
    bool write = (esr & ESR_DABT_WNR) != 0;
    if (esr & ESR_DABT_ISV) {
        unsigned size = 1u << ((esr >> ESR_DABT_SAS_SHIFT) & ESR_DABT_SAS_MASK);
        unsigned reg = (esr >> ESR_DABT_SRT_SHIFT) & ESR_DABT_SRT_MASK;
        uint64_t val = write ? (reg == ESR_REG_ZR ? 0 : v->guest.x[reg]) : 0;
        if (write && size < 8) {
            val &= (1ull << (size * 8u)) - 1u; /* a handler sees only the bytes written */
        }
        if (mmio_dispatch(v, ipa, write, &val, size)) {
            if (!write && reg != ESR_REG_ZR) {
                if (size < 8) {
                    val &= (1ull << (size * 8u)) - 1u;
                }
                if ((esr & ESR_DABT_SSE) && size < 8) {
                    uint64_t m = 1ull << (size * 8 - 1);
                    val = (val ^ m) - m;
                }
                v->guest.x[reg] = (esr & ESR_DABT_SF) ? val : (uint32_t)val; /* W register: upper half 0 */
            }
            guest_skip_insn(&v->guest);
            return;
        }
    }
    struct partition *p = v->part;
    __atomic_fetch_add(&p->stats.aborts, 1u, __ATOMIC_RELAXED);
    uint64_t quiet;
    if (report_allowed(p, &quiet)) {
        hyp_printf("rtmux: %s: access to IPA 0x%lx (%s) at PC 0x%lx refused: abort injected (%lu more "
                   "reports suppressed before this one)\n",
                   p->name, (unsigned long)ipa, write ? "write" : "read", (unsigned long)v->guest.elr,
                   (unsigned long)quiet);
    }
    inject_abort(v, esr, far);
}

static void instruction_abort(struct vcpu *v, uint64_t esr)
{
    struct partition *p = v->part;
    uint64_t far = ARCH_READ_SYSREG(far_el2), quiet;
    __atomic_fetch_add(&p->stats.aborts, 1u, __ATOMIC_RELAXED);
    if (report_allowed(p, &quiet)) {
        hyp_printf("rtmux: %s: instruction fetch from 0x%lx outside the partition: abort injected (%lu more "
                   "reports suppressed before this one)\n",
                   p->name, (unsigned long)far, (unsigned long)quiet);
    }
    inject_abort(v, esr, far);
}

/*
 * System registers and instructions trapped by HCR_EL2.TSW/TACR/TIDCP and MDCR_EL2 (guest.c). Set/way
 * maintenance is ignored: caches are the hypervisor's (it cleans a partition's images to the point of
 * coherency before entry), and an invalidate by set/way would reach lines of other partitions. The
 * auxiliary control registers, and the rtos's PMU and debug registers (Linux's are its own and do not
 * trap), read as zero and ignore writes. Anything else trapped is undefined.
 */
static bool sysreg_emulate(struct vcpu *v, uint64_t esr)
{
    unsigned op0 = ESR_SYSREG_OP0(esr), op1 = ESR_SYSREG_OP1(esr), crn = ESR_SYSREG_CRN(esr);
    unsigned crm = ESR_SYSREG_CRM(esr), op2 = ESR_SYSREG_OP2(esr), rt = ESR_SYSREG_RT(esr);
    struct partition *p = v->part;
    bool setway = op0 == 1 && op1 == 0 && crn == SYS_CACHE_CRN && op2 == SYS_SETWAY_OP2 &&
                  (crm == SYS_DC_ISW_CRM || crm == SYS_DC_CSW_CRM || crm == SYS_DC_CISW_CRM);
    bool debug = op0 == 2;
    bool pmu = op0 == 3 && op1 == SYSREG_PMU_OP1 && (crn == SYSREG_PMU_CRN || crn == SYSREG_PMEV_CRN);
    bool actlr = op0 == 3 && op1 == 0 && crn == SYSREG_ACTLR_CRN && crm == 0 && op2 == SYSREG_ACTLR_OP2;
    if (setway) {
        __atomic_fetch_add(&p->stats.setway, 1u, __ATOMIC_RELAXED);
    } else if (debug || pmu || actlr) {
        __atomic_fetch_add(&p->stats.sysregs, 1u, __ATOMIC_RELAXED);
    } else {
        return false;
    }
    if (ESR_SYSREG_READ(esr) && rt != ESR_REG_ZR) {
        v->guest.x[rt] = 0;
    }
    guest_skip_insn(&v->guest);
    return true;
}

static void sysreg_refused(struct vcpu *v, uint64_t esr)
{
    struct partition *p = v->part;
    uint64_t quiet;
    __atomic_fetch_add(&p->stats.undefs, 1u, __ATOMIC_RELAXED);
    if (report_allowed(p, &quiet)) {
        hyp_printf("rtmux: %s: system register op0 %u op1 %u CRn %u CRm %u op2 %u at PC 0x%lx refused: "
                   "undefined instruction injected (%lu more reports suppressed before this one)\n",
                   p->name, (unsigned)ESR_SYSREG_OP0(esr), (unsigned)ESR_SYSREG_OP1(esr),
                   (unsigned)ESR_SYSREG_CRN(esr), (unsigned)ESR_SYSREG_CRM(esr),
                   (unsigned)ESR_SYSREG_OP2(esr), (unsigned long)v->guest.elr, (unsigned long)quiet);
    }
    inject_undef(v);
}

/* The entry counter of each exception class hyp_guest_sync handles; others count as ENTRY_OTHER. */
static enum hyp_entry entry_kind(uint64_t ec)
{
    switch (ec) {
    case ESR_EC_DABT_LOW:
        return ENTRY_DABT;
    case ESR_EC_IABT_LOW:
        return ENTRY_IABT;
    case ESR_EC_HVC64:
        return ENTRY_HVC;
    case ESR_EC_SMC64:
        return ENTRY_SMC;
    case ESR_EC_SYSREG:
        return ENTRY_SYSREG;
    case ESR_EC_WFX:
        return ENTRY_WFI;
    default:
        return ENTRY_OTHER;
    }
}

void hyp_guest_sync(void)
{
    struct vcpu *v = this_vcpu();
    uint64_t esr = ARCH_READ_SYSREG(esr_el2);
    vcpu_count_entry(v, entry_kind(ESR_EC(esr)));
    switch (ESR_EC(esr)) {
    case ESR_EC_DABT_LOW:
        data_abort(v, esr);
        return;
    case ESR_EC_HVC64:
        psci_guest_call(v); /* ELR already points past the HVC */
        return;
    case ESR_EC_SYSREG:
        if (!vgic_sysreg_trap(v, esr) && !sysreg_emulate(v, esr)) {
            sysreg_refused(v, esr);
        }
        return;
    case ESR_EC_SMC64:
        guest_skip_insn(&v->guest); /* a trapped SMC returns to itself */
        psci_guest_call(v);
        return;
    case ESR_EC_IABT_LOW:
        instruction_abort(v, esr);
        return;
    case ESR_EC_WFX:
        /* Trapped only for the rtos of a shared CPU (HCR_EL2.TWI, guest.c): its idle. */
        if (v->part->kind != PART_LINUX && v->part->share.rtos) {
            part_rtos_idle(v);
        }
        guest_skip_insn(&v->guest);
        return;
    default:
        break;
    }
    char why[HYP_FAULT_TEXT_MAX];
    (void)hyp_snprintf(why, sizeof(why), "unexpected trap ESR 0x%lx at PC 0x%lx", (unsigned long)esr,
                       (unsigned long)v->guest.elr);
    part_fault(v, why);
}

/* A physical SError taken from a partition (HCR_EL2.AMO): an asynchronous external abort of something
 * the partition did. It is the partition's fault, not the hypervisor's: its fault policy applies. */
void hyp_guest_serror(void)
{
    struct vcpu *v = this_vcpu();
    char why[HYP_FAULT_TEXT_MAX];
    vcpu_count_entry(v, ENTRY_SERROR);
    (void)hyp_snprintf(why, sizeof(why), "SError (ESR 0x%lx)", (unsigned long)ARCH_READ_SYSREG(esr_el2));
    part_fault(v, why);
}

/* Physical interrupts reach EL2 only on CPUs of partitions without direct delivery (Linux), and on
 * CPUs parked in the hypervisor. On a CPU shared with the rtos, an interrupt of the rtos's gives it the
 * CPU at once (before anything Linux's CPU was asked: the rtos first). */
void hyp_guest_irq(void)
{
    uint64_t t0 = arch_counter();
    struct vcpu *v = this_vcpu();
    vcpu_count_entry(v, ENTRY_IRQ);
    if (vgic_handle_irq(v)) {
        part_rtos_preempt(v, t0);
    }
    part_cpu_poll(v); /* a kick may have asked this CPU to stop */
}

void hyp_el2_irq(void)
{
    struct vcpu *v = this_vcpu();
    vcpu_count_entry(v, ENTRY_EL2_IRQ);
    (void)vgic_handle_irq(v); /* no rtos runs on a CPU that waits here */
}

void hyp_bad_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far)
{
    hyp_panic("exception %lu in the hypervisor: ESR 0x%lx ELR 0x%lx FAR 0x%lx", (unsigned long)kind,
              (unsigned long)esr, (unsigned long)elr, (unsigned long)far);
}
