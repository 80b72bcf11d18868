/*
 * PSCI: calls to the firmware (EL3, SMC) for the hypervisor itself, and the PSCI the partitions see
 * (HVC, or SMC trapped by HCR_EL2.TSC), which never reaches firmware: a partition may only act on
 * itself.
 */
#include "arch/cpu.h"
#include "hyp/hyp.h"

#define PSCI_VERSION          0x84000000u
#define PSCI_CPU_OFF          0x84000002u
#define PSCI_CPU_ON_64        0xc4000003u
#define PSCI_AFFINITY_INFO_64 0xc4000004u
#define PSCI_SYSTEM_OFF       0x84000008u
#define PSCI_SYSTEM_RESET     0x84000009u
#define PSCI_FEATURES         0x8400000au
#define PSCI_SUCCESS          0
#define PSCI_NOT_SUPPORTED    (-1)
#define PSCI_INVALID_PARAMS   (-2)
#define PSCI_DENIED           (-3)
#define PSCI_ALREADY_ON       (-4)

static int64_t smc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = a1;
    register uint64_t x2 __asm__("x2") = a2;
    register uint64_t x3 __asm__("x3") = a3;
    __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (int64_t)x0;
}

int64_t psci_fw_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t ctx)
{
    return smc(PSCI_CPU_ON_64, mpidr, entry, ctx);
}

void psci_fw_system_off(void)
{
    (void)smc(PSCI_SYSTEM_OFF, 0, 0, 0);
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* True if MPIDR affinity `mpidr` names a CPU of v's partition (QEMU virt: Aff0 = CPU number). */
static bool own_cpu(const struct vcpu *v, uint64_t mpidr)
{
    uint64_t aff0 = mpidr & 0xffu;
    return (mpidr & 0xff00ffff00ull) == 0 && aff0 < HYP_MAX_CPUS && ((v->part->cpu_mask >> aff0) & 1u) != 0;
}

void psci_guest_call(struct vcpu *v)
{
    uint64_t fn = v->guest.x[0] & 0xffffffffu;
    int64_t ret = PSCI_NOT_SUPPORTED;
    switch (fn) {
    case PSCI_VERSION:
        ret = 0x10000; /* 1.0 */
        break;
    case PSCI_FEATURES: {
        uint64_t q = v->guest.x[1] & 0xffffffffu;
        ret = (q == PSCI_VERSION || q == PSCI_FEATURES || q == PSCI_SYSTEM_OFF || q == PSCI_SYSTEM_RESET ||
               q == PSCI_AFFINITY_INFO_64 || q == PSCI_CPU_OFF)
                  ? PSCI_SUCCESS
                  : PSCI_NOT_SUPPORTED;
        break;
    }
    case PSCI_AFFINITY_INFO_64:
        /* Only the partition's own CPUs exist for it; all of them run (one CPU per partition so far). */
        ret = own_cpu(v, v->guest.x[1]) ? 0 : PSCI_INVALID_PARAMS;
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
    default:
        break;
    }
    v->guest.x[0] = (uint64_t)ret;
}
