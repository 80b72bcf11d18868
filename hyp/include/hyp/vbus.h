/*
 * The V-Bus device: a virtio console with VIRTIO_CONSOLE_F_MULTIPORT in the Linux partition (core/vbus.c,
 * on the virtio-mmio transport of core/vmmio.c), one named port per configured channel, whose bytes the
 * hypervisor moves to and from the serving rtos partition's rings (lib/vbus.h; core/vchan.c) on Linux's
 * CPU, in bounded passes (core/vpass.c).
 *
 * The configuration (struct vbus_config) comes from the blob (core/config.c fills hyp_vbus); the rest
 * of this header is the device's interface to the rest of the hypervisor.
 */
#ifndef HYP_VBUS_H
#define HYP_VBUS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/vbus.h"

struct partition;
struct vcpu;

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
 * partition's (struct partition's vbus.ipa/vbus.size, from the blob). */
struct vbus_config {
    struct partition *linux; /* the partition that sees the device */
    uint64_t mmio_ipa;       /* the virtio-mmio register page in Linux's IPA space (0x200 bytes used) */
    unsigned intid;          /* the device's interrupt as Linux sees it (an SPI, virtual) */
    unsigned nchan;
    struct vbus_chan_config chan[VBUS_MAX_CHANNELS];
};

extern struct vbus_config hyp_vbus;

/*
 * The device (core/vbus.c). Everything runs on the Linux partition's CPU (its register traps, its
 * doorbell interrupt), except vbus_part_down/vbus_part_up, which an rtos partition's CPU calls when it
 * stops or restarts; one lock orders the two (held for one bounded pass at a time).
 *
 * Channel numbers: channel i of hyp_vbus is Linux's port i; in its rtos region it is channel `index`
 * (bit `index` of the pending masks, channel@index in the rtos's DTB): how many earlier channels of
 * hyp_vbus that partition serves, which vbus_init checks.
 */

/* What moved through a channel, and what went wrong (reported at every partition stop). */
struct vbus_chan_stats {
    uint64_t to_rtos_bytes, to_rtos_msgs;   /* Linux's write buffers, copied into to_rtos */
    uint64_t to_linux_bytes, to_linux_msgs; /* Linux's receive buffers, filled from to_linux */
    uint64_t full;                          /* to_rtos was full with Linux's bytes waiting */
    uint64_t discarded;                     /* bytes dropped by the connection rules (lib/vbus.h) */
    uint64_t errors;                        /* virtqueue violations on its queues, bad rtos indices */
};

/* Sets the device up from hyp_vbus once every partition is set up and before any runs: its registers in
 * the Linux partition's MMIO table at mmio_ipa, every rtos region checked. Nothing when nchan is 0. */
void vbus_init(void);
/* The device's interrupt line: InterruptStatus is not 0 (vgic level source; ctx unused). */
bool vbus_irq_line(const void *ctx);
/* VBUS_SGI_TO_HYP taken on the Linux CPU (vgic_hyp_irq_t): what the rtos rang for. */
void vbus_doorbell(struct vcpu *v);
/* On p's own CPU, when p stops or before its RAM is wiped for a restart: an rtos partition's channels
 * go offline (Linux sees its ports closed), the Linux partition's device is reset. */
void vbus_part_down(struct partition *p);
/* On p's own CPU, after its images were loaded again: an rtos region is awaited (its magic). */
void vbus_part_up(struct partition *p);
/* One line per channel with its counters, and one for the device (its resets and violations). */
void vbus_report(void);
/* Channel i's counters (tests). */
struct vbus_chan_stats vbus_stats(unsigned chan);

#endif /* HYP_VBUS_H */
