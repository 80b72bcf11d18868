/*
 * The thread statistics server (rtos/threadstat.h; the protocol: docs/rtmux-top.md).
 *
 * Invariants:
 *  - Nothing Linux sends is kept beyond one request line (THREADSTAT_REQ_MAX bytes, bounded by `len`);
 *    a longer line is read to its end and refused whole.
 *  - A request's work is bounded: at most RT_THREADS_MAX threads copied (each under the kernel lock for
 *    one copy, the stack scan without it) and RT_THREADS_MAX + 4 lines sent, each whole (at most
 *    RT_CHAN_MSG_MAX bytes: one message, so a reply is never cut inside a line); the first line Linux
 *    does not take within THREADSTAT_SEND_WAIT ends the reply.
 *  - The server's thread is the only one touching `srv` but for rt_threadstat_counts, which reads
 *    three counters a word at a time.
 */
#include "rtos/threadstat.h"

#include "lib/string.h"
#include "rtos/rtos.h"

/* The server's stack: its high-water mark is 1.7 KiB in the demo (rtmux-top shows it), the C library's
 * thread-local storage included. */
#define STACK_SIZE 4096u
#define NAME_MAX   31u /* bytes of a thread's name sent (longer names are cut) */
#define LINE_MAX   RT_CHAN_MSG_MAX
#define TAG_MAX    10u /* decimal digits of a request's tag */
#define CHUNK      64u /* bytes read from the channel at a time */

/* One thread as copied for a reply: its counters and its name (printable ASCII only). */
struct snap {
    struct rt_thread_stats st;
    char name[NAME_MAX + 1u];
};

static struct {
    rt_chan_t *ch;
    bool started;
    struct rt_threadstat_counts n;
    char line[THREADSTAT_REQ_MAX]; /* the request being read, without its newline */
    size_t len;
    bool junk; /* the line is longer than `line`: refused at its end */
    rt_time_t window;
    unsigned in_window;
    struct snap snaps[RT_THREADS_MAX];
} srv;
static rt_thread_t server;
RT_STACK_DEFINE(server_stack, STACK_SIZE);

/* Sends one line whole (n <= LINE_MAX: one message). false, counted: Linux did not take it in time or
 * has the port closed; the reply ends there. */
static bool put(const char *line, int n)
{
    if (n <= 0 || (size_t)n >= LINE_MAX) {
        return false; /* cannot happen: every format below is bounded; refuse rather than cut */
    }
    if (rt_chan_send(srv.ch, line, (size_t)n, THREADSTAT_SEND_WAIT) != n) {
        srv.n.abandoned++;
        return false;
    }
    return true;
}

static void reply_error(const char *tag, const char *code, const char *text)
{
    char out[LINE_MAX];
    int n = rt_snprintf(out, sizeof(out), "threads %u %s error %s %s\n", THREADSTAT_VERSION, tag, code, text);
    (void)put(out, n);
}

static void refuse(const char *tag, const char *code, const char *text)
{
    srv.n.refused++;
    reply_error(tag, code, text);
}

/* The printable part of a thread's name: NAME_MAX bytes at most, anything outside '!'..'~' and space
 * as '?' (a reply line must stay one line). */
static void copy_name(char *dst, const char *src)
{
    size_t i = 0;
    for (; src != NULL && src[i] != '\0' && i < NAME_MAX; i++) {
        char c = src[i];
        dst[i] = c >= ' ' && c <= '~' ? c : '?';
    }
    if (i == 0) {
        dst[i++] = '?';
    }
    dst[i] = '\0';
}

static bool same(const char *a, const char *b)
{
    size_t n = strlen(b);
    return strlen(a) == n && memcmp(a, b, n) == 0;
}

/* Copies the live threads that `want_id` (UINT32_MAX: any) and `want_name` (NULL: any) select into
 * srv.snaps; returns how many, and in *listed how many live threads the table listed in all. */
