/*
 * Emulated PL011, one per partition (core/vuart.c): a pure device model. The partition's output goes
 * into a ring that only the partition's CPU fills (single producer, no lock, never waits); the console
 * CPU drains it into whole tagged lines (vuart_drain). Input goes the other way: the console CPU fills
 * the receive ring (vuart_rx), the partition's CPU empties it by reading UARTDR.
 */
#ifndef HYP_VUART_H
#define HYP_VUART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VUART_RX_SIZE   4096u /* power of two; input not read yet is kept up to this */
#define VUART_TX_SIZE   4096u /* power of two: indices wrap with the free-running counters */
#define VUART_LINE_SIZE 160u  /* a longer line is written in pieces */

struct vuart {
    uint32_t cr, imsc, ris, lcrh, ibrd, fbrd, ifls, dmacr;
    /* Receive ring, single producer (the console CPU: vuart_rx) and single consumer (the partition's CPU:
     * UARTDR reads, vuart_reset). Free-running indices: rx[i % VUART_RX_SIZE] for cons <= i < prod holds
     * the waiting characters, and 0 <= prod - cons <= VUART_RX_SIZE. Each side writes only its own index,
     * with release, after its slot access; it reads the other's with acquire before its slot access. So
     * the consumer sees a character only once it is written, and the producer reuses a slot only once it
     * is read. */
    uint8_t rx[VUART_RX_SIZE];
    uint32_t rx_prod, rx_cons;
    char tx[VUART_TX_SIZE];
    volatile uint32_t tx_prod, tx_cons;
    volatile uint32_t tx_dropped; /* characters lost to a full tx ring */
    uint32_t dropped_reported;
    char line[VUART_LINE_SIZE];
    unsigned line_len;
    bool wrote; /* output came since the last VUART_DRAIN_TICK */
};

_Static_assert((VUART_TX_SIZE & (VUART_TX_SIZE - 1u)) == 0, "tx ring indices wrap with uint32_t");
_Static_assert((VUART_RX_SIZE & (VUART_RX_SIZE - 1u)) == 0, "rx ring indices wrap with uint32_t");

/* The register state after reset; input not read yet is dropped, output not drained yet is kept. On the
 * partition's CPU, or while it does not run (the receive ring's consumer side). */
void vuart_reset(struct vuart *u);
/* One register access at byte `off` (the guest's view); true when handled (always). */
bool vuart_access(struct vuart *u, uint64_t off, bool write, uint64_t *val, unsigned size);
/* The interrupt line: some enabled interrupt is raised. ctx is the struct vuart (vgic level source). */
bool vuart_irq_line(const void *ctx);
/* A character typed for the partition; false when the receive ring is full (the character is dropped).
 * Console CPU only (the ring's single producer). */
bool vuart_rx(struct vuart *u, char c);
/* Adds c to the output ring, as a UARTDR write does (the console ring's drain uses it): a caller is the
 * ring's only producer while it runs (conmux.c: the partition no longer writes UARTDR then). */
void vuart_tx_push(struct vuart *u, char c);
/* Characters the output ring can take now (the drain makes room). */
uint32_t vuart_tx_room(const struct vuart *u);
/* What a drain does with an unfinished line (one without its newline yet). */
enum vuart_drain_mode {
    VUART_DRAIN_LINES, /* keeps it: a drain on the partition's own UART write, in the middle of a line */
    /* The periodic drain: hands it on when no output came since the previous periodic drain, i.e. the
     * partition stayed silent for a whole period (a shell prompt). A line still being written is kept
     * whole, however the periods fall, so another partition's line never cuts it. */
    VUART_DRAIN_TICK,
    VUART_DRAIN_ALL, /* hands it on now: the last drain before the console stops */
};

/* Moves at most `max` characters of the ring into lines handed to line(ctx, ...) (console CPU only;
 * complete = the line ended with a newline); `mode` says what happens to an unfinished line once the
 * ring is empty. A sink that returns false stops the drain after
 * that line (the console CPU has more urgent work: the rtos of a CPU it shares). Returns true when the
 * ring was emptied; otherwise the rest stays for the next call. */
typedef bool (*vuart_line_fn)(void *ctx, const char *s, size_t n, bool complete);
bool vuart_drain(struct vuart *u, enum vuart_drain_mode mode, vuart_line_fn line, void *ctx, uint32_t max);
/* Output characters dropped to a full transmit ring since the last call (console CPU only: the caller
 * reports them, through the partition's line limit). */
uint32_t vuart_dropped_news(struct vuart *u);

#endif /* HYP_VUART_H */
