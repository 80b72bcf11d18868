/*
 * Stage-2 tables (hyp/arch/arm64/stage2.c) built natively: every mapped page translates to the right
 * PA with the right attributes, the largest blocks are used, and nothing outside the requested ranges
 * is mapped.
 */
#include <stdint.h>
#include <string.h>

#include "arch/stage2.h"
#include "arm64/pgtable.h"
#include "check.h"
#include "hyp_stubs.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

struct walk {
    int level; /* of the leaf descriptor; 0: not mapped */
    uint64_t desc;
    uint64_t pa;
};

/* Translates ipa through a level-1 root like the MMU would (4 KiB granule). */
static struct walk translate(const uint64_t *root, uint64_t ipa)
{
    struct walk w = {0, 0, 0};
    const uint64_t *table = root;
    static const unsigned shift[] = {L1_BLOCK_SHIFT, L2_BLOCK_SHIFT, PAGE_SHIFT};
    for (int level = 1; level <= 3; level++) {
        uint64_t d = table[(ipa >> shift[level - 1]) & PT_INDEX_MASK];
        if (!(d & PTE_VALID)) {
            return w;
        }
        if (level < 3 && (d & PTE_TABLE)) {
            table = (const uint64_t *)(uintptr_t)(d & PTE_ADDR_MASK);
            continue;
        }
        if (level == 3 && !(d & PTE_PAGE)) {
            return w; /* reserved encoding at level 3 */
        }
        uint64_t span = 1ull << shift[level - 1];
        w.level = level;
        w.desc = d;
        w.pa = (d & PTE_ADDR_MASK & ~(span - 1u)) | (ipa & (span - 1u));
        return w;
    }
    return w;
}

/* Bytes mapped by a whole table tree (every valid leaf). */
static uint64_t mapped_bytes(const uint64_t *table, int level)
{
    static const unsigned shift[] = {L1_BLOCK_SHIFT, L2_BLOCK_SHIFT, PAGE_SHIFT};
    uint64_t total = 0;
    for (unsigned i = 0; i < PT_ENTRIES; i++) {
        uint64_t d = table[i];
        if (!(d & PTE_VALID)) {
            continue;
        }
        if (level < 3 && (d & PTE_TABLE)) {
            total += mapped_bytes((const uint64_t *)(uintptr_t)(d & PTE_ADDR_MASK), level + 1);
        } else {
            total += 1ull << shift[level - 1];
        }
    }
    return total;
}

static bool normal_rw(uint64_t d)
{
    return (d & (UL(0xf) << 2)) == PTE_S2_MEMATTR_NORMAL_WB && (d & PTE_S2_AP_RW) == PTE_S2_AP_RW &&
           (d & PTE_AF) && (d & PTE_SH_INNER) == PTE_SH_INNER && !(d & PTE_XN);
}

static bool device_rw(uint64_t d)
{
    return (d & (UL(0xf) << 2)) == PTE_S2_MEMATTR_DEVICE && (d & PTE_S2_AP_RW) == PTE_S2_AP_RW &&
           (d & PTE_AF) && (d & PTE_XN);
}

/* Every page of [ipa, ipa + size) maps to pa + offset at `level` with the expected attributes; the
 * pages just outside do not map into it. */
static void check_range(const uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, int level,
                        bool device)
{
    bool all = true;
    for (uint64_t off = 0; off < size; off += PAGE_SIZE) {
        struct walk w = translate(root, ipa + off);
        bool ok = w.level == level && w.pa == pa + off && (device ? device_rw(w.desc) : normal_rw(w.desc));
        if (!ok && all) {
            fprintf(stderr, "  IPA 0x%llx: level %d PA 0x%llx desc 0x%llx\n", (unsigned long long)(ipa + off),
                    w.level, (unsigned long long)w.pa, (unsigned long long)w.desc);
        }
        all = all && ok;
    }
    CHECK(all);
}

static void test_rtos_ram(void)
{
    /* The default rtos partition: 16 MiB at IPA 0x4000_0000 from PA 0x4800_0000: 2 MiB blocks. */
    uint64_t *root = s2_new_root();
    s2_map(root, 0x40000000, 0x48000000, 16 * MIB, false);
    check_range(root, 0x40000000, 0x48000000, 16 * MIB, 2, false);
    CHECK(translate(root, 0x40000000 - PAGE_SIZE).level == 0);
    CHECK(translate(root, 0x40000000 + 16 * MIB).level == 0);
    CHECK(mapped_bytes(root, 1) == 16 * MIB);
}

