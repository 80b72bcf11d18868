/*
 * PSCI calls from the hypervisor to the EL3 firmware (SMC conduit).
 */
#include "arch/firmware.h"

#include "arch/cpu.h"
#include "arm64/psci.h"

static int64_t smc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = a1;
    register uint64_t x2 __asm__("x2") = a2;
    register uint64_t x3 __asm__("x3") = a3;
    __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (int64_t)x0;
}

int64_t fw_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t ctx)
{
    return smc(PSCI_CPU_ON_64, mpidr, entry, ctx);
}

void fw_system_off(void)
{
    (void)smc(PSCI_SYSTEM_OFF, 0, 0, 0);
    for (;;) {
        arch_wfi();
    }
}
