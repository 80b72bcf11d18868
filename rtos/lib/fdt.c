/*
 * Just enough of a flattened-device-tree reader to find properties of /chosen (devicetree specification
 * v0.4, chapter 5: big-endian header, structure block of tokens, strings block).
 */
#include <stddef.h>
#include <stdint.h>

#include "../kernel/kernel.h"

#define FDT_MAGIC      0xd00dfeedu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE   2u
#define FDT_PROP       3u
#define FDT_NOP        4u
#define FDT_END        9u

static uint32_t be32(const void *p)
{
    const uint8_t *b = p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static int streq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static size_t align4(size_t n)
{
    return (n + 3u) & ~(size_t)3u;
}

const void *k_fdt_chosen(const void *dtb, const char *want, uint32_t *out_len)
{
    const uint8_t *base = dtb;
    if (((uintptr_t)dtb & 3u) != 0 || be32(base) != FDT_MAGIC) {
        return NULL;
    }
    uint32_t total = be32(base + 4);
    uint32_t off_struct = be32(base + 8);
    uint32_t off_strings = be32(base + 12);
    uint32_t size_struct = be32(base + 36);
    if (off_struct >= total || off_strings >= total || size_struct > total - off_struct) {
        return NULL;
    }
    const uint8_t *p = base + off_struct;
    const uint8_t *end = p + size_struct;
    int depth = 0;
    int in_chosen = 0;
    while (p + 4 <= end) {
        uint32_t tok = be32(p);
        p += 4;
        if (tok == FDT_BEGIN_NODE) {
            const char *name = (const char *)p;
            size_t n = 0;
            while (p + n < end && name[n] != '\0') {
                n++;
            }
            depth++;
            in_chosen = depth == 2 && streq(name, "chosen");
            p += align4(n + 1);
        } else if (tok == FDT_END_NODE) {
            depth--;
            in_chosen = 0;
        } else if (tok == FDT_PROP) {
            if (p + 8 > end) {
                return NULL;
            }
            uint32_t len = be32(p);
            uint32_t nameoff = be32(p + 4);
            p += 8;
            if (in_chosen && off_strings + nameoff < total &&
                streq((const char *)base + off_strings + nameoff, want) && p + len <= end) {
                *out_len = len;
                return p;
            }
            p += align4(len);
        } else if (tok == FDT_NOP) {
            continue;
        } else {
            break; /* FDT_END or garbage */
        }
    }
    return NULL;
}

const char *k_fdt_bootargs(const void *dtb)
{
    uint32_t len = 0;
    const char *s = k_fdt_chosen(dtb, "bootargs", &len);
    return s != NULL && len > 0 && s[len - 1] == '\0' ? s : NULL;
}
