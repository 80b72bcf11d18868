/*
 * Fixed-size message ring. Pure data structure (host-testable).
 */
#include "kernel.h"

void k_memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n-- > 0) {
        *d++ = *s++;
    }
}

void k_ring_init(struct k_ring *r, void *buf, size_t msg_size, size_t capacity)
{
    r->buf = buf;
    r->msg_size = msg_size;
    r->capacity = capacity;
    r->head = 0;
    r->count = 0;
}

bool k_ring_put(struct k_ring *r, const void *msg)
{
    if (r->count == r->capacity) {
        return false;
    }
    size_t slot = r->head + r->count;
    if (slot >= r->capacity) {
        slot -= r->capacity;
    }
    k_memcpy(r->buf + slot * r->msg_size, msg, r->msg_size);
    r->count++;
    return true;
}

bool k_ring_get(struct k_ring *r, void *msg)
{
    if (r->count == 0) {
        return false;
    }
    k_memcpy(msg, r->buf + r->head * r->msg_size, r->msg_size);
    r->head = r->head + 1 == r->capacity ? 0 : r->head + 1;
    r->count--;
    return true;
}
