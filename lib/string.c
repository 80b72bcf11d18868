/*
 * The C library functions a freestanding compiler may emit calls to (GCC requires memcpy, memmove,
 * memset and memcmp even with -ffreestanding).
 */
#include "lib/string.h"

#include <stdint.h>

/* A doubleword that may alias anything (memcpy's callers copy objects of every type). */
typedef uint64_t __attribute__((may_alias)) word_t;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "memcpy's shifted copy assumes little-endian doublewords"
#endif

/* Both images are built with -mstrict-align, and memory the MMU leaves as Device (an MMU-off guest's
 * view, the rtos before its MMU is on) faults on an unaligned access, so memcpy makes aligned accesses
 * only, and loads no byte outside the source (a buffer may end on a page whose successor is unmapped).
 *
 * Same alignment (src and dst equal modulo 8): bytes up to the first doubleword boundary, then two
 * doublewords at a time (ldp/stp). Different alignment (9P's and the V-Bus's payloads start at any
 * offset in a ring): bytes up to the source's doubleword boundary, so that every load is an aligned
 * doubleword wholly inside the source; each store takes the bytes left over from one load and the first
 * bytes of the next (shifted and or'ed), stored as bytes until dst is aligned, then as doublewords.
 * Instructions (GCC 12, -O2; in QEMU's icount mode each is 1 ns): 6 per 16 bytes at the same alignment,
 * 12 per 16 bytes at different ones, up to about 80 more for the ends; a byte at a time took 5 per byte,
 * 1,280 for the 256 bytes the rtos's channel calls copy with interrupts masked (rtos/kernel/chan.c). */
static uint8_t *copy_aligned(uint8_t *d, const uint8_t *s, size_t n)
{
    word_t *dw = (word_t *)(void *)d;
    const word_t *sw = (const word_t *)(const void *)s;
    for (; n >= 16; n -= 16, dw += 2, sw += 2) {
        uint64_t a = sw[0], b = sw[1];
        dw[0] = a;
        dw[1] = b;
    }
    if (n >= 8) {
        *dw++ = *sw;
    }
    return (uint8_t *)dw;
}

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n >= 16) {
        while (((uintptr_t)s & 7u) != 0) { /* at most 7 */
            *d++ = *s++;
            n--;
        }
        unsigned m = (unsigned)((uintptr_t)d & 7u);
        if (m == 0) {
            uint8_t *e = copy_aligned(d, s, n);
            s += e - d;
            n -= (size_t)(e - d);
            d = e;
        } else {
            /* carry: the bytes of the last load not stored yet, the first in its low bits. One load
             * here, and every store below leaves 8 - m (then m) of them; m bytes stay for the tail. */
            const word_t *sw = (const word_t *)(const void *)s;
            uint64_t carry = *sw++;
            n -= 8;
            unsigned k = 8u - m; /* bytes up to dst's boundary */
            for (unsigned i = 0; i < k; i++, carry >>= 8) {
                *d++ = (uint8_t)carry;
            }
            /* carry holds m bytes; each doubleword stored takes them and 8 - m from the next load */
            unsigned lo = 8u * m, hi = 64u - lo;
            word_t *dw = (word_t *)(void *)d;
            for (; n >= 16; n -= 16, sw += 2, dw += 2) {
                uint64_t a = sw[0], b = sw[1];
                dw[0] = carry | (a << lo);
                dw[1] = (a >> hi) | (b << lo);
                carry = b >> hi;
            }
            if (n >= 8) {
                uint64_t a = *sw++;
                *dw++ = carry | (a << lo);
                carry = a >> hi;
                n -= 8;
            }
            d = (uint8_t *)dw;
            s = (const uint8_t *)sw;
            for (unsigned i = 0; i < m; i++, carry >>= 8) {
                *d++ = (uint8_t)carry;
            }
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
