/*
 * Demo: what a motion-control application on the rtos looks like. A 1 kHz control loop drives a
 * simulated motor (position/velocity plant, PI controller, floating point) through a set-point profile
 * read from a file in Linux, or a square wave without one; a logger prints its state every second over
 * a message queue, and the latency monitor prints a latmus RTD| line every second. At the default 1 ms
 * monitor period the control step runs in the monitor's sampler (one timer; see main). Runs until QEMU
 * is stopped.
 *
 * Linux's files (inside rtmux, when the configuration exports a directory: the default system's
 * /srv/rtos; docs/linux-services.md, "The demo uses it"), by main()'s thread once the others run, at a
 * priority below them all but the busy load (files.c): the control loop never waits for Linux.
 *  - the profile, /linux/srv/rtos/demo/profile.csv: "time_ms,setpoint_mm" lines (profile.h), followed
 *    over and over; looked at every 2 s and read again when it changed. Missing, or no Linux files at
 *    all (bare metal): the square wave, said in one line; until Linux's files come (Linux boots): the
 *    square wave. Rejected (the line and what is wrong with it said): the profile before stays, or the
 *    square wave;
 *  - the telemetry, appended to /linux/srv/rtos/demo/telemetry.csv: a header when the file is new, then
 *    a row a second (time_s, cycle, setpoint_mm, position_mm, overruns, worst_wakeup_us, source:
 *    square|profile|setpoint, profile_ms: the time into the profile's cycle), an fsync every 10 rows.
 *    While Linux is away (booting, rebooting, its server restarting) the last 64 rows are kept and
 *    written when it is back.
 *  Linux's files may take `linux_wait_s` seconds (default 60) to come at the start before the demo
 *  says they did not; it looks again all the same.
 *
 * V-Bus channels (inside rtmux, when the configuration has them; none bare metal):
 *  - echo: every byte a Linux program writes to /dev/virtio-ports/echo comes back (rtmux-ping's far end);
 *  - telemetry: the logger's line, once a second, while a Linux program has the port open;
 *  - setpoint: a number of millimetres per line ("7", "-2.5") holds the motor there; "auto" (or an
 *    empty line) gives it back the profile, or the square wave without one.
 *
 * Boot arguments: latmon=0 turns the latency monitor off; period_us sets the monitor's period;
 * cpu1=spin|copy|tick puts a reference load on the second CPU (bare metal only, rtos/cpuload.h);
 * echo_open_s=N opens the echo channel N seconds after the start (Linux may open its port first);
 * fault_s=N makes a data abort N seconds after the start (the partition's fault policy then applies);
 * busy_pct=N (1..90) keeps the CPU busy N % of the time, below every other thread (a CPU shared with
 * Linux then leaves Linux the rest: tests/system/test_shared.py); profile=PATH and telemetry_csv=PATH
 * name the files in Linux (off: not used); linux_wait_s=N (above).
 *
 * Built with the C library (picolibc) and librtos-posix.a, whose calls reach Linux's files (Makefile,
 * LIBC_APPS): main() is the application's entry, in a thread of its own (rtos/libc/start.c).
 */
#include <string.h>

#include "files.h"
#include "profile.h"
#include "rtmux/main.h"
#include "rtos/cpuload.h"
#include "rtos/echo.h"
#include "rtos/latmon.h"
#include "rtos/rtos.h"

#define CONTROL_PRIO   200
#define SETPOINT_PRIO  40
#define ECHO_PRIO      30
#define LOGGER_PRIO    20
#define FILES_PRIO     15 /* main()'s thread, once the others run */
#define BUSY_PRIO      10
#define BUSY_PERIOD    RT_MSEC(10)
#define BUSY_PCT_MAX   90 /* the logger and the console still get the CPU */
#define CONTROL_PERIOD RT_MSEC(1)
/* How long the logger waits for room on telemetry before it gives up a line (said in its output). */
#define TELEMETRY_WAIT RT_MSEC(100)

/* Code and read-only data never change: their checksum, reported every second, shows that nothing
 * outside (Linux, a DMA-capable device) wrote into the rtos partition. */
extern const uint8_t _start[], _rodata_end[];

static uint32_t image_checksum(void)
{
    /* FNV-1a over 32-bit words: cheap, and any change of a word changes the sum. */
    uint32_t h = 2166136261u;
    for (const uint32_t *w = (const uint32_t *)(const void *)_start;
         w < (const uint32_t *)(const void *)_rodata_end; w++) {
        h = (h ^ *w) * 16777619u;
    }
    return h;
}

