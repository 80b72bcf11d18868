/*
 * The PSCI the partitions see (HVC, or SMC trapped by HCR_EL2.TSC), which never reaches firmware: a
 * partition may only act on itself and its own CPUs.
 */
#include "arch/psci.h"

#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "hyp/lifecycle.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"

/* SMC32 function IDs and arguments are 32-bit: the upper half of the register is ignored. */
#define PSCI_W32 0xffffffffu
/* The bits of a target_cpu argument (MPIDR layout) that may be set: Aff3 [39:32], Aff2..Aff0 [23:0]. */
#define PSCI_MPIDR_AFF (MPIDR_AFF012_MASK | (0xffull << MPIDR_AFF3_SHIFT))
/* An instruction's alignment: CPU_ON's entry point must be one. */
#define INSN_ALIGN 4u

/*
 * The CPU of v's partition that PSCI argument `mpidr` names, in *cpu; otherwise the error: DENIED for a
 * CPU of another partition (refused, as it always was), INVALID_PARAMETERS for one the partition cannot
 * name (no such CPU, or one no partition has, or stray bits in the argument).
 */
static int64_t target_cpu(const struct vcpu *v, uint64_t mpidr, unsigned *cpu)
{
    if ((mpidr & ~PSCI_MPIDR_AFF) != 0) {
        return PSCI_INVALID_PARAMS;
    }
    uint64_t aff = mpidr_affinity(mpidr);
    int c = part_cpu_of_affinity(v->part, aff);
    if (c >= 0) {
        *cpu = (unsigned)c;
        return PSCI_SUCCESS;
    }
    for (unsigned o = 0; o < hyp_nparts; o++) {
        if (&hyp_part[o] != v->part && part_cpu_of_affinity(&hyp_part[o], aff) >= 0) {
            return PSCI_DENIED;
        }
    }
    return PSCI_INVALID_PARAMS;
}

/* CPU_ON(target_cpu, entry_point_address, context_id): the target must be the caller's partition's and
 * off, the entry point an instruction address inside the partition's RAM (it starts there with the MMU
 * off, so an IPA). */
static int64_t cpu_on(struct vcpu *v, bool smc64)
{
    uint64_t w = smc64 ? ~0ull : PSCI_W32;
    uint64_t entry = v->guest.x[2] & w;
    const struct partition *p = v->part;
    unsigned cpu = 0;
    int64_t ret = target_cpu(v, v->guest.x[1] & w, &cpu);
    if (ret != PSCI_SUCCESS) {
        return ret;
    }
    if (entry < p->ram_ipa || entry - p->ram_ipa >= p->ram_size || entry % INSN_ALIGN != 0) {
        return PSCI_INVALID_ADDRESS;
    }
    switch (part_cpu_on(v, cpu, entry, v->guest.x[3] & w)) {
    case CPU_ON_STARTED:
        return PSCI_SUCCESS;
    case CPU_ON_ALREADY:
        return PSCI_ALREADY_ON;
    case CPU_ON_PENDING:
        return PSCI_ON_PENDING;
    default:
        return PSCI_DENIED;
    }
}

/* AFFINITY_INFO(target_affinity, lowest_affinity_level): level 0 only (a CPU; PSCI 1.0 allows that). */
static int64_t affinity_info(const struct vcpu *v, bool smc64)
{
    uint64_t w = smc64 ? ~0ull : PSCI_W32;
    unsigned cpu = 0;
    if ((v->guest.x[2] & PSCI_W32) != 0) {
        return PSCI_INVALID_PARAMS;
    }
    int64_t ret = target_cpu(v, v->guest.x[1] & w, &cpu);
    if (ret != PSCI_SUCCESS) {
        return PSCI_INVALID_PARAMS; /* another partition's CPU does not exist for this one */
    }
    switch (part_cpu_power(v->part, cpu)) {
    case VCPU_ON:
        return PSCI_AFFINITY_ON;
    case VCPU_ON_PENDING:
        return PSCI_AFFINITY_ON_PENDING;
    default:
        return PSCI_AFFINITY_OFF;
    }
}

/*
 * SYSTEM_RESET2 is how a partition reports a fault, so it goes to the partition's fault policy. A warm
 * reset is Linux's panic: the tools give Linux `panic=-1 reboot=panic_warm` (an immediate reset after a
 * panic, a warm one), while its ordinary `reboot` is a cold SYSTEM_RESET. rtmux's vendor type is the
 * rtos's fatal error. Returns for any other type.
 */
static void reset2(struct vcpu *v, bool smc64)
{
    uint64_t type = v->guest.x[1] & PSCI_W32;
    uint64_t cookie = smc64 ? v->guest.x[2] : v->guest.x[2] & PSCI_W32;
    char what[HYP_FAULT_TEXT_MAX];
    if (type == PSCI_RESET2_WARM) {
        part_fault(v, v->part->kind == PART_LINUX ? "kernel panic (warm reset, PSCI SYSTEM_RESET2)"
                                                  : "warm reset (PSCI SYSTEM_RESET2)");
    }
    if (type == PSCI_RESET2_RTMUX_FATAL) {
        (void)hyp_snprintf(what, sizeof(what), "fatal error (PSCI SYSTEM_RESET2, cookie 0x%lx)",
                           (unsigned long)cookie);
        part_fault(v, what);
    }
}

void psci_guest_call(struct vcpu *v)
{
    uint64_t fn = v->guest.x[0] & PSCI_W32;
    int64_t ret = PSCI_NOT_SUPPORTED;
    switch (fn) {
    case PSCI_VERSION:
        ret = PSCI_VERSION_1_1; /* SYSTEM_RESET2 is 1.1's */
        break;
    case PSCI_FEATURES: {
        uint64_t q = v->guest.x[1] & PSCI_W32;
        ret = (q == PSCI_VERSION || q == PSCI_FEATURES || q == PSCI_SYSTEM_OFF || q == PSCI_SYSTEM_RESET ||
               q == PSCI_AFFINITY_INFO_32 || q == PSCI_AFFINITY_INFO_64 || q == PSCI_CPU_ON_32 ||
               q == PSCI_CPU_ON_64 || q == PSCI_CPU_OFF || q == PSCI_SYSTEM_RESET2_32 ||
               q == PSCI_SYSTEM_RESET2_64)
                  ? PSCI_SUCCESS
                  : PSCI_NOT_SUPPORTED;
        break;
    }
    case PSCI_AFFINITY_INFO_32:
    case PSCI_AFFINITY_INFO_64:
        ret = affinity_info(v, fn == PSCI_AFFINITY_INFO_64);
        break;
    case PSCI_CPU_ON_32:
    case PSCI_CPU_ON_64:
        ret = cpu_on(v, fn == PSCI_CPU_ON_64);
        break;
    case PSCI_CPU_OFF:
        part_cpu_off(v);
    case PSCI_SYSTEM_OFF:
        part_stop(v, "powered off (PSCI)");
    case PSCI_SYSTEM_RESET:
        part_reset(v);
    case PSCI_SYSTEM_RESET2_32:
    case PSCI_SYSTEM_RESET2_64:
        reset2(v, fn == PSCI_SYSTEM_RESET2_64);
        ret = PSCI_INVALID_PARAMS; /* a reset type nobody defined */
        break;
    default:
        break;
    }
    v->guest.x[0] = (uint64_t)ret;
}
