/*
 * lib/string.c (both images' memcpy, memmove, memset, memcmp, strlen), built for the host under other
 * names (the Makefile renames them, so the host's own stay in use) and checked against the host's C
 * library: every source and destination alignment within 16 bytes and every length up to 300, longer
 * copies, and each source in a heap block of exactly its size, so that AddressSanitizer reports a load of
 * a byte past either end. Every byte around the destination must be left as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void *lib_memcpy(void *dst, const void *src, size_t n);
void *lib_memmove(void *dst, const void *src, size_t n);
void *lib_memset(void *dst, int c, size_t n);
int lib_memcmp(const void *a, const void *b, size_t n);
size_t lib_strlen(const char *s);

#define GUARD 24u

static uint32_t seed = 12345u;

static uint8_t next_byte(void)
{
    seed = seed * 1103515245u + 12345u;
    return (uint8_t)(seed >> 16);
}

/* One copy of n bytes from a block of exactly n bytes at source offset so (the block's start shifted
 * by so within a 16-aligned allocation) to dst offset dof; returns whether it was exact and alone. */
static int copy_ok(size_t n, unsigned so, unsigned dof)
{
    if (n > (1u << 20) || so >= 16u || dof >= 16u) {
        abort();
    }
    uint8_t *block = aligned_alloc(16, (so + n + 15u) / 16u * 16u + 16u);
    uint8_t *src = block + so;
    uint8_t *buf = malloc(GUARD + 16u + n + GUARD);
    uint8_t *want = malloc(GUARD + 16u + n + GUARD);
    if (block == NULL || buf == NULL || want == NULL) {
        abort();
    }
    /* the source's own heap block, exactly n bytes long, so ASan sees any byte loaded past its end */
    uint8_t *exact = malloc(n == 0 ? 1 : n);
    for (size_t i = 0; i < n; i++) {
        exact[i] = next_byte();
    }
    memcpy(src, exact, n);
    for (size_t i = 0; i < GUARD + 16u + n + GUARD; i++) {
        buf[i] = want[i] = next_byte();
    }
    uint8_t *dst = buf + GUARD + dof;
    memcpy(want + GUARD + dof, src, n);
    /* the aligned block: source alignment so; the exact block: the allocator's (16), for the ends */
    int ok = lib_memcpy(dst, src, n) == dst && memcmp(buf, want, GUARD + 16u + n + GUARD) == 0;
    memcpy(want + GUARD + dof, exact, n);
    ok = ok && lib_memcpy(dst, exact, n) == dst && memcmp(buf, want, GUARD + 16u + n + GUARD) == 0;
    free(exact);
    free(block);
    free(buf);
    free(want);
    return ok;
}

/* A source that ends exactly at the end of its heap block, starting at every alignment. */
static int tail_ok(size_t n, unsigned so)
{
    if (n > (1u << 20) || so >= 16u) {
        abort();
    }
    uint8_t *block = malloc(so + n + 1u);
    uint8_t *dst = malloc(n + 16u);
    if (block == NULL || dst == NULL) {
        abort();
    }
    for (size_t i = 0; i < so + n; i++) {
        block[i] = next_byte();
    }
    uint8_t *src = block + so;
    int ok = 1;
    for (unsigned dof = 0; dof < 8u; dof++) {
        ok = ok && lib_memcpy(dst + dof, src, n) == dst + dof && memcmp(dst + dof, src, n) == 0;
    }
    free(block);
    free(dst);
    return ok;
}

int main(void)
{
    unsigned bad = 0;
    for (size_t n = 0; n <= 300; n++) {
        for (unsigned so = 0; so < 16u; so++) {
            for (unsigned dof = 0; dof < 16u; dof++) {
                if (!copy_ok(n, so, dof) && bad++ < 10u) {
                    fprintf(stderr, "memcpy of %zu bytes, source offset %u, destination offset %u: wrong\n",
                            n, so, dof);
                }
            }
        }
    }
    CHECK(bad == 0);
    /* longer copies (a ring's size, a 9P message's, odd lengths), every alignment pair modulo 8 */
    static const size_t longer[] = {511, 512, 1000, 4096, 4099, 8192, 8203, 65541};
    bad = 0;
    for (unsigned i = 0; i < sizeof(longer) / sizeof(longer[0]); i++) {
        for (unsigned so = 0; so < 8u; so++) {
            for (unsigned dof = 0; dof < 8u; dof++) {
                bad += !copy_ok(longer[i], so, dof);
            }
        }
    }
    CHECK(bad == 0);
    /* a source ending at its heap block's end, one byte past it unaddressable (ASan) */
    bad = 0;
    for (size_t n = 0; n <= 80; n++) {
        for (unsigned so = 0; so < 8u; so++) {
            bad += !tail_ok(n, so);
        }
    }
    CHECK(bad == 0);

    /* memmove both ways over overlaps, memset, memcmp, strlen */
    uint8_t a[96], b[96];
    bad = 0;
    for (unsigned from = 0; from < 32u; from++) {
        for (unsigned to = 0; to < 32u; to++) {
            for (size_t n = 0; n <= 64u; n += 7u) {
                for (unsigned i = 0; i < sizeof(a); i++) {
                    a[i] = b[i] = (uint8_t)(i * 7u + 1u);
                }
                memmove(b + to, b + from, n);
                bad += lib_memmove(a + to, a + from, n) != a + to || memcmp(a, b, sizeof(a)) != 0;
            }
        }
    }
    CHECK(bad == 0);
    memset(b, 0x11, sizeof(b));
    memset(a, 0x11, sizeof(a));
    memset(b + 5, 0xab, 50);
    CHECK(lib_memset(a + 5, 0x1ab, 50) == a + 5 && memcmp(a, b, sizeof(a)) == 0);
    CHECK(lib_memcmp(a, b, sizeof(a)) == 0 && lib_memcmp(a, b, 0) == 0);
    b[40] = 0xac;
    CHECK(lib_memcmp(a, b, sizeof(a)) < 0 && lib_memcmp(b, a, sizeof(a)) > 0 && lib_memcmp(a, b, 40) == 0);
    CHECK(lib_strlen("") == 0 && lib_strlen("rtmux") == 5);
    UNIT_DONE("test_string");
}
