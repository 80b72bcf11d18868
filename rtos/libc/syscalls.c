/*
 * The system interface picolibc expects from its platform, on the rtos.
 *
 * Descriptors: 0 (stdin, end of file), 1 and 2 (the console). No file system yet: open() fails with
 * ENOENT for every path (Linux's files over the V-Bus are a later layer). There is one process: its
 * pid is 1, and kill() can only end it. exit() and return from main() power the system (the rtos's
 * partition, under rtmux) off after stdio is flushed.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "libc.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/time.h"

/* Not in every picolibc header under the feature macros we set. */
int open(const char *path, int flags, ...);
int getentropy(void *buf, size_t len);

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd != STDOUT_FILENO && fd != STDERR_FILENO) {
        errno = EBADF;
        return -1;
    }
    if (buf == NULL && n != 0) {
        errno = EFAULT;
        return -1;
    }
    rtmux_console_write(buf, n);
    return (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n)
{
    (void)buf;
    (void)n;
    if (fd != STDIN_FILENO) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

int open(const char *path, int flags, ...)
{
    (void)flags;
    errno = path == NULL ? EFAULT : ENOENT;
    return -1;
}

int close(int fd)
{
    if (fd < 0 || fd > STDERR_FILENO) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

off_t lseek(int fd, off_t offset, int whence)
{
    (void)offset;
    (void)whence;
    errno = fd >= 0 && fd <= STDERR_FILENO ? ESPIPE : EBADF;
    return -1;
}

int fstat(int fd, struct stat *st)
{
    if (fd < 0 || fd > STDERR_FILENO) {
        errno = EBADF;
        return -1;
    }
    *st = (struct stat){0};
    st->st_mode = S_IFCHR | 0620;
    return 0;
}

int stat(const char *restrict path, struct stat *restrict st)
{
    (void)st;
    errno = path == NULL ? EFAULT : ENOENT;
    return -1;
}

int unlink(const char *path)
{
    errno = path == NULL ? EFAULT : ENOENT;
    return -1;
}

pid_t getpid(void)
{
    return 1;
}

void _exit(int status)
{
    rtmux_console_flush();
    rt_printf("rtos: exit(%d)\n", status);
    rt_system_off();
}

int kill(pid_t pid, int sig)
{
    if (pid != 1 && pid != 0 && pid != -1) {
        errno = ESRCH;
        return -1;
    }
    if (sig < 0 || sig >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    if (sig == 0) {
        return 0;
    }
    _exit(128 + sig);
}

int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    (void)how;
    (void)set;
    if (old != NULL) {
        *old = 0;
    }
    return 0;
}

/* The one process's CPU time: all of the rtos's time since boot, in clock() ticks. */
clock_t times(struct tms *buf)
{
    clock_t t = (clock_t)(rt_time_now() / (1000000000u / CLOCKS_PER_SEC));
    if (buf != NULL) {
        *buf = (struct tms){.tms_utime = t};
    }
    return t;
}

/* No source of entropy on the board the rtos may rely on. */
int getentropy(void *buf, size_t len)
{
    (void)buf;
    (void)len;
    errno = ENOSYS;
    return -1;
}
