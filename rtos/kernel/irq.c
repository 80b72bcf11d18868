/*
 * Interrupt handler table and dispatch over the interrupt controller (drivers/intc.h).
 */
#include "rtos/irq.h"
#include "arch/cpu.h"
#include "drivers/intc.h"
#include "kernel.h"
#include "lib/prio.h"
#include "rtos/thread.h"
#include "trace.h"

struct irq_slot {
    rt_irq_handler_t handler;
    void *arg;
    uint8_t prio; /* the attach priority */
    bool no_fp;   /* a kernel handler, built without FP/SIMD: its level needs no FP/SIMD trap */
};

static struct irq_slot irq_table[RT_IRQ_MAX];
/* Attached interrupts per attach priority, and how many priorities have one: each such priority is a
 * nesting level at most, so levels_used <= RT_IRQ_LEVELS bounds the nesting depth (arch/cpu.h). */
static uint16_t prio_users[256];
static unsigned levels_used;

_Static_assert(RT_IRQ_LEVELS == ARCH_IRQ_LEVELS, "one FP/SIMD area and stack share per nesting level");

void k_irq_init(void)
{
    const char *why = intc_init();
    if (why != NULL) {
        rt_panic(why);
    }
    /* The interrupt stack's guard: checked at every outermost exit (k_irq_exit). */
    for (unsigned i = 0; i < RT_STACK_GUARD / 8u; i++) {
        arch_irq_stack[i] = K_STACK_PATTERN;
    }
}

/* The least urgent attach priority still lands above the mask, the next one in the band (lib/prio.h),
 * whatever a 5-bit GIC drops of the low bits. */
_Static_assert(((255u - RT_IRQ_PRIO_MIN) & 0xf8u) < RTMUX_PRIO_RTOS_PMR &&
                   ((255u - (RT_IRQ_PRIO_MIN - 1u)) & 0xf8u) >= RTMUX_PRIO_RTOS_PMR,
               "RT_IRQ_PRIO_MIN is the least urgent priority the rtos's mask lets through");

/* rt_ priority (higher = more urgent) to the GIC's priority byte (lower = more urgent). */
static uint8_t gic_prio(unsigned prio)
{
    return (uint8_t)(255u - prio);
}

int rt_irq_attach(unsigned intid, unsigned prio, unsigned trigger, rt_irq_handler_t handler, void *arg)
{
    if (intid >= RT_IRQ_MAX || prio > 255 || prio < RT_IRQ_PRIO_MIN || handler == NULL ||
        trigger > RT_IRQ_EDGE) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    if (irq_table[intid].handler != NULL) {
        k_unlock(f);
        return RT_EBUSY;
    }
    if (prio_users[prio] == 0) {
        if (levels_used == RT_IRQ_LEVELS) {
            k_unlock(f);
            return RT_EOVERFLOW;
        }
        levels_used++;
    }
    prio_users[prio]++;
    intc_disable(intid);
    intc_set_priority(intid, gic_prio(prio));
    intc_set_trigger(intid, trigger == RT_IRQ_EDGE);
    irq_table[intid].handler = handler;
    irq_table[intid].arg = arg;
    irq_table[intid].prio = (uint8_t)prio;
    irq_table[intid].no_fp = false;
    k_unlock(f);
    return RT_OK;
}

int k_irq_attach_kernel(unsigned intid, unsigned prio, unsigned trigger, rt_irq_handler_t handler)
{
    int rc = rt_irq_attach(intid, prio, trigger, handler, NULL);
    if (rc == RT_OK) {
        irq_table[intid].no_fp = true;
    }
    return rc;
}

int rt_irq_priority(unsigned intid)
{
    if (intid >= RT_IRQ_MAX || irq_table[intid].handler == NULL) {
        return RT_EINVAL;
    }
    return irq_table[intid].prio;
}

int rt_irq_detach(unsigned intid)
{
    if (intid >= RT_IRQ_MAX) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    struct irq_slot *s = &irq_table[intid];
    if (s->handler == NULL) {
        k_unlock(f);
        return RT_EINVAL;
    }
    intc_disable(intid);
    s->handler = NULL;
    s->arg = NULL;
    if (--prio_users[s->prio] == 0) {
        levels_used--;
    }
    k_unlock(f);
    return RT_OK;
}

