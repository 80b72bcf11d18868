/*
 * The GIC distributor and redistributors as partitions see them (arch/arm64/vgicd.c): never mapped,
 * every access traps and is filtered by interrupt ownership.
 */
#ifndef HYP_ARCH_VGICD_H
#define HYP_ARCH_VGICD_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* Where the physical registers are (the board's addresses; a fake register file in unit tests). The
 * redistributor region a partition sees spans HYP_MAX_CPUS frames; only the first ncpus exist (the
 * board's CPUs, from the configuration): the others are unassigned space, where a read by the
 * hypervisor itself would abort at EL2. */
struct vgicd_hw {
    uintptr_t gicd;
    uintptr_t gicr;
    unsigned ncpus;
};

extern struct vgicd_hw vgicd_board;

/* MMIO handlers; ctx is a struct vgicd_hw, off is from the start of the distributor or of the
 * redistributor region. */
bool vgicd_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size);
bool vgicr_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size);
/* A GICv2's distributor (4 KiB; no redistributors): its SPI part filtered as above, each CPU's banked
 * SGI/PPI registers and GICD_SGIR as vgicd.c describes. */
bool vgicd_v2_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size);

#endif /* HYP_ARCH_VGICD_H */
