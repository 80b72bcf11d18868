/*
 * printf-style formatting shared by the rtos and the hypervisor (freestanding, no allocation).
 * Conversions: %d %i %u %x %X %p %s %c %%, flags '-' and '0', a field width, length modifiers l, ll, z.
 */
#include "lib/fmt.h"

#include <stdbool.h>
#include <stdint.h>

struct out {
    char *buf;
    size_t size;
    size_t len; /* characters produced, including those that did not fit */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void put_num(struct out *o, uint64_t v, unsigned base, bool upper, bool neg, unsigned width, bool zero,
                    bool left)
{
    char tmp[24];
    unsigned n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0);
    unsigned total = n + (neg ? 1u : 0u);
    if (neg && zero) {
        put(o, '-');
    }
    if (!left) {
        for (; total < width; total++) {
            put(o, zero ? '0' : ' ');
        }
    }
    if (neg && !zero) {
        put(o, '-');
    }
    while (n > 0) {
        put(o, tmp[--n]);
    }
    if (left) {
        for (; total < width; total++) {
            put(o, ' ');
        }
    }
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        bool left = false, zero = false;
        for (;; p++) {
            if (*p == '-') {
                left = true;
            } else if (*p == '0') {
                zero = true;
            } else {
                break;
            }
        }
        unsigned width = 0;
        while (*p >= '0' && *p <= '9') {
            width = width * 10u + (unsigned)(*p++ - '0');
        }
        unsigned lng = 0;
        while (*p == 'l' || *p == 'z') {
            lng = *p == 'z' ? 2u : lng + 1u;
            p++;
        }
        switch (*p) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            put_num(&o, mag, 10, false, v < 0, width, zero && !left, left);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            put_num(&o, v, *p == 'u' ? 10u : 16u, *p == 'X', false, width, zero && !left, left);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uint64_t)(uintptr_t)va_arg(ap, void *), 16, false, false, width, zero, left);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            unsigned n = 0;
            while (s[n] != '\0') {
                n++;
            }
            for (unsigned i = n; !left && i < width; i++) {
                put(&o, ' ');
            }
            for (unsigned i = 0; i < n; i++) {
                put(&o, s[i]);
            }
            for (unsigned i = n; left && i < width; i++) {
                put(&o, ' ');
            }
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        case '\0':
            p--;
            break;
        default:
            put(&o, '%');
            put(&o, *p);
            break;
        }
    }
    if (size > 0) {
        buf[o.len < size ? o.len : size - 1] = '\0';
    }
    return (int)o.len;
}
