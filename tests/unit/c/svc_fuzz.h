/*
 * What the services' fuzzers share (fuzz_svc, fuzz_net, netd_hostile): a seeded generator that any
 * thread may call (one sequence, so a single-threaded fuzzer replays exactly from its seed), the
 * monotonic clock in seconds, and little-endian field writing.
 */
#ifndef SVC_FUZZ_H
#define SVC_FUZZ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_state;

static inline void rnd_seed(uint64_t seed)
{
    rng_state = seed;
}

static inline uint32_t rnd(void)
{
    pthread_mutex_lock(&rng_lock);
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t v = (uint32_t)(rng_state >> 33);
    pthread_mutex_unlock(&rng_lock);
    return v;
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Appends v as `bytes` little-endian bytes at b[*n]. */
static inline void put(uint8_t *b, size_t *n, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        b[(*n)++] = (uint8_t)(v >> (8 * i));
    }
}

#endif /* SVC_FUZZ_H */
