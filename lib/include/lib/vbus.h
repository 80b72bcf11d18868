/*
 * The V-Bus's shared memory: how an rtos partition and the hypervisor exchange a channel's bytes without
 * the rtos ever trapping to EL2 or touching Linux's memory. The hypervisor moves bytes between these
 * rings and the Linux partition's virtqueues on Linux's CPU (hyp/core/vchan.c); the rtos reads and
 * writes the rings (rtos/drivers/vbus_ep.c). This header is the one definition of the layout and of the
 * protocol; the tools place the region (tools/rtmux/config) and describe it twice, identically: to the
 * hypervisor in the configuration blob, to the rtos in its DTB (node /rtmux-vbus).
 *
 * The rtos's DTB (tools/rtmux/image/dtgen.py, vbus_region_node) describes the region and the channels;
 * the hypervisor reads the same numbers from its blob (hyp/blob.h). Without the node there is no V-Bus
 * (bare metal, or no channel configured):
 *   /rtmux-vbus {
 *       compatible = "rtmux,vbus";
 *       reg = <address-hi address-lo size-hi size-lo>;   the region, at the rtos's IPAs
 *       rtmux,doorbell = <sgi-to-rtos sgi-to-hyp mpidr-hi mpidr-lo>;
 *       #address-cells = <1>;
 *       #size-cells = <0>;
 *       channel@N {                                      one per channel, N = 0, 1, ... (hex)
 *           reg = <N>;
 *           label = "NAME";                               the port name Linux shows
 *           rtmux,layout = <chan-off to-linux-off to-linux-size to-rtos-off to-rtos-size>;
 *       };
 *   };
 * rtmux,doorbell: VBUS_SGI_TO_RTOS and VBUS_SGI_TO_HYP, then the affinity fields of the MPIDR of the
 * Linux CPU the rtos sends its SGI to (Aff3 in bits 7:0 of mpidr-hi; Aff2, Aff1, Aff0 in bits 23:0 of
 * mpidr-lo, as a /cpus/cpu@ reg writes them). N is the channel's index in the region: its bit in the
 * pending masks, counted in configuration order among the channels this partition serves. The offsets
 * count bytes from the region's start: struct vbus_chan at chan-off, each ring's struct vbus_ring at
 * its offset, followed by its size data bytes.
 *
 * The region lies in the rtos partition's RAM (so the hypervisor's wipe of that RAM before every start of
 * the rtos leaves every ring empty and every channel closed), right below its DTB slot, where the rtos
 * keeps nothing of its own (tools/rtmux/config/model.py says why). It starts with struct vbus_region; each
 * channel then has one struct vbus_chan and two byte rings (struct vbus_ring + data), at offsets from
 * the region's start that the tools chose (all 64-byte aligned, inside the region, not overlapping).
 *
 * Byte rings: one producer, one consumer, free-running 32-bit indices as in lib/conring.h:
 *   0 <= head - tail <= size, size a power of two; data[i % size];
 *   the producer writes the bytes, then publishes head with a release store;
 *   the consumer loads head with acquire, reads the bytes, then publishes tail with a release store.
 * to_linux: the rtos produces, the hypervisor consumes; to_rtos: the reverse. A full ring makes the
 * producer wait or fail ("would block"), never overwrite or drop. The hypervisor keeps its own copy of
 * the index it owns and never trusts the rtos's index beyond the invariant (a bad value is clamped and
 * logged, never followed outside the ring).
 *
 * Doorbells. A side that changed something the other must act on (bytes produced, bytes consumed so
 * the other may produce again, its open state) sets the channel's bit in the other side's pending
 * mask with an atomic OR, and sends the other side's SGI only if the mask was zero before (the
 * receiver exchanges the mask with zero before it looks at the channels, so no change is missed and
 * bursts cost one interrupt). The rtos sends VBUS_SGI_TO_HYP to the CPU the DTB names (a Linux CPU,
 * where the hypervisor takes it at EL2: the rtos's ICC_SGI1R_EL1 write does not trap); the hypervisor
 * sends VBUS_SGI_TO_RTOS to the rtos's CPU, which takes it directly.
 *
 * Connection. rtos_open is the rtos's: 1 while a thread has the channel open; rtos_session counts its
 * opens (incremented before rtos_open is set). linux_open is the hypervisor's: 1 while a Linux program has
 * the port open (virtio console PORT_OPEN). linux_epoch (the hypervisor's) changes at every change the
 * rtos must act on: Linux's opens and closes, a device reset or NEEDS_RESET while the port was open, the
 * region found initialised, and a new rtos session (rtos_open 1 with rtos_session != rtos_session_seen).
 * At each change the hypervisor writes to_rtos_start (to_rtos's head at that moment), rtos_session_seen
 * and linux_open, then linux_epoch (release), and rings the rtos if the rtos has the channel open (a
 * change while it is closed waits unrung: the rtos's next open is a new session, a change of its own, so
 * Linux opening and closing a port the rtos does not use never interrupts the rtos).
 * The rtos, when it sees a new epoch (acquire), reads those three; if linux_open is 1 (a connection it
 * enters) or rtos_session_seen acknowledges its open for the first time, it discards the to_rtos bytes
 * before to_rtos_start (an earlier connection's), while bytes of a connection that just closed stay
 * readable. It then writes to_linux_start (to_linux's head at that moment), then rtos_epoch_seen = the
 * epoch (release), and rings the hypervisor. The hypervisor moves to_linux bytes to Linux only while
 * linux_open is 1 and rtos_epoch_seen == linux_epoch, after discarding the bytes before to_linux_start
 * (what the rtos wrote before it knew of the change). The rtos receives only once rtos_session_seen ==
 * rtos_session (its open acknowledged), and sends only while it is connected: in the last epoch it acted
 * on, linux_open was 1 and its open was acknowledged. The hypervisor copies Linux's bytes into to_rtos
 * only while rtos_open is 1 with the session it acknowledged and once the rtos acted on the current
 * epoch (so every byte after to_rtos_start is still unread when the rtos discards up to it); it drops
 * Linux's bytes written for an earlier connection (counted), and tells Linux the port is open
 * (PORT_OPEN 1) only while the rtos has it open. So no byte
 * crosses a reconnection in either direction, and bytes written just before a close still arrive.
 * Every index and start the other side wrote is checked against the ring invariant before use.
 */
