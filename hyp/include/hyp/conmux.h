/*
 * The console line mux (core/conmux.c): partitions' emulated UARTs to the physical console and back.
 * Output is drained on one CPU whose interrupts trap to EL2 (a Linux CPU; never the rtos's), on a
 * periodic tick; input arrives there too and goes to the focused partition. The escape key followed by
 * a partition number (1 = first) moves the focus.
 */
#ifndef HYP_CONMUX_H
#define HYP_CONMUX_H

#include <stdbool.h>
#include <stdint.h>

#include "hyp/vuart.h"

struct partition;
struct vcpu;

#define CONMUX_TICK_HZ 250u /* drains partitions' output every 4 ms; a prompt shows after a silent period */

/* The CPU that drains partitions' output (the first CPU of the first Linux partition), or -1. */
extern int con_drain_cpu;
extern struct partition *con_focus;

/* Chooses the drain CPU and routes UART input to it; focus = index of the partition with input;
 * view: show only the focused partition's output live, hold the others' (conmux.c). */
void conmux_init(unsigned focus, uint8_t escape, bool view);
/* Moves every partition's pending output to the console (from its console ring, if it has one, and
 * its emulated UART); `mode` as in vuart_drain. With v (the virtual CPU this runs for), the drain stops
 * early when an rtos interrupt is pending on a CPU the rtos shares with Linux (the rest waits for the
 * next drain); NULL: everything now. */
void con_drain(enum vuart_drain_mode mode, const struct vcpu *v);
/* Takes what is left in p's console ring and stops draining it, before p stops or its RAM is wiped
 * (part_load opens it again). */
void con_ring_close(struct partition *p);
/* Hypervisor interrupts on the drain CPU: UART input, and the drain tick (EL2 timer). */
void conmux_rx_irq(struct vcpu *v);
void conmux_tick(struct vcpu *v);
/* MMIO handler of a partition's emulated UART; ctx is the partition. */
bool conmux_uart_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size);

#endif /* HYP_CONMUX_H */
