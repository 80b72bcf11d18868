/*
 * What the services' fuzzers share (fuzz_svc, fuzz_net, netd_hostile): a seeded generator that any
 * thread may call (one sequence, so a single-threaded fuzzer replays exactly from its seed), the
 * monotonic clock in seconds, little-endian field writing, the command line (--seed N, --seconds S)
 * and client threads run for a time.
 */
#ifndef SVC_FUZZ_H
#define SVC_FUZZ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

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

/* `[--seed N] [--seconds S]` into *seed and *seconds (left as they are when not given); false, with the
 * usage said, for anything else. */
static inline bool fuzz_args(int argc, char **argv, unsigned *seed, double *seconds)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            *seed = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            *seconds = strtod(argv[++i], NULL);
        } else {
            fprintf(stderr, "usage: %s [--seed N] [--seconds S]\n", argv[0]);
            return false;
        }
    }
    return true;
}

/* Runs n threads of `client` for `seconds`, then sets *stopping and joins them. */
static inline void fuzz_clients(void *(*client)(void *), unsigned n, double seconds, volatile int *stopping)
{
    pthread_t t[16];
    CHECK(n <= sizeof(t) / sizeof(t[0]));
    n = n <= sizeof(t) / sizeof(t[0]) ? n : (unsigned)(sizeof(t) / sizeof(t[0]));
    for (unsigned i = 0; i < n; i++) {
        CHECK(pthread_create(&t[i], NULL, client, NULL) == 0);
    }
    double start = now();
    while (now() - start < seconds) {
        usleep(10000);
    }
    *stopping = 1;
    for (unsigned i = 0; i < n; i++) {
        pthread_join(t[i], NULL); /* a call that never returned hangs here: make's timeout catches it */
    }
}

#endif /* SVC_FUZZ_H */
