/*
 * hyp_printf and hyp_panic: one formatting path onto the console.
 */
#include "hyp/printf.h"

#include <stdarg.h>

#include "arch/firmware.h"
#include "hyp/console.h"
#include "lib/fmt.h"
#include "lib/string.h"

/* A hypervisor message longer than this is cut (its length is still returned). */
#define PRINT_LINE_MAX 256u

int hyp_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

static void (*pause_fn)(void);

void hyp_print_set_pause(void (*fn)(void))
{
    __atomic_store_n(&pause_fn, fn, __ATOMIC_RELEASE);
}

/* Formats into a line buffer and writes it with `prefix` in front; returns the formatted length. */
static int vprint(const char *prefix, const char *fmt, va_list ap)
{
    void (*pause)(void) = __atomic_load_n(&pause_fn, __ATOMIC_ACQUIRE);
    if (pause != NULL) {
        pause();
    }
    char buf[PRINT_LINE_MAX];
    size_t p = strlen(prefix);
    int n = fmt_vsnprintf(buf + p, sizeof(buf) - p, fmt, ap);
    memcpy(buf, prefix, p);
    size_t len = p + ((size_t)n < sizeof(buf) - p ? (size_t)n : sizeof(buf) - p - 1);
    con_write(buf, len);
    return n;
}

int hyp_vprintf(const char *fmt, va_list ap)
{
    return vprint("", fmt, ap);
}

int hyp_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprint("", fmt, ap);
    va_end(ap);
    return n;
}

void hyp_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vprint("rtmux: PANIC: ", fmt, ap);
    va_end(ap);
    static const char off[] = "\nrtmux: system off\n";
    con_write(off, sizeof(off) - 1u);
    con_sync();
    fw_system_off();
}