/* main()'s thread: set-up at the kernel's main priority, as rt_main was, then the files (FILES_PRIO). */
RTMUX_MAIN_THREAD(RT_MAIN_PRIO, 16 * 1024);

#define DEFAULT_PROFILE "/linux/srv/rtos/demo/profile.csv"
#define DEFAULT_CSV     "/linux/srv/rtos/demo/telemetry.csv"
#define LINUX_WAIT_S    60
#define PATH_ARG_MAX    160
#define ROWS_QUEUED     16 /* rows for the files' thread: 16 s of Linux not answering */

static rt_thread_t control, logger, setpoint, faulter, busy;
RT_STACK_DEFINE(control_stack, 8192);
RT_STACK_DEFINE(logger_stack, 8192);
RT_STACK_DEFINE(setpoint_stack, 8192);
RT_STACK_DEFINE(faulter_stack, 4096);
RT_STACK_DEFINE(busy_stack, 4096);

/* The set-point a Linux program asked for on the setpoint channel, in micrometres; SETPOINT_AUTO: the
 * square wave. Written by the setpoint thread, read by the control step (one aligned word). */
#define SETPOINT_AUTO INT32_MIN
static volatile int32_t setpoint_um = SETPOINT_AUTO;
static rt_msgq_t status_q, rows_q;
RT_MSGQ_STORAGE_DEFINE(status_storage, sizeof(struct demo_status), 4);
RT_MSGQ_STORAGE_DEFINE(rows_storage, sizeof(struct demo_status), ROWS_QUEUED);
static bool rows_wanted;            /* the files' thread uses Linux's files: the rows are its clock */
static volatile uint32_t rows_lost; /* rows the logger could not queue for it */

/* The controller's state; touched only by whichever thread runs control_step (one of them). */
static struct {
    double x, v, integ;
    struct demo_status st;
    int64_t worst;
    const struct profile *prof; /* the profile followed at the last step, and where in it */
    struct profile_cursor at;
} ctl;

/* One control period, woken `wake_ns` after its release point, after `missed` missed periods. */
static void control_step(int64_t wake_ns, uint64_t missed, void *arg)
{
    (void)arg;
    /* Plant: x'' = (u - b x') / m; controller: PI on position error with a velocity term. */
    const double dt = 0.001, m = 0.5, b = 2.0, kp = 400.0, ki = 50.0, kd = 40.0;
    ctl.worst = wake_ns > ctl.worst ? wake_ns : ctl.worst;
    ctl.st.cycle++;
    ctl.st.overruns += missed;
    /* The profile: a new one (files.c published it) starts at its beginning. */
    const struct profile *prof = profile_active();
    if (prof != ctl.prof) {
        ctl.prof = prof;
        ctl.at = (struct profile_cursor){0, 0};
    }
    uint32_t prof_ms = ctl.at.at_ms;
    double planned = prof != NULL ? profile_at(prof, &ctl.at) * 1e-6 : 0.0;
    if (prof != NULL) {
        profile_advance(prof, &ctl.at, 1u + missed); /* the profile keeps time under a set-point */
    }
    int32_t asked = setpoint_um;
    enum demo_source source = asked != SETPOINT_AUTO ? DEMO_SETPOINT
                              : prof != NULL         ? DEMO_PROFILE
                                                     : DEMO_SQUARE;
    double target = source == DEMO_SETPOINT       ? (double)asked * 1e-6
                    : source == DEMO_PROFILE      ? planned
                    : (ctl.st.cycle / 2000u) % 2u ? 0.010
                                                  : 0.0; /* 10 mm step every 2 s */
    double err = target - ctl.x;
    ctl.integ += err * dt;
    double u = kp * err + ki * ctl.integ - kd * ctl.v;
    ctl.v += (u - b * ctl.v) / m * dt;
    ctl.x += ctl.v * dt;
    if (ctl.st.cycle % 1000u == 0) {
        ctl.st.time_ns = rt_time_now();
        ctl.st.setpoint_mm = (int32_t)(target * 1000.0 + (target < 0.0 ? -0.5 : 0.5)); /* nearest */
        ctl.st.setpoint_um = (int32_t)(target * 1e6 + (target < 0.0 ? -0.5 : 0.5));
        ctl.st.source = (uint8_t)source;
        ctl.st.profile_ms = prof != NULL ? (int32_t)prof_ms : -1;
        ctl.st.position_um = (int32_t)(ctl.x * 1e6);
        ctl.st.max_jitter_ns = (int32_t)ctl.worst;
        ctl.worst = 0;
        (void)rt_msgq_send(&status_q, &ctl.st, RT_NO_WAIT);
    }
}

