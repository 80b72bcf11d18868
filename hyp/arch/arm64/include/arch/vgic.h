/*
 * Virtual CPU interface for partitions that take interrupts through EL2 (Linux), and the hypervisor's
 * own interrupts on those CPUs (arch/arm64/vgic.c).
 */
#ifndef HYP_ARCH_VGIC_H
#define HYP_ARCH_VGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arm64/gicv3.h"
#include "board.h"
#include "lib/vbus.h"

struct partition;
struct vcpu;

/* A hypervisor-owned interrupt: fn runs after the priority drop, then the interrupt is deactivated. */
typedef void (*vgic_hyp_irq_t)(struct vcpu *v);

/* The physical SGI one CPU of a partition sends another to make it leave its guest (or wake in the
 * hypervisor) and look at what it was handed: SGIs, level changes, requests (vgic_kick). SGIs 8..15 are
 * rtmux's (lib/vbus.h); a partition's own SGIs are virtual and never reach the physical GIC. */
#define VGIC_SGI_KICK 13u
_Static_assert(VGIC_SGI_KICK != VBUS_SGI_TO_RTOS && VGIC_SGI_KICK != VBUS_SGI_TO_HYP && VGIC_SGI_KICK >= 8u &&
                   VGIC_SGI_KICK < 16u,
               "the kick is one of rtmux's physical SGIs, no other's");

/* The hypervisor's own private interrupts on a CPU whose interrupts go through EL2 (vGIC maintenance,
 * EL2 timer, the kick, and the V-Bus doorbell the rtos sends, lib/vbus.h): never a guest's to
 * configure, kept enabled when a partition's interrupts are quiesced. */
#define VGIC_HYP_PPIS                                                                        \
    ((1u << BOARD_INTID_GIC_MAINT) | (1u << BOARD_INTID_HYP_TIMER) | (1u << VGIC_SGI_KICK) | \
     (1u << VBUS_SGI_TO_HYP))

/* On a CPU the rtos shares with Linux (shared-core mode), the private interrupts that are the rtos's: the
 * physical SGIs but the hypervisor's (Linux's SGIs are virtual), and the EL1 physical timer (its kernel
 * timer there, timer=phys). Linux's view of its redistributor hides them, as it hides the hypervisor's;
 * Linux's own PPIs are the rest (VGIC_SHARED_LINUX_PPIS). */
#define VGIC_SHARED_RTOS_PRIVATE \
    ((((1u << GIC_SGI_COUNT) - 1u) & ~VGIC_HYP_PPIS) | (1u << BOARD_INTID_PHYS_TIMER))
#define VGIC_SHARED_LINUX_PPIS (~((1u << GIC_SGI_COUNT) - 1u) & ~VGIC_HYP_PPIS & ~VGIC_SHARED_RTOS_PRIVATE)

/* Physical and virtual CPU interface of this CPU, for a partition whose interrupts trap to EL2. */

void vgic_cpu_init(struct vcpu *v);
/* Forgets every virtual interrupt state of this CPU (list registers, active priorities, VMCR, queued
 * interrupts, SGIs handed over), deactivating the physical interrupts behind them: the CPU stops. */
void vgic_cpu_reset(struct vcpu *v);
/* Maps what p reaches of the GIC without a trap into its stage 2 (a GICv2's CPU interface; nothing on a
 * GICv3, whose CPU interface is system registers). */
void vgic_part_map(struct partition *p);
/* Registers a handler for a hypervisor interrupt (before the CPUs start taking interrupts). */
void vgic_set_hyp_irq(unsigned intid, vgic_hyp_irq_t fn);
/* A purely virtual level interrupt (an SPI) of an emulated device for p: line(ctx) is its level. */
void vgic_add_level(struct partition *p, unsigned intid, bool (*line)(const void *ctx), const void *ctx);
/* p's virtual distributor state back to reset (its level sources' priorities 0, routed to its boot
 * CPU, disabled): before each start. */
void vgic_part_reset(struct partition *p);
/* Re-samples the level sources routed to v and injects those asserted (on v's CPU). */
void vgic_sync_levels(struct vcpu *v);
/* A device model of p changed a line: every asserted, enabled level source goes to the CPU it is
 * routed to, injected here when that is `self` (this CPU; NULL or another partition's: none), handed
 * over with a kick otherwise. */
void vgic_levels_changed(struct partition *p, struct vcpu *self);
/* Takes every pending physical interrupt on this CPU (IRQ exception at or to EL2). On a CPU shared with
 * the rtos it stops at the first of the rtos's (peeked at, never acknowledged, so that the rtos takes it
 * itself) and returns true: the CPU must go to the rtos. */
bool vgic_handle_irq(struct vcpu *v);
/* Whether an interrupt of the rtos that shares v's CPU is pending (peeked at, not acknowledged). */
bool vgic_rtos_pending(const struct vcpu *v);
/* Whether the rtos that shares v's CPU needs it within `within` counter ticks: one of its interrupts is
 * pending, or its kernel timer fires by then. Hypervisor work on that CPU that cannot be interrupted
 * (EL2 runs with interrupts masked) is cut in steps and stops when this says so. */
bool vgic_rtos_soon(const struct vcpu *v, uint64_t within);
/* Linux's virtual CPU v on a CPU shared with the rtos, after the rtos (re)started there (its GIC
 * start-up disables every private interrupt): the hypervisor's and Linux's enabled PPIs on again. */
void vgic_shared_reclaim(const struct vcpu *v);
void vgic_inject(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify);
/* Hands SGI `sgi` to t, another CPU of the sender's partition (dropped if t is not on). */
void vgic_post_sgi(struct vcpu *t, unsigned sgi);
/* Sends t the kick SGI (t serves its requests and what it was handed). */
void vgic_kick(const struct vcpu *t);
/* A guest's SGI `sgi` from v to the CPUs in `targets` (bit n = CPU n; the sender's partition's only,
 * vgic_route.c): listed on v's own CPU, handed over to the others that are on. */
void vgic_send_sgi(struct vcpu *v, unsigned sgi, uint64_t targets);
/* Emulates a trapped GIC system-register access (SGI generation); false if esr is not one. */
bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr);

/* The redistributor's view of v's SGIs and PPIs held virtually (bit n = INTID n), for its own frame's
 * pending and active registers (vgicd.c): what v's list registers hold pending or active, and what
 * waits for one (queued, or handed over by another CPU) as pending. On v's CPU. */
void vgic_private_state(struct vcpu *v, uint32_t *pending, uint32_t *active);
/* A guest write of `sgis` (bit n = SGI n) to its own frame's GICR_ISPENDR0, ICPENDR0, ISACTIVER0 or
 * ICACTIVER0 (reg: the register's offset in SGI_base): the SGIs' state in v's list registers. */
void vgic_sgi_write(struct vcpu *v, uint64_t reg, uint32_t sgis);

#endif /* HYP_ARCH_VGIC_H */
