/*
 * The PSCI the partitions see (HVC, or SMC trapped by HCR_EL2.TSC), which never reaches firmware: a
 * partition may only act on itself.
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

/* True if MPIDR affinity `mpidr` names a CPU of v's partition (QEMU virt: Aff0 = CPU number). */
static bool own_cpu(const struct vcpu *v, uint64_t mpidr)
{
    uint64_t aff0 = MPIDR_AFF0(mpidr);
    /* Aff1, Aff2 and Aff3 must be zero: QEMU virt has one cluster. */
    bool cluster0 = (mpidr & ((0xffull << 8) | (0xffull << 16) | (0xffull << MPIDR_AFF3_SHIFT))) == 0;
    return cluster0 && aff0 < HYP_MAX_CPUS && ((v->part->cpu_mask >> aff0) & 1u) != 0;
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
               q == PSCI_AFFINITY_INFO_64 || q == PSCI_CPU_OFF || q == PSCI_SYSTEM_RESET2_32 ||
               q == PSCI_SYSTEM_RESET2_64)
                  ? PSCI_SUCCESS
                  : PSCI_NOT_SUPPORTED;
        break;
    }
    case PSCI_AFFINITY_INFO_64:
        /* Only the partition's own CPUs exist for it; all of them run (one CPU per partition so far). */
        ret = own_cpu(v, v->guest.x[1]) ? PSCI_AFFINITY_ON : PSCI_INVALID_PARAMS;
        break;
    case PSCI_CPU_ON_64:
        /* Another partition's CPU is not this partition's to start; its own are all running already. */
        ret = own_cpu(v, v->guest.x[1]) ? PSCI_ALREADY_ON : PSCI_DENIED;
        break;
    case PSCI_CPU_OFF:
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
