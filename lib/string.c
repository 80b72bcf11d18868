/*
 * The C library functions a freestanding compiler may emit calls to (GCC requires memcpy, memmove,
 * memset and memcmp even with -ffreestanding).
 */
#include "lib/string.h"

#include <stdint.h>

/* A doubleword that may alias anything (memcpy's callers copy objects of every type). */
typedef uint64_t __attribute__((may_alias)) word_t;

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    /* Doublewords when both sides share their alignment (the V-Bus's rings and Linux's buffers mostly
     * do): eight times fewer loads and stores. Only aligned accesses, so the images' -mstrict-align
     * holds, and memory the MMU leaves as Device (an MMU-off guest's view) is never accessed unaligned. */
    if ((((uintptr_t)d ^ (uintptr_t)s) & 7u) == 0) {
        while (n > 0 && ((uintptr_t)d & 7u) != 0) {
            *d++ = *s++;
            n--;
        }
        for (; n >= 8; n -= 8, d += 8, s += 8) {
            *(word_t *)(void *)d = *(const word_t *)(const void *)s;
        }
    }
    while (n-- > 0) {
        *d++ = *s++;
    }
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (d < s) {
        while (n-- > 0) {
            *d++ = *s++;
        }
    } else {
        while (n-- > 0) {
            d[n] = s[n];
        }
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = dst;
    while (n-- > 0) {
        *d++ = (uint8_t)c;
    }
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a;
    const uint8_t *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i]) {
            return x[i] < y[i] ? -1 : 1;
        }
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    return n;
}
