/*
 * The rtos demo's set-point profile (rtos/apps/demo/profile.c): the file's lines as profile.h says them,
 * fed whole and one byte at a time; every malformed line refused with its line number; the set-point
 * between the points, at the steps and across the cycle's end, after missed periods; random bytes never
 * read past a buffer.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "profile.h"

static struct profile prof;
static struct profile_parser ps;

/* Parses `text` whole (bytes = 0) or in pieces of `bytes`; true if good. */
static bool parse(const char *text, size_t bytes)
{
    profile_parse_begin(&ps, &prof);
    size_t n = strlen(text);
    for (size_t at = 0; at < n;) {
        size_t k = bytes == 0 || n - at < bytes ? n - at : bytes;
        (void)profile_parse_feed(&ps, text + at, k);
        at += k;
    }
    return profile_parse_end(&ps);
}

/* Parsed the same whole and a byte at a time; the result of the whole. */
static bool parse_both(const char *text)
{
    bool one = parse(text, 1);
    struct profile first = prof;
    unsigned line = ps.err_line;
    bool whole = parse(text, 0);
    CHECK(one == whole && line == ps.err_line);
    CHECK(!whole || memcmp(&first, &prof, sizeof(prof)) == 0);
    return whole;
}

static void refused(const char *text, unsigned line, const char *why_start)
{
    bool ok = parse_both(text);
    CHECK(!ok);
    CHECK(ps.err_line == line);
    CHECK(ps.why != NULL && strncmp(ps.why, why_start, strlen(why_start)) == 0);
    if (ok || ps.err_line != line || ps.why == NULL || strncmp(ps.why, why_start, strlen(why_start)) != 0) {
        fprintf(stderr, "  for %s: line %u, %s\n", text, ps.err_line, ps.why != NULL ? ps.why : "(none)");
    }
}

static double at(uint32_t ms)
{
    struct profile_cursor c = {ms, 0};
    return profile_at(&prof, &c);
}

static void test_good(void)
{
    /* the shipped example (guest/initramfs/demo-profile.csv), its comments and header */
    CHECK(parse_both("# comment\n#\ntime_ms,setpoint_mm\n0,0\n500,10\n2000,10\n2500,0\n4000,0\n"));
    CHECK(prof.n == 5 && prof.cycle_ms == 4000);
    CHECK(prof.t_ms[1] == 500 && prof.um[1] == 10000 && prof.um[4] == 0);
    /* spaces, tabs, CR LF, comments after a point, no header, no last newline, signs and fractions */
    CHECK(parse_both("\r\n  0 , -2.5 # start\r\n\t1000,\t+7\r\n\n2000 ,0.0015\n3000,-1000"));
    CHECK(prof.n == 4 && prof.cycle_ms == 3000);
    CHECK(prof.um[0] == -2500 && prof.um[1] == 7000 && prof.um[2] == 1 && prof.um[3] == -1000000);
    /* one point: held */
    CHECK(parse_both("time_ms , setpoint_mm\n0,3\n"));
    CHECK(prof.n == 1 && prof.cycle_ms == 0 && at(0) == 3000.0);
    /* a step: two points at one time */
    CHECK(parse_both("0,0\n1000,0\n1000,5\n2000,5\n"));
    CHECK(prof.n == 4 && at(999) == 0.0 && at(1000) == 5000.0);
    /* the largest: 256 points, a day */
    char big[256 * 24] = "";
    size_t w = 0;
    for (unsigned i = 0; i < PROFILE_POINTS_MAX; i++) {
        w += (size_t)snprintf(big + w, sizeof(big) - w, "%u,%d\n", i * (PROFILE_TIME_MAX_MS / 255u),
                              i % 2 ? 1000 : -1000);
    }
    CHECK(parse(big, 0) && prof.n == PROFILE_POINTS_MAX &&
          prof.cycle_ms == 255u * (PROFILE_TIME_MAX_MS / 255u));
}

static void test_refused(void)
{
    refused("", 0, "no points");
    refused("# only a comment\n\n", 0, "no points");
    refused("time_ms,setpoint_mm\n", 0, "no points");
    refused("0,0\n100\n", 2, "expected");
    refused("0;0\n", 1, "expected");
    refused("0,0\n-5,1\n", 2, "time_ms");
    refused("0,0\n1e3,1\n", 2, "time_ms");
    refused("0,0\n86400001,1\n", 2, "time_ms");
    refused("0,0\n99999999999,1\n", 2, "time_ms");
    refused("0,0\n,1\n", 2, "time_ms");
    refused("0,\n", 1, "setpoint_mm");
    refused("0,abc\n", 1, "setpoint_mm");
    refused("0,1000.001\n", 1, "setpoint_mm");
    refused("0,-1001\n", 1, "setpoint_mm");
    refused("0,1,2\n", 1, "setpoint_mm");
    refused("0,1.2.3\n", 1, "setpoint_mm");
    refused("0,-\n", 1, "setpoint_mm");
    refused("100,1\n", 1, "the first point");
    refused("0,1\n2000,1\n1999,1\n", 3, "time goes back");
    refused("0,1\ntime_ms,setpoint_mm\n", 2, "time_ms"); /* the header only first */
    char nul[] = "0,1\n5,\0\n";
    profile_parse_begin(&ps, &prof);
    (void)profile_parse_feed(&ps, nul, sizeof(nul) - 1);
    CHECK(!profile_parse_end(&ps) && ps.err_line == 2 && strcmp(ps.text, "5,?") == 0);
    char longline[300];
    memset(longline, ' ', sizeof(longline));
    memcpy(longline, "0,0\n1,1", 7);
    longline[sizeof(longline) - 2] = '\n';
    longline[sizeof(longline) - 1] = '\0';
    refused(longline, 2, "longer than");
    /* 257 points */
    char big[300 * 12] = "";
    size_t w = 0;
    for (unsigned i = 0; i <= PROFILE_POINTS_MAX; i++) {
        w += (size_t)snprintf(big + w, sizeof(big) - w, "%u,0\n", i);
    }
    refused(big, PROFILE_POINTS_MAX + 1, "more than 256");
    /* the line is given back cut, printable */
    refused("0,0\n1,\x01zz\n", 2, "setpoint_mm");
    CHECK(strcmp(ps.text, "1,?zz") == 0);
}

