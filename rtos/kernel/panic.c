/*
 * The fatal path: console output that takes no lock, fatal reports, stopping the system. It depends
 * only on the kernel's CPU state, the console driver and the arch layer, so any kernel file may stop
 * the system without depending on the scheduler or the console mutex.
 */
#include <stdarg.h>

#include "arch/cpu.h"
#include "drivers/conring.h"
#include "drivers/uart.h"
#include "kernel.h"
#include "lib/fmt.h"
#include "rtos/system.h"

/* A fatal report line longer than this is cut. */
#define K_FATAL_LINE_MAX 256u

/* Set once at boot (k_console_use_ring) when the DTB offers a console ring. */
static bool console_ring;

void k_console_use_ring(uintptr_t base, uint32_t size)
{
    conring_init(base, size);
    console_ring = true;
}

void k_console_write(const char *s, size_t n)
{
    if (console_ring) {
        /* One producer: a handler's line must not interleave with the thread line it interrupted. The
         * copy is at most one formatted line (K_FATAL_LINE_MAX / the printf buffer), so the masked
         * section is short and bounded. */
        uint64_t flags = arch_irq_lock();
        conring_write(s, n);
        arch_irq_unlock(flags);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            uart_putc('\r');
        }
        uart_putc(s[i]);
    }
}

void k_console_puts(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    k_console_write(s, n);
}

void k_fatal_printf(const char *fmt, ...)
{
    char buf[K_FATAL_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    k_console_write(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void k_halt(uint64_t syndrome)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true;
    k_console_puts("rtos: system halted after fatal error\n");
    arch_system_fatal(syndrome);
    for (;;) {
        arch_wfi(); /* PSCI refused: stay here, interrupts masked */
    }
}

void k_assert_failed(const char *file, int line, const char *cond)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true;
    k_fatal_printf("FATAL: assertion failed at %s:%d: %s\n", file, line, cond);
    k_halt(0);
}

void rt_panic(const char *reason)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true;
    k_fatal_printf("FATAL: %s\n", reason);
    rt_thread_t *t = k_current();
    k_fatal_printf("FATAL: thread=%s\n", t != NULL ? k_thread_name(t) : "(boot)");
    k_halt(0);
}

void rt_system_off(void)
{
    (void)arch_irq_lock();
    k_cpu.in_fault = true; /* console without locking from here on */
    k_console_puts("rtos: system off\n");
    arch_system_off();
    for (;;) {
        arch_wfi();
    }
}
