/*
 * The producer's side of the console ring (the protocol is in lib/conring.h). The rtos never waits
 * for the consumer: output that finds the ring full is dropped and counted in its header.
 */
#include "conring.h"

#include "lib/conring.h"

static struct conring *ring;
static uint32_t ring_mask;

void conring_init(uintptr_t base, uint32_t size)
{
    ring = (struct conring *)base;
    ring_mask = size - 1u;
}

void conring_write(const char *s, size_t n)
{
    uint32_t head = ring->head;
    uint32_t room = ring_mask + 1u - (head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE));
    size_t i = 0;
    for (; i < n && room > 0; i++, room--) {
        ring->data[head++ & ring_mask] = s[i];
    }
    __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
    if (i < n) {
        __atomic_store_n(&ring->dropped, ring->dropped + (uint32_t)(n - i), __ATOMIC_RELAXED);
    }
}
