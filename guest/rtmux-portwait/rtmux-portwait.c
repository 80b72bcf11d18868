/*
 * rtmux-portwait: waits until the rtos has its end of a V-Bus channel open, at no visible cost to Linux.
 *
 *   rtmux-portwait FD
 *
 * FD is a file descriptor the caller already has open on a V-Bus port (/dev/virtio-ports/NAME). The
 * program returns once the other side, the rtos, has its end of the channel open: once poll() on FD no
 * longer reports POLLHUP. Linux's supervisor of the services for rtos threads (guest/initramfs/services)
 * runs it between opening a service's port and starting the service's program (diod, the log reader), so
 * that nothing costly runs while the rtos does not use the service.
 *
 * Why it polls: Linux's virtio console driver (drivers/char/virtio_console.c, port_fops_poll, as in
 * Debian's 6.1 kernel) answers a poll of a port with POLLHUP for as long as the host side of the port
 * (here the rtos, through the hypervisor's V-Bus device) has it closed, so poll() returns at once and can
 * never block until that side opens. (The driver also raises SIGIO when the host side opens, for an owner
 * set with F_SETOWN and O_ASYNC; but O_ASYNC is a flag of the open file, which the caller hands on to the
 * program it starts next, and a SIGIO left enabled would end that program.) So the program looks with a
 * poll() that does not wait, then sleeps CHECK_MS (100 ms), and again: about ten wake-ups a second of a
 * few microseconds each, and a service starts at most 100 ms after the rtos opens its end.
 *
 * Invariants:
 *  - FD is never read or written: every byte of the connection is for the program started next.
 *  - FD is never closed: it stays open in the caller, so the rtos sees one connection, from the caller's
 *    open to the end of the program started next, not one per check.
 *  - The wait does not outlive its caller (PR_SET_PDEATHSIG): a port can be open in one file only, so an
 *    orphaned wait would keep the port from the caller's successor.
 *  - A port whose device file has been removed (the file has no link left: its driver was unbound, e.g.
 *    to reset the device) belongs to a device that is gone and will never see the rtos again: exit 3, so
 *    that the caller opens the port's new device file.
 *
 * Exit status: 0 the other side has its end open; 1 FD is not open, or poll/fstat failed (or the caller
 * ended); 2 usage error; 3 the port is gone. Nothing is printed but errors, one line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHECK_MS 100 /* between two looks while the other side is closed */

enum { EXIT_OPEN = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_GONE = 3 };

static void __attribute__((noreturn)) usage(const char *why)
{
    fprintf(stderr,
            "rtmux-portwait: %s\n"
            "usage: rtmux-portwait FD   (FD: a descriptor open on a V-Bus port; returns once the rtos has\n"
            "                            its end open)\n",
            why);
    exit(EXIT_USAGE);
}

static void __attribute__((noreturn)) fail(int status, int fd, const char *what, int err)
{
    if (err != 0) {
        fprintf(stderr, "rtmux-portwait: fd %d: %s: %s\n", fd, what, strerror(err));
    } else {
        fprintf(stderr, "rtmux-portwait: fd %d: %s\n", fd, what);
    }
    exit(status);
}

/* FD as written: decimal digits only (no sign, no space), at most INT_MAX. */
static int parse_fd(const char *text)
{
    if (text[0] < '0' || text[0] > '9') {
        usage("FD must be a file descriptor's number");
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > INT_MAX) {
        usage("FD must be a file descriptor's number");
    }
    return (int)v;
}

static void sleep_ms(long ms)
{
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    /* A signal that does not end the program ends the sleep early: sleep the rest. */
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        usage(argc < 2 ? "no FD given" : "one FD only");
    }
    int fd = parse_fd(argv[1]);
    if (fcntl(fd, F_GETFD) < 0) {
        fail(EXIT_ERROR, fd, "not an open file descriptor", errno);
    }

    /* Dies with its caller. The caller may have ended before prctl took effect: then our parent is
     * already another process. */
    pid_t caller = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        fail(EXIT_ERROR, fd, "prctl(PR_SET_PDEATHSIG)", errno);
    }
    if (getppid() != caller) {
        fail(EXIT_ERROR, fd, "the caller has ended", 0);
    }

    for (;;) {
        /* No event asked for: poll() reports POLLHUP, POLLERR and POLLNVAL whatever is asked, and
         * nothing else is of interest. Timeout 0: look, never wait (see the top of the file). */
        struct pollfd p = {.fd = fd, .events = 0, .revents = 0};
        if (poll(&p, 1, 0) < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail(EXIT_ERROR, fd, "poll", errno);
        }
        if (p.revents & POLLNVAL) {
            fail(EXIT_ERROR, fd, "not an open file descriptor", EBADF);
        }
        if (!(p.revents & POLLHUP)) {
            if (p.revents & POLLERR) {
                fail(EXIT_ERROR, fd, "poll reports an error", 0);
            }
            return EXIT_OPEN;
        }
        struct stat st;
        if (fstat(fd, &st) != 0) {
            fail(EXIT_ERROR, fd, "fstat", errno);
        }
        if (st.st_nlink == 0) {
            fail(EXIT_GONE, fd, "the port's device file has been removed (its device is gone)", 0);
        }
        sleep_ms(CHECK_MS);
    }
}