static unsigned collect(uint32_t want_id, const char *want_name, unsigned *listed)
{
    unsigned found = 0;
    *listed = 0;
    for (unsigned slot = 0; slot < RT_THREADS_MAX; slot++) {
        struct snap *s = &srv.snaps[found];
        if (rt_thread_stats_get(slot, &s->st) != RT_OK) {
            continue;
        }
        (*listed)++;
        copy_name(s->name, s->st.name);
        if ((want_id != UINT32_MAX && s->st.id != want_id) ||
            (want_name != NULL && !same(s->name, want_name))) {
            continue;
        }
        found++;
    }
    return found;
}

static const char *state_name(uint8_t state)
{
    return state == RT_THREAD_RUNNING ? "running" : state == RT_THREAD_READY ? "ready" : "blocked";
}

/* The reply to a request that names threads: its header, the totals, one line per thread, the end. */
static void reply_threads(const char *tag, uint32_t want_id, const char *want_name)
{
    char out[LINE_MAX];
    uint64_t uptime = rt_time_now(), idle = rt_cpu_idle_time(), irqs = rt_irq_count();
    unsigned listed;
    unsigned n = collect(want_id, want_name, &listed);
    if (n == 0 && (want_id != UINT32_MAX || want_name != NULL)) {
        if (want_name != NULL) {
            (void)rt_snprintf(out, sizeof(out), "no thread named '%s' (%u threads listed)", want_name,
                              listed);
        } else {
            (void)rt_snprintf(out, sizeof(out), "no thread with id %u (%u threads listed)", want_id, listed);
        }
        reply_error(tag, "unknown-thread", out);
        return;
    }
    int k = rt_snprintf(out, sizeof(out), "threads %u %s ok %u\n", THREADSTAT_VERSION, tag, n);
    if (!put(out, k)) {
        return;
    }
    k = rt_snprintf(out, sizeof(out), "system %lu %lu %lu %u %u\n", (unsigned long)uptime,
                    (unsigned long)idle, (unsigned long)irqs, listed, rt_thread_stats_unlisted());
    if (!put(out, k)) {
        return;
    }
    k = rt_snprintf(out, sizeof(out), "server %lu %lu %lu\n", (unsigned long)srv.n.requests,
                    (unsigned long)srv.n.refused, (unsigned long)srv.n.abandoned);
    if (!put(out, k)) {
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct snap *s = &srv.snaps[i];
        k = rt_snprintf(out, sizeof(out), "thread %u %u %u %s %lu %lu %lu %lu %lu %lu %s\n", s->st.id,
                        s->st.base_prio, s->st.prio, state_name(s->st.state), (unsigned long)s->st.cpu_ns,
                        (unsigned long)s->st.switches, (unsigned long)s->st.wakeups,
                        (unsigned long)s->st.worst_wake_ns, (unsigned long)s->st.stack_used,
                        (unsigned long)s->st.stack_size, s->name);
        if (!put(out, k)) {
            return;
        }
    }
    k = rt_snprintf(out, sizeof(out), "end %s\n", tag);
    (void)put(out, k);
}

/* The next space-separated word of `*p` (moved past it), NUL-terminated in place; "" at the end. */
static char *word(char **p)
{
    char *w = *p;
    while (*w == ' ') {
        w++;
    }
    char *e = w;
    while (*e != ' ' && *e != '\0') {
        e++;
    }
    if (*e == ' ') {
        *e++ = '\0';
    }
    *p = e;
    return w;
}

/* A decimal number of 1..max_digits digits that fits in 32 bits, into *out. */
static bool number(const char *s, size_t max_digits, uint32_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > max_digits) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        v = v * 10u + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX - 1u) {
        return false; /* UINT32_MAX means "any thread" inside */
    }
    *out = (uint32_t)v;
    return true;
}

#define USAGE "expected 'threads 1 TAG all', 'threads 1 TAG id ID' or 'threads 1 TAG name NAME'"

