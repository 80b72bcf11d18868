/*
 * Split virtqueues as a device sees them: the checks of everything a driver provides (hyp/virtq.h).
 */
#include "hyp/virtq.h"

#include "lib/string.h"

uint64_t virtq_visits;

void *virtq_ram_map(const struct virtq_ram *ram, uint64_t ipa, uint64_t len)
{
    /* No sum that could wrap: the offset, then the length against what is left after it. */
    if (ipa < ram->ipa || ipa - ram->ipa > ram->size || len > ram->size - (ipa - ram->ipa)) {
        return NULL;
    }
    return (void *)(ram->host + (uintptr_t)(ipa - ram->ipa));
}

static bool aligned(uint64_t a, uint64_t align)
{
    return (a & (align - 1u)) == 0;
}

const char *virtq_enable(struct virtq *q, const struct virtq_ram *ram, uint32_t max)
{
    uint32_t n = q->num;
    if (n == 0 || n > max || n > VIRTQ_TRACK_MAX || (n & (n - 1u)) != 0) {
        return "queue size not a power of two within the maximum";
    }
    if (!aligned(q->desc_ipa, VIRTQ_DESC_ALIGN) || !aligned(q->avail_ipa, VIRTQ_AVAIL_ALIGN) ||
        !aligned(q->used_ipa, VIRTQ_USED_ALIGN)) {
        return "ring area misaligned";
    }
    void *desc = virtq_ram_map(ram, q->desc_ipa, VIRTQ_DESC_BYTES(n));
    void *avail = virtq_ram_map(ram, q->avail_ipa, VIRTQ_AVAIL_BYTES(n));
    void *used = virtq_ram_map(ram, q->used_ipa, VIRTQ_USED_BYTES(n));
    if (desc == NULL || avail == NULL || used == NULL) {
        return "ring area outside the partition's RAM";
    }
    q->desc = desc;
    q->avail = avail;
    q->used = used;
    /* Both sides start at index 0 (virtio 1.1, 2.6.13): the driver's zeroed rings say the same. */
    q->last_avail = 0;
    q->used_idx = 0;
    q->in_flight = q->returned = 0; /* one store: returned_at[] is read only under `returned` */
    q->taken = q->published = 0;
    q->ready = true;
    return NULL;
}

void virtq_disable(struct virtq *q)
{
    q->ready = false;
    q->desc = NULL;
    q->avail = NULL;
    q->used = NULL;
}

/* The driver's available index, read now (acquire: the entries and descriptors it wrote before the
 * index are visible after it): how many entries wait, or more than num when it jumped too far. */
static uint16_t avail_waiting(struct virtq *q)
{
    uint16_t idx = __atomic_load_n(&q->avail->idx, __ATOMIC_ACQUIRE);
    uint16_t waiting = (uint16_t)(idx - q->last_avail);
    if (waiting <= q->num) {
        q->published = q->taken + waiting; /* every entry below was written before this read */
    }
    return waiting;
}

uint64_t virtq_published(struct virtq *q)
{
    (void)avail_waiting(q);
    return q->published;
}

int virtq_pop(struct virtq *q, uint16_t *head, const char **why)
{
    uint16_t waiting = avail_waiting(q);
    if (waiting == 0) {
        return 0;
    }
    if (waiting > q->num) {
        *why = "available index more than a queue ahead";
        return -1;
    }
    uint16_t h = q->avail->ring[q->last_avail & (q->num - 1u)];
    if (h >= q->num) {
        *why = "available head beyond the descriptor table";
        return -1;
    }
    if ((q->in_flight >> h) & 1u || (((q->returned >> h) & 1u) && q->taken < q->returned_at[h])) {
        *why = "available head already in flight";
        return -1;
    }
    q->in_flight |= 1ull << h;
    q->last_avail++;
    q->taken++;
    *head = h;
    return 1;
}

void virtq_iter_start(struct virtq_iter *it, uint16_t head)
{
    it->next = head;
    it->steps = 0;
    it->end = false;
}

