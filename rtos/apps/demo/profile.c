/*
 * The demo's set-point profile: its file read line by line, the set-point between its points, and the
 * one that is active (profile.h).
 */
#include "profile.h"

#include <stdatomic.h>

#define HEADER_TIME "time_ms"
#define HEADER_MM   "setpoint_mm"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* s[*from, *to) without the spaces at either end. */
static void trim(const char *s, size_t *from, size_t *to)
{
    while (*from < *to && is_space(s[*from])) {
        (*from)++;
    }
    while (*to > *from && is_space(s[*to - 1])) {
        (*to)--;
    }
}

static bool same(const char *s, size_t n, const char *word)
{
    size_t i = 0;
    for (; i < n && word[i] != '\0'; i++) {
        if (s[i] != word[i]) {
            return false;
        }
    }
    return i == n && word[i] == '\0';
}

bool profile_parse_mm(const char *s, int32_t *um)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') {
        s++;
    }
    int32_t v = 0;
    int32_t weight = 1000; /* of the next digit after the point */
    bool point = false, any = false;
    for (; *s != '\0'; s++) {
        if (*s == '.' && !point) {
            point = true;
            continue;
        }
        if (*s < '0' || *s > '9') {
            return false;
        }
        any = true;
        if (!point) {
            v = v * 10 + (*s - '0') * 1000;
            if (v > PROFILE_UM_MAX) {
                return false;
            }
        } else if (weight > 1) {
            weight /= 10;
            v += (*s - '0') * weight;
        }
    }
    if (!any || v > PROFILE_UM_MAX) {
        return false;
    }
    *um = neg ? -v : v;
    return true;
}

/* A whole number of milliseconds, 0..PROFILE_TIME_MAX_MS. */
static bool parse_ms(const char *s, size_t n, uint32_t *ms)
{
    uint32_t v = 0;
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        v = v * 10u + (uint32_t)(s[i] - '0');
        if (v > PROFILE_TIME_MAX_MS) {
            return false;
        }
    }
    *ms = v;
    return true;
}

static bool fail(struct profile_parser *ps, const char *why)
{
    ps->err_line = ps->line;
    ps->why = why;
    size_t n = ps->len < sizeof(ps->text) - 1 ? ps->len : sizeof(ps->text) - 1;
    for (size_t i = 0; i < n; i++) {
        char c = ps->buf[i];
        ps->text[i] = c >= ' ' && c <= '~' ? c : '?';
    }
    ps->text[n] = '\0';
    return false;
}

/* The line in ps->buf (ps->len characters). */
static bool parse_line(struct profile_parser *ps)
{
    if (ps->too_long) {
        return fail(ps, "longer than 127 characters");
    }
    const char *s = ps->buf;
    size_t end = 0;
    while (end < ps->len && s[end] != '#') {
        end++;
    }
    size_t from = 0;
    trim(s, &from, &end);
    if (from == end) {
        return true; /* blank, or a comment */
    }
    size_t comma = from;
    while (comma < end && s[comma] != ',') {
        comma++;
    }
    if (comma == end) {
        return fail(ps, "expected time_ms,setpoint_mm");
    }
    size_t t0 = from, t1 = comma, v0 = comma + 1, v1 = end;
    trim(s, &t0, &t1);
    trim(s, &v0, &v1);
    bool header = !ps->data_seen && same(s + t0, t1 - t0, HEADER_TIME) && same(s + v0, v1 - v0, HEADER_MM);
    ps->data_seen = true;
    if (header) {
        return true;
    }
    uint32_t ms = 0;
    if (!parse_ms(s + t0, t1 - t0, &ms)) {
        return fail(ps, "time_ms is not a whole number of milliseconds from 0 to 86400000");
    }
    char mm[PROFILE_LINE_MAX];
    size_t k = 0;
    for (size_t i = v0; i < v1; i++) {
        mm[k++] = s[i];
    }
    mm[k] = '\0';
    int32_t um = 0;
    if (!profile_parse_mm(mm, &um)) {
        return fail(ps, "setpoint_mm is not a number of millimetres from -1000 to 1000");
    }
    struct profile *p = ps->out;
    if (p->n == 0 && ms != 0) {
        return fail(ps, "the first point must be at 0 ms");
    }
    if (p->n > 0 && ms < p->t_ms[p->n - 1]) {
        return fail(ps, "time goes back");
    }
    if (p->n == PROFILE_POINTS_MAX) {
        return fail(ps, "more than 256 points");
    }
    p->t_ms[p->n] = ms;
    p->um[p->n] = um;
    p->n++;
    return true;
}

void profile_parse_begin(struct profile_parser *ps, struct profile *out)
{
    ps->out = out;
    out->n = 0;
    out->cycle_ms = 0;
    ps->line = 1;
    ps->len = 0;
    ps->too_long = false;
    ps->data_seen = false;
    ps->err_line = 0;
    ps->why = NULL;
    ps->text[0] = '\0';
}

bool profile_parse_feed(struct profile_parser *ps, const char *data, size_t n)
{
    for (size_t i = 0; i < n && ps->why == NULL; i++) {
        char c = data[i];
        if (c != '\n') {
            if (ps->len + 1 < sizeof(ps->buf)) {
                ps->buf[ps->len++] = c;
            } else {
                ps->too_long = true;
            }
            continue;
        }
        if (!parse_line(ps)) {
            break;
        }
        ps->line++;
        ps->len = 0;
        ps->too_long = false;
    }
    return ps->why == NULL;
}

bool profile_parse_end(struct profile_parser *ps)
{
    if (ps->why == NULL && (ps->len > 0 || ps->too_long)) {
        (void)parse_line(ps);
    }
    if (ps->why == NULL && ps->out->n == 0) {
        ps->err_line = 0;
        ps->why = "no points";
    }
    if (ps->why != NULL) {
        return false;
    }
    ps->out->cycle_ms = ps->out->t_ms[ps->out->n - 1];
    return true;
}

double profile_at(const struct profile *p, struct profile_cursor *c)
{
    uint32_t n = p->n, x = c->at_ms;
    if (c->seg >= n || p->t_ms[c->seg] > x) {
        c->seg = 0; /* the cycle started over */
    }
    while (c->seg + 1u < n && p->t_ms[c->seg + 1u] <= x) {
        c->seg++;
    }
    uint32_t i = c->seg;
    if (i + 1u >= n) {
        return (double)p->um[n - 1u]; /* the last point: a profile of one value */
    }
    /* t[i] <= x < t[i + 1] */
    double a = (double)p->um[i], b = (double)p->um[i + 1u];
    double ta = (double)p->t_ms[i], tb = (double)p->t_ms[i + 1u];
    return a + (b - a) * ((double)x - ta) / (tb - ta);
}

void profile_advance(const struct profile *p, struct profile_cursor *c, uint64_t ms)
{
    if (p->cycle_ms == 0) {
        c->at_ms = 0;
        return;
    }
    uint64_t at = (uint64_t)c->at_ms + ms;
    if (at >= p->cycle_ms) {
        at %= p->cycle_ms;
    }
    c->at_ms = (uint32_t)at;
}

static struct profile buffers[2];
static _Atomic(const struct profile *) active;

const struct profile *profile_active(void)
{
    return atomic_load_explicit(&active, memory_order_acquire);
}

struct profile *profile_spare(void)
{
    return atomic_load_explicit(&active, memory_order_relaxed) == &buffers[0] ? &buffers[1] : &buffers[0];
}

void profile_publish(const struct profile *p)
{
    atomic_store_explicit(&active, p, memory_order_release);
}
