/*
 * The physical console (core/console.c), shared by every CPU under one lock: the hypervisor's own
 * messages and the partitions' tagged lines, never mixed within a line. A leaf: it knows the UART
 * driver and nothing of partitions.
 */
#ifndef HYP_CONSOLE_H
#define HYP_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

void con_init(void);
/* Whether partition lines start with "[tag] " (default: yes). */
void con_set_tags(bool tags);
/* Text from the hypervisor itself; it ends any open partition line first. */
void con_write(const char *s, size_t n);
/* A partition's output (tag identifies the partition by its address): tagged at the start of each
 * console line; complete = ends with a newline. An incomplete line (a prompt) stays open until the same
 * tag continues it or something else is written. */
void con_line(const char *tag, const char *s, size_t n, bool complete);

#endif /* HYP_CONSOLE_H */
