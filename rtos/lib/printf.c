/*
 * Formatting and console output.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../kernel/kernel.h"
#include "arch/cpu.h"
#include "lib/fmt.h"
#include "rtos/console.h"
#include "rtos/sync.h"

int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    return fmt_vsnprintf(buf, size, fmt, ap);
}

int rt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = rt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

int rt_fmt_us(char *buf, size_t size, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    return rt_snprintf(buf, size, "%s%lu.%03lu", ns < 0 ? "-" : "", (unsigned long)(mag / 1000u),
                       (unsigned long)(mag % 1000u));
}

/*
 * Whole-line output. In thread context a mutex keeps lines from interleaving without masking
 * interrupts while characters drain (a UART at 115200 baud takes ~87 us per character on hardware).
 * Interrupt handlers, fault reports and early boot write directly.
 */
static rt_mutex_t console_lock;

static bool can_lock(void)
{
    return k_cpu.started && !k_cpu.in_fault && k_cpu.irq_nest == 0 && !arch_irqs_masked();
}

static void emit(const char *s, size_t n)
{
    bool locked = false;
    if (can_lock()) {
        if (console_lock.magic == 0) {
            uint64_t f = k_lock();
            if (console_lock.magic == 0) {
                (void)rt_mutex_init(&console_lock);
            }
            k_unlock(f);
        }
        locked = rt_mutex_lock(&console_lock, RT_FOREVER) == RT_OK;
    }
    k_console_write(s, n);
    if (locked) {
        (void)rt_mutex_unlock(&console_lock);
    }
}

int rt_printf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = rt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    emit(buf, len);
    return n;
}

void rt_console_write(const char *s, size_t n)
{
    emit(s, n);
}

void rt_puts(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    emit(s, n);
}

const char *rt_strerror(int status)
{
    switch (status) {
    case RT_OK:
        return "ok";
    case RT_EINVAL:
        return "invalid argument or handle";
    case RT_EPERM:
        return "not permitted in this context";
    case RT_ETIMEDOUT:
        return "timed out";
    case RT_EWOULDBLOCK:
        return "would block";
    case RT_EDEADLK:
        return "deadlock";
    case RT_EOVERFLOW:
        return "overflow";
    case RT_EBUSY:
        return "busy";
    case RT_EOVERRUN:
        return "overrun";
    case RT_ENOTCONN:
        return "not connected";
    case RT_ENOENT:
        return "no such channel";
    default:
        return "unknown status";
    }
}
