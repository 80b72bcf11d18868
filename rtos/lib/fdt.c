/*
 * Just enough of a flattened-device-tree reader to find a property of a node by its path (devicetree
 * specification v0.4, chapter 5: big-endian header, structure block of tokens, strings block). Every
 * offset and length is checked against the blob's own sizes before it is followed.
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

/* Whether `name` (NUL-terminated) is the path component at `comp` (ended by '/' or NUL). */
static int component_is(const char *comp, const char *name)
{
    while (*name != '\0' && *comp == *name) {
        comp++;
        name++;
    }
    return *name == '\0' && (*comp == '/' || *comp == '\0');
}

/* The path component after the one at `comp`, or NULL after the last. */
static const char *next_component(const char *comp)
{
    while (*comp != '/' && *comp != '\0') {
        comp++;
    }
    return *comp == '/' ? comp + 1 : NULL;
}

const void *k_fdt_prop(const void *dtb, const char *path, const char *want, uint32_t *out_len)
{
    const uint8_t *base = dtb;
    if (dtb == NULL || ((uintptr_t)dtb & 3u) != 0 || be32(base) != FDT_MAGIC || path[0] != '/') {
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
    /* The root node is depth 1; nodes at depth <= matched lie on the path, and `comp` is the component a
     * node at depth matched + 1 must have to extend the match (NULL: the path's node is reached). */
    const char *comp = path[1] != '\0' ? path + 1 : NULL;
    int depth = 0, matched = 0;
    const char *stack[16]; /* the component each matched depth continues with */
    while (p + 4 <= end) {
        uint32_t tok = be32(p);
        p += 4;
        if (tok == FDT_BEGIN_NODE) {
            const char *name = (const char *)p;
            size_t n = 0;
            while (p + n < end && name[n] != '\0') {
                n++;
            }
            if (p + n >= end) {
                return NULL;
            }
            depth++;
            if (depth == 1 && matched == 0) {
                matched = 1; /* the root: every path starts there */
                stack[0] = comp;
            } else if (depth == matched + 1 && comp != NULL && matched < 16 && component_is(comp, name)) {
                stack[matched] = comp;
                matched++;
                comp = next_component(comp);
            }
            p += align4(n + 1);
        } else if (tok == FDT_END_NODE) {
            if (depth == matched && matched > 0) {
                matched--;
                comp = stack[matched];
            }
            depth--;
        } else if (tok == FDT_PROP) {
            if (p + 8 > end) {
                return NULL;
            }
            uint32_t len = be32(p);
            uint32_t nameoff = be32(p + 4);
            p += 8;
            if (len > (size_t)(end - p)) {
                return NULL;
            }
            if (depth == matched && comp == NULL && nameoff < total - off_strings &&
                streq((const char *)base + off_strings + nameoff, want)) {
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

const void *k_fdt_chosen(const void *dtb, const char *want, uint32_t *out_len)
{
    return k_fdt_prop(dtb, "/chosen", want, out_len);
}

const char *k_fdt_bootargs(const void *dtb)
{
    uint32_t len = 0;
    const char *s = k_fdt_chosen(dtb, "bootargs", &len);
    return s != NULL && len > 0 && s[len - 1] == '\0' ? s : NULL;
}
