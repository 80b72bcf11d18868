/*
 * The GIC driver for this board, picked once by the boot CPU (drivers/gic.h): the GICv3 one when the
 * CPU has the GICv3 system-register interface (ID_AA64PFR0_EL1.GIC), the GICv2 one otherwise. The calls
 * below only forward.
 */
#include "drivers/gic.h"

#include <stddef.h>

#include "arm64/sysreg.h"
#include "drivers/gic_driver.h"
#include "hyp/assert.h"

static const struct gic_driver *drv;

unsigned gic_probe(void)
{
    uint64_t pfr0 = ARCH_READ_SYSREG(id_aa64pfr0_el1);
    drv = ((pfr0 >> ID_PFR0_GIC_SHIFT) & ID_PFR0_GIC_MASK) != 0 ? &gic_v3_driver : &gic_v2_driver;
    return drv->version;
}

unsigned gic_version(void)
{
    HYP_ASSERT(drv != NULL);
    return drv->version;
}

uint64_t gic_dist_size(void)
{
    return drv->dist_size;
}

void gic_dist_init(void)
{
    drv->dist_init();
}

void gic_spi_route(unsigned intid, uint64_t aff, uint8_t prio)
{
    drv->spi_route(intid, aff, prio);
}

void gic_spi_place(unsigned intid, uint64_t aff)
{
    drv->spi_place(intid, aff);
}

void gic_spi_quiesce(unsigned intid)
{
    drv->spi_quiesce(intid);
}

void gic_spi_disable(unsigned intid)
{
    drv->spi_disable(intid);
}

void gic_spi_set_pending(unsigned intid)
{
    drv->spi_set_pending(intid);
}

void gic_spi_set_priority(unsigned intid, uint8_t prio)
{
    drv->spi_set_priority(intid, prio);
}

void gic_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio)
{
    drv->ppi_enable(cpu, intid, prio);
}

void gic_ppi_quiesce(unsigned cpu, uint32_t mask)
{
    drv->ppi_quiesce(cpu, mask);
}

void gic_ppi_disable(unsigned cpu, unsigned intid)
{
    drv->ppi_disable(cpu, intid);
}

void gic_private_set_pending(unsigned cpu, uint32_t mask)
{
    drv->private_set_pending(cpu, mask);
}

void gic_private_enable(unsigned cpu, uint32_t mask)
{
    drv->private_enable(cpu, mask);
}

void gic_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio)
{
    drv->private_set_priority(cpu, intid, prio);
}

bool gic_irq_is_level(unsigned cpu, unsigned intid)
{
    return drv->irq_is_level(cpu, intid);
}

bool gic_irq_is_pending(unsigned cpu, unsigned intid)
{
    return drv->irq_is_pending(cpu, intid);
}

uint8_t gic_irq_priority(unsigned cpu, unsigned intid)
{
    return drv->irq_priority(cpu, intid);
}

void gic_send_sgi(uint64_t aff, unsigned sgi)
{
    drv->send_sgi(aff, sgi);
}

void gic_cpu_init(unsigned cpu)
{
    drv->cpu_init(cpu);
}

void gic_hyp_cpuif(void)
{
    drv->hyp_cpuif();
}

uint32_t gic_ack(void)
{
    return drv->ack();
}

void gic_drop(uint32_t ack)
{
    drv->drop(ack);
}

void gic_deactivate(uint32_t ack)
{
    drv->deactivate(ack);
}

unsigned gic_peek(void)
{
    return drv->peek();
}

void gic_cpuif_save(struct gic_cpuif_state *s)
{
    drv->cpuif_save(s);
}

void gic_cpuif_restore(const struct gic_cpuif_state *s)
{
    drv->cpuif_restore(s);
}

void gic_cpuif_reset(void)
{
    drv->cpuif_reset();
}

unsigned gic_lr_count(void)
{
    return drv->lr_count();
}

uint64_t gic_lr_read(unsigned i)
{
    return drv->lr_read(i);
}

void gic_lr_write(unsigned i, uint64_t val)
{
    drv->lr_write(i, val);
}

uint64_t gic_lr_empty(void)
{
    return drv->lr_empty();
}

uint64_t gic_lr_eoi_done(void)
{
    return drv->lr_eoi_done();
}

uint64_t gic_vif_hcr(void)
{
    return drv->vif_hcr();
}

void gic_vif_set_hcr(uint64_t hcr)
{
    drv->vif_set_hcr(hcr);
}

uint64_t gic_vif_misr(void)
{
    return drv->vif_misr();
}

bool gic_vif_traps_ack(void)
{
    return drv->vif_traps_ack();
}

bool gic_vif_guest_takes(uint8_t prio)
{
    return drv->vif_guest_takes(prio);
}

void gic_vif_reset(void)
{
    drv->vif_reset();
}

bool gic_guest_cpuif(bool trapping, uint64_t *ipa, uint64_t *pa, uint64_t *size)
{
    return drv->guest_cpuif(trapping, ipa, pa, size);
}