static void test_gib_block_and_devices(void)
{
    uint64_t *root = s2_new_root();
    s2_map(root, 0x40000000, 0x40000000, GIB, false); /* 1 GiB aligned: one level-1 block */
    s2_map(root, 0x09000000, 0x09000000, PAGE_SIZE, true);
    s2_map(root, 0x0a003000, 0x0a003000, 3 * PAGE_SIZE, true);
    check_range(root, 0x40000000, 0x40000000, GIB, 1, false);
    check_range(root, 0x09000000, 0x09000000, PAGE_SIZE, 3, true);
    check_range(root, 0x0a003000, 0x0a003000, 3 * PAGE_SIZE, 3, true);
    CHECK(translate(root, 0x09001000).level == 0);
    CHECK(translate(root, 0x0a002000).level == 0);
    CHECK(translate(root, 0x0a006000).level == 0);
    CHECK(translate(root, 0x08000000).level == 0); /* the distributor is never mapped */
    CHECK(mapped_bytes(root, 1) == GIB + 4 * PAGE_SIZE);
}

static void test_unaligned_edges(void)
{
    /* Starts 4 KiB below a 2 MiB boundary and ends 8 KiB above the next: pages, a block, pages. */
    uint64_t *root = s2_new_root();
    uint64_t ipa = 0x49200000 - PAGE_SIZE, size = PAGE_SIZE + 2 * MIB + 2 * PAGE_SIZE;
    s2_map(root, ipa, ipa, size, false);
    check_range(root, ipa, ipa, PAGE_SIZE, 3, false);
    check_range(root, 0x49200000, 0x49200000, 2 * MIB, 2, false);
    check_range(root, 0x49400000, 0x49400000, 2 * PAGE_SIZE, 3, false);
    CHECK(mapped_bytes(root, 1) == size);
    /* IPA and PA differ in their 2 MiB alignment: only pages can do it. */
    uint64_t *root2 = s2_new_root();
    s2_map(root2, 0x40000000, 0x48001000, 2 * MIB, false);
    check_range(root2, 0x40000000, 0x48001000, 2 * MIB, 3, false);
}

static void test_refusals(void)
{
    uint64_t *root = s2_new_root();
    s2_map(root, 0x40000000, 0x48000000, 2 * MIB, false);
    CHECK(HYP_EXPECT_PANIC(s2_map(root, 0x40001000, 0x50000000, PAGE_SIZE, true)));
    CHECK(strstr(hyp_panic_msg, "splits an existing block") != NULL);
    CHECK(HYP_EXPECT_PANIC(s2_map(root, 0x60000800, 0x60000800, PAGE_SIZE, true)));
    CHECK(strstr(hyp_panic_msg, "assertion failed") != NULL);
    CHECK(HYP_EXPECT_PANIC(s2_map(root, (1ull << S2_IPA_BITS) - PAGE_SIZE, 0, 2 * PAGE_SIZE, true)));
    CHECK(strstr(hyp_panic_msg, "assertion failed") != NULL);
    CHECK(mapped_bytes(root, 1) == 2 * MIB);
}

static void test_pool_exhausted(void)
{
    /* Every 4 KiB mapping in a new 2 MiB region needs a level-3 table: the pool runs out, with a
     * message, instead of writing past it. */
    uint64_t *root = s2_new_root();
    bool panicked = false;
    for (unsigned i = 0; i < S2_POOL_PAGES + 1 && !panicked; i++) {
        uint64_t ipa = 0x10000000 + (uint64_t)i * 2 * MIB;
        panicked = HYP_EXPECT_PANIC(s2_map(root, ipa, ipa, PAGE_SIZE, true));
    }
    CHECK(panicked);
    CHECK(strstr(hyp_panic_msg, "pool exhausted") != NULL);
}

int main(void)
{
    test_rtos_ram();
    test_gib_block_and_devices();
    test_unaligned_edges();
    test_refusals();
    test_pool_exhausted();
    UNIT_DONE("hyp stage2");
}
