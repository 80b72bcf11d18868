/*
 * The physical console's buffer (hyp/core/console.c) against a model PL011 whose transmit FIFO holds
 * FIFO_DEPTH characters and sends one to the "wire" whenever the test lets time pass: paced writes never
 * wait for the wire, nothing is lost or reordered, a full buffer waits, con_sync writes everything.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "drivers/uart.h"
#include "hyp/console.h"

#define FIFO_DEPTH 32u
#define WIRE_SIZE  (4u * CON_OUT_SIZE)

static unsigned fifo;        /* characters in the model FIFO */
static char wire[WIRE_SIZE]; /* what has left the UART, in order */
static size_t sent, queued;  /* characters on the wire; characters ever put in the FIFO */
static char fifo_text[WIRE_SIZE];
static bool time_passes; /* each TXFF poll of a full FIFO sends one character (a waiting writer) */
static unsigned full_polls;

void uart_init(void) {}

bool uart_tx_full(void)
{
    if (fifo == FIFO_DEPTH && time_passes) {
        wire[sent] = fifo_text[sent];
        sent++;
        fifo--;
        full_polls++;
        return true; /* full at the poll; the next one finds room */
    }
    return fifo == FIFO_DEPTH;
}

void uart_tx(char c)
{
    CHECK(fifo < FIFO_DEPTH); /* never written while full */
    fifo_text[queued++] = c;
    fifo++;
}

/* The wire takes n characters of the FIFO (time passes while nobody writes). */
static void wire_takes(unsigned n)
{
    while (n-- > 0 && fifo > 0) {
        wire[sent] = fifo_text[sent];
        sent++;
        fifo--;
    }
}

static void fill(char *buf, size_t n, char first)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = (char)(first + (char)(i % 26u));
    }
}

int main(void)
{
    static char text[3u * CON_OUT_SIZE];

    /* Unpaced (no console tick yet): a write waits until the UART has taken it all. */
    time_passes = true;
    fill(text, 100, 'a');
    con_write(text, 100);
    CHECK(queued == 100 && con_room() == CON_OUT_SIZE);
    wire_takes(FIFO_DEPTH);
    CHECK(sent == 100 && memcmp(wire, text, 100) == 0);

    /* Paced: a long write returns at once, the FIFO full and the rest buffered; nothing waited. */
    con_set_paced(true);
    time_passes = false;
    full_polls = 0;
    fill(text, 1000, 'A');
    con_write(text, 1000);
    CHECK(fifo == FIFO_DEPTH && queued == 100 + FIFO_DEPTH);
    CHECK(con_room() == CON_OUT_SIZE - (1000 - FIFO_DEPTH));
    /* Partition lines come after it, tagged, CR before each LF, in order. */
    con_line("rtos", "tick", 4, true);
    con_line("linux", "# ", 2, false);
    con_write("x\n", 2);
    static const char tail[] = "[rtos] tick\r\n[linux] # \r\nx\r\n";
    size_t total = 100 + 1000 + sizeof(tail) - 1u;
    /* The console tick moves only what the wire made room for. */
    wire_takes(10);
    con_flush();
    CHECK(fifo == FIFO_DEPTH && sent == 110 && queued == 100 + FIFO_DEPTH + 10);
    while (sent < total) {
        wire_takes(7);
        con_flush();
    }
    CHECK(sent == total && con_room() == CON_OUT_SIZE && full_polls == 0);
    CHECK(memcmp(wire + 100, text, 1000) == 0 && memcmp(wire + 1100, tail, sizeof(tail) - 1u) == 0);

    /* More than the buffer holds, while the UART is far behind (a board's at 115200 baud, a partition
     * flooding): a write that does not fit whole is dropped whole and counted, and no writer ever waits
     * for the wire (a CPU the rtos shares would wait with its interrupts masked). The count comes first
     * once there is room again. */
    size_t before = sent;
    time_passes = true;
    full_polls = 0;
    fill(text, sizeof(text), '0');
    con_write(text, sizeof(text)); /* larger than the buffer: dropped */
    CHECK(full_polls == 0 && con_room() == CON_OUT_SIZE && sent == before);
    static char line[120];
    fill(line, sizeof(line) - 1u, 'a');
    line[sizeof(line) - 1u] = '\n';
    unsigned written = 0, writes = 2u * CON_OUT_SIZE / sizeof(line);
    for (unsigned i = 0; i < writes; i++) {
        size_t room = con_room();
        if (i % 2u == 0) {
            con_write(line, sizeof(line));
        } else {
            con_line("linux", line, sizeof(line) - 1u, true);
        }
        written += room >= con_room() + sizeof(line) - 4u ? 1u : 0u; /* the wire took 2 at most meanwhile */
    }
    /* Each write looks at the FIFO at most twice (the model sends a character at each look at a full
     * one); a writer that waited would look until a whole line had gone. */
    CHECK(full_polls <= 2u * writes && written > 0 && written < writes);
    CHECK(con_room() < 2u * sizeof(line) + 16u);
    /* The wire catches up: the next write is preceded by the count of those dropped. */
    time_passes = false;
    while (con_room() < CON_OUT_SIZE) {
        wire_takes(FIFO_DEPTH);
        con_flush();
    }
    wire_takes(FIFO_DEPTH);
    size_t mark = sent;
    con_write("after\n", 6);
    wire_takes(FIFO_DEPTH);
    con_flush();
    while (con_room() < CON_OUT_SIZE || fifo > 0) {
        wire_takes(FIFO_DEPTH);
        con_flush();
    }
    wire[sent] = '\0';
    CHECK(strstr(wire + mark, "rtmux: console: ") == wire + mark &&
          strstr(wire + mark, " writes dropped (") != NULL);
    CHECK(strstr(wire + mark, "the UART behind\r\nafter\r\n") != NULL);
    /* con_sync: everything on the wire (or in the FIFO, where it cannot be lost). */
    fill(text, 3000, '0');
    con_write(text, 3000);
    before = sent;
    time_passes = true;
    con_sync();
    wire_takes(FIFO_DEPTH);
    CHECK(con_room() == CON_OUT_SIZE && sent > before);
    UNIT_DONE("hyp console");
}
