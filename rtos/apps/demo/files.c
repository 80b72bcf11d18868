/*
 * The demo's files in Linux (files.h): one thread, below the logger, that looks at the profile's file
 * and appends the logger's rows to the CSV file. Every call may wait for Linux (at most LSVC_TIMEOUT,
 * 5 s, when Linux's server hangs), so nothing here is on the control loop's path: the profile reaches
 * the control step through profile_publish, the rows come through a message queue the logger never
 * waits on.
 *
 * Linux's files come some seconds after the rtos starts (Linux boots, then its supervisor starts the
 * server), and go when Linux reboots or its server dies: calls then fail with ENOTCONN, EIO or EBADF
 * (docs/linux-services.md, "When Linux goes away") and work again once it is back. So the thread tries
 * again at every row, keeps the rows meanwhile (the last CSV_KEPT) and says it once if Linux's files
 * have not come `wait` after the start.
 *
 * The thread keeps no timer of its own: it works when a row comes, once a second, woken at the control
 * loop's own phase. A timer at another phase (looks every 500 ms, tried first) brings back QEMU icount's
 * round-robin artifact while Linux boots on the other vCPU: 4 missed periods and a 2,131.744 us wake-up
 * in the first second (BENCHMARKS.md, "A second timer in the rtos, and icount's round-robin").
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"

/* A look at the profile's file for a change every PROFILE_LOOK_ROWS rows (seconds); every row while
 * Linux's files are away. */
#define PROFILE_LOOK_ROWS 2u
#define PROFILE_BYTES_MAX (64 * 1024)
#define CSV_KEPT          64u /* rows kept while the CSV cannot be written: a minute */
#define CSV_SYNC_ROWS     10u /* an fsync every this many rows */
#define CSV_HEADER        "time_s,cycle,setpoint_mm,position_mm,overruns,worst_wakeup_us,source,profile_ms\n"

static const struct demo_files_config *cfg;
static rt_time_t started;
static uint64_t rows;   /* come so far */
static bool linux_came; /* a call was answered once */
static bool linux_said; /* that Linux's files did not come in cfg->wait */

static struct {
    uint64_t due; /* the row of the next look */
    bool read;    /* a file was read: the one of this inode, size and modification time */
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int said; /* the errno said last about the file, or -1: what was read */
} prof = {.said = -1};

static struct {
    int fd; /* -1: not open */
    bool opened;
    int said;                          /* the errno said since a row was last written; 0 none */
    struct demo_status kept[CSV_KEPT]; /* rows not written yet, oldest at head */
    unsigned head, count;
    uint32_t dropped, lost_seen; /* rows dropped here; the logger's count already reported */
    unsigned unsynced;
} csv = {.fd = -1};

/* Linux's files are away (not come yet, or gone: Linux reboots, its server restarts) rather than the
 * file being wrong. */
static bool away(int e)
{
    return e == ENOTCONN || e == EIO || e == ETIMEDOUT || e == EBADF;
}

static const char *following(void)
{
    return profile_active() != NULL ? "the profile read before stays" : "square wave";
}

/* Once, if Linux's files have not come `wait` after the start. */
static void say_away(rt_time_t now, int e)
{
    if (linux_came || linux_said || now - started < cfg->wait) {
        return;
    }
    linux_said = true;
    rt_printf("demo: Linux's files did not come in %lu s (%s): %s%s; looking again\n",
              (unsigned long)(cfg->wait / RT_SEC(1)), strerror(e), following(),
              cfg->csv != NULL ? ", telemetry rows kept" : "");
}

/* ------------------------------------------------------------------------------------------ profile */

static void profile_rejected(const struct profile_parser *ps)
{
    if (ps->err_line == 0) {
        rt_printf("demo: profile: %s: %s; rejected, %s\n", cfg->profile, ps->why, following());
    } else {
        rt_printf("demo: profile: %s line %u: %s: '%s'; rejected, %s\n", cfg->profile, ps->err_line, ps->why,
                  ps->text, following());
    }
}

