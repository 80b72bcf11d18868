/*
 * The virtio-mmio transport (core/vmmio.c): the register file of a virtio-mmio device (modern
 * interface, version 2) as a driver in a guest sees it. Feature negotiation, the status transitions,
 * each queue's set-up (its registers, checked and enabled by core/virtq.c), the interrupt status and
 * its acknowledgement, the configuration space's access rules; a notification, the driver's DRIVER_OK, a
 * reset and anything the driver got wrong are handed to the device through its type (struct
 * vmmio_type). The device keeps its own state; the transport holds a pointer to it and to its queues.
 *
 * A violation of the rules (by the driver here, or found by the device in its queues: vmmio_fail) sets
 * DEVICE_NEEDS_RESET and the configuration-change interrupt, and the device is stopped until the driver
 * writes status 0: register writes other than the selectors, the interrupt acknowledgement, status and
 * notifications are ignored meanwhile (a notification still reaches the device, which decides what a
 * broken device gives back).
 *
 * Pure: no hardware, no output, no lock (the device serialises the calls); the host tests compile it.
 */
#ifndef HYP_VMMIO_H
#define HYP_VMMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "hyp/virtq.h"
#include "lib/virtio.h"

/* A violation that is not about one queue (registers, status, features). */
#define VMMIO_NO_QUEUE (~0u)
/* The largest configuration space a device type may have here (the console's is 12 bytes). */
#define VMMIO_CONFIG_MAX 64u

/* What a kind of device is to the transport. Every callback gets the transport's `dev` and runs inside
 * the register access that caused it. */
struct vmmio_type {
    uint32_t device_id, vendor_id;
    uint64_t features;    /* offered; the driver must accept VIRTIO_F_VERSION_1 and nothing else */
    uint32_t queue_max;   /* QueueNumMax of every queue (at most VIRTQ_TRACK_MAX) */
    uint32_t config_size; /* bytes of the configuration space, at most VMMIO_CONFIG_MAX */
    /* Writes the configuration space (config_size bytes, zeroed before) for a read of it. */
    void (*config)(void *dev, uint8_t *space);
    /* QueueNotify for an existing queue, also while the device is broken. */
    void (*notify)(void *dev, unsigned queue);
    /* QueueReady written with 0, or for a queue that is not ready: the queue starts again from entry
     * 0 (called before the transport disables or checks it). */
    void (*queue_restart)(void *dev, unsigned queue);
    /* The driver set DRIVER_OK: what it queued before may be processed. */
    void (*driver_ok)(void *dev);
    /* Status 0 (or vmmio_reset): the transport's registers and queues are reset already. */
    void (*reset)(void *dev);
    /* DEVICE_NEEDS_RESET was just set for `why` (VMMIO_NO_QUEUE or the queue's number): the device
     * stops its work, and says so (the transport prints nothing). */
    void (*failed)(void *dev, unsigned queue, const char *why);
};

struct vmmio {
    const struct vmmio_type *type;
    void *dev;
    struct virtq *q; /* the device's queues, nqueues of them */
    unsigned nqueues;
    struct virtq_ram ram; /* the driver's */
    /* registers */
    uint32_t status, isr, dev_sel, drv_sel, queue_sel, shm_sel;
    uint64_t drv_features;
    bool drv_features_beyond; /* a feature word beyond the second was written non-zero */
    bool broken;              /* NEEDS_RESET: nothing is processed until status 0 */
    uint64_t resets, breaks;  /* resets of a started device; violations (each set NEEDS_RESET) */
};

/* The transport of `dev` (of kind `type`) with its queues q[0..nqueues) in a guest's RAM; every queue
 * is set up as the driver writes it (each queue's device_writes is the device's to set). */
void vmmio_init(struct vmmio *t, const struct vmmio_type *type, void *dev, struct virtq *q, unsigned nqueues,
                struct virtq_ram ram);
/* One access of the driver to the register page at byte `off` (registers, then the configuration space
 * from VIRTIO_MMIO_CONFIG; past it reads are zero and writes ignored), as mmio_handler_t has it. */
void vmmio_access(struct vmmio *t, uint64_t off, bool write, uint64_t *val, unsigned size);
/* The device reset (status 0, or the driver's partition going down): every register and queue, then the
 * type's reset. */
void vmmio_reset(struct vmmio *t);
/* What the driver gave is wrong: NEEDS_RESET, the configuration-change interrupt, then the type's
 * `failed` (once: nothing more until a reset). */
void vmmio_fail(struct vmmio *t, unsigned queue, const char *why);

/* The next buffer the driver posted on queue qi, a device-writable (receive) queue, checked whole: 1 with
 * its head and length, 0 when there is none, -1 after a violation (vmmio_fail: a bad index or chain, or a
 * buffer of 0 bytes). */
int vmmio_rx_next(struct vmmio *t, unsigned qi, uint16_t *head, uint32_t *total);

/* The device may work: DRIVER_OK, not FAILED, not broken. */
static inline bool vmmio_running(const struct vmmio *t)
{
    return (t->status & (VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FAILED)) == VIRTIO_STATUS_DRIVER_OK &&
           !t->broken;
}

/* The device returned buffers the driver wants to hear about: the used-buffer interrupt. */
static inline void vmmio_used(struct vmmio *t)
{
    t->isr |= VIRTIO_MMIO_INT_VRING;
}

/* The device's interrupt line: InterruptStatus is not 0 (read without the device's lock). */
static inline bool vmmio_irq_line(const struct vmmio *t)
{
    return __atomic_load_n(&t->isr, __ATOMIC_RELAXED) != 0;
}

#endif /* HYP_VMMIO_H */
