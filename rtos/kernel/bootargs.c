/*
 * Boot arguments: /chosen/bootargs of the DTB, kept for the application's key=value queries.
 */
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/system.h"

#define BOOTARGS_MAX 512u

static char bootargs[BOOTARGS_MAX];

void k_bootargs_init(const void *dtb)
{
    const char *args = dtb != NULL ? k_fdt_bootargs(dtb) : NULL;
    unsigned i = 0;
    if (args != NULL) {
        while (args[i] != '\0' && i + 1 < BOOTARGS_MAX) {
            bootargs[i] = args[i];
            i++;
        }
    }
    bootargs[i] = '\0';
    if (i > 0) {
        rt_printf("rtos: bootargs: %s\n", bootargs);
    }
}

int rt_bootarg(const char *key, char *buf, unsigned size)
{
    const char *p = bootargs;
    unsigned klen = 0;
    while (key[klen] != '\0') {
        klen++;
    }
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        const char *word = p;
        while (*p != '\0' && *p != ' ') {
            p++;
        }
        unsigned wlen = (unsigned)(p - word);
        unsigned n = 0;
        while (n < klen && n < wlen && word[n] == key[n]) {
            n++;
        }
        if (n == klen && wlen > klen && word[klen] == '=') {
            unsigned vlen = wlen - klen - 1;
            unsigned j = 0;
            for (; size > 0 && j < vlen && j + 1 < size; j++) {
                buf[j] = word[klen + 1 + j];
            }
            if (size > 0) {
                buf[j] = '\0';
            }
            return 1;
        }
    }
    return 0;
}

uint64_t rt_bootarg_u64(const char *key, uint64_t dflt)
{
    char buf[24];
    if (!rt_bootarg(key, buf, sizeof(buf))) {
        return dflt;
    }
    uint64_t v = 0;
    unsigned i = 0;
    for (; buf[i] >= '0' && buf[i] <= '9'; i++) {
        v = v * 10u + (uint64_t)(buf[i] - '0');
    }
    if (i == 0 || buf[i] != '\0') {
        rt_printf("rtos: bootarg %s=%s is not an unsigned number; using %lu\n", key, buf,
                  (unsigned long)dflt);
        return dflt;
    }
    return v;
}

unsigned k_bootarg_irq_prio(const char *key, unsigned dflt)
{
    uint64_t v = rt_bootarg_u64(key, dflt);
    if (v < RT_IRQ_PRIO_MIN || v > 255u) {
        rt_printf("rtos: bootarg %s=%lu is not an interrupt priority (%u..255); using %u\n", key,
                  (unsigned long)v, RT_IRQ_PRIO_MIN, dflt);
        return dflt;
    }
    return (unsigned)v;
}

/* The kernel's own arguments (kernel/time.c, kernel/irq.h's priorities, kernel/trace.c), known to every
 * application. */
static const char *const kernel_args[] = {"timer", "irq_prio_timer", "irq_prio_vbus", "trace", NULL};

static bool known_word(const char *const *known, const char *word, unsigned klen)
{
    for (unsigned i = 0; known[i] != NULL; i++) {
        unsigned n = 0;
        while (n < klen && known[i][n] == word[n]) {
            n++;
        }
        if (n == klen && known[i][n] == '\0') {
            return true;
        }
    }
    return false;
}

int rt_bootargs_check(const char *const *known)
{
    int unknown = 0;
    const char *p = bootargs;
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        const char *word = p;
        while (*p != '\0' && *p != ' ' && *p != '=') {
            p++;
        }
        unsigned klen = (unsigned)(p - word);
        while (*p != '\0' && *p != ' ') {
            p++;
        }
        if (klen == 0) {
            continue;
        }
        if (!known_word(kernel_args, word, klen) && !known_word(known, word, klen)) {
            char line[160];
            unsigned len = (unsigned)rt_snprintf(line, sizeof(line), "rtos: unknown boot argument '");
            for (unsigned i = 0; i < klen && len + 1 < sizeof(line); i++) {
                line[len++] = word[i];
            }
            line[len] = '\0';
            len += (unsigned)rt_snprintf(line + len, sizeof(line) - len, "' ignored; known:");
            for (unsigned i = 0; known[i] != NULL && len < sizeof(line); i++) {
                len += (unsigned)rt_snprintf(line + len, sizeof(line) - len, " %s", known[i]);
            }
            rt_printf("%s\n", line);
            unknown++;
        }
    }
    return unknown;
}
