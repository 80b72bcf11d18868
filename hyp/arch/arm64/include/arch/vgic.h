/*
 * Virtual CPU interface for partitions that take interrupts through EL2 (Linux), and the hypervisor's
 * own interrupts on those CPUs (arch/arm64/vgic.c).
 */
#ifndef HYP_ARCH_VGIC_H
#define HYP_ARCH_VGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "lib/vbus.h"

struct vcpu;

/* A hypervisor-owned interrupt: fn runs after the priority drop, then the interrupt is deactivated. */
typedef void (*vgic_hyp_irq_t)(struct vcpu *v);

/* The hypervisor's own private interrupts on a CPU whose interrupts go through EL2 (vGIC maintenance,
 * EL2 timer, and the V-Bus doorbell the rtos sends, lib/vbus.h): never a guest's to configure, kept
 * enabled when a partition's interrupts are quiesced. */
#define VGIC_HYP_PPIS \
    ((1u << BOARD_INTID_GIC_MAINT) | (1u << BOARD_INTID_HYP_TIMER) | (1u << VBUS_SGI_TO_HYP))

/* Physical and virtual CPU interface of this CPU, for a partition whose interrupts trap to EL2. */

void vgic_cpu_init(struct vcpu *v);
/* Forgets every virtual interrupt state of this CPU's partition (list registers, active priorities,
 * VMCR, queued interrupts), deactivating the physical interrupts behind them: a stop or a reset. */
void vgic_cpu_reset(struct vcpu *v);
/* Registers a handler for a hypervisor interrupt (before the CPUs start taking interrupts). */
void vgic_set_hyp_irq(unsigned intid, vgic_hyp_irq_t fn);
/* A purely virtual level interrupt of an emulated device for v's partition: line(ctx) is its level. */
void vgic_add_level(struct vcpu *v, unsigned intid, bool (*line)(const void *ctx), const void *ctx);
/* Re-samples v's virtual level interrupts and injects those asserted. */
void vgic_sync_levels(struct vcpu *v);
/* Takes every pending physical interrupt on this CPU (IRQ exception at or to EL2). */
void vgic_handle_irq(struct vcpu *v);
void vgic_inject(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify);
/* Emulates a trapped GIC system-register access (SGI generation); false if esr is not one. */
bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr);

#endif /* HYP_ARCH_VGIC_H */
