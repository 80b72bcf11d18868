/*
 * The physical console, shared by every CPU under one lock. Lines of different writers never mix: a
 * partition's unfinished line (a prompt) is ended on screen before anything else is written.
 *
 * Once paced (con_set_paced: a console CPU ticks), writers never wait for the wire: what they write goes
 * into `out`, and each write and each con_flush (the console tick) moves on to the PL011 only what its
 * transmit FIFO takes now. At 115200 baud a character takes ~87 us to leave, so a report of a thousand
 * characters written through a full FIFO would hold its CPU, interrupts masked, for ~90 ms: on a CPU the
 * rtos shares with Linux, that long without the rtos. A paced write that does not fit in `out` whole
 * is dropped whole and counted (the count is written once there is room again): no CPU waits for the
 * wire then, however far behind the UART is (a partition's flood included: the console drain leaves
 * partitions' lines in their own rings once `out` is nearly full, conmux.c). Unpaced writes (the boot)
 * and con_sync (before the system goes off) wait and write everything out. QEMU's PL011 never fills, so
 * there every byte leaves at once, as unpaced.
 */
#include "hyp/console.h"

#include "arch/spinlock.h"
#include "drivers/uart.h"
#include "lib/string.h"

static spinlock_t con_lock;
static bool con_tags = true;
/* Tag of the partition whose output line is open on the console (printed without its newline), or NULL.
 * Protected by con_lock. */
static const char *open_owner;

/* The bytes not yet in the UART: out[tail..head) (free-running indices, under con_lock). */
static char out[CON_OUT_SIZE];
static uint32_t out_head, out_tail;
static bool paced;
/* Paced writes dropped for want of room since the last report of them, and their characters. */
static uint32_t dropped_writes;
static uint64_t dropped_chars;

_Static_assert((CON_OUT_SIZE & (CON_OUT_SIZE - 1u)) == 0, "free-running indices wrap at a power of two");

/* The oldest byte of `out` (there is one) into the FIFO; false when the FIFO has no room. Caller holds
 * con_lock. */
static bool out_send_oldest(void)
{
    if (uart_tx_full()) {
        return false;
    }
    uart_tx(out[out_tail % CON_OUT_SIZE]);
    out_tail++;
    return true;
}

/* Moves bytes of `out` to the UART while its FIFO has room, or all of them when `all` (waiting for the
 * wire). Caller holds con_lock. */
static void out_move(bool all)
{
    while (out_tail != out_head) {
        if (!out_send_oldest() && !all) {
            return;
        }
    }
}

/* Caller holds con_lock. A full `out` waits for the UART to take its oldest byte. */
static void out_byte(char c)
{
    while (out_head - out_tail == CON_OUT_SIZE) {
        (void)out_send_oldest();
    }
    out[out_head % CON_OUT_SIZE] = c;
    out_head++;
}

void con_init(void)
{
    uart_init();
}

void con_set_tags(bool tags)
{
    con_tags = tags;
}

void con_set_paced(bool on)
{
    spin_lock(&con_lock);
    paced = on;
    out_move(!on);
    spin_unlock(&con_lock);
}

/* One character on its way (caller holds con_lock): straight into the FIFO when nothing waits before it,
 * as cheap as a plain polled write (a drain step on a CPU the rtos shares must stay below its 5 us guard:
 * through the buffer every character cost twice, and a 160-character line delayed the rtos 8 us). */
static void put(char c)
{
    if (out_head == out_tail) {
        if (!paced) {
            while (uart_tx_full()) {
            }
        }
        if (!uart_tx_full()) {
            uart_tx(c);
            return;
        }
    }
    out_byte(c);
}

/* Caller holds con_lock. */
static void emit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            put('\r');
        }
        put(s[i]);
    }
}

/* Bytes s[0..n) take in `out` (a CR before each LF). */
static size_t out_len(const char *s, size_t n)
{
    size_t len = n;
    for (size_t i = 0; i < n; i++) {
        len += s[i] == '\n' ? 1u : 0u;
    }
    return len;
}

