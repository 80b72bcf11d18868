/*
 * The virtio-mmio transport (hyp/vmmio.h): registers, feature negotiation, status transitions and queue
 * set-up of one emulated device; what the device does with its queues is its type's.
 */
#include "hyp/vmmio.h"

#include "lib/string.h"

#define STATUS_BITS                                                               \
    (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_DRIVER_OK | \
     VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DEVICE_NEEDS_RESET | VIRTIO_STATUS_FAILED)

void vmmio_init(struct vmmio *t, const struct vmmio_type *type, void *dev, struct virtq *q, unsigned nqueues,
                struct virtq_ram ram)
{
    t->type = type;
    t->dev = dev;
    t->q = q;
    t->nqueues = nqueues;
    t->ram = ram;
}

void vmmio_fail(struct vmmio *t, unsigned queue, const char *why)
{
    if (t->broken) {
        return;
    }
    t->broken = true;
    t->status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    t->isr |= VIRTIO_MMIO_INT_CONFIG;
    t->breaks++;
    t->type->failed(t->dev, queue, why);
}

void vmmio_reset(struct vmmio *t)
{
    if (t->status != 0) {
        t->resets++;
    }
    for (unsigned i = 0; i < t->nqueues; i++) {
        struct virtq *q = &t->q[i];
        virtq_disable(q);
        q->num = 0;
        q->desc_ipa = q->avail_ipa = q->used_ipa = 0;
    }
    t->status = t->isr = t->dev_sel = t->drv_sel = t->queue_sel = t->shm_sel = 0;
    t->drv_features = 0;
    t->drv_features_beyond = false;
    t->broken = false;
    t->type->reset(t->dev);
}

int vmmio_rx_next(struct vmmio *t, unsigned qi, uint16_t *head, uint32_t *total)
{
    struct virtq *q = &t->q[qi];
    const char *why = NULL;
    int rc = virtq_pop(q, head, &why);
    if (rc < 0) {
        vmmio_fail(t, qi, why);
        return -1;
    }
    if (rc == 0) {
        return 0;
    }
    if (virtq_chain_check(q, &t->ram, *head, total, &why) != 0 || *total == 0) {
        vmmio_fail(t, qi, why != NULL ? why : "receive buffer of 0 bytes");
        return -1;
    }
    return 1;
}

static void status_write(struct vmmio *t, uint32_t val)
{
    if (val == 0) {
        vmmio_reset(t);
        return;
    }
    if (t->broken) {
        return; /* only a reset brings it back */
    }
    uint32_t cur = t->status;
    if ((val & ~STATUS_BITS) != 0) {
        vmmio_fail(t, VMMIO_NO_QUEUE, "unknown device status bits");
        return;
    }
    /* NEEDS_RESET is the device's alone: not set here (the device is not broken), ignored if written. */
    uint32_t next = val & ~VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    if ((next & cur) != cur) {
        vmmio_fail(t, VMMIO_NO_QUEUE, "device status bits cleared without a reset");
        return;
    }
    bool ack = next & VIRTIO_STATUS_ACKNOWLEDGE, drv = next & VIRTIO_STATUS_DRIVER;
    bool fok = next & VIRTIO_STATUS_FEATURES_OK, dok = next & VIRTIO_STATUS_DRIVER_OK;
    if ((drv && !ack) || (fok && !drv) || (dok && !fok)) {
        vmmio_fail(t, VMMIO_NO_QUEUE, "device status bits set out of order");
        return;
    }
    if (fok && !(cur & VIRTIO_STATUS_FEATURES_OK)) {
        if ((t->drv_features & ~t->type->features) != 0 || t->drv_features_beyond) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "driver accepted features the device does not offer");
            return;
        }
        if (!(t->drv_features & (1ull << VIRTIO_F_VERSION_1))) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "driver did not accept VIRTIO_F_VERSION_1");
            return;
        }
    }
    t->status = next;
    if (dok && !(cur & VIRTIO_STATUS_DRIVER_OK)) {
        t->type->driver_ok(t->dev); /* notifications that came before DRIVER_OK */
    }
}

