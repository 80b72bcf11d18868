/*
 * Entering, stopping and restarting partitions.
 */
#include "hyp/lifecycle.h"

#include "arch/cpu.h"
#include "arch/firmware.h"
#include "arch/guest.h"
#include "arch/spinlock.h"
#include "hyp/conmux.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vbus.h"
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
    con_ring_close(p);
    vbus_part_down(p);
    spin_lock(&part_lock);
    p->state = PART_OFF;
    hyp_printf("rtmux: partition %s stopped: %s\n", p->name, why);
    report_stats(p);
    vcpu_report_entries();
    vbus_report();
    bool last = !part_any_running();
    spin_unlock(&part_lock);
    if (last) {
        con_drain(VUART_DRAIN_ALL); /* the drain CPU may be parked: write out what is left from here */
        hyp_printf("rtmux: no partition left running; system off\n");
        fw_system_off();
    }
    /* The drain CPU still carries the console (input, and the other partitions' output): it keeps
     * taking interrupts at EL2; the stopped partition's own interrupts are dropped (vgic.c). */
    arch_guest_park((int)v->cpu == con_drain_cpu);
}

/* Restarts v's partition on this CPU from its pristine images; the caller has logged why. */
static void __attribute__((noreturn)) restart(struct vcpu *v)
{
    struct partition *p = v->part;
    report_stats(p);
    arch_guest_quiesce(v);
    con_ring_close(p);
    vbus_part_down(p); /* its channels close before the wipe */
    vuart_reset(&p->uart);
    part_load(p);
    vbus_part_up(p);
    part_enter(v);
}

void part_reset(struct vcpu *v)
{
    hyp_printf("rtmux: partition %s: reset requested; restarting from its pristine images\n", v->part->name);
    restart(v);
}

/* Records a fault restart at `now` when the policy's rate allows one. The ring holds the times of the
 * last max_restarts restarts, so its oldest entry (the one about to be overwritten) decides: a restart
 * is refused while max_restarts of them lie within the window. */
static bool restart_allowed(struct partition *p, uint64_t now)
{
    uint64_t window = arch_counter_hz() * p->fault.window_s;
    unsigned slot = (unsigned)(p->restarts % p->fault.max_restarts);
    if (p->restarts >= p->fault.max_restarts && now - p->restart_stamp[slot] < window) {
        return false;
    }
    p->restart_stamp[slot] = now;
    p->restarts++;
    return true;
}

void part_fault(struct vcpu *v, const char *what)
{
    struct partition *p = v->part;
    char why[HYP_FAULT_TEXT_MAX + 96];
    p->faults++;
    if (p->fault.policy != FAULT_RESTART) {
        (void)hyp_snprintf(why, sizeof(why), "fault %lu: %s; policy stop", (unsigned long)p->faults, what);
        part_stop(v, why);
    }
    if (restart_allowed(p, arch_counter())) {
        hyp_printf("rtmux: partition %s: fault %lu: %s; policy restart: restarting from its pristine images "
                   "(restart %lu; at most %u in %u s)\n",
                   p->name, (unsigned long)p->faults, what, (unsigned long)p->restarts, p->fault.max_restarts,
                   (unsigned)p->fault.window_s);
        restart(v);
    }
    (void)hyp_snprintf(why, sizeof(why),
                       "fault %lu: %s; policy restart: %u restarts within %u s already, stopping",
                       (unsigned long)p->faults, what, p->fault.max_restarts, (unsigned)p->fault.window_s);
    part_stop(v, why);
}