/* Reads the file `st` describes; 0, or the errno of a call that failed (Linux away: looked at again). */
static int profile_load(const struct stat *st)
{
    static struct profile_parser ps;
    static char chunk[4096];
    struct profile *p = profile_spare();
    profile_parse_begin(&ps, p);
    bool big = st->st_size > PROFILE_BYTES_MAX;
    if (!big) {
        int fd = open(cfg->profile, O_RDONLY);
        if (fd < 0) {
            return errno;
        }
        long total = 0;
        ssize_t got;
        while ((got = read(fd, chunk, sizeof(chunk))) > 0) {
            total += got;
            big = total > PROFILE_BYTES_MAX;
            if (big || !profile_parse_feed(&ps, chunk, (size_t)got)) {
                break;
            }
        }
        int e = got < 0 ? errno : 0;
        (void)close(fd);
        if (e != 0) {
            return e;
        }
    }
    prof.read = true;
    prof.ino = st->st_ino;
    prof.size = st->st_size;
    prof.mtime = st->st_mtim;
    prof.said = -1;
    if (big) {
        rt_printf("demo: profile: %s: larger than %d KiB; rejected, %s\n", cfg->profile,
                  PROFILE_BYTES_MAX / 1024, following());
    } else if (!profile_parse_end(&ps)) {
        profile_rejected(&ps);
    } else {
        profile_publish(p);
        rt_printf("demo: profile: %lu points, a %lu ms cycle, from %s\n", (unsigned long)p->n,
                  (unsigned long)p->cycle_ms, cfg->profile);
    }
    return 0;
}

/* A look at the profile's file: read again when it changed; without it, the square wave. */
static void profile_look(rt_time_t now)
{
    struct stat st;
    int e = stat(cfg->profile, &st) == 0 ? 0 : errno;
    if (e == 0) {
        bool same = prof.read && st.st_ino == prof.ino && st.st_size == prof.size &&
                    st.st_mtim.tv_sec == prof.mtime.tv_sec && st.st_mtim.tv_nsec == prof.mtime.tv_nsec;
        e = same ? 0 : profile_load(&st);
    }
    if (away(e)) {
        say_away(now, e);
        prof.due = rows + 1u;
        return;
    }
    prof.due = rows + PROFILE_LOOK_ROWS;
    linux_came = true;
    if (e != 0 && e != prof.said) { /* no file (or no access): the square wave */
        prof.said = e;
        prof.read = false;
        profile_publish(NULL);
        rt_printf("demo: profile: %s: %s; square wave\n", cfg->profile, strerror(e));
    }
}

/* ---------------------------------------------------------------------------------------------- CSV */

static void csv_keep(const struct demo_status *st)
{
    if (csv.count == CSV_KEPT) {
        csv.head = (csv.head + 1u) % CSV_KEPT;
        csv.count--;
        csv.dropped++;
    }
    csv.kept[(csv.head + csv.count) % CSV_KEPT] = *st;
    csv.count++;
}

/* v thousandths as "[-]units.thousandths". */
static void milli(char *buf, size_t size, int64_t v)
{
    uint64_t a = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
    (void)rt_snprintf(buf, size, "%s%lu.%03lu", v < 0 ? "-" : "", (unsigned long)(a / 1000u),
                      (unsigned long)(a % 1000u));
}

static int csv_row(char *line, size_t size, const struct demo_status *st)
{
    static const char *const source[] = {"square", "profile", "setpoint"};
    char t[24], sp[24], pos[24], jit[24], at[16] = "";
    milli(t, sizeof(t), (int64_t)(st->time_ns / 1000000u));
    milli(sp, sizeof(sp), st->setpoint_um);
    milli(pos, sizeof(pos), st->position_um);
    (void)rt_fmt_us(jit, sizeof(jit), st->max_jitter_ns);
    if (st->profile_ms >= 0) {
        (void)rt_snprintf(at, sizeof(at), "%d", (int)st->profile_ms);
    }
    return rt_snprintf(line, size, "%s,%lu,%s,%s,%lu,%s,%s,%s\n", t, (unsigned long)st->cycle, sp, pos,
                       (unsigned long)st->overruns, jit, source[st->source <= DEMO_SETPOINT ? st->source : 0],
                       at);
}

static void csv_failed(rt_time_t now, int e)
{
    if (csv.fd >= 0) {
        (void)close(csv.fd); /* frees the descriptor, whatever Linux says */
        csv.fd = -1;
    }
    if (away(e) && !linux_came) {
        say_away(now, e);       /* not come yet */
    } else if (csv.said == 0) { /* once until a row is written again */
        csv.said = e;
        rt_printf("demo: telemetry: %s: %s; rows kept (the last %u) until it can be written\n", cfg->csv,
                  strerror(e), CSV_KEPT);
    }
}

