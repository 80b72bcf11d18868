/*
 * Boot: console, interrupt controller, time base, boot arguments, then the idle and main threads.
 */
#include "../drivers/pl011.h"
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"

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
