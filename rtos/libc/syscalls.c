/*
 * The system interface picolibc expects from its platform, on the rtos.
 *
 * Descriptors: 0 (stdin, end of file), 1 and 2 (the console; also Linux's log when the system
 * configuration says so: linuxsvc/log.c), from 3 on Linux's files under /linux (linuxsvc/files.h,
 * docs/linux-services.md): every path goes there, and any path outside /linux gives ENOENT; from
 * LNET_FD_FIRST (64) on sockets and channel descriptors (linuxsvc/net.h), whose calls are linked only
 * into an application that makes one (socket(), rtmux_chan_fd(): linuxsvc/socket.c), so they are weak
 * here. There is
 * one process: its pid is 1, and kill() can only end it. exit() and return from main() power the system
 * (the rtos's partition, under rtmux) off after stdio is flushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "libc.h"
#include "linuxsvc/files.h"
#include "linuxsvc/log.h"
#include "linuxsvc/net.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/time.h"

/* Not in every picolibc header under the feature macros we set. */
int open(const char *path, int flags, ...);
int getentropy(void *buf, size_t len);
int mkdir(const char *path, mode_t mode);
int rename(const char *from, const char *to);

#pragma weak lnet_read
#pragma weak lnet_write
#pragma weak lnet_close
#pragma weak lnet_fstat

static bool console_fd(int fd)
{
    return fd >= 0 && fd <= STDERR_FILENO;
}

/* A descriptor of net.h's range, when net.c is linked (without it, no such descriptor was made). */
static bool net_fd(int fd)
{
    return fd >= LNET_FD_FIRST && lnet_close != NULL;
}

static int no_fd(void)
{
    errno = EBADF;
    return -1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd >= LNET_FD_FIRST) {
        return net_fd(fd) ? lnet_write(fd, buf, n) : no_fd();
    }
    if (fd >= LFS_FD_FIRST) {
        return lfs_write(fd, buf, n);
    }
    if (fd != STDOUT_FILENO && fd != STDERR_FILENO) {
        errno = EBADF;
        return -1;
    }
    if (buf == NULL && n != 0) {
        errno = EFAULT;
        return -1;
    }
    rtmux_console_write(buf, n); /* its lines reach Linux's log too (stdio.c) */
    return (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n)
{
    if (fd >= LNET_FD_FIRST) {
        return net_fd(fd) ? lnet_read(fd, buf, n) : no_fd();
    }
    if (fd >= LFS_FD_FIRST) {
        return lfs_read(fd, buf, n);
    }
    if (fd != STDIN_FILENO) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (console_fd(fd) || net_fd(fd)) {
        errno = ESPIPE;
        return -1;
    }
    return lfs_pread(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (console_fd(fd) || net_fd(fd)) {
        errno = ESPIPE;
        return -1;
    }
    return lfs_pwrite(fd, buf, n, off);
}

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return lfs_open(path, flags, mode);
}

int close(int fd)
{
    if (console_fd(fd)) {
        return 0;
    }
    if (fd >= LNET_FD_FIRST) {
        return net_fd(fd) ? lnet_close(fd) : no_fd();
    }
    return lfs_close(fd);
}

off_t lseek(int fd, off_t offset, int whence)
{
    if (console_fd(fd) || net_fd(fd)) {
        errno = ESPIPE;
        return -1;
    }
    return lfs_lseek(fd, offset, whence);
}

int fstat(int fd, struct stat *st)
{
    if (fd >= LNET_FD_FIRST) {
        return net_fd(fd) ? lnet_fstat(fd, st) : no_fd();
    }
    if (!console_fd(fd)) {
        return lfs_fstat(fd, st);
    }
    *st = (struct stat){0};
    st->st_mode = S_IFCHR | 0620;
    return 0;
}

int isatty(int fd)
{
    if (console_fd(fd)) {
        return 1;
    }
    struct stat st;
    errno = lfs_fstat(fd, &st) == 0 ? ENOTTY : errno;
    return 0;
}

int stat(const char *restrict path, struct stat *restrict st)
{
    return lfs_stat(path, st);
}

int unlink(const char *path)
{
    return lfs_unlink(path);
}

int rmdir(const char *path)
{
    return lfs_rmdir(path);
}

int mkdir(const char *path, mode_t mode)
{
    return lfs_mkdir(path, mode);
}

int rename(const char *from, const char *to)
{
    return lfs_rename(from, to);
}

int fsync(int fd)
{
    if (net_fd(fd)) {
        errno = EINVAL; /* a socket has nothing to sync */
        return -1;
    }
    if (console_fd(fd)) {
        rtmux_console_flush();
        lsvc_log_flush();
        return 0;
    }
    return lfs_fsync(fd);
}

int ftruncate(int fd, off_t len)
{
    if (console_fd(fd) || net_fd(fd)) {
        errno = EINVAL;
        return -1;
    }
    return lfs_ftruncate(fd, len);
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
