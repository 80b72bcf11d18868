/*
 * Emulated PL011, one per partition (core/vuart.c): a pure device model. The partition's output goes
 * into a ring that only the partition's CPU fills (single producer, no lock, never waits); the console
 * CPU drains it into whole tagged lines (vuart_drain).
 */
#ifndef HYP_VUART_H
#define HYP_VUART_H

#include <stdbool.h>
#include <stdint.h>

#define VUART_RX_SIZE   4096u /* input typed or pasted faster than the guest reads: never dropped below */
#define VUART_TX_SIZE   4096u /* power of two: indices wrap with the free-running counters */
#define VUART_LINE_SIZE 160u  /* a longer line is written in pieces */

struct vuart {
    uint32_t cr, imsc, ris, lcrh, ibrd, fbrd, ifls, dmacr;
    uint8_t rx[VUART_RX_SIZE];
    unsigned rx_head, rx_count;
    char tx[VUART_TX_SIZE];
    volatile uint32_t tx_prod, tx_cons;
    volatile uint32_t tx_dropped; /* characters lost to a full tx ring */
    uint32_t dropped_reported;
    char line[VUART_LINE_SIZE];
    unsigned line_len;
    unsigned quiet_ticks; /* drains since the last character: a prompt is shown after one */
};

_Static_assert((VUART_TX_SIZE & (VUART_TX_SIZE - 1u)) == 0, "tx ring indices wrap with uint32_t");

/* The register state after reset (the rings keep what they hold). */
void vuart_reset(struct vuart *u);
/* One register access at byte `off` (the guest's view); true when handled (always). */
bool vuart_access(struct vuart *u, uint64_t off, bool write, uint64_t *val, unsigned size);
/* The interrupt line: some enabled interrupt is raised. ctx is the struct vuart (vgic level source). */
bool vuart_irq_line(const void *ctx);
/* A character typed for the partition (kept while the receive buffer has room). */
void vuart_rx(struct vuart *u, char c);
/* Moves the ring into console lines tagged `tag` (console CPU only). With flush_partial, an unfinished
 * line is shown once a drain found nothing new (a shell prompt). Reports dropped output under `name`. */
void vuart_drain(struct vuart *u, const char *name, const char *tag, bool flush_partial);

#endif /* HYP_VUART_H */