/* The control loop's own periodic thread: used only when the latency monitor does not run at the
 * control period (see main). */
static void control_entry(void *arg)
{
    (void)arg;
    (void)rt_periodic_start(0, CONTROL_PERIOD);
    for (;;) {
        uint64_t ov = 0;
        rt_time_t rel = 0;
        (void)rt_periodic_wait(&ov, &rel);
        control_step((int64_t)(rt_time_now() - rel), ov, NULL);
    }
}

/* Opens a V-Bus channel of the demo, or says why it is not served (bare metal: there are none). */
static rt_chan_t *open_channel(const char *name)
{
    rt_chan_t *ch = NULL;
    int rc = rt_chan_open(name, &ch);
    if (rc != RT_OK) {
        rt_printf("demo: channel %s not served: %s\n", name, rt_strerror(rc));
        return NULL;
    }
    return ch;
}

/* One line of telemetry, whole or not at all: while a Linux program has the port open, and the ring
 * takes it within TELEMETRY_WAIT. Lines given up are counted and the count is sent with the next one. */
static void publish(rt_chan_t *ch, const char *line, size_t n)
{
    static unsigned long skipped;
    if (ch == NULL || !rt_chan_connected(ch)) {
        return; /* nobody listens: nothing to send (not a loss) */
    }
    char note[48];
    if (skipped > 0) {
        int k = rt_snprintf(note, sizeof(note), "telemetry: %lu lines skipped (ring full)\n", skipped);
        if (k > 0 && rt_chan_send(ch, note, (size_t)k, RT_NO_WAIT) == k) {
            skipped = 0;
        }
    }
    int rc = rt_chan_send(ch, line, n, TELEMETRY_WAIT);
    if (rc != (int)n) {
        skipped++; /* nothing of it was written: a line is one message (rtos/chan.h, RT_CHAN_MSG_MAX) */
    }
}

static void logger_entry(void *arg)
{
    (void)arg;
    struct demo_status st;
    char jit[24], line[200];
    _Static_assert(sizeof(line) <= RT_CHAN_MSG_MAX, "a telemetry line reaches the ring whole or not at all");
    uint32_t boot_sum = image_checksum();
    rt_printf("demo: code+rodata checksum 0x%08x over %lu KiB\n", boot_sum,
              (unsigned long)((uintptr_t)(_rodata_end - _start) / 1024u));
    rt_chan_t *telemetry = rt_chan_count() > 0 ? open_channel("telemetry") : NULL;
    for (;;) {
        if (rt_msgq_recv(&status_q, &st, RT_FOREVER) != RT_OK) {
            continue;
        }
        (void)rt_fmt_us(jit, sizeof(jit), st.max_jitter_ns);
        uint32_t sum = image_checksum();
        int n = rt_snprintf(line, sizeof(line),
                            "t=%lus control loop %lu cycles, %lu overruns, set-point %d mm, position %d um, "
                            "worst wake-up %s us, checksum %s\n",
                            (unsigned long)(st.cycle / 1000u), (unsigned long)st.cycle,
                            (unsigned long)st.overruns, st.setpoint_mm, st.position_um, jit,
                            sum == boot_sum ? "unchanged" : "CHANGED");
        rt_printf("demo: %s", line);
        if (n > 0 && (size_t)n < sizeof(line)) {
            publish(telemetry, line, (size_t)n);
        }
        if (rows_wanted && rt_msgq_send(&rows_q, &st, RT_NO_WAIT) != RT_OK) {
            rows_lost++; /* the files' thread is waiting for Linux: counted, said when it writes again */
        }
    }
}

/*
 * What Linux sends costs the demo no more than it chooses to spend on it: the set-point service reads
 * SETPOINT_CHUNK bytes at a time and then waits SETPOINT_PAUSE (at most 64 KB/s, a few microseconds of
 * parsing per millisecond; what Linux sends faster waits in the channel, whose full ring then blocks
 * the writer), and it answers on the console at most SETPOINT_ANSWERS lines a second (a flood of lines
 * is counted, and the count said with the next answer), so Linux cannot fill the rtos's console.
 */
#define SETPOINT_CHUNK   64u
#define SETPOINT_PAUSE   RT_MSEC(1)
#define SETPOINT_ANSWERS 4u