int virtq_next(const struct virtq *q, const struct virtq_ram *ram, struct virtq_iter *it, uint8_t **buf,
               uint32_t *len, const char **why)
{
    if (it->end) {
        return 0;
    }
    if (it->next >= q->num) {
        *why = "descriptor index beyond the table";
        return -1;
    }
    /* A chain visits each descriptor at most once, so one longer than the table is a loop. */
    if (++it->steps > q->num) {
        *why = "descriptor chain longer than the queue (a loop)";
        return -1;
    }
    virtq_visits++;
    volatile const struct virtq_desc *d = &q->desc[it->next];
    uint64_t addr = d->addr;
    uint32_t n = d->len;
    uint16_t flags = d->flags;
    uint16_t next = d->next;
    if (flags & VIRTQ_DESC_F_INDIRECT) {
        *why = "indirect descriptor (VIRTIO_F_INDIRECT_DESC not offered)";
        return -1;
    }
    if (flags & ~(uint16_t)(VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE)) {
        *why = "unknown descriptor flags";
        return -1;
    }
    if (((flags & VIRTQ_DESC_F_WRITE) != 0) != q->device_writes) {
        *why = q->device_writes ? "device-readable buffer in a receive queue"
                                : "device-writable buffer in a transmit queue";
        return -1;
    }
    void *p = virtq_ram_map(ram, addr, n);
    if (p == NULL) {
        *why = "buffer outside the partition's RAM";
        return -1;
    }
    *buf = p;
    *len = n;
    it->next = next;
    it->end = (flags & VIRTQ_DESC_F_NEXT) == 0;
    return 1;
}

int virtq_chain_check(const struct virtq *q, const struct virtq_ram *ram, uint16_t head, uint32_t *total,
                      const char **why)
{
    struct virtq_iter it;
    uint8_t *buf;
    uint32_t len;
    uint64_t sum = 0;
    int rc;
    virtq_iter_start(&it, head);
    while ((rc = virtq_next(q, ram, &it, &buf, &len, why)) > 0) {
        sum += len; /* at most num (<= 2^15) terms below 2^32: no overflow */
        if (sum > VIRTQ_CHAIN_MAX) {
            *why = "chain longer than the device accepts";
            return -1;
        }
    }
    if (rc < 0) {
        return -1;
    }
    *total = (uint32_t)sum;
    return 0;
}

int virtq_copy(const struct virtq *q, const struct virtq_ram *ram, uint16_t head, uint32_t off, uint8_t *data,
               uint32_t n, bool to_chain, const char **why)
{
    struct virtq_iter it;
    uint8_t *buf;
    uint32_t len;
    int rc;
    virtq_iter_start(&it, head);
    while (n > 0 && (rc = virtq_next(q, ram, &it, &buf, &len, why)) != 0) {
        if (rc < 0) {
            return -1;
        }
        if (off >= len) {
            off -= len;
            continue;
        }
        uint32_t k = len - off < n ? len - off : n;
        if (to_chain) {
            memcpy(buf + off, data, k);
        } else {
            memcpy(data, buf + off, k);
        }
        data += k;
        n -= k;
        off = 0;
    }
    if (n > 0) {
        *why = "chain shorter than it was"; /* changed by the guest since it was checked */
        return -1;
    }
    return 0;
}

bool virtq_push(struct virtq *q, uint16_t head, uint32_t len)
{
    /* Returned: entries the driver published up to now (read now, before the used index) were written
     * before it could know. */
    (void)avail_waiting(q);
    q->in_flight &= ~(1ull << head);
    q->returned |= 1ull << head;
    q->returned_at[head] = q->published;
    volatile struct virtq_used_elem *e = &q->used->ring[q->used_idx & (q->num - 1u)];
    e->id = head;
    e->len = len;
    q->used_idx++;
    /* Release: the element (and the bytes written into the buffer) before the index. */
    __atomic_store_n(&q->used->idx, q->used_idx, __ATOMIC_RELEASE);
    return (q->avail->flags & VIRTQ_AVAIL_F_NO_INTERRUPT) == 0;
}
