/*
 * The demo's set-point profile: points read from a file in Linux (files.c), followed by the control
 * step, over and over. Pure code (no rtos call), tested on the host (tests/unit/c/test_demo_profile.c).
 *
 * The file (docs/linux-services.md, "The demo uses it"): one point a line, "time_ms,setpoint_mm": a
 * whole number of milliseconds from the start of the cycle (0 to PROFILE_TIME_MAX_MS) and millimetres
 * ("7", "-2.5", at most a metre either way; digits below a micrometre are dropped). Spaces around the
 * fields are allowed, '#' begins a comment (to the end of the line), empty lines are skipped, and the
 * first line that is not may be the header "time_ms,setpoint_mm". The first point is at 0 ms, times
 * never go back, at most PROFILE_POINTS_MAX points. Between two points the set-point goes in a straight
 * line; two points at the same time make a step (the second holds from then on). The cycle lasts until
 * the last point's time, then starts again at 0 ms (a last point at 0 ms: its value, held).
 *
 * The active profile is published by one thread (files.c) and read by the control step, which runs above
 * it on the same CPU and reads the pointer once at each step's start: the publisher fills the buffer
 * that is not active (profile_spare), and the control step is never in the middle of a step while the
 * publisher runs, so no step reads a buffer being filled.
 */
#ifndef DEMO_PROFILE_H
#define DEMO_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_POINTS_MAX  256u
#define PROFILE_TIME_MAX_MS 86400000u /* a day */
#define PROFILE_LINE_MAX    128u      /* characters a line, its end included */
#define PROFILE_UM_MAX      1000000   /* a metre, in micrometres */

struct profile {
    uint32_t n;        /* points: 1..PROFILE_POINTS_MAX */
    uint32_t cycle_ms; /* the last point's time */
    uint32_t t_ms[PROFILE_POINTS_MAX];
    int32_t um[PROFILE_POINTS_MAX];
};

/* Reading a profile as its bytes come (any pieces). After an error the rest is ignored. */
struct profile_parser {
    struct profile *out;
    unsigned line; /* the line being read, from 1 */
    char buf[PROFILE_LINE_MAX];
    size_t len;
    bool too_long;  /* the line did not fit in buf */
    bool data_seen; /* a line other than blank or comment came (the header may come only first) */
    /* the first error: its line (0: the file as a whole), what is wrong, and the line (cut) */
    unsigned err_line;
    const char *why;
    char text[48];
};

void profile_parse_begin(struct profile_parser *ps, struct profile *out);
/* Returns false once an error was found (why is set). */
bool profile_parse_feed(struct profile_parser *ps, const char *data, size_t n);
/* The end of the input (a last line without its newline counts): true if out holds a good profile. */
bool profile_parse_end(struct profile_parser *ps);

/* "[-+]digits[.digits]" millimetres, at most a metre either way, into micrometres (digits below a
 * micrometre are dropped); false if it is not that. Also the setpoint channel's numbers (main.c). */
bool profile_parse_mm(const char *s, int32_t *um);

/* Where the control step is in a profile. */
struct profile_cursor {
    uint32_t at_ms; /* time into the cycle */
    uint32_t seg;   /* the last point at or before at_ms */
};

/* The set-point at c->at_ms, in micrometres (c->seg moves to its segment: a few points at most per
 * call while at_ms goes forward, the whole profile once after the cycle starts over). */
double profile_at(const struct profile *p, struct profile_cursor *c);
/* Moves c on by ms milliseconds, starting the cycle over past its end. */
void profile_advance(const struct profile *p, struct profile_cursor *c, uint64_t ms);

/* The profile to follow (NULL: none), the buffer to fill for the next one, and its publication
 * (the buffer profile_spare gave, or NULL to follow none). */
const struct profile *profile_active(void);
struct profile *profile_spare(void);
void profile_publish(const struct profile *p);

#endif /* DEMO_PROFILE_H */
