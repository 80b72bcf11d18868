/*
 * The V-Bus device (core/vbus.c): a virtio-mmio console device with VIRTIO_CONSOLE_F_MULTIPORT in the
 * Linux partition, one named port per configured channel, whose bytes the hypervisor moves to and from
 * the serving rtos partition's rings (lib/vbus.h) on Linux's CPU.
 *
 * The configuration (struct vbus_config) comes from the blob (core/config.c fills hyp_vbus); the rest
 * of this header is the device model's interface.
 */
#ifndef HYP_VBUS_H
#define HYP_VBUS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/vbus.h"

struct partition;

/* One channel, as configured: offsets are from the start of its rtos partition's V-Bus region. */
struct vbus_chan_config {
    char name[VBUS_NAME_SIZE]; /* NUL-terminated port name */
    struct partition *rtos;    /* the partition that serves it */
    unsigned index;            /* n in its region: bit n of the pending masks (channel@n in the rtos's DTB) */
    uint32_t chan_off;         /* struct vbus_chan */
    uint32_t to_linux_off;     /* struct vbus_ring, then to_linux_size data bytes */
    uint32_t to_linux_size;
    uint32_t to_rtos_off;
    uint32_t to_rtos_size;
};

/* The whole bus: at most one device, in one Linux partition; nchan == 0 means no V-Bus. Each rtos
 * partition that serves a channel has one region (struct vbus_region first); its place is the
 * partition's (struct partition's vbus_ipa/vbus_size, from the blob). */
struct vbus_config {
    struct partition *linux; /* the partition that sees the device */
    uint64_t mmio_ipa;       /* the virtio-mmio register page in Linux's IPA space (0x200 bytes used) */
    unsigned intid;          /* the device's interrupt as Linux sees it (an SPI, virtual) */
    unsigned nchan;
    struct vbus_chan_config chan[VBUS_MAX_CHANNELS];
};

extern struct vbus_config hyp_vbus;

#endif /* HYP_VBUS_H */
