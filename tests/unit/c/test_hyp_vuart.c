/*
 * The emulated PL011 (hyp/core/vuart.c): its receive ring between two real threads, as between the
 * console CPU (vuart_rx) and the partition's CPU (UARTDR reads), and its register access rules. Built
 * twice: with ASan/UBSan like the other tests, and with ThreadSanitizer (test_hyp_vuart_tsan), which
 * reports any access to the ring that the indices' acquire/release do not order.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "arm64/pl011.h"
#include "check.h"
#include "hyp/console.h"
#include "hyp/vuart.h"
#include "hyp_stubs.h"

#ifndef RING_CHARS
#define RING_CHARS 2000000u /* characters through the ring in the two-thread test */
#endif

static struct vuart uart;

static uint64_t rd(uint64_t off, unsigned size)
{
    uint64_t v = 0xdeadbeefcafef00dull;
    (void)vuart_access(&uart, off, false, &v, size);
    return v;
}

static void wr(uint64_t off, uint64_t v, unsigned size)
{
    (void)vuart_access(&uart, off, true, &v, size);
}

/* The i-th character of the stream: never 0 (an empty FIFO reads 0), not periodic with the ring size,
 * so a lost, repeated or reordered character shows at once. */
static uint8_t stream(uint32_t i)
{
    uint32_t x = i * 2654435761u;
    return (uint8_t)(1u + (x >> 24) % 255u);
}

static void *producer(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < RING_CHARS; i++) {
        while (!vuart_rx(&uart, (char)stream(i))) {
            sched_yield(); /* full: the consumer makes room */
        }
    }
    return NULL;
}

static void test_two_threads(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    wr(PL011_IMSC, PL011_INT_RX, 4);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, producer, NULL) == 0);
    uint32_t got = 0, bad = 0, empty_reads = 0;
    while (got < RING_CHARS) {
        /* As a driver: FR says something waits, then DR; sometimes DR blindly (0 when empty). */
        bool waiting = (rd(PL011_FR, 4) & PL011_FR_RXFE) == 0;
        if (waiting && !vuart_irq_line(&uart)) {
            bad++; /* RX enabled in IMSC and a character waits: the line is up */
        }
        if (!waiting && (got & 7u) != 0) {
            sched_yield();
            continue;
        }
        uint64_t c = rd(PL011_DR, (got & 1u) ? 1u : 4u);
        if (c == 0) {
            empty_reads++;
            bad += waiting; /* FR said a character waits: nobody else takes it */
            continue;
        }
        if (c != stream(got)) {
            if (bad++ < 5) {
                fprintf(stderr, "  character %u: got 0x%02x, sent 0x%02x\n", got, (unsigned)c, stream(got));
            }
        }
        got++;
    }
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(bad == 0);
    CHECK((rd(PL011_FR, 4) & PL011_FR_RXFE) != 0); /* everything sent was read, nothing more */
    CHECK(rd(PL011_DR, 4) == 0);
    printf("  two threads: %u characters in order (%u reads found the FIFO empty)\n", got, empty_reads);
}

/* Full ring: exactly VUART_RX_SIZE characters kept, the next refused; indices wrap around 2^32. */
static void test_full_and_wrap(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    uart.rx_prod = uart.rx_cons = 0xffffff00u; /* the free-running indices cross 2^32 below */
    unsigned kept = 0;
    for (uint32_t i = 0; i < VUART_RX_SIZE + 10u; i++) {
        kept += vuart_rx(&uart, (char)stream(i));
    }
    CHECK(kept == VUART_RX_SIZE);
    CHECK((rd(PL011_RIS, 4) & PL011_INT_RX) != 0);
    unsigned ok = 0;
    for (uint32_t i = 0; i < VUART_RX_SIZE; i++) {
        ok += rd(PL011_DR, 4) == stream(i);
    }
    CHECK(ok == VUART_RX_SIZE);
    CHECK(rd(PL011_DR, 4) == 0 && (rd(PL011_RIS, 4) & PL011_INT_RX) == 0);
    /* Pending input does not survive a reset; the ring works on afterwards. */
    CHECK(vuart_rx(&uart, 'x'));
    vuart_reset(&uart);
    CHECK((rd(PL011_FR, 4) & PL011_FR_RXFE) != 0);
    CHECK(vuart_rx(&uart, 'y') && rd(PL011_DR, 1) == 'y');
}

/* Register access rules (vuart.c's header): sizes, truncation, widths, RAZ/WI for the rest. */
static void test_registers(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    wr(PL011_CR, 0xffffffffffffffffull, 4);
    CHECK(uart.cr == 0xffffu); /* 16 bits */
    wr(PL011_CR, 0x01, 1);
    CHECK(uart.cr == 0xff01u); /* a byte write replaces the low byte only */
    CHECK(rd(PL011_CR, 1) == 0x01 && rd(PL011_CR, 2) == 0xff01u);
    wr(PL011_CR, 0x1234, 8); /* not a PL011 access: ignored */
    wr(PL011_CR + 1u, 0x12, 1);
    CHECK(uart.cr == 0xff01u);
    CHECK(rd(PL011_CR, 8) == 0 && rd(PL011_CR + 2u, 2) == 0);
    wr(PL011_IMSC, 0xffffffffu, 4);
    wr(PL011_LCR_H, 0xffffu, 2);
    wr(PL011_FBRD, 0xff, 1);
    wr(PL011_DMACR, 0xff, 4);
    CHECK(uart.imsc == 0x7ffu && uart.lcrh == 0xffu && uart.fbrd == 0x3fu && uart.dmacr == 0x7u);
    CHECK(rd(PL011_PERIPHID0, 4) == 0x11 && rd(PL011_PERIPHID0 + 1u, 1) == 0);
    CHECK(rd(PL011_FR, 1) == (PL011_FR_TXFE | PL011_FR_RXFE));
    /* A DR write of any size carries one character; an 8-byte one none. */
    uint32_t prod = uart.tx_prod;
    wr(PL011_DR, 0x4142u, 2);
    wr(PL011_DR, 0x43u, 8);
    CHECK(uart.tx_prod == prod + 1u && uart.tx[prod % VUART_TX_SIZE] == 0x42);
}

