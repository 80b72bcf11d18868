/*
 * Who a partition's interrupts may reach (arch/vgic_route.h). Affinities are compared whole (Aff3..Aff0)
 * with the ones each CPU read from its MPIDR_EL1 at start-up, so nothing here assumes QEMU virt's
 * numbering (Aff0 = CPU number).
 */
#include "arch/vgic_route.h"

#include "arm64/gicv2.h"
#include "arm64/sysreg.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"

/* ICC_SGI1R_EL1.RS [47:44]: the TargetList names Aff0 = RS * 16 + n. */
#define SGI1R_RS_SHIFT 44
#define SGI1R_RS_MASK  0xfu
/* GICD_IROUTER: Aff0..Aff2 at [23:0], IRM at [31], Aff3 at [39:32] (MPIDR's layout). */
#define IROUTER_IRM (1ull << 31)

uint64_t vgic_sgi_targets(const struct partition *p, unsigned self, uint64_t sgi1r)
{
    if ((sgi1r & ICC_SGI1R_IRM) != 0) {
        return p->cpu_mask & ~(1ull << self);
    }
    uint64_t aff3 = (sgi1r >> ICC_SGI1R_AFF3_SHIFT) & 0xffu, aff2 = (sgi1r >> ICC_SGI1R_AFF2_SHIFT) & 0xffu;
    uint64_t aff1 = (sgi1r >> ICC_SGI1R_AFF1_SHIFT) & 0xffu, rs = (sgi1r >> SGI1R_RS_SHIFT) & SGI1R_RS_MASK;
    uint64_t targets = 0;
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        uint64_t aff = hyp_vcpu[c].mpidr;
        if (((p->cpu_mask >> c) & 1u) == 0 || MPIDR_AFF3(aff) != aff3 || MPIDR_AFF2(aff) != aff2 ||
            MPIDR_AFF1(aff) != aff1 || MPIDR_AFF0(aff) / ICC_SGI1R_TARGET_AFF0_MAX != rs) {
            continue;
        }
        if (((sgi1r & ICC_SGI1R_TARGETS) >> (MPIDR_AFF0(aff) % ICC_SGI1R_TARGET_AFF0_MAX)) & 1u) {
            targets |= 1ull << c;
        }
    }
    return targets;
}

unsigned vgic_irouter_cpu(const struct partition *p, uint64_t irouter)
{
    int cpu = (irouter & IROUTER_IRM) != 0 ? -1 : part_cpu_of_affinity(p, mpidr_affinity(irouter));
    return cpu >= 0 ? (unsigned)cpu : part_boot_cpu(p);
}

uint64_t vgic_irouter_of(unsigned cpu)
{
    uint64_t aff = hyp_vcpu[cpu].mpidr;
    return (aff & MPIDR_AFF012_MASK) | ((uint64_t)MPIDR_AFF3(aff) << MPIDR_AFF3_SHIFT);
}

/* The CPU of p whose CPU interface is n (Aff0 n), or -1. */
static int cpu_of_interface(const struct partition *p, unsigned n)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((p->cpu_mask >> c) & 1u) != 0 && MPIDR_AFF0(hyp_vcpu[c].mpidr) == n) {
            return (int)c;
        }
    }
    return -1;
}

uint64_t vgic_sgir_targets(const struct partition *p, unsigned self, uint32_t sgir)
{
    unsigned filter = (sgir >> GICD_SGIR_FILTER_SHIFT) & GICD_SGIR_FILTER_MASK;
    if (filter == GICD_SGIR_FILTER_OTHERS) {
        return p->cpu_mask & ~(1ull << self);
    }
    if (filter == GICD_SGIR_FILTER_SELF) {
        return (p->cpu_mask >> self) & 1u ? 1ull << self : 0u;
    }
    uint64_t targets = 0;
    if (filter == GICD_SGIR_FILTER_LIST) {
        uint32_t list = (sgir >> GICD_SGIR_TARGETS_SHIFT) & GICD_SGIR_TARGETS_MASK;
        for (unsigned n = 0; n < GICV2_MAX_CPUS; n++) {
            int c = ((list >> n) & 1u) != 0 ? cpu_of_interface(p, n) : -1;
            targets |= c >= 0 ? 1ull << c : 0u;
        }
    }
    return targets;
}

unsigned vgic_itargets_cpu(const struct partition *p, uint8_t targets)
{
    for (unsigned n = 0; n < GICV2_MAX_CPUS; n++) {
        int c = ((targets >> n) & 1u) != 0 ? cpu_of_interface(p, n) : -1;
        if (c >= 0) {
            return (unsigned)c;
        }
    }
    return part_boot_cpu(p);
}

uint8_t vgic_itargets_of(unsigned cpu)
{
    return (uint8_t)(1u << (MPIDR_AFF0(hyp_vcpu[cpu].mpidr) % GICV2_MAX_CPUS));
}
