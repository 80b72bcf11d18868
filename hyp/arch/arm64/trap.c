/*
 * Exceptions from the partitions: MMIO emulation on stage-2 faults, PSCI calls, and everything else
 * reported with the partition's name.
 */
#include "arch/cpu.h"
#include "board.h"
#include "hyp/hyp.h"

void hyp_guest_sync(void);
void hyp_guest_irq(void);
void hyp_el2_irq(void);
void hyp_bad_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far) __attribute__((noreturn));

static struct vcpu *this_vcpu(void)
{
    return (struct vcpu *)(uintptr_t)ARCH_READ_SYSREG(tpidr_el2);
}

/* Makes the faulting access look like a synchronous external abort to the guest at EL1. */
static void inject_abort(struct vcpu *v, uint64_t esr, uint64_t far)
{
    uint64_t spsr = v->guest.spsr;
    uint64_t vbar = ARCH_READ_SYSREG(vbar_el1);
    uint64_t from_el0 = (spsr & 0xf) == 0;
    uint64_t offset = from_el0 ? 0x400 : ((spsr & 1) ? 0x200 : 0x000);
    /* Same class, same-EL or lower-EL variant, ISS: synchronous external abort (DFSC/IFSC 0x10). */
    uint64_t ec = (esr >> EC_SHIFT) & 0x3f;
    if (!from_el0) {
        ec |= 1; /* 0x20 -> 0x21, 0x24 -> 0x25: taken from the current EL */
    } else {
        ec &= ~1ull;
    }
    uint64_t iss = (esr & (1u << 6)) | 0x10; /* keep WnR */
    ARCH_WRITE_SYSREG(esr_el1, (ec << EC_SHIFT) | (1u << 25) | iss);
    ARCH_WRITE_SYSREG(far_el1, far);
    ARCH_WRITE_SYSREG(elr_el1, v->guest.elr);
    ARCH_WRITE_SYSREG(spsr_el1, spsr);
    v->guest.elr = vbar + offset;
    v->guest.spsr = SPSR_EL1H_MASKED;
}

static bool emulate(struct vcpu *v, uint64_t ipa, bool write, uint64_t *val, unsigned size)
{
    if (ipa >= BOARD_UART_BASE && ipa < BOARD_UART_BASE + BOARD_UART_SIZE) {
        return vuart_access(v, ipa - BOARD_UART_BASE, write, val, size);
    }
    if (ipa >= BOARD_GICD_BASE && ipa < BOARD_GICD_BASE + BOARD_GICD_SIZE) {
        return vgicd_access(v, ipa - BOARD_GICD_BASE, write, val, size);
    }
    if (ipa >= BOARD_GICR_BASE && ipa < BOARD_GICR_BASE + BOARD_MAX_CPUS * BOARD_GICR_STRIDE) {
        return vgicr_access(v, ipa, write, val, size);
    }
    return false;
}

static void data_abort(struct vcpu *v, uint64_t esr)
{
    uint64_t far = ARCH_READ_SYSREG(far_el2);
    uint64_t ipa = ((ARCH_READ_SYSREG(hpfar_el2) >> 4) << 12) | (far & 0xfff);
    bool isv = (esr >> 24) & 1;
    if (isv) {
        unsigned size = 1u << ((esr >> 22) & 3);
        unsigned reg = (esr >> 16) & 31;
        bool write = (esr >> 6) & 1;
        uint64_t val = write ? (reg == 31 ? 0 : v->guest.x[reg]) : 0;
        if (emulate(v, ipa, write, &val, size)) {
            if (v->part->kind == PART_LINUX && ipa >= BOARD_UART_BASE &&
                ipa < BOARD_UART_BASE + BOARD_UART_SIZE) {
                vgic_update_uart(v);
            }
            if (!write && reg != 31) {
                bool sign = (esr >> 21) & 1;
                if (sign && size < 8) {
                    uint64_t m = 1ull << (size * 8 - 1);
                    val = (val ^ m) - m;
                }
                v->guest.x[reg] = ((esr >> 15) & 1) ? val : val & 0xffffffffu; /* SF: 64-bit register */
            }
            v->guest.elr += 4;
            return;
        }
    }
    struct partition *p = v->part;
    if (p->fault_reports < 10) {
        p->fault_reports++;
        hyp_printf("rtmux: %s: access to IPA 0x%lx (%s) at PC 0x%lx refused: abort injected%s\n", p->name,
                   (unsigned long)ipa, ((esr >> 6) & 1) ? "write" : "read", (unsigned long)v->guest.elr,
                   p->fault_reports == 10 ? " (further reports suppressed)" : "");
    }
    inject_abort(v, esr, far);
}

void hyp_guest_sync(void)
{
    struct vcpu *v = this_vcpu();
    uint64_t esr = ARCH_READ_SYSREG(esr_el2);
    switch ((esr >> EC_SHIFT) & 0x3f) {
    case EC_DABT_LOW:
        data_abort(v, esr);
        return;
    case EC_HVC64:
        psci_guest_call(v); /* ELR already points past the HVC */
        return;
    case EC_SYSREG:
        if (vgic_sysreg_trap(v, esr)) {
            return;
        }
        break;
    case EC_SMC64:
        v->guest.elr += 4; /* a trapped SMC returns to itself */
        psci_guest_call(v);
        return;
    case EC_IABT_LOW: {
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
