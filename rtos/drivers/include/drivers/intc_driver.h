/*
 * What an interrupt-controller driver gives drivers/intc.c: one table of operations (drivers/intc.h
 * describes each). Included by the GIC drivers and intc.c only.
 */
#ifndef DRIVERS_INTC_DRIVER_H
#define DRIVERS_INTC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

struct intc_driver {
    const char *(*init)(void);
    void (*set_priority)(unsigned intid, uint8_t prio);
    void (*set_trigger)(unsigned intid, bool edge);
    void (*enable)(unsigned intid);
    void (*disable)(unsigned intid);
    void (*send_sgi)(uint64_t aff, unsigned sgi);
    void (*send_sgi_self)(unsigned sgi);
    volatile uint32_t *cpuif; /* the memory-mapped CPU interface (intc_gicc), or NULL */
    void (*cpu_ppi_init)(unsigned intid, uint8_t prio);
};

extern const struct intc_driver intc_gicv3;
extern const struct intc_driver intc_gicv2;

#endif /* DRIVERS_INTC_DRIVER_H */