static void test_set_point(void)
{
    CHECK(parse_both("0,0\n1000,10\n1000,-4\n3000,6\n"));
    CHECK(at(0) == 0.0 && at(500) == 5000.0 && at(999) == 9990.0);
    CHECK(at(1000) == -4000.0 && at(2000) == 1000.0 && fabs(at(2999) - 5995.0) < 1e-6);
    /* following it period by period, as the control step does: once around, then again */
    struct profile_cursor c = {0, 0};
    for (unsigned round = 0; round < 2; round++) {
        for (uint32_t ms = 0; ms < 3000; ms++) {
            CHECK(c.at_ms == ms);
            double want = at(ms);
            CHECK(profile_at(&prof, &c) == want);
            profile_advance(&prof, &c, 1);
        }
    }
    CHECK(c.at_ms == 0);
    /* missed periods: a jump forward, one across the end, one of many cycles */
    c = (struct profile_cursor){100, 0};
    (void)profile_at(&prof, &c);
    profile_advance(&prof, &c, 1500);
    CHECK(c.at_ms == 1600 && profile_at(&prof, &c) == at(1600) && c.seg == 2);
    profile_advance(&prof, &c, 1500);
    CHECK(c.at_ms == 100 && profile_at(&prof, &c) == 1000.0 && c.seg == 0);
    profile_advance(&prof, &c, 3000ull * 1000000u + 7u);
    CHECK(c.at_ms == 107 && profile_at(&prof, &c) == 1070.0);
    /* a cursor from another profile (more points, later time) is set right */
    c = (struct profile_cursor){2500, 200};
    CHECK(profile_at(&prof, &c) == at(2500));
    /* one point: always that value */
    CHECK(parse_both("0,-3\n"));
    c = (struct profile_cursor){0, 0};
    profile_advance(&prof, &c, 12345);
    CHECK(c.at_ms == 0 && profile_at(&prof, &c) == -3000.0);
}

static void test_channel_numbers(void)
{
    int32_t um = 0;
    CHECK(profile_parse_mm("7", &um) && um == 7000);
    CHECK(profile_parse_mm("-2.5", &um) && um == -2500);
    CHECK(profile_parse_mm("0.0004", &um) && um == 0);
    CHECK(profile_parse_mm("1000", &um) && um == 1000000);
    CHECK(!profile_parse_mm("1000.5", &um) && !profile_parse_mm("", &um) && !profile_parse_mm(".", &um));
    CHECK(!profile_parse_mm("auto", &um) && !profile_parse_mm("1 ", &um));
}

static void test_publish(void)
{
    CHECK(profile_active() == NULL);
    struct profile *a = profile_spare();
    profile_publish(a);
    CHECK(profile_active() == a);
    struct profile *b = profile_spare();
    CHECK(b != a);
    profile_publish(b);
    CHECK(profile_active() == b && profile_spare() == a);
    profile_publish(NULL);
    CHECK(profile_active() == NULL);
}

/* Random bytes, mostly of the file's alphabet: never a crash or a read past a buffer (ASan), and a
 * profile that is good holds what the parser promises. */
static void test_random(void)
{
    static const char alphabet[] = "0123456789,.-+# \t\r\n\nxtime_ms";
    uint64_t s = 0x9e3779b97f4a7c15u;
    char text[512];
    for (unsigned i = 0; i < 20000; i++) {
        size_t n = 0;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t len = s % (sizeof(text) - 1);
        for (; n < len; n++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            text[n] = s % 16 == 0 ? (char)(s >> 8) : alphabet[(s >> 8) % (sizeof(alphabet) - 1)];
        }
        profile_parse_begin(&ps, &prof);
        (void)profile_parse_feed(&ps, text, n);
        if (profile_parse_end(&ps)) {
            CHECK(prof.n >= 1 && prof.n <= PROFILE_POINTS_MAX && prof.t_ms[0] == 0);
            for (uint32_t k = 1; k < prof.n; k++) {
                CHECK(prof.t_ms[k] >= prof.t_ms[k - 1] && prof.t_ms[k] <= PROFILE_TIME_MAX_MS);
            }
            struct profile_cursor c = {0, 0};
            for (unsigned k = 0; k < 50; k++) {
                double v = profile_at(&prof, &c);
                CHECK(v >= -PROFILE_UM_MAX && v <= PROFILE_UM_MAX);
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                profile_advance(&prof, &c, s % 5000);
            }
        } else {
            CHECK(ps.why != NULL && strlen(ps.text) < sizeof(ps.text));
        }
    }
}

int main(void)
{
    test_good();
    test_refused();
    test_set_point();
    test_channel_numbers();
    test_publish();
    test_random();
    UNIT_DONE("test_demo_profile");
}
