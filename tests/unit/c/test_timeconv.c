/*
 * ns <-> counter tick conversions (timeconv.c): exact against a 128-bit reference, saturating at
 * UINT64_MAX, never early, at the counter frequencies of real boards (24 MHz i.MX 8M, 54 MHz Raspberry
 * Pi 4, QEMU's 62.5 MHz, 1 GHz Armv8.6+) and the extremes the kernel accepts (1 Hz, 4 GHz).
 */
#include "harness.h"

typedef unsigned __int128 u128;

static const uint64_t freqs[] = {1u, 24000000u, 54000000u, 62500000u, 1000000000u, 4000000000u};

static uint64_t ref_ticks(uint64_t ns, uint64_t freq)
{
    u128 t = ((u128)ns * freq + 999999999u) / 1000000000u;
    return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

static uint64_t ref_ns(uint64_t ticks, uint64_t freq)
{
    u128 n = (u128)ticks * 1000000000u / freq;
    return n > UINT64_MAX ? UINT64_MAX : (uint64_t)n;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check_value(uint64_t v, uint64_t freq)
{
    uint64_t t = k_ns_to_ticks(v, freq);
    CHECK(t == ref_ticks(v, freq));
    if (t != UINT64_MAX) {
        CHECK(k_ticks_to_ns(t, freq) >= v); /* never early */
    }
    CHECK(k_ticks_to_ns(v, freq) == ref_ns(v, freq));
}

int main(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (unsigned f = 0; f < sizeof(freqs) / sizeof(freqs[0]); f++) {
        uint64_t freq = freqs[f];
        /* Edges: zero, one, around a second, the last values before and at saturation. */
        static const uint64_t edges[] = {0u,
                                         1u,
                                         15u,
                                         16u,
                                         999999999u,
                                         1000000000u,
                                         1000000001u,
                                         UINT64_MAX / 2u,
                                         UINT64_MAX - 15u,
                                         UINT64_MAX - 1u,
                                         UINT64_MAX};
        for (unsigned i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
            check_value(edges[i], freq);
        }
        /* Random values at every magnitude. */
        for (unsigned i = 0; i < 200000u; i++) {
            uint64_t v = next(&seed) >> (next(&seed) % 64u);
            check_value(v, freq);
        }
        /* Above 1 GHz, 2^64 ns do not fit the counter: the conversion saturates. */
        if (freq > 1000000000u) {
            CHECK(k_ns_to_ticks(UINT64_MAX - 1u, freq) == K_TICKS_NEVER);
        }
    }
    CHECK(k_ticks_after(0, 5) == 5);
    CHECK(k_ticks_after(UINT64_MAX - 10u, 5) == UINT64_MAX - 5u);
    CHECK(k_ticks_after(UINT64_MAX - 10u, 10) == K_TICKS_NEVER);
    CHECK(k_ticks_after(UINT64_MAX - 10u, 11) == K_TICKS_NEVER);
    CHECK(k_ticks_after(1000u, UINT64_MAX) == K_TICKS_NEVER);
    CHECK(k_ticks_after(1000u, k_ns_to_ticks(UINT64_MAX - 1u, 62500000u)) < K_TICKS_NEVER);
    UNIT_DONE("timeconv");
}
