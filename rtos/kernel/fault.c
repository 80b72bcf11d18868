/*
 * Exceptions that end a thread or the system: synchronous exceptions and unexpected vectors. Every
 * path prints what happened and where, then either ends the faulting thread (if the application's
 * hook says so, sched.c) or stops the system with a clear message (panic.c). Nothing hangs silently.
 */
#include "arch/cpu.h"
#include "arm64/esr.h"
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"

static const char *ec_name(uint64_t ec)
{
    switch (ec) {
    case ESR_EC_UNKNOWN:
        return "undefined instruction";
    case ESR_EC_SVC64:
        return "unexpected SVC";
    case ESR_EC_IABT_LOW:
    case ESR_EC_IABT_CUR:
        return "instruction abort";
    case ESR_EC_PC_ALIGN:
        return "PC alignment fault";
    case ESR_EC_DABT_LOW:
    case ESR_EC_DABT_CUR:
        return "data abort";
    case ESR_EC_SP_ALIGN:
        return "SP alignment fault";
    case ESR_EC_BRK64:
        return "breakpoint";
    default:
        return "synchronous exception";
    }
}

void k_sync_exception(struct arch_frame *frame)
{
    k_cpu.in_fault = true;
    uint64_t esr = ARCH_READ_SYSREG(esr_el1);
    uint64_t far = ARCH_READ_SYSREG(far_el1);
    uint64_t ec = ESR_EC(esr);
    rt_thread_t *t = k_cpu.irq_nest > 0 ? NULL : k_current();
    rt_printf("FATAL: %s (EC 0x%x)%s\n", ec_name(ec), (unsigned)ec,
              k_cpu.irq_nest > 0 ? " in an interrupt handler" : "");
    rt_printf("FATAL: ESR=0x%lx FAR=0x%lx ELR=0x%lx thread=%s\n", (unsigned long)esr, (unsigned long)far,
              (unsigned long)frame->elr, t != NULL ? rt_thread_name(t) : "(none)");
    rt_printf("FATAL: SP=0x%lx LR=0x%lx SPSR=0x%lx\n", (unsigned long)((uintptr_t)frame + sizeof(*frame)),
              (unsigned long)frame->x[30], (unsigned long)frame->spsr);
    struct rt_fault f = {RT_FAULT_EXCEPTION, t, esr, far, frame->elr};
    if (k_thread_fault(&f)) {
        k_reschedule(); /* switches away for good: the faulting context is abandoned */
    }
    k_halt(esr);
}

void k_bad_exception(struct arch_frame *frame, uint64_t kind)
{
    static const char *const names[] = {
        "sync", "IRQ", "FIQ", "SError", "exception on SP_EL0", "exception from a lower EL"};
    k_cpu.in_fault = true;
    rt_printf("FATAL: unexpected %s\n", kind < 6 ? names[kind] : "exception");
    rt_printf("FATAL: ESR=0x%lx FAR=0x%lx ELR=0x%lx thread=%s\n", (unsigned long)ARCH_READ_SYSREG(esr_el1),
              (unsigned long)ARCH_READ_SYSREG(far_el1), (unsigned long)frame->elr,
              k_current() != NULL ? rt_thread_name(k_current()) : "(boot)");
    k_halt(ARCH_READ_SYSREG(esr_el1));
}
