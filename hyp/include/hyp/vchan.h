/*
 * The hypervisor's end of the V-Bus's channels (core/vchan.c): lib/vbus.h's protocol on the rtos
 * partitions' regions (the rings, the connection rule and its epochs, the doorbells), and the bytes
 * moved between a channel's rings and its Linux end, a pair of virtqueues of a virtio-mmio transport
 * (core/vmmio.c: Linux's receive queue for to_linux, its transmit queue for to_rtos).
 *
 * A channel knows nothing of the device its queues belong to. Its client (the console device,
 * core/vbus.c) says when Linux opens or closes its end and when Linux's rings are gone, runs its passes,
 * and hears through `changed` each time the rtos's end may have opened or closed (vchan_host_open). What
 * Linux gave that is wrong is a violation of the transport (vmmio_fail); what the rtos wrote that is
 * wrong is logged once, counted and not followed. Every call runs under the device's lock, within its
 * pass (core/vpass.c), except vchan_region_down/up, which run on the rtos partition's CPU under the same
 * lock.
 */
#ifndef HYP_VCHAN_H
#define HYP_VCHAN_H

#include <stdbool.h>
#include <stdint.h>

#include "hyp/vbus.h"
#include "lib/vbus.h"

struct partition;
struct vmmio;
struct vpass;

/* An rtos partition's region. state is written by the rtos partition's CPU (under the lock) and read by
 * the Linux CPU; online is the Linux CPU's own view. */
enum vchan_region_state { VCHAN_REGION_OFF, VCHAN_REGION_WAIT };

struct vchan;

struct vchan_region {
    struct partition *part;
    struct vbus_region *hdr;
    uint64_t rtos_aff; /* where VBUS_SGI_TO_RTOS goes */
    volatile int state;
    volatile uint32_t gen; /* counts the times the region was lost (stop, restart) */
    uint32_t gen_seen;
    bool online; /* magic seen since the region was last lost */
    bool bad_logged;
    unsigned nchan;
    struct vchan *chan[VBUS_MAX_CHANNELS]; /* region channel N */
    uint32_t kick;                         /* channels to ring the rtos about at the end of this pass */
};

struct vchan {
    const struct vbus_chan_config *cfg;
    struct vchan_region *r;
    unsigned local; /* the channel's number in its region */
    struct vbus_chan *c;
    struct vbus_ring *to_linux, *to_rtos;
    /* Linux's end: queues rxq (to_linux's bytes go there) and rxq + 1 (to_rtos's come from there) */
    struct vmmio *t;
    unsigned rxq;
    struct vpass *pass;
    bool linux_open; /* a Linux program has the channel open (its client says so) */
    /* A write Linux queued that to_rtos had no room for, or that a pass stopped in: its head, bytes
     * copied so far and in all. */
    bool held;
    uint16_t held_head;
    uint32_t held_done, held_total;
    /* Writes on the transmitq before this entry (a count of the queue's taken entries) belong to an
     * earlier connection: dropped, not delivered (tx_discard_queued). */
    uint64_t discard_to;
    /* the rtos's side, while its region is online */
    bool rtos_open;        /* open, with the session below acknowledged */
    uint32_t session;      /* the rtos_session acknowledged */
    uint32_t epoch;        /* the linux_epoch last published */
    bool acked;            /* the rtos acted on epoch and its to_linux_start was applied */
    uint32_t to_rtos_head; /* the hypervisor's own indices (lib/vbus.h: never read back) */
    uint32_t to_linux_tail;
    bool bad_logged;
    struct vbus_chan_stats stats;
    /* The client: told whenever vchan_host_open may have changed. */
    void (*changed)(void *ctx);
    void *ctx;
};

/* Region of rtos partition `part` (its V-Bus place, which config_parse checked), awaited: its RAM was
 * just wiped, so its magic is 0 until the rtos starts it. */
void vchan_region_init(struct vchan_region *r, struct partition *part);
/* Channel `cfg` as the next channel of its region r, with its Linux end on t's queues rxq and rxq + 1,
 * its work bounded by `pass`, and `changed(ctx)` its client's. false (nothing changed) if its control
 * block or rings do not fit the region. */
bool vchan_init(struct vchan *ch, const struct vbus_chan_config *cfg, struct vchan_region *r, struct vmmio *t,
                unsigned rxq, struct vpass *pass, void (*changed)(void *ctx), void *ctx);

/* The region's state: lost since the last look (every channel closed for Linux, the hypervisor's indices
 * back to an empty ring), or started by the rtos (its channels' epochs published). */
void vchan_region_poll(struct vchan_region *r);
/* VBUS_SGI_TO_HYP: takes the channels the rtos rang for, and passes over each when `serve` (when not, a
 * pass over every channel follows). */
void vchan_region_rang(struct vchan_region *r, bool serve);
/* Rings the rtos for what this pass changed in the region (lib/vbus.h, "Doorbells"). */
void vchan_region_ring(struct vchan_region *r);
/* On the rtos partition's CPU, when it stops or before its RAM is wiped: the region goes offline (the
 * next pass closes its channels for Linux), what its rings held counted as dropped. */
void vchan_region_down(struct vchan_region *r);
/* On the rtos partition's CPU, after its images were loaded again: the region is awaited (its magic). */
void vchan_region_up(struct vchan_region *r);

/* Everything the channel can do now: the rtos's state, Linux's writes into to_rtos, to_linux's bytes into
 * Linux's receive buffers. */
void vchan_pass(struct vchan *ch);
/* A Linux program opened (what an earlier one queued is dropped) or closed the channel. */
void vchan_linux_open(struct vchan *ch, bool open);
/* Linux's rings are gone (the device broke or is reset): a write held is dropped, counted, and not
 * given back. */
void vchan_linux_lost(struct vchan *ch);
/* The transmitq starts again from entry 0 (QueueReady): nothing held, nothing to drop. */
void vchan_tx_restart(struct vchan *ch);
/* The rtos's own counters of the channel (lib/vbus.h: rtos_full, rtos_discarded), read as numbers only;
 * 0 while its region is offline. */
void vchan_rtos_counters(const struct vchan *ch, uint64_t *full, uint64_t *discarded);

/* Whether the rtos's end is there: open, acknowledged, its region online. */
static inline bool vchan_host_open(const struct vchan *ch)
{
    return ch->rtos_open && ch->r->online;
}

#endif /* HYP_VCHAN_H */
