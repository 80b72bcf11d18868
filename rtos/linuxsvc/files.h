/*
 * Linux's files for rtos threads: the directories the system configuration exports ([services],
 * docs/linux-services.md), under /linux/<their Linux path>, through 9P2000.L on the `rtmux-files`
 * channel (conn.h). The C library's system calls (rtos/libc/syscalls.c) hand these every descriptor
 * from LFS_FD_FIRST on and every path; each returns as POSIX does (-1 and errno on failure).
 *
 * Paths: absolute, or relative to "/" (there is no chdir). "." and ".." are resolved here, never past
 * "/", before anything is sent; a path under /linux outside every exported directory is refused with
 * EACCES here, and by Linux's server too. Any other path gives ENOENT, as before there were files.
 * Descriptors of a session that ended (Linux's server restarted, Linux rebooted) give EBADF; close
 * frees them.
 */
#ifndef RTOS_LINUXSVC_FILES_H
#define RTOS_LINUXSVC_FILES_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "conn.h"

#define LFS_FD_FIRST  3
#define LFS_FILES     32 /* descriptors LFS_FD_FIRST .. LFS_FD_FIRST + LFS_FILES - 1 */
#define LFS_EXPORTS   8
#define LFS_SLOTS     16 /* requests in flight at once */
#define LFS_PATH_MAX  1024
#define LFS_NAME_MAX  255
#define LFS_DEPTH_MAX 64
#define LFS_CHANNEL   "rtmux-files"
#define LFS_DTB_NODE  "/rtmux-services"

/* Reads the exported directories from the DTB and sets up the channel's session (no message is sent
 * until the first call). Called once before main. */
void lfs_init(void);

int lfs_open(const char *path, int flags, mode_t mode);
int lfs_close(int fd);
ssize_t lfs_read(int fd, void *buf, size_t n);
ssize_t lfs_write(int fd, const void *buf, size_t n);
ssize_t lfs_pread(int fd, void *buf, size_t n, off_t off);
ssize_t lfs_pwrite(int fd, const void *buf, size_t n, off_t off);
off_t lfs_lseek(int fd, off_t off, int whence);
int lfs_fstat(int fd, struct stat *st);
int lfs_stat(const char *path, struct stat *st);
int lfs_unlink(const char *path);
int lfs_rmdir(const char *path);
int lfs_mkdir(const char *path, mode_t mode);
int lfs_rename(const char *from, const char *to);
int lfs_fsync(int fd);
int lfs_ftruncate(int fd, off_t len);
/* Directory entries from a descriptor opened on a directory (opendir's work): at most `cap` bytes of
 * Rreaddir data from the descriptor's position into buf; 0 at the end. */
ssize_t lfs_readdir(int fd, void *buf, size_t cap);
/* Moves a directory descriptor's position to the entry after the one whose cookie is given. */
int lfs_seekdir(int fd, uint64_t cookie);

void lfs_stats(struct lsvc_stats *out);

#endif /* RTOS_LINUXSVC_FILES_H */
