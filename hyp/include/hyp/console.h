/*
 * The physical console (core/console.c), shared by every CPU under one lock: the hypervisor's own
 * messages and the partitions' tagged lines, never mixed within a line. A leaf: it knows the UART
 * driver and nothing of partitions.
 */
#ifndef HYP_CONSOLE_H
#define HYP_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes written but not yet taken by the UART, at most (core/console.c): ten times the reports of a
 * partition's stop (~1,500 characters), 1.4 s of the wire at 115200 baud. */
#define CON_OUT_SIZE 16384u

void con_init(void);
/* Paced (a console CPU calls con_flush on its tick): a write moves on to the UART only what its FIFO
 * takes, the rest waits in the console's buffer. Unpaced (the default): a write waits for the UART. */
void con_set_paced(bool on);
/* What the console's buffer has room for (a writer that needs more waits for the UART). */
size_t con_room(void);
/* Moves what the UART takes now; never waits. */
void con_flush(void);
/* Writes everything out, waiting for the UART (before the system goes off). */
void con_sync(void);
/* Whether partition lines start with "[tag] " (default: yes). */
void con_set_tags(bool tags);
/* Text from the hypervisor itself; it ends any open partition line first. */
void con_write(const char *s, size_t n);
/* A partition's output (tag identifies the partition by its address): tagged at the start of each
 * console line; complete = ends with a newline. An incomplete line (a prompt) stays open until the same
 * tag continues it or something else is written. */
void con_line(const char *tag, const char *s, size_t n, bool complete);

#endif /* HYP_CONSOLE_H */
