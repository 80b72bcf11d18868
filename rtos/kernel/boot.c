/*
 * Boot: console, interrupt controller, time base, boot arguments, then the idle and main threads.
 */
#include "arch/cpu.h"
#include "drivers/uart.h"
#include "kernel.h"
#include "lib/string.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"
#include "trace.h"

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

/*
 * The console: inside rtmux (with a Linux partition to drain it) the DTB offers a shared-memory ring,
 * /chosen/rtmux,console-ring = <address-hi address-lo size>, whose writes never trap to the hypervisor;
 * otherwise (bare metal) the board's UART (drivers/uart.h).
 */
static uint32_t be32(const uint8_t *b)
{
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static void console_init(const void *dtb)
{
    uint32_t len = 0;
    const uint8_t *cells = k_fdt_chosen(dtb, "rtmux,console-ring", &len);
    if (cells != NULL && len == 12) {
        uint64_t base = ((uint64_t)be32(cells) << 32) | be32(cells + 4);
        uint32_t size = be32(cells + 8);
        if (base != 0 && size != 0 && (size & (size - 1u)) == 0) {
            k_console_use_ring((uintptr_t)base, size);
            return;
        }
    }
    uart_init();
}

static bool same(const char *a, const char *b)
{
    size_t n = strlen(b);
    return strlen(a) == n && memcmp(a, b, n) == 0;
}

/* The boot argument timer=virt|phys (k_time_init); anything else is reported and the default kept. */
static bool timer_phys(void)
{
    char which[8];
    if (rt_bootarg("timer", which, sizeof(which)) == 0 || same(which, "virt")) {
        return false;
    }
    if (same(which, "phys")) {
        return true;
    }
    rt_printf("rtos: boot argument timer=%s ignored (virt or phys); the virtual timer is used\n", which);
    return false;
}

/* The boot argument trace=0|1 (rtos/trace.h). */
static bool trace_arg(void)
{
    uint64_t on = rt_bootarg_u64("trace", 0);
    if (on > 1) {
        rt_printf("rtos: boot argument trace=%lu ignored (0 or 1); the trace is off\n", (unsigned long)on);
        return false;
    }
    if (on == 1) {
        rt_printf("rtos: trace on (%u events of %u bytes at 0x%lx)\n", RT_TRACE_EVENTS,
                  (unsigned)sizeof(struct k_trace_ev), (unsigned long)(uintptr_t)&k_trace_ring);
    }
    return on == 1;
}

static void main_entry(void *arg)
{
    (void)arg;
    rt_main();
}

/* The DTB the rtos booted with, for rt_dt_prop: it stays in its slot, above the image, for the whole run. */
static const void *boot_dtb;

const void *rt_dt_prop(const char *path, const char *name, uint32_t *len)
{
    uint32_t n = 0;
    const void *v = path != NULL && name != NULL ? k_fdt_prop(boot_dtb, path, name, &n) : NULL;
    if (len != NULL) {
        *len = v != NULL ? n : 0;
    }
    return v;
}

void k_boot(const void *dtb, uint64_t entry_el)
{
    boot_dtb = dtb;
    arch_set_psci_conduit((unsigned)entry_el);
    console_init(dtb);
    rt_printf("rtos: rtmux rtos %s entered at EL%u\n", RT_VERSION, (unsigned)entry_el);
    k_rq_init(&k_cpu.rq);
    k_irq_init();
    k_bootargs_init(dtb); /* first: the time base reads timer= */
    k_time_init(timer_phys(), k_bootarg_irq_prio("irq_prio_timer", RT_IRQ_PRIO_TIMER));
    k_chan_init(dtb, k_bootarg_irq_prio("irq_prio_vbus", RT_IRQ_PRIO_VBUS));
    k_trace_init(trace_arg()); /* before the first thread: its creation is the ring's first event */
    if (rt_thread_create(&idle_thread, "idle", idle_entry, NULL, idle_stack, sizeof(idle_stack),
                         RT_PRIO_MIN) != RT_OK ||
        rt_thread_create(&main_thread, "main", main_entry, NULL, main_stack, sizeof(main_stack),
                         RT_MAIN_PRIO) != RT_OK) {
        rt_panic("cannot create the idle and main threads");
    }
    /* The idle thread is the only one at level 0; the API keeps applications at 1 and above. */
    idle_thread.base_prio = RT_PRIO_IDLE;
    k_thread_reprio(&k_cpu.rq, &idle_thread, RT_PRIO_IDLE);
    k_cpu.idle = &idle_thread;
    k_trace_name(&idle_thread); /* with its priority */
    k_sched_start();
}
