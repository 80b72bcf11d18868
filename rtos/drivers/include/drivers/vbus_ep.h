/*
 * The rtos's end of one V-Bus channel (drivers/vbus_ep.c): lib/vbus.h's protocol on the shared region,
 * pure (no hardware, no kernel: the host unit tests run it against the hypervisor's device model). The
 * caller serialises the calls of one region (the rtos: its kernel lock) and sends the doorbell SGI when
 * a call says so (*ring).
 */
#ifndef DRIVERS_VBUS_EP_H
#define DRIVERS_VBUS_EP_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/vbus.h"

/* Events vbus_ep_sync reports. */
#define VBUS_EV_CONNECT    0x1u /* a Linux program is connected (after the rtos's open) */
#define VBUS_EV_DISCONNECT 0x2u /* it closed, or the device was reset */

struct vbus_ep_stats {
    uint64_t sent_bytes, sent_msgs;         /* vbus_ep_write calls that wrote something, and their bytes */
    uint64_t received_bytes, received_msgs; /* the same for vbus_ep_read */
    uint64_t full;                          /* writes that found no room for all their bytes */
    uint64_t discarded;                     /* bytes of earlier connections dropped (lib/vbus.h) */
    uint64_t connects, disconnects;
};

struct vbus_ep {
    struct vbus_region *region;
    struct vbus_chan *c;
    struct vbus_ring *tx, *rx; /* to_linux, to_rtos */
    uint32_t tx_size, rx_size;
    uint32_t bit;              /* the channel's bit in the pending masks */
    uint32_t tx_head, rx_tail; /* the rtos's own indices (never read back from the region) */
    uint32_t epoch;            /* the last linux_epoch acted on */
    uint32_t session;          /* rtos_session of the current (or last) open */
    bool open;                 /* a thread has the channel open */
    bool acked;                /* the hypervisor acknowledged this open */
    bool linux_open;           /* linux_open in the epoch last acted on */
    struct vbus_ep_stats stats;
};

/* Writes nchan, then the magic (release): the hypervisor may use the region from then on. */
void vbus_region_start(struct vbus_region *region, uint32_t nchan);
/* Channel N of the region at the offsets the DTB gives (bit = 1 << N). Touches nothing shared. */
void vbus_ep_init(struct vbus_ep *ep, struct vbus_region *region, uint32_t n, uint32_t chan_off,
                  uint32_t to_linux_off, uint32_t to_linux_size, uint32_t to_rtos_off, uint32_t to_rtos_size);
/* Sets the channel's bits in the hypervisor's pending mask; true when the mask was empty (then the
 * caller sends VBUS_SGI_TO_HYP). */
bool vbus_ring_hyp(struct vbus_region *region, uint32_t bits);
/* The channels the hypervisor rang for since the last call (their bits; the mask is cleared). */
uint32_t vbus_take_pending(struct vbus_region *region);

/* Opens (a new session, to be acknowledged by the hypervisor) or closes the channel. */
void vbus_ep_open(struct vbus_ep *ep, bool *ring);
void vbus_ep_close(struct vbus_ep *ep, bool *ring);
/* Acts on a new linux_epoch, if any (discards an earlier connection's bytes, acknowledges it): the
 * VBUS_EV_* that happened, a disconnect before a connect when both did. */
unsigned vbus_ep_sync(struct vbus_ep *ep, bool *ring);
/* Open, acknowledged, and a Linux program has the port open: bytes may be sent. */
bool vbus_ep_connected(const struct vbus_ep *ep);
/* Bytes waiting to be read (0 before the open is acknowledged), and room for writing (0 unless
 * connected). */
uint32_t vbus_ep_readable(const struct vbus_ep *ep);
uint32_t vbus_ep_room(const struct vbus_ep *ep);
/* Copies at most n bytes out of to_rtos / into to_linux; returns how many. Nothing is written unless
 * connected. */
uint32_t vbus_ep_read(struct vbus_ep *ep, void *buf, uint32_t n, bool *ring);
uint32_t vbus_ep_write(struct vbus_ep *ep, const void *buf, uint32_t n, bool *ring);
/* All n bytes into to_linux, or none (0) when the ring has room for fewer: one message that no other
 * write can split. Counted as full like a short vbus_ep_write. */
uint32_t vbus_ep_write_all(struct vbus_ep *ep, const void *buf, uint32_t n, bool *ring);

#endif /* DRIVERS_VBUS_EP_H */
