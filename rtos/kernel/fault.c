/*
 * Fatal errors: synchronous exceptions, unexpected vectors, stack overflows. Every path prints what
 * happened and where, then either ends the faulting thread (if the application's hook says so) or
 * stops the system with a clear message. Nothing hangs silently.
 */
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"

static enum rt_fault_action (*fault_hook)(const struct rt_fault *f);

void rt_set_fault_hook(enum rt_fault_action (*hook)(const struct rt_fault *f))
{
    fault_hook = hook;
}

void k_halt(void)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true;
    rt_puts("rtos: system halted after fatal error\n");
    arch_system_off();
    for (;;) {
        arch_wfi(); /* PSCI refused: stay here, interrupts masked */
    }
}

void rt_panic(const char *reason)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true;
    rt_printf("FATAL: %s\n", reason);
    rt_thread_t *t = k_current();
    rt_printf("FATAL: thread=%s\n", t != NULL ? rt_thread_name(t) : "(boot)");
    k_halt();
}

void rt_system_off(void)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true; /* console without locking from here on */
    rt_puts("rtos: system off\n");
    arch_system_off();
    for (;;) {
        arch_wfi();
    }
}

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

/* Calls the hook for a thread fault; returns true if the thread was killed and the system goes on. */
static bool thread_fault(struct rt_fault *f)
{
    rt_thread_t *t = f->thread;
    if (t == NULL || fault_hook == NULL || t->base_prio == RT_PRIO_IDLE) {
        return false;
    }
    if (fault_hook(f) != RT_FAULT_KILL_THREAD) {
        return false;
    }
    rt_printf("FATAL: thread %s killed by the fault hook; system continues\n", rt_thread_name(t));
    k_cpu.in_fault = false;
    k_thread_kill(t);
    return true;
}

void k_sync_exception(struct arch_frame *frame)
{
    k_cpu.in_fault = true;
    uint64_t esr = ARCH_READ_SYSREG(esr_el1);
    uint64_t far = ARCH_READ_SYSREG(far_el1);
    uint64_t ec = (esr >> ESR_EC_SHIFT) & 0x3fu;
    rt_thread_t *t = k_cpu.irq_nest > 0 ? NULL : k_current();
    rt_printf("FATAL: %s (EC 0x%x)%s\n", ec_name(ec), (unsigned)ec,
              k_cpu.irq_nest > 0 ? " in an interrupt handler" : "");
    rt_printf("FATAL: ESR=0x%lx FAR=0x%lx ELR=0x%lx thread=%s\n", (unsigned long)esr, (unsigned long)far,
              (unsigned long)frame->elr, t != NULL ? rt_thread_name(t) : "(none)");
    rt_printf("FATAL: SP=0x%lx LR=0x%lx SPSR=0x%lx\n", (unsigned long)((uintptr_t)frame + sizeof(*frame)),
              (unsigned long)frame->x[30], (unsigned long)frame->spsr);
    struct rt_fault f = {RT_FAULT_EXCEPTION, t, esr, far, frame->elr};
    if (thread_fault(&f)) {
        k_reschedule(); /* switches away for good: the faulting context is abandoned */
    }
    k_halt();
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
    k_halt();
}

void k_stack_overflow(rt_thread_t *t)
{
    k_cpu.in_fault = true;
    rt_printf("FATAL: stack overflow in thread %s (stack 0x%lx..0x%lx, SP at its last switch 0x%lx)\n",
              rt_thread_name(t), (unsigned long)(uintptr_t)t->stack_base,
              (unsigned long)((uintptr_t)t->stack_base + t->stack_size), (unsigned long)t->ctx.sp);
    struct rt_fault f = {RT_FAULT_STACK_OVERFLOW, t, 0, 0, 0};
    if (!thread_fault(&f)) {
        k_halt();
    }
}
