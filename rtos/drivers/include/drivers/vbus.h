/*
 * The V-Bus as the rtos finds it (drivers/vbus.c): the DTB's /rtmux-vbus node (lib/vbus.h states the
 * contract the tools write) and the two doorbells. The channels' protocol is drivers/vbus_ep.c; the API
 * threads use is kernel/chan.c (rtos/chan.h).
 */
#ifndef DRIVERS_VBUS_H
#define DRIVERS_VBUS_H

#include <stdint.h>

#include "lib/vbus.h"
#include "rtos/irq.h"

struct vbus_dt_chan {
    char name[VBUS_NAME_SIZE]; /* NUL-terminated */
    uint32_t chan_off, to_linux_off, to_linux_size, to_rtos_off, to_rtos_size;
};

struct vbus_dt {
    struct vbus_region *region; /* at its IPA, which the rtos maps as RAM */
    uint64_t size;
    unsigned sgi_to_rtos, sgi_to_hyp;
    uint64_t hyp_aff; /* the Linux CPU the hypervisor takes the doorbell on (packed affinity) */
    unsigned nchan;   /* channel@0 .. channel@nchan-1 */
    struct vbus_dt_chan chan[VBUS_MAX_CHANNELS];
};

/* Reads /rtmux-vbus into *out: 1 when it is there and well formed, 0 when it is absent (bare metal, or
 * no channel configured), -1 when it is malformed (one line says what; the V-Bus is then not used). */
int vbus_dt_read(const void *dtb, struct vbus_dt *out);
/* Takes the hypervisor's doorbell (dt->sgi_to_rtos) at priority prio with the kernel's handler (no FP/SIMD,
 * argument NULL), directly (no trap), and remembers where vbus_kick sends the rtos's. */
int vbus_doorbell_attach(const struct vbus_dt *dt, unsigned prio, rt_irq_handler_t handler);
/* Rings the hypervisor (dt->sgi_to_hyp to the Linux CPU): an SGI write that does not trap. */
void vbus_kick(void);

#endif /* DRIVERS_VBUS_H */