/* Creates the CSV's folder (one level), opens the file to append, writes the header into a new one. */
static bool csv_open(rt_time_t now)
{
    char dir[160];
    const char *slash = strrchr(cfg->csv, '/');
    size_t n = slash != NULL ? (size_t)(slash - cfg->csv) : 0;
    if (n > 0 && n < sizeof(dir)) {
        memcpy(dir, cfg->csv, n);
        dir[n] = '\0';
        (void)mkdir(dir, 0755); /* EEXIST as a rule; any other error shows at the open */
    }
    csv.fd = open(cfg->csv, O_WRONLY | O_CREAT | O_APPEND, 0644);
    struct stat st;
    int e = csv.fd < 0 ? errno : fstat(csv.fd, &st) != 0 ? errno : 0;
    if (e == 0 && st.st_size == 0) {
        ssize_t w = write(csv.fd, CSV_HEADER, sizeof(CSV_HEADER) - 1);
        e = w == (ssize_t)sizeof(CSV_HEADER) - 1 ? 0 : w < 0 ? errno : EIO;
    }
    if (e != 0) {
        csv_failed(now, e);
        return false;
    }
    if (!csv.opened) {
        rt_printf("demo: telemetry: a row a second appended to %s\n", cfg->csv);
        csv.lost_seen = *cfg->rows_lost;
    }
    csv.opened = true;
    linux_came = true;
    return true;
}

/* The first row written after a failure that was said: the end of it, once. */
static void csv_back(unsigned kept)
{
    uint32_t lost = *cfg->rows_lost;
    rt_printf("demo: telemetry: %s open again; %u rows kept meanwhile, %lu dropped\n", cfg->csv, kept,
              (unsigned long)(csv.dropped + (lost - csv.lost_seen)));
    csv.said = 0;
    csv.dropped = 0;
    csv.lost_seen = lost;
}

/* Writes the rows kept, oldest first, one write each: a row whose write failed is kept and written again
 * whole (after a write Linux cut short, which diod's pwrite to a file system that fills can do, the file
 * would hold that row's start before it). */
static void csv_write(rt_time_t now)
{
    unsigned kept = csv.count;
    while (csv.count > 0) {
        char line[192];
        int n = csv_row(line, sizeof(line), &csv.kept[csv.head]);
        if (n <= 0 || (size_t)n >= sizeof(line)) {
            n = 0; /* cannot be: the fields are bounded */
        }
        ssize_t w = n > 0 ? write(csv.fd, line, (size_t)n) : 0;
        if (w != n) {
            csv_failed(now, w < 0 ? errno : EIO);
            return;
        }
        csv.head = (csv.head + 1u) % CSV_KEPT;
        csv.count--;
        if (csv.said != 0) {
            csv_back(kept);
        }
        if (++csv.unsynced >= CSV_SYNC_ROWS) {
            csv.unsynced = 0;
            if (fsync(csv.fd) != 0) {
                csv_failed(now, errno);
                return;
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------- run */

/* Whether the system offers Linux's files at all (bare metal: never). */
static bool offered(void)
{
    uint32_t len = 0;
    return rt_dt_prop("/rtmux-services", "rtmux,files", &len) != NULL && len > 1;
}

void demo_files_run(const struct demo_files_config *c)
{
    cfg = c;
    started = rt_time_now();
    bool on = cfg->profile != NULL || cfg->csv != NULL;
    if (on && !offered()) {
        rt_printf("demo: Linux offers no files (bare metal, or no [services] directory): square wave%s\n",
                  cfg->csv != NULL ? ", no telemetry file" : "");
        on = false;
    }
    for (;;) {
        struct demo_status st;
        if (rt_msgq_recv(cfg->rows, &st, RT_FOREVER) != RT_OK || !on) {
            continue;
        }
        rows++;
        rt_time_t now = rt_time_now();
        if (cfg->profile != NULL && rows >= prof.due) {
            profile_look(now);
        }
        if (cfg->csv != NULL) {
            csv_keep(&st);
            if (csv.fd >= 0 || csv_open(now)) {
                csv_write(now);
            }
        }
    }
}
