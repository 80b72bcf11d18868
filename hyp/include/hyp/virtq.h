/*
 * Split virtqueues as a device sees them (core/virtq.c): everything a driver (a guest) puts in guest
 * memory or writes to a queue's registers is checked here before the device uses it. Pure: no
 * hardware, no output (the host unit tests and the fuzzer compile it natively).
 *
 * Guest memory is reached only through struct virtq_ram: the guest's RAM range (IPA) and where the
 * hypervisor maps it. Every address a guest gives (ring areas, buffers) is translated and checked
 * whole against that range; nothing outside it is ever read or written. A check that fails returns a
 * constant text naming what was wrong (for the device's one log line) and changes nothing.
 *
 * The rings live in memory the guest can change at any time, so every field is read once into a local
 * and only that copy is checked and used; the device keeps its own indices (last_avail, used_idx) and
 * never reads back what it wrote.
 */
#ifndef HYP_VIRTQ_H
#define HYP_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/virtio.h"

/* The largest queue these checks track: a device's heads in flight are one bit each of a 64-bit word
 * (the V-Bus device's queues have at most 64 entries). */
#define VIRTQ_TRACK_MAX 64u

/* The longest chain the device accepts, in bytes (a bound on used lengths and copy loops; far above
 * what Linux's console driver builds: a PAGE_SIZE receive buffer, a 32 KiB write). */
#define VIRTQ_CHAIN_MAX (16u * 1024u * 1024u)

/* A guest's RAM: IPA [ipa, ipa + size) is at host address `host` in the hypervisor's map. */
struct virtq_ram {
    uint64_t ipa, size;
    uintptr_t host;
};

struct virtq {
    /* The queue's registers as the driver wrote them (virtio-mmio QueueNum, QueueDesc/Driver/Device). */
    uint32_t num;
    uint64_t desc_ipa, avail_ipa, used_ipa;
    /* Set by virtq_enable once the above passed every check; the pointers are valid while it is set. */
    bool ready;
    bool device_writes; /* every buffer of the queue is device-writable (device -> driver) */
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    uint16_t last_avail; /* the next available-ring entry the device takes */
    uint16_t used_idx;   /* the used index the device last published */
    /* Which heads the device holds (taken, not yet returned), and for every head the driver's available
     * index the device had read when it last returned it: an entry below that index was published
     * before the driver could know the head was free, so it names a head still in flight (virtio 1.1,
     * 2.6.5: a buffer is the device's from being made available until it is used). Indices here are
     * 64-bit counts since the queue was enabled (they never wrap): taken, and published as last read. */
    uint64_t in_flight;
    uint64_t taken, published;
    uint64_t returned; /* heads returned since the queue was enabled: their returned_at is set */
    uint64_t returned_at[VIRTQ_TRACK_MAX];
};

/* Every descriptor visit of virtq_next since the start (a device counts its own work with it; callers
 * serialise, as they do for the queues). */
extern uint64_t virtq_visits;

/* One chain's buffers in order (virtq_next): the next descriptor and how many were visited. */
struct virtq_iter {
    uint16_t next;
    uint32_t steps;
    bool end;
};

/* Host address of guest range [ipa, ipa + len) if the whole range lies in the RAM, else NULL. */
void *virtq_ram_map(const struct virtq_ram *ram, uint64_t ipa, uint64_t len);

/* QueueReady = 1: checks the size (a power of two, 1..max, max <= VIRTQ_TRACK_MAX) and the three areas
 * (aligned, inside RAM), then makes the queue ready with both indices at 0. NULL, or what was wrong (q
 * unchanged). */
const char *virtq_enable(struct virtq *q, const struct virtq_ram *ram, uint32_t max);
/* QueueReady = 0, or a device reset: the queue forgets its rings (its registers stay). */
void virtq_disable(struct virtq *q);

/* Takes the next available chain's head: 1 and *head set, 0 when none is available, -1 on a violation
 * (*why: an available index more than a queue ahead, a head beyond the table, or a head still in
 * flight: one the device holds, or one named in an entry published before the device returned it;
 * Linux's virtio ring never does either, since it reuses a head only after reading it in the used
 * ring). The head is the device's (in flight) until virtq_push returns it. */
int virtq_pop(struct virtq *q, uint16_t *head, const char **why);
/* The count of entries the driver has published so far (64-bit, as `taken`), read now; at most a queue
 * beyond those taken (a larger jump is left for virtq_pop to refuse). */
uint64_t virtq_published(struct virtq *q);

void virtq_iter_start(struct virtq_iter *it, uint16_t head);
/* The chain's next buffer: 1 with *buf and *len (host address and length, inside RAM), 0 at the chain's
 * end, -1 on a violation (*why: an index beyond the table, more descriptors than the queue has (a
 * loop), an indirect descriptor or unknown flag, a buffer of the wrong direction for the queue, a
 * buffer outside RAM). */
int virtq_next(const struct virtq *q, const struct virtq_ram *ram, struct virtq_iter *it, uint8_t **buf,
               uint32_t *len, const char **why);
/* Walks the whole chain at head with virtq_next: 0 and *total (its bytes, at most VIRTQ_CHAIN_MAX), or
 * -1 and *why. */
int virtq_chain_check(const struct virtq *q, const struct virtq_ram *ram, uint16_t head, uint32_t *total,
                      const char **why);
/* Copies n bytes between `data` and the chain at head from byte `off` on (to_chain: into the chain).
 * The caller checked the chain (virtq_chain_check) and off + n <= its total; the walk checks every
 * descriptor again all the same (the guest may have changed them): 0, or -1 and *why. */
int virtq_copy(const struct virtq *q, const struct virtq_ram *ram, uint16_t head, uint32_t off, uint8_t *data,
               uint32_t n, bool to_chain, const char **why);

/* Returns the chain at head to the driver with `len` bytes written into it; true when the driver wants
 * an interrupt for it (it did not set VIRTQ_AVAIL_F_NO_INTERRUPT). */
bool virtq_push(struct virtq *q, uint16_t head, uint32_t len);

#endif /* HYP_VIRTQ_H */