/* An answer on the console unless SETPOINT_ANSWERS were given in the last second; false if not given. */
static bool setpoint_answer_allowed(void)
{
    static rt_time_t window;
    static unsigned answers, unanswered;
    rt_time_t now = rt_time_now();
    if (now - window >= RT_MSEC(1000)) {
        window = now;
        answers = 0;
    }
    if (answers >= SETPOINT_ANSWERS) {
        unanswered++;
        return false;
    }
    answers++;
    if (unanswered > 0) {
        rt_printf("demo: set-point: %u lines not answered (at most %u answers a second)\n", unanswered,
                  SETPOINT_ANSWERS);
        unanswered = 0;
    }
    return true;
}

/* One line of the set-point channel (len characters in line, junk: it was longer than the buffer). */
static void setpoint_line(char *line, size_t len, bool junk)
{
    line[len] = '\0';
    int32_t um = 0;
    if (!junk &&
        (len == 0 || (len == 4 && line[0] == 'a' && line[1] == 'u' && line[2] == 't' && line[3] == 'o'))) {
        setpoint_um = SETPOINT_AUTO;
        if (setpoint_answer_allowed()) {
            rt_printf("demo: set-point: %s\n", profile_active() != NULL ? "profile" : "square wave");
        }
    } else if (!junk && profile_parse_mm(line, &um)) {
        setpoint_um = um;
        if (setpoint_answer_allowed()) {
            rt_printf("demo: set-point: %d um\n", (int)um);
        }
    } else if (setpoint_answer_allowed()) {
        rt_printf("demo: set-point: '%s' is not a number of millimetres or 'auto'\n",
                  junk ? "(too long)" : line);
    }
}

/* The set-point service: one number of millimetres per line moves the motor; "auto" gives the profile
 * (or the square wave) back. Each line is answered on the console (within SETPOINT_ANSWERS a second). */
static void setpoint_entry(void *arg)
{
    (void)arg;
    char line[32];
    size_t len = 0;
    bool junk = false;
    rt_chan_t *ch = open_channel("setpoint");
    while (ch != NULL) {
        char in[SETPOINT_CHUNK];
        int got = rt_chan_recv(ch, in, sizeof(in), RT_FOREVER);
        for (int i = 0; i < got; i++) {
            char c = in[i];
            if (c != '\n' && c != '\r') {
                if (len + 1u < sizeof(line)) {
                    line[len++] = c;
                } else {
                    junk = true;
                }
                continue;
            }
            setpoint_line(line, len, junk);
            len = 0;
            junk = false;
        }
        (void)rt_sleep(SETPOINT_PAUSE);
    }
}

/* fault_s=N: a data abort N seconds after the start (outside the rtos's RAM), a fatal error the
 * partition's fault policy answers (tests of what a restart does to the V-Bus). */
static void faulter_entry(void *arg)
{
    uint64_t s = (uint64_t)(uintptr_t)arg;
    (void)rt_sleep(RT_SEC(s));
    rt_printf("demo: fault_s=%lu: a data abort now\n", (unsigned long)s);
    (void)*(volatile uint32_t *)(uintptr_t)0x100000000ull;
}

/* busy_pct=N: computes from the start of every BUSY_PERIOD until N % of it has passed, then sleeps to the
 * next one (preempted meanwhile by every other thread, so their share comes out of its own). */
static void busy_entry(void *arg)
{
    rt_time_t pct = (rt_time_t)(uintptr_t)arg;
    rt_time_t release = rt_time_now();
    for (;;) {
        rt_time_t until = release + BUSY_PERIOD * pct / 100;
        while (rt_time_now() < until) {
        }
        release += BUSY_PERIOD;
        (void)rt_sleep_until(release);
    }
}

/* A file's path from the boot argument `key` (off, or empty: none; absent: dflt), into buf. */
static const char *path_arg(const char *key, const char *dflt, char *buf, unsigned size)
{
    if (rt_bootarg(key, buf, size) == 0) {
        return dflt;
    }
    if (strlen(buf) + 1u >= size) {
        rt_printf("demo: %s=...: longer than %u characters; off\n", key, size - 2u);
        return NULL;
    }
    return buf[0] == '\0' || strcmp(buf, "off") == 0 ? NULL : buf;
}

