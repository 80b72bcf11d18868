/*
 * The virtual CPU interface as the distributor filter sees it (vgic_stub.h): SGIs written through a
 * CPU's own frame change that CPU's record, set-pending through another CPU's frame is a post to it.
 */
#include "vgic_stub.h"

#include "arch/vgic.h"
#include "arm64/gicv3.h"
#include "drivers/gic.h"
#include "hyp/vcpu.h"

struct vgic_stub vgic_stub;

void vgic_private_state(struct vcpu *v, uint32_t *pending, uint32_t *active)
{
    *pending = vgic_stub.pending[v->cpu];
    *active = vgic_stub.active[v->cpu];
}

void vgic_sgi_write(struct vcpu *v, uint64_t reg, uint32_t sgis)
{
    vgic_stub.writes++;
    sgis &= (1u << GIC_SGI_COUNT) - 1u;
    if (reg == GICR_ISPENDR0) {
        vgic_stub.pending[v->cpu] |= sgis;
    } else if (reg == GICR_ICPENDR0) {
        vgic_stub.pending[v->cpu] &= ~sgis;
    } else if (reg == GICR_ISACTIVER0) {
        vgic_stub.active[v->cpu] |= sgis;
    } else if (reg == GICR_ICACTIVER0) {
        vgic_stub.active[v->cpu] &= ~sgis;
    }
}

void vgic_post_sgi(struct vcpu *t, unsigned sgi)
{
    vgic_stub.posts++;
    vgic_stub.pending[t->cpu] |= 1u << (sgi % GIC_SGI_COUNT);
}

void vgic_send_sgi(struct vcpu *v, unsigned sgi, uint64_t targets)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if ((targets >> c) & 1u) {
            if (c == v->cpu) {
                vgic_stub.pending[c] |= 1u << (sgi % GIC_SGI_COUNT);
            } else {
                vgic_post_sgi(&hyp_vcpu[c], sgi);
            }
        }
    }
}

unsigned gic_version(void)
{
    return vgic_stub.gic != 0 ? vgic_stub.gic : 3u;
}

void gic_send_sgi(uint64_t aff, unsigned sgi)
{
    vgic_stub.phys_sgis[MPIDR_AFF0(aff) % HYP_MAX_CPUS] |= 1u << (sgi % GIC_SGI_COUNT);
}
