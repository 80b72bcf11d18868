/*
 * The producer's side of the console ring (the protocol is in lib/conring.h). The rtos never waits
 * for the consumer: output that finds the ring full is dropped and counted in its header, a line at a
 * time. A write (one rt_printf: a line, or a piece of one) goes in whole or not at all; once a piece is
 * dropped, the rest of its line is dropped too, and a line the ring already holds the start of is ended
 * there, so a line is never cut and glued to the next.
 */
#include "drivers/conring.h"

#include <stdbool.h>

#include "lib/conring.h"

static struct conring *ring;
static uint32_t ring_mask;
/* The producer's own state (callers serialise): the ring's last byte does not end a line; the line being
 * written was dropped (its further pieces are too); a line the ring holds was cut (its end is owed). */
static bool line_open, skipping, end_owed;

void conring_init(uintptr_t base, uint32_t size)
{
    ring = (struct conring *)base;
    ring_mask = size - 1u;
    line_open = skipping = end_owed = false;
}

static uint32_t room_at(uint32_t head)
{
    return ring_mask + 1u - (head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE));
}

void conring_write(const char *s, size_t n)
{
    if (n == 0) {
        return;
    }
    uint32_t head = ring->head;
    uint32_t room = room_at(head);
    bool ends = s[n - 1] == '\n';
    size_t need = n + (end_owed ? 1u : 0u);
    if (skipping || need > room) {
        /* Lines dropped: the ones this write ends; one begun here and not ended is counted when it
         * ends (a later write's newline, dropped with it). */
        uint32_t lines = 0;
        for (size_t i = 0; i < n; i++) {
            lines += s[i] == '\n' ? 1u : 0u;
        }
        if (line_open && !skipping) {
            end_owed = true; /* the ring holds this line's start: it is ended before anything else */
        }
        skipping = !ends;
        if (end_owed && room > 0) {
            ring->data[head++ & ring_mask] = '\n';
            end_owed = line_open = false;
        }
        __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
        __atomic_store_n(&ring->dropped, ring->dropped + (uint32_t)n, __ATOMIC_RELAXED);
        __atomic_store_n(&ring->dropped_lines, ring->dropped_lines + lines, __ATOMIC_RELAXED);
        return;
    }
    if (end_owed) {
        ring->data[head++ & ring_mask] = '\n';
        end_owed = false;
    }
    for (size_t i = 0; i < n; i++) {
        ring->data[head++ & ring_mask] = s[i];
    }
    line_open = !ends;
    __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
}
