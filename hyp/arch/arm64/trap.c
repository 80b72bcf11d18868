/*
 * Exceptions from the partitions: MMIO emulation on stage-2 faults, PSCI calls, GIC system-register
 * traps, and everything else reported with the partition's name.
 */
#include "arch/entry.h"
#include "arch/psci.h"
#include "arch/vgic.h"
#include "arm64/esr.h"
#include "arm64/pgtable.h"
#include "arm64/sysreg.h"
#include "hyp/lifecycle.h"
#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"

/* Refused accesses logged per partition before the reports stop (a guest can fault in a loop). */
#define FAULT_REPORTS_MAX 10u
/* HPFAR_EL2.FIPA holds IPA[47:12] from bit 4; FAR_EL2 gives the offset in the page. */
#define HPFAR_FIPA_SHIFT 4

static struct vcpu *this_vcpu(void)
{
    return (struct vcpu *)(uintptr_t)ARCH_READ_SYSREG(tpidr_el2);
}

/* Makes the faulting access look like a synchronous external abort to the guest at EL1. */
static void inject_abort(struct vcpu *v, uint64_t esr, uint64_t far)
{
    uint64_t spsr = v->guest.spsr;
    uint64_t vbar = ARCH_READ_SYSREG(vbar_el1);
    bool from_el0 = (spsr & SPSR_M_MASK) == 0;
    uint64_t offset = from_el0 ? VECTOR_LOW_A64 : ((spsr & SPSR_M_SPX) ? VECTOR_CUR_SPX : VECTOR_CUR_SP0);
    /* Same class, same-EL or lower-EL variant, ISS: synchronous external abort, WnR kept. */
    uint64_t ec = ESR_EC(esr);
    if (!from_el0) {
        ec |= ESR_EC_CUR_EL; /* 0x20 -> 0x21, 0x24 -> 0x25: taken from the current EL */
    } else {
        ec &= ~(uint64_t)ESR_EC_CUR_EL;
    }
    uint64_t iss = (esr & ESR_DABT_WNR) | ESR_FSC_SEA;
    ARCH_WRITE_SYSREG(esr_el1, (ec << ESR_EC_SHIFT) | ESR_IL | iss);
    ARCH_WRITE_SYSREG(far_el1, far);
    ARCH_WRITE_SYSREG(elr_el1, v->guest.elr);
    ARCH_WRITE_SYSREG(spsr_el1, spsr);
    v->guest.elr = vbar + offset;
    v->guest.spsr = SPSR_EL1H_MASKED;
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
        if (mmio_dispatch(v, ipa, write, &val, size)) {
            if (!write && reg != ESR_REG_ZR) {
                if ((esr & ESR_DABT_SSE) && size < 8) {
                    uint64_t m = 1ull << (size * 8 - 1);
                    val = (val ^ m) - m;
                }
                v->guest.x[reg] = (esr & ESR_DABT_SF) ? val : (uint32_t)val; /* W register: upper half 0 */
            }
            v->guest.elr += 4;
            return;
        }
    }
    struct partition *p = v->part;
    if (p->fault_reports < FAULT_REPORTS_MAX) {
        p->fault_reports++;
        hyp_printf("rtmux: %s: access to IPA 0x%lx (%s) at PC 0x%lx refused: abort injected%s\n", p->name,
                   (unsigned long)ipa, write ? "write" : "read", (unsigned long)v->guest.elr,
                   p->fault_reports == FAULT_REPORTS_MAX ? " (further reports suppressed)" : "");
    }
    inject_abort(v, esr, far);
}

void hyp_guest_sync(void)
{
    struct vcpu *v = this_vcpu();
    uint64_t esr = ARCH_READ_SYSREG(esr_el2);
    switch (ESR_EC(esr)) {
    case ESR_EC_DABT_LOW:
        data_abort(v, esr);
        return;
    case ESR_EC_HVC64:
        psci_guest_call(v); /* ELR already points past the HVC */
        return;
    case ESR_EC_SYSREG:
        if (vgic_sysreg_trap(v, esr)) {
            return;
        }
        break;
    case ESR_EC_SMC64:
        v->guest.elr += 4; /* a trapped SMC returns to itself */
        psci_guest_call(v);
        return;
    case ESR_EC_IABT_LOW: {
        uint64_t far = ARCH_READ_SYSREG(far_el2);
        hyp_printf("rtmux: %s: instruction fetch from 0x%lx outside the partition: abort injected\n",
                   v->part->name, (unsigned long)far);
        inject_abort(v, esr, far);
        return;
    }
    default:
        break;
    }
    char why[96];
    (void)hyp_snprintf(why, sizeof(why), "unexpected trap ESR 0x%lx at PC 0x%lx", (unsigned long)esr,
                       (unsigned long)v->guest.elr);
    part_stop(v, why);
}

void hyp_guest_irq(void)
{
    hyp_el2_irq();
}

void hyp_el2_irq(void)
{
    /* Physical interrupts reach EL2 only on CPUs of partitions without direct delivery (Linux). */
    vgic_handle_irq(this_vcpu());
}

void hyp_bad_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far)
{
    hyp_panic("exception %lu in the hypervisor: ESR 0x%lx ELR 0x%lx FAR 0x%lx", (unsigned long)kind,
              (unsigned long)esr, (unsigned long)elr, (unsigned long)far);
}
