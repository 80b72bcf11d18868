/*
 * What host tests of the distributor filter (vgicd.c) link instead of the virtual CPU interface
 * (vgic.c, which needs the CPU's list registers): a record of each CPU's virtual SGIs, pending and
 * active, that the filter's calls change and read.
 */
#ifndef UNIT_VGIC_STUB_H
#define UNIT_VGIC_STUB_H

#include <stdint.h>

#include "hyp/limits.h"

struct vgic_stub {
    uint32_t pending[HYP_MAX_CPUS], active[HYP_MAX_CPUS]; /* bit n = SGI n */
    uint64_t writes, posts;                               /* vgic_sgi_write and vgic_post_sgi calls */
};

extern struct vgic_stub vgic_stub;

#endif /* UNIT_VGIC_STUB_H */