int rt_irq_enable(unsigned intid)
{
    if (intid >= RT_IRQ_MAX || irq_table[intid].handler == NULL) {
        return RT_EINVAL;
    }
    intc_enable(intid);
    return RT_OK;
}

int rt_irq_disable(unsigned intid)
{
    if (intid >= RT_IRQ_MAX) {
        return RT_EINVAL;
    }
    intc_disable(intid);
    return RT_OK;
}

int rt_irq_raise_sgi(unsigned sgi)
{
    if (sgi > 15) {
        return RT_EINVAL;
    }
    intc_send_sgi_self(sgi);
    return RT_OK;
}

/* k_irq_handle's fp before the level set FP/SIMD trapping up: no CPACR_EL1 value the rtos uses. */
#define FP_UNTOUCHED UINT64_MAX

/* Out of line: only a level that runs an application's handler needs them. */
static __attribute__((noinline)) uint64_t fp_enter(unsigned level)
{
    return arch_irq_fp_enter(level);
}

static __attribute__((noinline)) void fp_exit(unsigned level, uint64_t found)
{
    arch_irq_fp_exit(level, found);
}

/*
 * One nesting level (vectors.S: on the interrupt stack, IRQs masked): acknowledge, run the handler with
 * IRQs unmasked, so that only a more urgent interrupt (the GIC's running priority is this one's) nests,
 * then mask, end it and take the next one pending above the level that was interrupted, if any: one
 * exception entry serves back-to-back interrupts. Returns with IRQs masked. The running priority keeps
 * each level more urgent than the one it interrupted, so the depth is at most levels_used.
 */
void k_irq_handle(void)
{
    volatile uint32_t *gicc = intc_gicc;
    uint32_t ack = intc_ack(gicc);
    if (INTC_ACK_INTID(ack) >= INTC_INTID_SPECIAL) {
        return; /* withdrawn since it was signalled */
    }
    unsigned level = k_cpu.irq_nest;
    K_ASSERT(level < RT_IRQ_LEVELS);
    k_cpu.irq_nest = level + 1u;
    /* FP/SIMD trapping is set up before the level's first handler that may use it (rtos/irq.h); the
     * kernel's own (the timer, the V-Bus doorbell) cannot, so a level of theirs leaves it alone. */
    uint64_t fp = FP_UNTOUCHED;
    do {
        unsigned intid = INTC_ACK_INTID(ack);
        const struct irq_slot *s = &irq_table[intid];
        k_cpu.irq_count++;
        k_trace(K_TR_IRQ_IN, level, intid, 0);
        if (!s->no_fp && fp == FP_UNTOUCHED) {
            fp = fp_enter(level);
        }
        if (s->handler != NULL) {
            arch_irq_enable();
            s->handler(intid, s->arg);
            arch_irq_disable();
        } else {
            /* Enabled without a handler cannot happen through the API; keep it from storming. */
            intc_disable(intid);
        }
        k_trace(K_TR_IRQ_OUT, level, intid, 0);
        intc_eoi(gicc, ack);
        ack = intc_ack(gicc);
    } while (INTC_ACK_INTID(ack) < INTC_INTID_SPECIAL);
    if (fp != FP_UNTOUCHED) {
        fp_exit(level, fp);
    }
    k_cpu.irq_nest = level;
}

/* The outermost level's end, back on the interrupted thread's stack (vectors.S), IRQs masked. */
void k_irq_exit(void)
{
    /* The guard's top word: the handlers' stack grows down into it first. */
    if (arch_irq_stack[RT_STACK_GUARD / 8u - 1u] != K_STACK_PATTERN) {
        k_cpu.in_fault = true;
        k_fatal_printf("FATAL: interrupt stack overflow (%u bytes: handlers too deep)\n",
                       (unsigned)ARCH_IRQ_STACK_SIZE);
        k_halt(0);
    }
    /* Handlers only make threads ready; whether that preempts is decided here, once, in O(1). */
    k_cpu.need_resched = false;
    k_reschedule();
}
