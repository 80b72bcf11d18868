/*
 * opendir/readdir/closedir over Linux's directories (files.h): each stream holds one Rreaddir's worth of
 * entries and the cookie of the next.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

/* One Rreaddir's data: a few dozen entries of ordinary names per request. */
#define DIR_BUF 2048u

struct rtmux_dir {
    int fd;
    size_t len, pos; /* the entries in buf, and the next one's place */
    struct dirent ent;
    uint8_t buf[DIR_BUF];
};

DIR *opendir(const char *path)
{
    DIR *d = malloc(sizeof(*d));
    if (d == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    d->fd = lfs_open(path, O_RDONLY | O_DIRECTORY, 0);
    if (d->fd < 0) {
        int err = errno;
        free(d);
        errno = err;
        return NULL;
    }
    d->len = d->pos = 0;
    return d;
}

struct dirent *readdir(DIR *d)
{
    if (d == NULL) {
        errno = EBADF;
        return NULL;
    }
    if (d->pos >= d->len) {
        ssize_t n = lfs_readdir(d->fd, d->buf, sizeof(d->buf));
        if (n <= 0) {
            return NULL; /* the end (errno untouched), or an error (errno set) */
        }
        d->len = (size_t)n;
        d->pos = 0;
    }
    struct p9_dirent e;
    bool bad;
    if (!p9_next_dirent(d->buf, d->len, &d->pos, &e, &bad) || e.name_len > NAME_MAX) {
        d->len = d->pos = 0;
        errno = EIO; /* Linux sent an entry that is not one */
        return NULL;
    }
    (void)lfs_seekdir(d->fd, e.offset);
    d->ent.d_ino = (ino_t)e.qid.path;
    d->ent.d_type = e.type;
    memcpy(d->ent.d_name, e.name, e.name_len);
    d->ent.d_name[e.name_len] = '\0';
    return &d->ent;
}

void rewinddir(DIR *d)
{
    if (d != NULL) {
        (void)lfs_seekdir(d->fd, 0);
        d->len = d->pos = 0;
    }
}

int dirfd(DIR *d)
{
    if (d == NULL) {
        errno = EINVAL;
        return -1;
    }
    return d->fd;
}

int closedir(DIR *d)
{
    if (d == NULL) {
        errno = EBADF;
        return -1;
    }
    int r = lfs_close(d->fd);
    free(d);
    return r;
}
