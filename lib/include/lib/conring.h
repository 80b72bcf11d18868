/*
 * The shared-memory console ring: how a partition writes its console output without trapping (the rtos
 * inside rtmux). It lies in the partition's own RAM; the configuration gives its place and size (the
 * partition's DTB: /chosen/rtmux,console-ring = <addr-hi addr-lo size>; the hypervisor: the blob) and
 * the hypervisor drains it on another CPU.
 *
 * One producer (the partition) and one consumer (the hypervisor); free-running 32-bit indices:
 *   0 <= head - tail <= size, where size (data bytes) is a power of two, so indices wrap with uint32_t;
 *   the producer writes data[head % size], then publishes head + n with release;
 *   the consumer reads head with acquire, the data, then publishes tail with release;
 *   the producer reads tail with acquire before reusing bytes. A full ring drops (and counts) output:
 *   the producer never waits for the consumer. The rtos drops whole lines: the ring holds only whole
 *   lines but for the one being written (rtos/drivers/conring.c).
 * The RAM starts zeroed (the hypervisor wipes a partition's RAM before each start): an empty ring.
 */
#ifndef LIB_CONRING_H
#define LIB_CONRING_H

#include <stdint.h>

struct conring {
    uint32_t head;          /* bytes written so far: the producer's */
    uint32_t tail;          /* bytes consumed so far: the consumer's */
    uint32_t dropped;       /* bytes the producer found no room for: the producer's */
    uint32_t dropped_lines; /* lines among them (ended by a dropped newline): the producer's */
    uint32_t reserved[12];
    char data[]; /* size bytes */
};

/* The header takes one 64-byte cache line; the data follows it. */
#define CONRING_HEADER_SIZE 64u
_Static_assert(sizeof(struct conring) == CONRING_HEADER_SIZE, "header size");

#endif /* LIB_CONRING_H */