int main(void)
{
    static const char *const known[] = {"latmon",        "period_us",    "cpu1",     "load_cpus",
                                        "echo_open_s",   "fault_s",      "busy_pct", "profile",
                                        "telemetry_csv", "linux_wait_s", NULL};
    (void)rt_bootargs_check(known);
    rt_cpuload_start_from_bootargs("demo");
    static char profile_buf[PATH_ARG_MAX], csv_buf[PATH_ARG_MAX];
    uint64_t linux_wait_s = rt_bootarg_u64("linux_wait_s", LINUX_WAIT_S);
    struct demo_files_config files = {
        .profile = path_arg("profile", DEFAULT_PROFILE, profile_buf, sizeof(profile_buf)),
        .csv = path_arg("telemetry_csv", DEFAULT_CSV, csv_buf, sizeof(csv_buf)),
        .wait = RT_SEC(linux_wait_s < 86400u ? linux_wait_s : 86400u), /* at most a day */
        .rows = &rows_q,
        .rows_lost = &rows_lost,
    };
    rows_wanted = files.profile != NULL || files.csv != NULL; /* the rows are the files' thread's clock */
    (void)rt_msgq_init(&rows_q, rows_storage, sizeof(struct demo_status), ROWS_QUEUED);
    (void)rt_msgq_init(&status_q, status_storage, sizeof(struct demo_status), 4);
    (void)rt_thread_create(&logger, "logger", logger_entry, NULL, logger_stack, sizeof(logger_stack),
                           LOGGER_PRIO);
    uint64_t fault_s = rt_bootarg_u64("fault_s", 0);
    if (fault_s > 0) {
        (void)rt_thread_create(&faulter, "faulter", faulter_entry, (void *)(uintptr_t)fault_s, faulter_stack,
                               sizeof(faulter_stack), LOGGER_PRIO);
    }
    uint64_t busy_pct = rt_bootarg_u64("busy_pct", 0);
    if (busy_pct > BUSY_PCT_MAX) {
        rt_printf("demo: busy_pct=%lu is above %d: ignored\n", (unsigned long)busy_pct, BUSY_PCT_MAX);
    } else if (busy_pct > 0) {
        rt_printf("demo: busy_pct=%lu: computing %lu ms of every %lu ms\n", (unsigned long)busy_pct,
                  (unsigned long)(BUSY_PERIOD * busy_pct / 100 / RT_MSEC(1)),
                  (unsigned long)(BUSY_PERIOD / RT_MSEC(1)));
        (void)rt_thread_create(&busy, "busy", busy_entry, (void *)(uintptr_t)busy_pct, busy_stack,
                               sizeof(busy_stack), BUSY_PRIO);
    }
    if (rt_chan_count() > 0) {
        (void)rt_echo_start("demo", "echo", ECHO_PRIO, RT_SEC(rt_bootarg_u64("echo_open_s", 0)));
        (void)rt_thread_create(&setpoint, "setpoint", setpoint_entry, NULL, setpoint_stack,
                               sizeof(setpoint_stack), SETPOINT_PRIO);
    }
    bool latmon = rt_bootarg_u64("latmon", 1) != 0;
    rt_time_t period = RT_USEC(rt_bootarg_u64("period_us", 1000));
    /*
     * At the control period, the control step runs in the latency monitor's sampler: the demo then
     * has one periodic timer, and its worst wake-up is the RTD| line's maximum. Two periodic threads
     * at different phases would be as correct on hardware, but under QEMU's icount round-robin the
     * second one woken waits for the other vCPU's turn whenever that vCPU is busy (Linux booting):
     * hundreds of missed periods a Linux boot, the same bare metal with a busy loop on CPU 1
     * (BENCHMARKS.md, "QEMU's round-robin and a second rtos timer").
     */
    bool shared = latmon && period == CONTROL_PERIOD;
    if (!shared) {
        (void)rt_thread_create(&control, "control", control_entry, NULL, control_stack, sizeof(control_stack),
                               CONTROL_PRIO);
    }
    if (latmon) {
        struct rt_latmon_config cfg = {
            .period = period,
            .samples = 0,
            .report_ms = 1000,
            .histogram = false,
            .label = "demo",
            .on_sample = shared ? control_step : NULL,
            .arg = NULL,
        };
        int rc = rt_latmon_start(&cfg);
        if (rc != RT_OK) {
            rt_printf("demo: latency monitor not started: %s\n", rt_strerror(rc));
        }
    }
    rt_printf("demo: running; Ctrl-A x leaves QEMU\n");
    /* The rest of this thread's life: Linux's files, below the others (returning would power off). */
    (void)rt_thread_set_priority(rt_thread_self(), FILES_PRIO);
    demo_files_run(&files);
}
