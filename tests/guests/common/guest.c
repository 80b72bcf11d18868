/*
 * Console, boot arguments, PSCI and exception dispatch for the test guests (guest.h).
 */
#include "guest.h"

#include <stdarg.h>

#include "arm64/esr.h"
#include "arm64/gicv3.h"
#include "arm64/pl011.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"

/* Flattened device tree (devicetree specification v0.4, chapter 5): big-endian tokens. */
#define FDT_MAGIC      0xd00dfeedu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE   2u
#define FDT_PROP       3u
#define FDT_NOP        4u
#define FDT_END        9u

static char bootargs[512];
static uint64_t rng_state;

void guest_putc(char c)
{
    volatile uint32_t *uart = (volatile uint32_t *)BOARD_UART_BASE;
    while (uart[PL011_FR / 4] & PL011_FR_TXFF) {
    }
    uart[PL011_DR / 4] = (uint32_t)(uint8_t)c;
}

void guest_puts(const char *s)
{
    while (*s) {
        guest_putc(*s++);
    }
}

static void put_unsigned(uint64_t v, unsigned base)
{
    char buf[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v != 0);
    while (n > 0) {
        guest_putc(buf[--n]);
    }
}

void guest_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            guest_putc(*fmt);
            continue;
        }
        bool is_long = fmt[1] == 'l';
        fmt += is_long ? 2 : 1;
        switch (*fmt) {
        case 's':
            guest_puts(va_arg(ap, const char *));
            break;
        case 'c':
            guest_putc((char)va_arg(ap, int));
            break;
        case 'd': {
            int64_t v = is_long ? va_arg(ap, long) : va_arg(ap, int);
            if (v < 0) {
                guest_putc('-');
                v = -v;
            }
            put_unsigned((uint64_t)v, 10);
            break;
        }
        case 'u':
            put_unsigned(is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10);
            break;
        case 'x':
            put_unsigned(is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16);
            break;
        case '%':
            guest_putc('%');
            break;
        default:
            guest_putc('?');
            break;
        }
    }
    va_end(ap);
}

int guest_strcmp(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++, b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

void *memset(void *d, int c, size_t n)
{
    uint8_t *p = d;
    while (n--) {
        *p++ = (uint8_t)c;
    }
    return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *p = d;
    const uint8_t *q = s;
    while (n--) {
        *p++ = *q++;
    }
    return d;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Copies /chosen/bootargs out of the DTB (nothing when there is none or it is malformed). */
static void read_bootargs(const uint8_t *fdt)
{
    if (fdt == NULL || be32(fdt) != FDT_MAGIC) {
        return;
    }
    const uint8_t *st = fdt + be32(fdt + 8), *strings = fdt + be32(fdt + 12);
    uint32_t st_size = be32(fdt + 36);
    unsigned depth = 0;
    bool in_chosen = false;
    for (uint32_t off = 0; off + 4 <= st_size;) {
        uint32_t tok = be32(st + off);
        off += 4;
        if (tok == FDT_BEGIN_NODE) {
            const char *name = (const char *)st + off;
            uint32_t len = 0;
            while (name[len]) {
                len++;
            }
            depth++;
            in_chosen = depth == 2 && guest_strcmp(name, "chosen") == 0;
            off += (len + 4u) & ~3u;
        } else if (tok == FDT_END_NODE) {
            depth--;
            in_chosen = false;
        } else if (tok == FDT_PROP) {
            uint32_t len = be32(st + off), name = be32(st + off + 4);
            const uint8_t *val = st + off + 8;
            if (in_chosen && guest_strcmp((const char *)strings + name, "bootargs") == 0 &&
                len < sizeof(bootargs)) {
                memcpy(bootargs, val, len);
                bootargs[len] = 0;
                return;
            }
            off += 8 + ((len + 3u) & ~3u);
        } else if (tok != FDT_NOP) {
            return; /* FDT_END or garbage */
        }
    }
}

bool guest_arg(const char *name, char *buf, size_t size)
{
    const char *p = bootargs;
    while (*p) {
        while (*p == ' ') {
            p++;
        }
        const char *n = name;
        while (*n && *p == *n) {
            p++, n++;
        }
        if (*n == 0 && *p == '=') {
            p++;
            size_t i = 0;
            while (*p && *p != ' ' && i + 1 < size) {
                buf[i++] = *p++;
            }
            buf[i] = 0;
            return true;
        }
        while (*p && *p != ' ') {
            p++;
        }
    }
    return false;
}

uint64_t guest_arg_u64(const char *name, uint64_t dflt)
{
    char buf[24];
    if (!guest_arg(name, buf, sizeof(buf))) {
        return dflt;
    }
    uint64_t v = 0;
    for (const char *p = buf; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

int64_t guest_hvc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn, x1 __asm__("x1") = a1, x2 __asm__("x2") = a2,
                         x3 __asm__("x3") = a3;
    __asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (int64_t)x0;
}

int64_t guest_smc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn, x1 __asm__("x1") = a1, x2 __asm__("x2") = a2,
                         x3 __asm__("x3") = a3;
    __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (int64_t)x0;
}

__attribute__((weak)) void guest_secondary(uint64_t ctx)
{
    (void)ctx;
    guest_halt();
}

void guest_halt(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void guest_power_off(void)
{
    (void)guest_hvc(PSCI_SYSTEM_OFF, 0, 0, 0);
    guest_puts("guest: SYSTEM_OFF returned\n");
    guest_halt();
}

uintptr_t guest_gicr(void)
{
    uint64_t aff = GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
    for (unsigned i = 0; i < BOARD_GICR_MAX; i++) {
        uintptr_t frame = BOARD_GICR_BASE + i * BOARD_GICR_STRIDE;
        uint64_t typer = *(volatile uint64_t *)(frame + GICR_TYPER);
        if ((typer >> GICR_TYPER_AFF_SHIFT) == aff) {
            return frame;
        }
        if (typer & GICR_TYPER_LAST) {
            break;
        }
    }
    guest_puts("guest: no redistributor frame for this CPU\n");
    guest_halt();
}

uint64_t guest_counter(void)
{
    __asm__ volatile("isb");
    return GUEST_READ_SYSREG(cntvct_el0);
}

uint64_t guest_counter_hz(void)
{
    return GUEST_READ_SYSREG(cntfrq_el0) & 0xffffffffu;
}

uint64_t guest_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

void guest_start(uint64_t dtb)
{
    read_bootargs((const uint8_t *)(uintptr_t)dtb);
    rng_state = guest_arg_u64("seed", guest_counter()) | 1u;
    guest_printf("guest: bootargs \"%s\"\n", bootargs);
    guest_main();
    guest_halt();
}

void guest_sync(struct guest_frame *f)
{
    if (!guest_on_sync(f)) {
        guest_printf("guest: unexpected exception ESR 0x%lx ELR 0x%lx FAR 0x%lx\n", (unsigned long)f->esr,
                     (unsigned long)f->elr, (unsigned long)GUEST_READ_SYSREG(far_el1));
        guest_halt();
    }
}

void guest_irq(struct guest_frame *f)
{
    guest_on_irq(f);
}

void guest_serror(struct guest_frame *f)
{
    guest_printf("guest: SError ESR 0x%lx\n", (unsigned long)f->esr);
    guest_halt();
}

void guest_bad_exception(struct guest_frame *f)
{
    guest_printf("guest: unexpected exception vector, ESR 0x%lx ELR 0x%lx\n", (unsigned long)f->esr,
                 (unsigned long)f->elr);
    guest_halt();
}