#ifndef LIB_VBUS_H
#define LIB_VBUS_H

#include <stddef.h>
#include <stdint.h>

#define VBUS_MAGIC        0x53554256u /* "VBUS" read as a little-endian word */
#define VBUS_MAX_CHANNELS 32u         /* the pending masks are 32-bit */
#define VBUS_NAME_SIZE    32u         /* NUL-padded; at most 31 characters [A-Za-z0-9._-] */
#define VBUS_RING_MIN     256u        /* data bytes per direction: a power of two in [MIN, MAX] */
#define VBUS_RING_MAX     (1u << 20)
#define VBUS_ALIGN        64u /* every structure and ring in the region starts on a cache line */
/* SGIs 0..7 are Linux's own (virtual, per partition); the physical SGIs 8..15 are free for rtmux. */
#define VBUS_SGI_TO_RTOS 14u
#define VBUS_SGI_TO_HYP  15u
/* The port the hypervisor serves itself, after the channels' (port nchan): each open of it reads a
 * snapshot of the device's and every channel's counters, then end of file (docs/architecture.md, "V-Bus
 * counters"). A channel may not take its name (tools/rtmux/config/channels.py). */
#define VBUS_STATS_PORT "rtmux-stats"

/* The region's first cache line. The tools write nothing into RAM: the rtos fills nchan (its channels in
 * this region), then magic (release) at its start-up and rings the hypervisor with every channel's bit
 * set; the hypervisor only moves bytes once magic is there (and forgets the region whenever the rtos
 * partition stops or restarts: its RAM is wiped, so the magic must be written again). */
struct vbus_region {
    uint32_t magic;        /* VBUS_MAGIC once the rtos has initialised the region */
    uint32_t nchan;        /* channels, as configured */
    uint32_t hyp_pending;  /* bit n: channel n needs the hypervisor's attention (the rtos sets) */
    uint32_t rtos_pending; /* bit n: channel n needs the rtos's attention (the hypervisor sets) */
    uint32_t reserved[12];
};

/* One channel's control block: two cache lines, one per writer. */
struct vbus_chan {
    /* written by the rtos */
    uint32_t rtos_open;
    uint32_t rtos_epoch_seen; /* the last linux_epoch the rtos acted on */
    uint32_t rtos_session;    /* the rtos's opens of the channel so far */
    uint32_t to_linux_start;  /* to_linux's head when the rtos acted on rtos_epoch_seen */
    /* The rtos's own counters, published for Linux's report (VBUS_STATS_PORT; never acted on): its
     * writes that found to_linux without room for all their bytes, and the to_rtos bytes of an earlier
     * connection it dropped. */
    uint64_t rtos_full, rtos_discarded;
    uint32_t rtos_reserved[8];
    /* written by the hypervisor */
    uint32_t linux_open;
    uint32_t linux_epoch;
    uint32_t to_rtos_start;     /* to_rtos's head when linux_epoch last changed */
    uint32_t rtos_session_seen; /* the rtos_session acknowledged when linux_epoch last changed */
    uint32_t hyp_reserved[12];
};

/* A ring's indices, each on its own cache line (no false sharing between producer and consumer). */
struct vbus_ring {
    uint32_t head; /* the producer's */
    uint32_t head_reserved[15];
    uint32_t tail; /* the consumer's */
    uint32_t tail_reserved[15];
    uint8_t data[]; /* size bytes */
};

#define VBUS_RING_HEADER_SIZE 128u

_Static_assert(sizeof(struct vbus_region) == VBUS_ALIGN, "region header is one cache line");
_Static_assert(sizeof(struct vbus_chan) == 2u * VBUS_ALIGN, "channel block is two cache lines");
_Static_assert(offsetof(struct vbus_chan, linux_open) == VBUS_ALIGN, "hypervisor's line");
_Static_assert(offsetof(struct vbus_chan, rtos_full) % 8u == 0, "64-bit counters aligned");
_Static_assert(offsetof(struct vbus_ring, tail) == VBUS_ALIGN, "consumer's line");
_Static_assert(sizeof(struct vbus_ring) == VBUS_RING_HEADER_SIZE, "ring header");

#endif /* LIB_VBUS_H */
