/*
 * Boot: console, interrupt controller, time base, boot arguments, then the idle and main threads.
 */
#include "../drivers/pl011.h"
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"

#define BOOTARGS_MAX 512u

static char bootargs[BOOTARGS_MAX];
static rt_thread_t idle_thread;
static rt_thread_t main_thread;
RT_STACK_DEFINE(idle_stack, 4096);
RT_STACK_DEFINE(main_stack, 16384);

static void idle_entry(void *arg)
{
    (void)arg;
    for (;;) {
        arch_wfi();
    }
}

static void main_entry(void *arg)
{
    (void)arg;
    rt_main();
}

void k_boot(const void *dtb, uint64_t entry_el)
{
    arch_set_psci_conduit((unsigned)entry_el);
    pl011_init();
    rt_printf("rtos: rtmux rtos %s entered at EL%u\n", RT_VERSION, (unsigned)entry_el);
    k_rq_init(&k_cpu.rq);
    k_irq_init();
    k_time_init();
    k_bootargs_init(dtb);
    if (rt_thread_create(&idle_thread, "idle", idle_entry, NULL, idle_stack, sizeof(idle_stack),
                         RT_PRIO_MIN) != RT_OK ||
        rt_thread_create(&main_thread, "main", main_entry, NULL, main_stack, sizeof(main_stack),
                         RT_MAIN_PRIO) != RT_OK) {
        rt_panic("cannot create the idle and main threads");
    }
    /* The idle thread is the only one at level 0; the API keeps applications at 1 and above. */
    idle_thread.base_prio = RT_PRIO_IDLE;
    k_thread_reprio(&k_cpu.rq, &idle_thread, RT_PRIO_IDLE);
    k_sched_start();
}

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
        int found = 0;
        for (unsigned i = 0; known[i] != NULL && !found; i++) {
            unsigned n = 0;
            while (n < klen && known[i][n] == word[n]) {
                n++;
            }
            found = n == klen && known[i][n] == '\0';
        }
        if (!found) {
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
