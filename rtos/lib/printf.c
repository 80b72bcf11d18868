/*
 * Formatting and console output.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../drivers/pl011.h"
#include "../kernel/kernel.h"
#include "arch/cpu.h"
#include "rtos/console.h"
#include "rtos/sync.h"

struct out {
    char *buf;
    size_t size;
    size_t len; /* characters produced, including those that did not fit */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void put_num(struct out *o, uint64_t v, unsigned base, bool upper, bool neg, unsigned width, bool zero,
                    bool left)
{
    char tmp[24];
    unsigned n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0);
    unsigned total = n + (neg ? 1u : 0u);
    if (neg && zero) {
        put(o, '-');
    }
    if (!left) {
        for (; total < width; total++) {
            put(o, zero ? '0' : ' ');
        }
    }
    if (neg && !zero) {
        put(o, '-');
    }
    while (n > 0) {
        put(o, tmp[--n]);
    }
    if (left) {
        for (; total < width; total++) {
            put(o, ' ');
        }
    }
}

int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        bool left = false, zero = false;
        for (;; p++) {
            if (*p == '-') {
                left = true;
            } else if (*p == '0') {
                zero = true;
            } else {
                break;
            }
        }
        unsigned width = 0;
        while (*p >= '0' && *p <= '9') {
            width = width * 10u + (unsigned)(*p++ - '0');
        }
        unsigned lng = 0;
        while (*p == 'l' || *p == 'z') {
            lng = *p == 'z' ? 2u : lng + 1u;
            p++;
        }
        switch (*p) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            put_num(&o, mag, 10, false, v < 0, width, zero && !left, left);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            put_num(&o, v, *p == 'u' ? 10u : 16u, *p == 'X', false, width, zero && !left, left);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uint64_t)(uintptr_t)va_arg(ap, void *), 16, false, false, width, zero, left);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            unsigned n = 0;
            while (s[n] != '\0') {
                n++;
            }
            for (unsigned i = n; !left && i < width; i++) {
                put(&o, ' ');
            }
            for (unsigned i = 0; i < n; i++) {
                put(&o, s[i]);
            }
            for (unsigned i = n; left && i < width; i++) {
                put(&o, ' ');
            }
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        case '\0':
            p--;
            break;
        default:
            put(&o, '%');
            put(&o, *p);
            break;
        }
    }
    if (size > 0) {
        buf[o.len < size ? o.len : size - 1] = '\0';
    }
    return (int)o.len;
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
 * interrupts while characters drain (a PL011 at 115200 baud takes ~87 us per character on hardware).
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
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            pl011_putc('\r');
        }
        pl011_putc(s[i]);
    }
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
    default:
        return "unknown status";
    }
}
