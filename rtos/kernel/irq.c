/*
 * Interrupt handler table and dispatch over the interrupt controller (drivers/intc.h).
 */
#include "rtos/irq.h"
#include "drivers/intc.h"
#include "kernel.h"
#include "lib/prio.h"

struct irq_slot {
    rt_irq_handler_t handler;
    void *arg;
};

static struct irq_slot irq_table[RT_IRQ_MAX];

void k_irq_init(void)
{
    const char *why = intc_init();
    if (why != NULL) {
        rt_panic(why);
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
    intc_disable(intid);
    intc_set_priority(intid, gic_prio(prio));
    intc_set_trigger(intid, trigger == RT_IRQ_EDGE);
    irq_table[intid].handler = handler;
    irq_table[intid].arg = arg;
    k_unlock(f);
    return RT_OK;
}

int rt_irq_detach(unsigned intid)
{
    if (intid >= RT_IRQ_MAX || irq_table[intid].handler == NULL) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    intc_disable(intid);
    irq_table[intid].handler = NULL;
    irq_table[intid].arg = NULL;
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

void k_irq_dispatch(void)
{
    /* Drain everything pending: one exception entry serves back-to-back interrupts. */
    for (;;) {
        uint32_t ack = intc_ack();
        unsigned intid = INTC_ACK_INTID(ack);
        if (intid >= INTC_INTID_SPECIAL) {
            return;
        }
        struct irq_slot *s = &irq_table[intid];
        if (s->handler != NULL) {
            s->handler(intid, s->arg);
        } else {
            /* Enabled without a handler cannot happen through the API; keep it from storming. */
            intc_disable(intid);
        }
        intc_eoi(ack);
    }
}
