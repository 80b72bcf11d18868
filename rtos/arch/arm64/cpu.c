/*
 * arm64 pieces of the arch_ contract that need no assembly: thread context set-up, MMU, PSCI.
 */
#include <stddef.h>
#include <stdint.h>

#include "arch/cpu.h"

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void *), void *arg)
{
    /* AAPCS64: SP 16-byte aligned at every public interface. */
    uintptr_t sp = stack_top & ~(uintptr_t)15;
    for (size_t i = 0; i < 10; i++) {
        ctx->x19_x28[i] = 0;
    }
    ctx->x19_x28[0] = (uint64_t)(uintptr_t)entry;
    ctx->x19_x28[1] = (uint64_t)(uintptr_t)arg;
    ctx->fp = 0;
    ctx->lr = (uint64_t)(uintptr_t)arch_thread_start;
    ctx->sp = sp;
    ctx->fpcr = 0; /* round to nearest, no traps, IEEE behaviour */
    ctx->fpsr = 0;
    for (size_t i = 0; i < 64; i++) {
        ctx->q[i] = 0;
    }
}

/*
 * Identity map with 1 GiB blocks through one level-1 table (4 KiB granule, 39-bit VA): the first GiB
 * (all of QEMU virt's devices) as Device-nGnRnE, the second (RAM) as normal write-back memory. Inside
 * an rtmux partition stage 2 decides what really exists behind these ranges.
 */
#define PTE_VALID      (1ull << 0)
#define PTE_BLOCK      (0ull << 1)
#define PTE_ATTR(i)    ((uint64_t)(i) << 2)
#define PTE_SH_INNER   (3ull << 8)
#define PTE_AF         (1ull << 10)
#define PTE_PXN        (1ull << 53)
#define PTE_UXN        (1ull << 54)
#define MAIR_DEVICE    0x00u /* attr index 0: Device-nGnRnE */
#define MAIR_NORMAL_WB 0xffu /* attr index 1: Normal, inner/outer write-back RW-allocate */
#define GIB            (1ull << 30)

static uint64_t l1_table[512] __attribute__((aligned(4096), section(".pgtables")));

void arch_mmu_init(void)
{
    for (size_t i = 0; i < 512; i++) {
        l1_table[i] = 0;
    }
    l1_table[0] = 0 * GIB | PTE_VALID | PTE_BLOCK | PTE_ATTR(0) | PTE_AF | PTE_PXN | PTE_UXN;
    l1_table[1] = 1 * GIB | PTE_VALID | PTE_BLOCK | PTE_ATTR(1) | PTE_SH_INNER | PTE_AF | PTE_UXN;

    ARCH_WRITE_SYSREG(mair_el1, (uint64_t)MAIR_DEVICE | ((uint64_t)MAIR_NORMAL_WB << 8));
    /* T0SZ=25 (39-bit), IRGN0/ORGN0 write-back, SH0 inner, TG0 4 KiB, EPD1 (no TTBR1), IPS 40-bit. */
    uint64_t tcr = 25u | (1u << 8) | (1u << 10) | (3u << 12) | (0u << 14) | (1u << 23) | (2ull << 32);
    ARCH_WRITE_SYSREG(tcr_el1, tcr);
    ARCH_WRITE_SYSREG(ttbr0_el1, (uint64_t)(uintptr_t)l1_table);
    __asm__ volatile("dsb ish\n\ttlbi vmalle1\n\tdsb ish\n\tisb" : : : "memory");
    uint64_t sctlr = ARCH_READ_SYSREG(sctlr_el1);
    sctlr |= SCTLR_M | SCTLR_C | SCTLR_I;
    ARCH_WRITE_SYSREG(sctlr_el1, sctlr);
    arch_isb();
}

/*
 * PSCI conduit: entered at EL2 means firmware sits at EL3 behind SMC (QEMU virt,virtualization=on);
 * entered at EL1 means a hypervisor (rtmux, or QEMU's HVC conduit without virtualization) answers HVC.
 */
static unsigned psci_use_smc;

void arch_set_psci_conduit(unsigned entry_el)
{
    psci_use_smc = entry_el >= 2;
}

#define PSCI_SYSTEM_OFF 0x84000008u

void arch_system_off(void)
{
    register uint64_t x0 __asm__("x0") = PSCI_SYSTEM_OFF;
    if (psci_use_smc) {
        __asm__ volatile("smc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
    } else {
        __asm__ volatile("hvc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
    }
}