/* What vuart_drain handed on: the lines joined, each followed by '|' when complete, '~' when not. */
static char seen[256];
static size_t seen_len;

static bool collect(void *ctx, const char *s, size_t n, bool complete)
{
    (void)ctx;
    CHECK(seen_len + n + 1u < sizeof(seen));
    memcpy(seen + seen_len, s, n);
    seen_len += n;
    seen[seen_len++] = complete ? '|' : '~';
    seen[seen_len] = '\0';
    return true;
}

static void type(const char *s)
{
    for (; *s != '\0'; s++) {
        wr(PL011_DR, (uint8_t)*s, 1);
        vuart_drain(&uart, VUART_DRAIN_LINES, collect, NULL, UINT32_MAX); /* as on each UARTDR write */
    }
}

/* An unfinished line leaves on a periodic drain only after a whole period without output; ticks that
 * fall while a line is being written keep it whole (a line of another partition printed at such a tick
 * would otherwise cut it in two on the console). */
static void test_drain_modes(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    seen_len = 0;
    seen[0] = '\0';
    type("ab");
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX);
    type("cd");
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX);
    type("e\n");
    CHECK(strcmp(seen, "abcde|") == 0);
    type("$ ");
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX); /* output since the last tick */
    CHECK(strcmp(seen, "abcde|") == 0);
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX); /* a silent period: the prompt shows */
    CHECK(strcmp(seen, "abcde|$ ~") == 0);
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX);
    CHECK(strcmp(seen, "abcde|$ ~") == 0);
    /* Characters the periodic drain itself moves count as output too (a console ring's producer). The
     * ring's room is what a console ring's pull may push (conmux.c). */
    CHECK(vuart_tx_room(&uart) == VUART_TX_SIZE);
    vuart_tx_push(&uart, 'x');
    CHECK(vuart_tx_room(&uart) == VUART_TX_SIZE - 1u);
    vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, UINT32_MAX);
    CHECK(strcmp(seen, "abcde|$ ~") == 0);
    CHECK(vuart_tx_room(&uart) == VUART_TX_SIZE);
    type("y");
    vuart_drain(&uart, VUART_DRAIN_ALL, collect, NULL, UINT32_MAX); /* the last drain: everything now */
    CHECK(strcmp(seen, "abcde|$ ~xy~") == 0);
}

/* A sink that stops the drain after `stop_after` more lines (the console CPU has the rtos to run). */
static unsigned stop_after;

static bool collect_some(void *ctx, const char *s, size_t n, bool complete)
{
    (void)collect(ctx, s, n, complete);
    if (stop_after == 0) {
        return true;
    }
    return --stop_after != 0;
}

/* A drain stopped by its sink leaves the rest in the ring, in order, for the next drain; a line still
 * unfinished when it stopped is not taken for a silent prompt. */
static void test_drain_stops_early(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    seen_len = 0;
    seen[0] = '\0';
    for (const char *c = "one\ntwo\nthree\n$ "; *c != '\0'; c++) {
        wr(PL011_DR, (uint8_t)*c, 1);
    }
    stop_after = 1;
    CHECK(!vuart_drain(&uart, VUART_DRAIN_TICK, collect_some, NULL, UINT32_MAX));
    CHECK(strcmp(seen, "one|") == 0);
    stop_after = 2;
    CHECK(!vuart_drain(&uart, VUART_DRAIN_TICK, collect_some, NULL, UINT32_MAX));
    CHECK(strcmp(seen, "one|two|three|") == 0);
    CHECK(vuart_drain(&uart, VUART_DRAIN_TICK, collect_some, NULL, UINT32_MAX)); /* "$ " came after a stop */
    CHECK(strcmp(seen, "one|two|three|") == 0);
    CHECK(vuart_drain(&uart, VUART_DRAIN_TICK, collect_some, NULL, UINT32_MAX)); /* a silent period */
    CHECK(strcmp(seen, "one|two|three|$ ~") == 0);
}

/* A drain with a budget moves that many characters at most; a line is handed on whole once its end came,
 * however the budgets cut it, and the prompt only when the ring is empty. */
static void test_drain_in_steps(void)
{
    memset(&uart, 0, sizeof(uart));
    vuart_reset(&uart);
    seen_len = 0;
    seen[0] = '\0';
    for (const char *c = "abcdef\ngh\n$ "; *c != '\0'; c++) {
        wr(PL011_DR, (uint8_t)*c, 1);
    }
    CHECK(!vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, 4));
    CHECK(strcmp(seen, "") == 0 && vuart_tx_room(&uart) == VUART_TX_SIZE - 8u);
    CHECK(!vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, 4));
    CHECK(strcmp(seen, "abcdef|") == 0);
    CHECK(vuart_drain(&uart, VUART_DRAIN_TICK, collect, NULL, 4)); /* empty, but output came */
    CHECK(strcmp(seen, "abcdef|gh|") == 0);
    CHECK(vuart_drain(&uart, VUART_DRAIN_ALL, collect, NULL, 4));
    CHECK(strcmp(seen, "abcdef|gh|$ ~") == 0);
}

int main(void)
{
    test_registers();
    test_drain_modes();
    test_drain_stops_early();
    test_drain_in_steps();
    test_full_and_wrap();
    test_two_threads();
    UNIT_DONE("hyp vuart");
}