/* The decimal digits of v into d (at least 20 bytes), most significant first; returns how many. */
static size_t digits(uint64_t v, char *d)
{
    char r[20];
    size_t n = 0;
    do {
        r[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    for (size_t i = 0; i < n; i++) {
        d[i] = r[n - 1u - i];
    }
    return n;
}

/* The report of the writes dropped so far: "rtmux: console: N writes dropped (M characters), the UART
 * behind". */
static const char drop_note_a[] = "rtmux: console: ";
static const char drop_note_b[] = " writes dropped (";
static const char drop_note_c[] = " characters), the UART behind\n";
#define DROP_NOTE_MAX (sizeof(drop_note_a) + sizeof(drop_note_b) + sizeof(drop_note_c) + 2u * 20u + 1u)

/* Room for a paced write of s[0..n) and `extra` bytes around it, with the report of earlier drops before
 * it when there are some (and room for that too); false: the write is dropped and counted. The bytes are
 * counted (a CR for each LF) only when twice n might not fit: a drain step on a CPU the rtos shares
 * writes a line through here, and must stay short. Caller holds con_lock. */
static bool paced_room(const char *s, size_t n, size_t extra)
{
    if (!paced) {
        return true; /* waits for the UART instead */
    }
    out_move(false); /* what the UART took since: room for this write */
    size_t room = CON_OUT_SIZE - (out_head - out_tail);
    size_t note = dropped_writes != 0 ? DROP_NOTE_MAX : 0u;
    size_t need = 2u * n + extra;
    if (need + note + 2u > room) { /* 2: the end of a line left open */
        need = out_len(s, n) + extra;
    }
    if (need + note + 2u > room) {
        dropped_writes++;
        dropped_chars += need;
        return false;
    }
    if (note != 0) {
        if (open_owner != NULL) {
            emit("\n", 1);
            open_owner = NULL;
        }
        char d[20];
        emit(drop_note_a, sizeof(drop_note_a) - 1u);
        emit(d, digits(dropped_writes, d));
        emit(drop_note_b, sizeof(drop_note_b) - 1u);
        emit(d, digits(dropped_chars, d));
        emit(drop_note_c, sizeof(drop_note_c) - 1u);
        dropped_writes = 0;
        dropped_chars = 0;
    }
    return true;
}

size_t con_room(void)
{
    spin_lock(&con_lock);
    size_t room = CON_OUT_SIZE - (out_head - out_tail);
    spin_unlock(&con_lock);
    return room;
}

void con_flush(void)
{
    spin_lock(&con_lock);
    out_move(false);
    spin_unlock(&con_lock);
}

void con_sync(void)
{
    spin_lock(&con_lock);
    out_move(true);
    spin_unlock(&con_lock);
}

void con_write(const char *s, size_t n)
{
    spin_lock(&con_lock);
    if (!paced_room(s, n, 0)) {
        spin_unlock(&con_lock);
        return;
    }
    if (open_owner != NULL) {
        emit("\n", 1);
        open_owner = NULL;
    }
    emit(s, n);
    out_move(!paced);
    spin_unlock(&con_lock);
}

void con_line(const char *tag, const char *s, size_t n, bool complete)
{
    spin_lock(&con_lock);
    if (!paced_room(s, n, strlen(tag) + 6u)) { /* "[tag] ", its line's end */
        spin_unlock(&con_lock);
        return;
    }
    if (open_owner != NULL && open_owner != tag) {
        emit("\n", 1); /* another partition's unfinished line (a prompt): end it on screen */
        open_owner = NULL;
    }
    if (open_owner != tag && con_tags) {
        emit("[", 1);
        emit(tag, strlen(tag));
        emit("] ", 2);
    }
    emit(s, n);
    if (complete) {
        emit("\n", 1);
    }
    open_owner = complete ? NULL : tag;
    out_move(!paced);
    spin_unlock(&con_lock);
}
