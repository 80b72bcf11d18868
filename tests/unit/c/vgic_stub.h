/*
 * What host tests of the distributor filter (vgicd.c) link instead of the virtual CPU interface
 * (vgic.c, which needs the CPU's list registers): a record of each CPU's virtual SGIs, pending and
 * active, that the filter's calls change and read; the GIC version the filter emulates and the
 * physical SGIs it sends (GICv2's GICD_SGIR of a direct partition).
 */
#ifndef UNIT_VGIC_STUB_H
#define UNIT_VGIC_STUB_H

#include <stdint.h>

#include "hyp/limits.h"

struct vgic_stub {
    uint32_t pending[HYP_MAX_CPUS], active[HYP_MAX_CPUS]; /* bit n = SGI n */
    uint64_t writes, posts;                               /* vgic_sgi_write and vgic_post_sgi calls */
    unsigned gic;                                         /* gic_version(): 2, or 0 for 3 */
    uint32_t phys_sgis[HYP_MAX_CPUS];                     /* gic_send_sgi: bit n = SGI n, by Aff0 */
};

extern struct vgic_stub vgic_stub;

#endif /* UNIT_VGIC_STUB_H */
