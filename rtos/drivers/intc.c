/*
 * The interrupt controller's driver, picked once at start-up from what the CPU reports: a CPU with the
 * GICv3 system-register interface (ID_AA64PFR0_EL1.GIC) is on a GICv3 board; one without it is on a
 * GICv2 board (the GIC-400 of a Raspberry Pi 4, QEMU virt's gic-version=2). Inside an rtmux partition
 * the hypervisor leaves the field as the hardware has it, and the board description it was built from
 * names the same version (the hypervisor checks at boot).
 */
#include "drivers/intc.h"

#include <stddef.h>

#include "arm64/sysreg.h"
#include "drivers/intc_driver.h"

static const struct intc_driver *drv;
volatile uint32_t *intc_gicc;

static const struct intc_driver *pick(void)
{
    uint64_t pfr0 = ARCH_READ_SYSREG(id_aa64pfr0_el1);
    return ((pfr0 >> ID_PFR0_GIC_SHIFT) & ID_PFR0_GIC_MASK) != 0 ? &intc_gicv3 : &intc_gicv2;
}

const char *intc_init(void)
{
    drv = pick();
    intc_gicc = drv->cpuif;
    return drv->init();
}

void intc_set_priority(unsigned intid, uint8_t prio)
{
    drv->set_priority(intid, prio);
}

void intc_set_trigger(unsigned intid, bool edge)
{
    drv->set_trigger(intid, edge);
}

void intc_enable(unsigned intid)
{
    drv->enable(intid);
}

void intc_disable(unsigned intid)
{
    drv->disable(intid);
}

void intc_send_sgi_self(unsigned sgi)
{
    drv->send_sgi_self(sgi);
}

void intc_send_sgi(uint64_t aff, unsigned sgi)
{
    drv->send_sgi(aff, sgi);
}

void intc_cpu_ppi_init(unsigned intid, uint8_t prio)
{
    /* Another CPU than the kernel's: intc_init may not have run yet on a bare second CPU's start. */
    (drv != NULL ? drv : pick())->cpu_ppi_init(intid, prio);
}
