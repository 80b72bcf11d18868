/*
 * Directories of Linux's files (/linux/..., docs/linux-services.md), read through 9P2000.L. picolibc
 * has no <dirent.h> of its own for a platform like this one.
 */
#ifndef RTMUX_DIRENT_H
#define RTMUX_DIRENT_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DT_UNKNOWN 0
#define DT_FIFO    1
#define DT_CHR     2
#define DT_DIR     4
#define DT_BLK     6
#define DT_REG     8
#define DT_LNK     10
#define DT_SOCK    12

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

struct dirent {
    ino_t d_ino;          /* the file's inode number in Linux (9P qid path) */
    unsigned char d_type; /* DT_* */
    char d_name[NAME_MAX + 1];
};

typedef struct rtmux_dir DIR;

DIR *opendir(const char *path);
/* The next entry, or NULL at the end (errno unchanged) or on an error (errno set). The entry is the
 * stream's own and stays valid until the next readdir or closedir of the same stream. */
struct dirent *readdir(DIR *dir);
int closedir(DIR *dir);
void rewinddir(DIR *dir);
int dirfd(DIR *dir);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_DIRENT_H */
