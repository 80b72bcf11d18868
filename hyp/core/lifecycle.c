/*
 * Entering, stopping and restarting partitions.
 */
#include "hyp/lifecycle.h"

#include "arch/firmware.h"
#include "arch/guest.h"
#include "arch/spinlock.h"
#include "hyp/conmux.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"

/* Serialises partition state changes, so exactly one CPU sees the last partition stop. */
static spinlock_t part_lock;

/* What the hypervisor refused or emulated for p, if anything (hostile-guest tests read this line). */
static void report_stats(const struct partition *p)
{
    if ((p->stats.aborts | p->stats.setway | p->stats.sysregs | p->stats.undefs | p->stats.resamples) == 0) {
        return;
    }
    hyp_printf("rtmux: partition %s: refused or emulated: %lu aborts, %lu set/way operations, %lu PMU/debug "
               "registers, %lu undefined system registers, %lu level-interrupt resamples (%lu withdrawn)\n",
               p->name, (unsigned long)p->stats.aborts, (unsigned long)p->stats.setway,
               (unsigned long)p->stats.sysregs, (unsigned long)p->stats.undefs,
               (unsigned long)p->stats.resamples, (unsigned long)p->stats.withdrawn);
}

void part_enter(struct vcpu *v)
{
    arch_guest_start(v);
}

void part_stop(struct vcpu *v, const char *why)
{
    struct partition *p = v->part;
    arch_guest_quiesce(v);
    spin_lock(&part_lock);
    p->state = PART_OFF;
    hyp_printf("rtmux: partition %s stopped: %s\n", p->name, why);
    report_stats(p);
    bool last = !part_any_running();
    spin_unlock(&part_lock);
    if (last) {
        con_drain(true); /* the drain CPU may be parked: write out what is left from here */
        hyp_printf("rtmux: no partition left running; system off\n");
        fw_system_off();
    }
    /* The drain CPU still carries the console (input, and the other partitions' output): it keeps
     * taking interrupts at EL2; the stopped partition's own interrupts are dropped (vgic.c). */
    arch_guest_park((int)v->cpu == con_drain_cpu);
}

void part_reset(struct vcpu *v)
{
    struct partition *p = v->part;
    hyp_printf("rtmux: partition %s: reset requested; restarting from its pristine images\n", p->name);
    report_stats(p);
    arch_guest_quiesce(v);
    vuart_reset(&p->uart);
    part_load(p);
    part_enter(v);
}
