/*
 * Entering a partition on this CPU: the EL2 controls that make it a guest, then its entry state.
 */
#include "arch/guest.h"

#include "arch/cpu.h"
#include "arch/entry.h"
#include "arm64/sysreg.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"

/* 39-bit IPA (level-1 start), write-back inner-shareable walks, 4 KiB granule, 40-bit PA. */
#define VTCR_VALUE                                                                                   \
    (TCR_T0SZ(39) | VTCR_EL2_SL0_L1 | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K | \
     VTCR_EL2_PS_40BIT | VTCR_EL2_RES1)

void arch_guest_start(struct vcpu *v)
{
    struct partition *p = v->part;
    /* No HCR_EL2.FB: each CPU runs one partition's only vCPU and never another's, so a guest's local TLB
     * and I-cache maintenance only needs to reach this CPU; forcing it to broadcast would make Linux's
     * local flushes hit the rtos CPU as well. Set it once a partition spans several CPUs. */
    uint64_t hcr = HCR_EL2_VM | HCR_EL2_RW | HCR_EL2_TSC | HCR_EL2_BSU_IS;
    if (p->kind == PART_LINUX) {
        hcr |= HCR_EL2_IMO | HCR_EL2_FMO | HCR_EL2_AMO; /* interrupts through the virtual CPU interface */
    }
    /* The rtos takes physical interrupts at EL1 directly: IMO/FMO clear, no trap on its hot path. */
    ARCH_WRITE_SYSREG(vtcr_el2, VTCR_VALUE);
    ARCH_WRITE_SYSREG(vttbr_el2, p->vttbr);
    ARCH_WRITE_SYSREG(hcr_el2, hcr);
    ARCH_WRITE_SYSREG(cptr_el2, CPTR_EL2_RES1);
    ARCH_WRITE_SYSREG(hstr_el2, 0);
    ARCH_WRITE_SYSREG(cnthctl_el2, CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN);
    ARCH_WRITE_SYSREG(cntvoff_el2, 0);
    ARCH_WRITE_SYSREG(vpidr_el2, ARCH_READ_SYSREG(midr_el1));
    ARCH_WRITE_SYSREG(vmpidr_el2, ARCH_READ_SYSREG(mpidr_el1));
    ARCH_WRITE_SYSREG(sctlr_el1, SCTLR_EL1_RES1);
    ARCH_WRITE_SYSREG(cpacr_el1, 0);
    ARCH_WRITE_SYSREG(vbar_el1, 0);
    arch_isb();
    __asm__ volatile("tlbi vmalls12e1\n\tdsb nsh\n\tisb" : : : "memory");
    for (unsigned i = 0; i < 31; i++) {
        v->guest.x[i] = 0;
    }
    v->guest.x[0] = p->dtb.size != 0 ? p->dtb.ipa : 0;
    v->guest.elr = p->entry_ipa;
    v->guest.spsr = SPSR_EL1H_MASKED;
    arch_guest_enter(&v->guest);
}

void arch_guest_park(bool keep_irqs)
{
    if (keep_irqs) {
        ARCH_WRITE_SYSREG(hcr_el2, HCR_EL2_RW | HCR_EL2_IMO | HCR_EL2_FMO);
        arch_isb();
        arch_irq_enable();
    } else {
        ARCH_WRITE_SYSREG(hcr_el2, HCR_EL2_RW); /* nothing of the partition's can reach this CPU any more */
    }
    for (;;) {
        arch_wfi();
    }
}