/* The configuration space: any aligned 1, 2 or 4 bytes inside it read; anything else reads as zero. */
static uint32_t config_read(const struct vmmio *t, uint64_t off, unsigned size)
{
    uint8_t space[VMMIO_CONFIG_MAX] = {0};
    uint32_t len = t->type->config_size <= VMMIO_CONFIG_MAX ? t->type->config_size : VMMIO_CONFIG_MAX;
    t->type->config(t->dev, space);
    if ((size != 1 && size != 2 && size != 4) || off % size != 0 || off + size > len) {
        return 0;
    }
    uint32_t v = 0;
    memcpy(&v, space + off, size);
    return v;
}

static uint32_t reg_read(const struct vmmio *t, uint64_t off)
{
    bool qok = t->queue_sel < t->nqueues;
    const struct virtq *q = qok ? &t->q[t->queue_sel] : NULL;
    uint64_t features = t->type->features;
    switch (off) {
    case VIRTIO_MMIO_MAGIC_VALUE:
        return VIRTIO_MMIO_MAGIC;
    case VIRTIO_MMIO_VERSION:
        return VIRTIO_MMIO_VERSION_MODERN;
    case VIRTIO_MMIO_DEVICE_ID:
        return t->type->device_id;
    case VIRTIO_MMIO_VENDOR_ID:
        return t->type->vendor_id;
    case VIRTIO_MMIO_DEVICE_FEATURES:
        return t->dev_sel == 0 ? (uint32_t)features : t->dev_sel == 1 ? (uint32_t)(features >> 32) : 0;
    case VIRTIO_MMIO_QUEUE_NUM_MAX:
        return qok ? t->type->queue_max : 0;
    case VIRTIO_MMIO_QUEUE_NUM:
        return qok ? q->num : 0;
    case VIRTIO_MMIO_QUEUE_READY:
        return qok && q->ready ? 1u : 0u;
    case VIRTIO_MMIO_QUEUE_DESC_LOW:
        return qok ? (uint32_t)q->desc_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DESC_HIGH:
        return qok ? (uint32_t)(q->desc_ipa >> 32) : 0;
    case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
        return qok ? (uint32_t)q->avail_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
        return qok ? (uint32_t)(q->avail_ipa >> 32) : 0;
    case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
        return qok ? (uint32_t)q->used_ipa : 0;
    case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
        return qok ? (uint32_t)(q->used_ipa >> 32) : 0;
    case VIRTIO_MMIO_INTERRUPT_STATUS:
        return t->isr;
    case VIRTIO_MMIO_STATUS:
        return t->status;
    case VIRTIO_MMIO_SHM_LEN_LOW:
    case VIRTIO_MMIO_SHM_LEN_HIGH:
        return 0xffffffffu; /* no shared memory region */
    default:
        return 0; /* write-only and reserved registers, CONFIG_GENERATION (the space never changes) */
    }
}

/* The selected queue's configuration registers: only while it is not ready, once features are agreed. */
static struct virtq *queue_for_setup(struct vmmio *t)
{
    if (t->queue_sel >= t->nqueues) {
        vmmio_fail(t, VMMIO_NO_QUEUE, "queue register written for a queue that does not exist");
        return NULL;
    }
    if (!(t->status & VIRTIO_STATUS_FEATURES_OK)) {
        vmmio_fail(t, VMMIO_NO_QUEUE, "queue register written before FEATURES_OK");
        return NULL;
    }
    struct virtq *q = &t->q[t->queue_sel];
    if (q->ready) {
        vmmio_fail(t, t->queue_sel, "queue register written while the queue is ready");
        return NULL;
    }
    return q;
}

static void set_half(uint64_t *r, bool high, uint32_t v)
{
    *r = high ? (*r & 0xffffffffull) | ((uint64_t)v << 32) : (*r & ~0xffffffffull) | v;
}

