/*
 * Conversions between nanoseconds and counter ticks, exact and saturating (pure: host-tested in
 * tests/unit/c/test_timeconv.c). Each is two 64-bit divisions whatever the frequency and the value, so
 * a conversion costs the same for a 1 us and a one-year timeout, with interrupts masked or not.
 */
#include "kernel.h"

#define NS_PER_S 1000000000ull

/* Both split the value into whole seconds and a remainder below one second: the remainder's product
 * stays below 1e9 * 4e9 < 2^62 for any frequency up to K_FREQ_MAX, so nothing is computed in 128 bits. */

uint64_t k_ns_to_ticks(uint64_t ns, uint64_t freq)
{
    uint64_t s = ns / NS_PER_S;
    uint64_t frac = ((ns % NS_PER_S) * freq + NS_PER_S - 1u) / NS_PER_S; /* rounded up: <= freq */
    if (s > (UINT64_MAX - frac) / freq) {
        return UINT64_MAX;
    }
    return s * freq + frac;
}

uint64_t k_ticks_to_ns(uint64_t ticks, uint64_t freq)
{
    uint64_t s = ticks / freq;
    uint64_t frac = (ticks % freq) * NS_PER_S / freq; /* rounded down: < 1e9 */
    if (s > (UINT64_MAX - frac) / NS_PER_S) {
        return UINT64_MAX;
    }
    return s * NS_PER_S + frac;
}

uint64_t k_ticks_after(uint64_t now, uint64_t ticks)
{
    return ticks >= K_TICKS_NEVER - now ? K_TICKS_NEVER : now + ticks;
}
