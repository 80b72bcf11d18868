/*
 * arm64 pieces of the arch_ contract that need no assembly: thread context set-up, MMU, PSCI.
 */
#include <stddef.h>
#include <stdint.h>

#include "arch/cpu.h"
#include "arm64/pgtable.h"
#include "arm64/psci.h"
#include "lib/string.h"

/*
 * The image's TLS template (lib/arm64/image.ld.S); every symbol's value is the figure (sizes are 0
 * in an image without thread-local data). AArch64 uses TLS variant 1: TPIDR_EL0 points at a 16-byte
 * thread control block, and the block's data follows at max(16, alignment), the offset the linker
 * assumed when it resolved every local-exec access.
 */
extern const char __tls_base[], __tdata_size[], __tbss_offset[], __tbss_size[], __tls_size[], __tls_align[];

/* A linker symbol's value; the barrier stops the compiler from assuming an object's address is never
 * 0 (these "addresses" are sizes and can be). */
static size_t sym_value(const char *sym)
{
    uintptr_t v = (uintptr_t)sym;
    __asm__("" : "+r"(v));
    return (size_t)v;
}

static size_t tls_offset(void)
{
    size_t align = sym_value(__tls_align);
    return align > 16u ? align : 16u;
}

size_t arch_tls_reserve(void)
{
    size_t size = sym_value(__tls_size);
    if (size == 0) {
        return 0;
    }
    size_t align = tls_offset();
    /* The block's start is aligned down from the top: up to align - 1 bytes are lost there. */
    return (tls_offset() + size + align - 1u + 15u) & ~(size_t)15u;
}

/* Copies the template to the top of the stack; returns the new top of the stack proper. */
static uintptr_t tls_init(struct arch_context *ctx, uintptr_t stack_top)
{
    size_t size = sym_value(__tls_size);
    if (size == 0) {
        ctx->tpidr = 0;
        return stack_top;
    }
    size_t off = tls_offset();
    uintptr_t tp = (stack_top - off - size) & ~(uintptr_t)(off - 1u);
    uint8_t *block = (uint8_t *)tp + off;
    memset((void *)tp, 0, off);
    memcpy(block, __tls_base, sym_value(__tdata_size));
    memset(block + sym_value(__tbss_offset), 0, sym_value(__tbss_size));
    ctx->tpidr = (uint64_t)tp;
    return tp;
}

bool arch_timer_phys;

/* Interrupt nesting (arch/cpu.h): the handlers' stack, and the FP/SIMD areas of the nesting levels. */
uint64_t arch_irq_stack[ARCH_IRQ_STACK_SIZE / 8u] __attribute__((aligned(16)));
struct arch_fp_regs arch_irq_fp[ARCH_IRQ_LEVELS];
struct arch_fp_regs *arch_irq_fp_slot = &arch_irq_fp[0];

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, arch_thread_main_t thread_main,
                       void (*entry)(void *), void *arg)
{
    /* AAPCS64: SP 16-byte aligned at every public interface. */
    uintptr_t sp = tls_init(ctx, stack_top) & ~(uintptr_t)15;
    for (size_t i = 0; i < 10; i++) {
        ctx->x19_x28[i] = 0;
    }
    ctx->x19_x28[0] = (uint64_t)(uintptr_t)entry;
    ctx->x19_x28[1] = (uint64_t)(uintptr_t)arg;
    ctx->x19_x28[2] = (uint64_t)(uintptr_t)thread_main;
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
static uint64_t l1_table[PT_ENTRIES] __attribute__((aligned(4096), section(".pgtables")));

static void mmu_enable(void)
{
    ARCH_WRITE_SYSREG(mair_el1, MAIR_ATTR(0, MAIR_DEVICE_nGnRnE) | MAIR_ATTR(1, MAIR_NORMAL_WB));
    /* 39-bit VA (level-1 start), write-back inner-shareable walks, 4 KiB granule, no TTBR1, 40-bit PA. */
    uint64_t tcr = TCR_T0SZ(39) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K |
                   TCR_EL1_EPD1 | TCR_EL1_IPS_40BIT;
    ARCH_WRITE_SYSREG(tcr_el1, tcr);
    ARCH_WRITE_SYSREG(ttbr0_el1, (uint64_t)(uintptr_t)l1_table);
    __asm__ volatile("dsb ish\n\ttlbi vmalle1\n\tdsb ish\n\tisb" : : : "memory");
    uint64_t sctlr = ARCH_READ_SYSREG(sctlr_el1);
    sctlr |= SCTLR_M | SCTLR_C | SCTLR_I;
    ARCH_WRITE_SYSREG(sctlr_el1, sctlr);
    arch_isb();
}

void arch_mmu_init(void)
{
    for (size_t i = 0; i < PT_ENTRIES; i++) {
        l1_table[i] = 0;
    }
    /* Level-1 blocks (PTE_TABLE clear); attribute index 0 = device, 1 = normal memory (MAIR below). */
    l1_table[0] = 0 * L1_BLOCK_SIZE | PTE_VALID | PTE_S1_ATTR(0) | PTE_AF | PTE_PXN | PTE_XN;
    l1_table[1] = 1 * L1_BLOCK_SIZE | PTE_VALID | PTE_S1_ATTR(1) | PTE_SH_INNER | PTE_AF | PTE_XN;

    mmu_enable();
}

void arch_mmu_enable_secondary(void)
{
    mmu_enable();
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

static int64_t psci_call3(uint64_t fn, uint64_t arg1, uint64_t arg2, uint64_t arg3)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = arg1;
    register uint64_t x2 __asm__("x2") = arg2;
    register uint64_t x3 __asm__("x3") = arg3;
    if (psci_use_smc) {
        __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    } else {
        __asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    }
    return (int64_t)x0;
}

static int64_t psci_call(uint64_t fn, uint64_t arg1, uint64_t arg2)
{
    return psci_call3(fn, arg1, arg2, 0);
}

int64_t arch_cpu_start(uint64_t mpidr, void (*entry)(void), struct arch_secondary *boot)
{
    /* The new CPU reads *boot with its MMU off: make the boot CPU's writes visible to it first. */
    __asm__ volatile("dsb sy" : : : "memory");
    return psci_call3(PSCI_CPU_ON_64, mpidr, (uint64_t)(uintptr_t)entry, (uint64_t)(uintptr_t)boot);
}

void arch_system_off(void)
{
    (void)psci_call(PSCI_SYSTEM_OFF, 0, 0);
}

void arch_system_fatal(uint64_t cookie)
{
    /* PSCI 0.2 firmware has no PSCI_FEATURES: it answers NOT_SUPPORTED, as for an absent function. */
    if (psci_call(PSCI_FEATURES, PSCI_SYSTEM_RESET2_64, 0) == PSCI_SUCCESS) {
        (void)psci_call(PSCI_SYSTEM_RESET2_64, PSCI_RESET2_RTMUX_FATAL, cookie);
    }
    arch_system_off();
}