/* One request line (srv.line[0..srv.len), or junk: longer than the buffer). */
static void request(void)
{
    srv.n.requests++;
    if (srv.junk) {
        refuse("-", "malformed", "request longer than 79 bytes; " USAGE);
        return;
    }
    srv.line[srv.len] = '\0';
    for (size_t i = 0; i < srv.len; i++) {
        if (srv.line[i] < ' ' || srv.line[i] > '~') {
            refuse("-", "malformed", "request holds a byte that is not printable ASCII; " USAGE);
            return;
        }
    }
    char *p = srv.line;
    uint32_t version = 0, tag_value = 0, id = 0;
    if (!same(word(&p), "threads")) {
        refuse("-", "malformed", "not a request of rtmux-threads; " USAGE);
        return;
    }
    if (!number(word(&p), 9, &version)) {
        refuse("-", "malformed", "no version after 'threads'; " USAGE);
        return;
    }
    char *tag = word(&p);
    if (!number(tag, TAG_MAX, &tag_value)) {
        refuse("-", "malformed", "the tag must be a decimal number of 1 to 10 digits; " USAGE);
        return;
    }
    if (version != THREADSTAT_VERSION) {
        char text[80];
        (void)rt_snprintf(text, sizeof(text), "version %u is not served; this rtos speaks version %u",
                          version, THREADSTAT_VERSION);
        refuse(tag, "version", text);
        return;
    }
    char *verb = word(&p);
    if (same(verb, "all") && *word(&p) == '\0') {
        reply_threads(tag, UINT32_MAX, NULL);
    } else if (same(verb, "id") && number(word(&p), TAG_MAX, &id) && *word(&p) == '\0') {
        reply_threads(tag, id, NULL);
    } else if (same(verb, "name") && *p != '\0') {
        reply_threads(tag, UINT32_MAX, p); /* the rest of the line, spaces and all */
    } else {
        refuse(tag, "malformed", "unknown request; " USAGE);
    }
}

/* At most THREADSTAT_RATE requests a second: beyond, the server sleeps to the next second. */
static void pace(void)
{
    rt_time_t now = rt_time_now();
    if (now - srv.window >= RT_SEC(1)) {
        srv.window = now;
        srv.in_window = 0;
    }
    if (++srv.in_window > THREADSTAT_RATE) {
        (void)rt_sleep_until(srv.window + RT_SEC(1));
    }
}

static void server_entry(void *arg)
{
    (void)arg;
    char in[CHUNK];
    for (;;) {
        int got = rt_chan_recv(srv.ch, in, sizeof(in), RT_FOREVER);
        if ((rt_chan_events(srv.ch) & (RT_CHAN_CONNECT | RT_CHAN_DISCONNECT)) != 0) {
            srv.len = 0; /* a line left unfinished by an earlier connection is dropped */
            srv.junk = false;
        }
        for (int i = 0; i < got; i++) {
            char c = in[i];
            if (c != '\n') {
                if (srv.len + 1u < sizeof(srv.line)) {
                    srv.line[srv.len++] = c;
                } else {
                    srv.junk = true;
                }
                continue;
            }
            if (srv.len > 0 && srv.line[srv.len - 1u] == '\r') {
                srv.len--;
            }
            if (srv.len > 0 || srv.junk) { /* a blank line is no request */
                request();
                pace();
            }
            srv.len = 0;
            srv.junk = false;
        }
    }
}

int rt_threadstat_start(unsigned prio)
{
    if (srv.started) {
        return RT_EBUSY;
    }
    int rc = rt_chan_open(THREADSTAT_CHANNEL, &srv.ch);
    if (rc != RT_OK) {
        return rc;
    }
    srv.window = rt_time_now();
    rc = rt_thread_create(&server, "rtmux-threads", server_entry, NULL, server_stack, sizeof(server_stack),
                          prio);
    if (rc != RT_OK) {
        (void)rt_chan_close(srv.ch);
        return rc;
    }
    srv.started = true;
    return RT_OK;
}

void rt_threadstat_counts(struct rt_threadstat_counts *out)
{
    if (out != NULL) {
        *out = srv.n;
    }
}