static void reg_write(struct vmmio *t, uint64_t off, uint32_t v)
{
    if (t->broken && off != VIRTIO_MMIO_STATUS && off != VIRTIO_MMIO_INTERRUPT_ACK &&
        off != VIRTIO_MMIO_QUEUE_SEL && off != VIRTIO_MMIO_DEVICE_FEATURES_SEL &&
        off != VIRTIO_MMIO_DRIVER_FEATURES_SEL && off != VIRTIO_MMIO_SHM_SEL &&
        off != VIRTIO_MMIO_QUEUE_NOTIFY) {
        return; /* stopped until a reset (the selectors change nothing but what reads show; a notification
                 * only gets what the device's type gives back while broken) */
    }
    struct virtq *q;
    switch (off) {
    case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
        t->dev_sel = v;
        return;
    case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
        t->drv_sel = v;
        return;
    case VIRTIO_MMIO_DRIVER_FEATURES:
        if ((t->status & (VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK)) != VIRTIO_STATUS_DRIVER) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "driver features written outside feature negotiation");
        } else if (t->drv_sel <= 1) {
            set_half(&t->drv_features, t->drv_sel == 1, v);
        } else if (v != 0) {
            t->drv_features_beyond = true;
        }
        return;
    case VIRTIO_MMIO_QUEUE_SEL:
        t->queue_sel = v;
        return;
    case VIRTIO_MMIO_SHM_SEL:
        t->shm_sel = v;
        return;
    case VIRTIO_MMIO_QUEUE_NUM:
        if ((q = queue_for_setup(t)) != NULL) {
            q->num = v;
        }
        return;
    case VIRTIO_MMIO_QUEUE_DESC_LOW:
    case VIRTIO_MMIO_QUEUE_DESC_HIGH:
        if ((q = queue_for_setup(t)) != NULL) {
            set_half(&q->desc_ipa, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
    case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
        if ((q = queue_for_setup(t)) != NULL) {
            set_half(&q->avail_ipa, off == VIRTIO_MMIO_QUEUE_DRIVER_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
    case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
        if ((q = queue_for_setup(t)) != NULL) {
            set_half(&q->used_ipa, off == VIRTIO_MMIO_QUEUE_DEVICE_HIGH, v);
        }
        return;
    case VIRTIO_MMIO_QUEUE_READY:
        if (t->queue_sel >= t->nqueues || v > 1) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "QueueReady written with a bad value or queue");
            return;
        }
        q = &t->q[t->queue_sel];
        if (v == 0 || !q->ready) {
            t->type->queue_restart(t->dev, t->queue_sel);
        }
        if (v == 0) {
            virtq_disable(q);
            return;
        }
        if (!q->ready && queue_for_setup(t) != NULL) {
            const char *why = virtq_enable(q, &t->ram, t->type->queue_max);
            if (why != NULL) {
                vmmio_fail(t, t->queue_sel, why);
            }
        }
        return;
    case VIRTIO_MMIO_QUEUE_NOTIFY:
        if (v >= t->nqueues) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "notification of a queue that does not exist");
            return;
        }
        t->type->notify(t->dev, v);
        return;
    case VIRTIO_MMIO_INTERRUPT_ACK:
        t->isr &= ~v;
        return;
    case VIRTIO_MMIO_STATUS:
        status_write(t, v);
        return;
    default:
        vmmio_fail(t, VMMIO_NO_QUEUE, "write to a read-only or reserved register");
        return;
    }
}

void vmmio_access(struct vmmio *t, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    if (off >= VIRTIO_MMIO_CONFIG) {
        /* The configuration space: any aligned 1, 2 or 4 bytes read; nothing in it is writable. */
        if (!write) {
            *val = config_read(t, off - VIRTIO_MMIO_CONFIG, size);
        }
        return;
    }
    if (size != 4 || off % 4u != 0) {
        /* A driver uses 32-bit aligned accesses only (virtio 1.1, 4.2.2.2): another write is a violation;
         * another read returns zero and changes nothing (reads have no effect here). */
        if (write) {
            vmmio_fail(t, VMMIO_NO_QUEUE, "register write not 32-bit aligned");
        } else {
            *val = 0;
        }
        return;
    }
    if (write) {
        reg_write(t, off, (uint32_t)*val);
    } else {
        *val = reg_read(t, off);
    }
}
