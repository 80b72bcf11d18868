/*
 * Shared freestanding formatting (lib/fmt.c).
 */
#ifndef LIB_FMT_H
#define LIB_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* vsnprintf semantics: returns the length the full output would have; always NUL-terminates. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

#endif /* LIB_FMT_H */
