/*
 * The rtos's console ring producer (rtos/drivers/conring.c) against a consumer that reads what it holds:
 * a write goes in whole or not at all, a dropped piece takes the rest of its line with it, a line the
 * ring holds the start of is ended before anything else, and the lines dropped are counted.
 */
#include "harness.h"
#include "lib/conring.h"

#include "../../../rtos/drivers/conring.c"

#define DATA 64u

static union {
    struct conring r;
    uint8_t bytes[CONRING_HEADER_SIZE + DATA];
} mem;
static char seen[4096];
static size_t seen_len;

/* The consumer takes everything the ring holds. */
static void consume(void)
{
    struct conring *r = &mem.r;
    while (r->tail != r->head) {
        seen[seen_len++] = r->data[r->tail++ % DATA];
    }
}

static void put(const char *s)
{
    conring_write(s, strlen(s));
}

int main(void)
{
    conring_init((uintptr_t)&mem, DATA);
    /* Whole lines until the ring is full: the one that does not fit is dropped whole, and counted. */
    for (unsigned i = 0; i < 20; i++) {
        put("line 7\n"); /* 7 bytes: 9 fit in 64 */
    }
    CHECK(mem.r.head == 63u && mem.r.dropped == 11u * 7u && mem.r.dropped_lines == 11u);
    consume();
    CHECK(seen_len == 63u && seen[62] == '\n');
    /* A line in two pieces whose second does not fit: the first piece's line is ended, not glued. */
    seen_len = 0;
    put("0123456789012345678901234567890123456789012345678901234\n"); /* 56: 8 left */
    put("half ");                                                     /* 5: 3 left */
    put("and the rest\n");                                            /* dropped */
    put("more of that line\n"); /* a new line: dropped, the ring still full */
    consume();
    put("next\n");
    consume();
    seen[seen_len] = '\0';
    CHECK(strcmp(seen, "0123456789012345678901234567890123456789012345678901234\nhalf \nnext\n") == 0);
    CHECK(mem.r.dropped_lines == 13u);
    /* A piece that does not end its line dropped: the line's later pieces go too, even with room. */
    seen_len = 0;
    for (unsigned i = 0; i < 9; i++) {
        put("fill 7\n");
    }
    put("cut "); /* 4 bytes, 1 left: dropped */
    consume();
    put("rest of it\n"); /* room now, but the line's start is gone: dropped with it */
    put("whole\n");
    consume();
    seen[seen_len] = '\0';
    CHECK(strstr(seen, "rest") == NULL && strstr(seen, "cut") == NULL);
    CHECK(seen_len >= 6u && strcmp(seen + seen_len - 6u, "whole\n") == 0);
    CHECK(mem.r.dropped_lines == 14u);
    UNIT_DONE("conring");
}
