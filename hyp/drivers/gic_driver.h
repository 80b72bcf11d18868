/*
 * What a GIC driver gives drivers/gic.c: one table of operations (drivers/gic.h describes each).
 * Included by the GIC drivers and gic.c only.
 */
#ifndef HYP_DRIVERS_GIC_DRIVER_H
#define HYP_DRIVERS_GIC_DRIVER_H

#include "drivers/gic.h"

struct gic_driver {
    unsigned version;
    uint64_t dist_size;
    void (*dist_init)(void);
    void (*spi_route)(unsigned intid, uint64_t aff, uint8_t prio);
    void (*spi_place)(unsigned intid, uint64_t aff);
    void (*spi_quiesce)(unsigned intid);
    void (*spi_disable)(unsigned intid);
    void (*spi_set_pending)(unsigned intid);
    void (*spi_set_priority)(unsigned intid, uint8_t prio);
    void (*ppi_enable)(unsigned cpu, unsigned intid, uint8_t prio);
    void (*ppi_quiesce)(unsigned cpu, uint32_t mask);
    void (*ppi_disable)(unsigned cpu, unsigned intid);
    void (*private_set_pending)(unsigned cpu, uint32_t mask);
    void (*private_enable)(unsigned cpu, uint32_t mask);
    void (*private_set_priority)(unsigned cpu, unsigned intid, uint8_t prio);
    bool (*irq_is_level)(unsigned cpu, unsigned intid);
    bool (*irq_is_pending)(unsigned cpu, unsigned intid);
    uint8_t (*irq_priority)(unsigned cpu, unsigned intid);
    void (*send_sgi)(uint64_t aff, unsigned sgi);
    void (*cpu_init)(unsigned cpu);
    void (*hyp_cpuif)(void);
    uint32_t (*ack)(void);
    void (*drop)(uint32_t ack);
    void (*deactivate)(uint32_t ack);
    unsigned (*peek)(void);
    void (*cpuif_save)(struct gic_cpuif_state *s);
    void (*cpuif_restore)(const struct gic_cpuif_state *s);
    void (*cpuif_reset)(void);
    unsigned (*lr_count)(void);
    uint64_t (*lr_read)(unsigned i);
    void (*lr_write)(unsigned i, uint64_t val);
    uint64_t (*lr_empty)(void);
    uint64_t (*lr_eoi_done)(void);
    uint64_t (*vif_hcr)(void);
    void (*vif_set_hcr)(uint64_t hcr);
    uint64_t (*vif_misr)(void);
    bool (*vif_traps_ack)(void);
    bool (*vif_guest_takes)(uint8_t prio);
    void (*vif_reset)(void);
    bool (*guest_cpuif)(bool trapping, uint64_t *ipa, uint64_t *pa, uint64_t *size);
};

extern const struct gic_driver gic_v3_driver;
extern const struct gic_driver gic_v2_driver;

#endif /* HYP_DRIVERS_GIC_DRIVER_H */
