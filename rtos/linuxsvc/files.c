/*
 * Linux's files over 9P2000.L (files.h): paths, fids, descriptors, and one function per call.
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "rtos/console.h"
#include "rtos/system.h"

struct lfs_export {
    char path[LFS_PATH_MAX]; /* Linux's path, normalised: "/srv/rtos" */
    size_t len;
    bool ro;
    uint32_t root_fid; /* attached in session root_sess */
    uint32_t root_sess;
};

struct lfs_file {
    bool used;
    bool dir;
    bool append;
    uint8_t access; /* O_RDONLY, O_WRONLY, O_RDWR */
    uint32_t sess;
    uint32_t fid;
    uint64_t off;  /* a file's position, a directory's next cookie */
    rt_mutex_t io; /* one call at a time per descriptor, so the position moves as POSIX says */
};

/* A path split at its components, relative to an export's root. */
struct lfs_path {
    unsigned ex;
    unsigned n;
    uint16_t at[LFS_DEPTH_MAX], len[LFS_DEPTH_MAX];
    char buf[LFS_PATH_MAX];
};

#define FID_WORDS 4u /* 128 fids a session: the descriptors, the exports' roots and walks in flight */

static struct {
    struct lsvc_conn conn;
    struct lsvc_slot slots[LFS_SLOTS];
    rt_mutex_t lock; /* the descriptor table, the fid map, the exports' roots */
    unsigned n_ex;
    struct lfs_export ex[LFS_EXPORTS];
    struct lfs_file files[LFS_FILES];
    uint32_t fid_sess;
    uint64_t fids[FID_WORDS];
} lfs;

/* -------------------------------------------------------------------------------------------- setup */

/* Splits `path` into components (after the leading '/' in p), resolving "." and "..". Returns 0, or
 * ENAMETOOLONG / ENOENT (empty). The components stay in out->buf. */
static int split(const char *path, struct lfs_path *out)
{
    size_t n = strnlen(path, LFS_PATH_MAX);
    if (n == LFS_PATH_MAX) {
        return ENAMETOOLONG;
    }
    if (n == 0) {
        return ENOENT;
    }
    memcpy(out->buf, path, n + 1);
    out->n = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && out->buf[i] == '/') {
            i++;
        }
        size_t start = i;
        while (i < n && out->buf[i] != '/') {
            i++;
        }
        size_t len = i - start;
        if (len == 0 || (len == 1 && out->buf[start] == '.')) {
            continue;
        }
        if (len == 2 && out->buf[start] == '.' && out->buf[start + 1] == '.') {
            if (out->n > 0) {
                out->n--;
            }
            continue;
        }
        if (len > LFS_NAME_MAX || out->n == LFS_DEPTH_MAX) {
            return ENAMETOOLONG;
        }
        out->at[out->n] = (uint16_t)start;
        out->len[out->n] = (uint16_t)len;
        out->n++;
    }
    return 0;
}

static bool comp_is(const struct lfs_path *p, unsigned i, const char *s, size_t n)
{
    return p->len[i] == n && memcmp(p->buf + p->at[i], s, n) == 0;
}

void lfs_init(void)
{
    if (rt_mutex_init(&lfs.lock) != RT_OK) {
        return;
    }
    for (unsigned i = 0; i < LFS_FILES; i++) {
        (void)rt_mutex_init(&lfs.files[i].io);
    }
    uint32_t len = 0;
    const char *list = rt_dt_prop(LFS_DTB_NODE, "rtmux,files", &len);
    uint32_t ro_len = 0;
    const uint8_t *ro = rt_dt_prop(LFS_DTB_NODE, "rtmux,files-ro", &ro_len);
    static struct lfs_path p; /* before any thread: not on the boot stack */
    for (uint32_t at = 0; list != NULL && at < len && lfs.n_ex < LFS_EXPORTS;) {
        const char *s = list + at;
        size_t n = strnlen(s, len - at);
        at += (uint32_t)n + 1;
        if (n == 0 || n >= LFS_PATH_MAX || s[0] != '/' || split(s, &p) != 0 || p.n == 0) {
            rt_printf("rtos: linux files: export `%s` in the DTB is not a Linux directory; left out\n", s);
            continue;
        }
        struct lfs_export *e = &lfs.ex[lfs.n_ex];
        size_t w = 0;
        for (unsigned i = 0; i < p.n; i++) { /* the normalised path: "/a/b" */
            e->path[w++] = '/';
            memcpy(e->path + w, p.buf + p.at[i], p.len[i]);
            w += p.len[i];
        }
        e->path[w] = '\0';
        e->len = w;
        unsigned k = lfs.n_ex;
        e->ro = ro != NULL && ro_len >= 4u * (k + 1u) && ro[4u * k + 3u] != 0;
        lfs.n_ex++;
    }
    if (lfs.n_ex > 0) {
        (void)lsvc_init(&lfs.conn, LFS_CHANNEL, &lsvc_9p, lfs.slots, LFS_SLOTS);
    }
}

/* Resolves `path` to an export and the components below its root. ENOENT: not under /linux (or no
 * export at all); EACCES: under /linux, outside every export. */
static int resolve(const char *path, struct lfs_path *p)
{
    if (path == NULL) {
        return EFAULT;
    }
    int err = split(path, p);
    if (err != 0) {
        return err;
    }
    if (p->n == 0 || !comp_is(p, 0, "linux", 5) || lfs.n_ex == 0) {
        return ENOENT;
    }
    unsigned best = LFS_EXPORTS, best_n = 0;
    for (unsigned e = 0; e < lfs.n_ex; e++) {
        /* the export's components must be components 1.. of the path */
        const char *s = lfs.ex[e].path;
        unsigned i = 1;
        bool match = true;
        while (*s == '/' && match) {
            s++;
            size_t n = strcspn(s, "/");
            match = i < p->n && comp_is(p, i, s, n);
            s += n;
            i++;
        }
        if (match && i - 1 > best_n) {
            best = e;
            best_n = i - 1;
        }
    }
    if (best == LFS_EXPORTS) {
        return EACCES;
    }
    /* keep the components below the export's root */
    unsigned skip = 1 + best_n;
    for (unsigned i = skip; i < p->n; i++) {
        p->at[i - skip] = p->at[i];
        p->len[i - skip] = p->len[i];
    }
    p->n -= skip;
    p->ex = best;
    return 0;
}

/* ---------------------------------------------------------------------------------------------- fids */

static uint32_t fid_alloc(uint32_t sess)
{
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    if (lfs.fid_sess != sess) { /* a new session: no fid of the old one means anything */
        memset(lfs.fids, 0, sizeof(lfs.fids));
        lfs.fid_sess = sess;
    }
    uint32_t fid = P9_NOFID;
    for (unsigned w = 0; w < FID_WORDS && fid == P9_NOFID; w++) {
        if (lfs.fids[w] != UINT64_MAX) {
            unsigned b = (unsigned)__builtin_ctzll(~lfs.fids[w]);
            lfs.fids[w] |= 1ull << b;
            fid = w * 64u + b + 1u;
        }
    }
    (void)rt_mutex_unlock(&lfs.lock);
    return fid;
}

static void fid_free(uint32_t fid, uint32_t sess)
{
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    if (lfs.fid_sess == sess && fid >= 1 && fid <= FID_WORDS * 64u) {
        lfs.fids[(fid - 1) / 64u] &= ~(1ull << ((fid - 1) % 64u));
    }
    (void)rt_mutex_unlock(&lfs.lock);
}

/* ------------------------------------------------------------------------------------------ requests */

struct req {
    struct lsvc_slot *s;
    uint32_t sess;
    struct p9_w w;
};

static int req_begin(struct req *q, uint8_t type)
{
    int err = lsvc_get(&lfs.conn, &q->s, &q->sess);
    if (err == 0) {
        p9_w_begin(&q->w, q->s->req, sizeof(q->s->req), type, q->s->tag);
    }
    return err;
}

/* Sends the request built in q and waits; the slot stays q's until req_end. */
static int req_call(struct req *q)
{
    q->s->req_len = p9_w_end(&q->w);
    if (q->s->req_len == 0) {
        return ENAMETOOLONG;
    }
    return lsvc_call(&lfs.conn, q->s, LSVC_TIMEOUT);
}

static void req_end(struct req *q)
{
    lsvc_put(&lfs.conn, q->s);
}

/* req_begin for a request on fids of session `sess`: EBADF when that session has ended. */
static int req_begin_in(struct req *q, uint8_t type, uint32_t sess)
{
    int err = req_begin(q, type);
    if (err == 0 && q->sess != sess) {
        req_end(q);
        err = EBADF;
    }
    return err;
}

/* A request with no reply body but success (Rclunk, Rsetattr, Rfsync, ...). */
static int req_simple(struct req *q)
{
    int err = req_call(q);
    if (err == 0 && q->s->fixed_len != 0) {
        err = EIO;
    }
    req_end(q);
    return err;
}

/* Tclunk; returns the server's answer to it (0 or an errno). 9P says a fid is gone after Tclunk
 * whatever the answer, but diod 1.0.24 keeps the fid of a file whose close failed (ENOSPC on a full
 * file system): such a fid is clunked once more, and a number the server may still hold is not given
 * out again in this session. */
static int clunk(uint32_t fid, uint32_t sess)
{
    int first = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct req q;
        if (!lsvc_current(&lfs.conn, sess) || req_begin_in(&q, P9_TCLUNK, sess) != 0) {
            fid_free(fid, sess); /* the session ended: its fids mean nothing now */
            return first;
        }
        p9_w_u32(&q.w, fid);
        int e = req_simple(&q);
        first = attempt == 0 ? e : first;
        bool gone = e == 0 || (attempt == 1 && e == EBADF);
        bool transport = e == EIO || e == ENOTCONN || e == ETIMEDOUT;
        if (gone || transport) {
            fid_free(fid, sess);
            return first;
        }
    }
    return first; /* the server may still hold it: the number stays taken */
}

/* The export's root fid in the current session (attached on first use). */
static int export_root(unsigned e, uint32_t *fid, uint32_t *sess)
{
    struct lfs_export *ex = &lfs.ex[e];
    struct req q;
    int err = req_begin(&q, P9_TATTACH);
    if (err != 0) {
        return err;
    }
    *sess = q.sess;
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    bool have = ex->root_sess == q.sess;
    *fid = ex->root_fid;
    (void)rt_mutex_unlock(&lfs.lock);
    if (have) {
        req_end(&q);
        return 0;
    }
    uint32_t f = fid_alloc(q.sess);
    if (f == P9_NOFID) {
        req_end(&q);
        return EMFILE;
    }
    p9_w_u32(&q.w, f);
    p9_w_u32(&q.w, P9_NOFID);
    p9_w_str(&q.w, "root", 4);
    p9_w_str(&q.w, ex->path, ex->len);
    p9_w_u32(&q.w, 0); /* n_uname: uid 0, the only one Linux's server lets attach */
    err = req_call(&q);
    if (err == 0 && q.s->fixed_len != P9_QID) {
        err = EIO;
    }
    req_end(&q);
    if (err != 0) {
        fid_free(f, q.sess);
        return err;
    }
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    if (ex->root_sess == q.sess) { /* another thread attached meanwhile: keep one */
        uint32_t other = ex->root_fid;
        (void)rt_mutex_unlock(&lfs.lock);
        (void)clunk(f, q.sess);
        *fid = other;
        return 0;
    }
    ex->root_fid = f;
    ex->root_sess = q.sess;
    (void)rt_mutex_unlock(&lfs.lock);
    *fid = f;
    return 0;
}

/* Walks from the export's root along the first n components of p to a new fid. *is_dir: what the
 * last element is (the root: a directory). */
static int walk(const struct lfs_path *p, unsigned n, uint32_t *out, uint32_t *sess, bool *is_dir)
{
    uint32_t root;
    int err = export_root(p->ex, &root, sess);
    if (err != 0) {
        return err;
    }
    uint32_t fid = fid_alloc(*sess);
    if (fid == P9_NOFID) {
        return EMFILE;
    }
    uint32_t from = root;
    unsigned done = 0;
    *is_dir = true;
    do {
        struct req q;
        bool made = false;
        err = req_begin_in(&q, P9_TWALK, *sess);
        if (err != 0) {
            fid_free(fid, *sess); /* the session is gone, and its fids with it */
            return err;
        }
        /* as many names as fit in one request, at most 16 */
        unsigned k = 0;
        size_t room = sizeof(q.s->req) - P9_HDR - 10u;
        while (done + k < n && k < P9_MAXWELEM && 2u + p->len[done + k] <= room) {
            room -= 2u + p->len[done + k];
            k++;
        }
        p9_w_u32(&q.w, from);
        p9_w_u32(&q.w, fid);
        p9_w_u16(&q.w, (uint16_t)k);
        for (unsigned i = 0; i < k; i++) {
            p9_w_str(&q.w, p->buf + p->at[done + i], p->len[done + i]);
        }
        err = req_call(&q);
        if (err == 0) {
            struct p9_r r;
            p9_r_init(&r, q.s->fixed, q.s->fixed_len);
            uint16_t nq = p9_r_u16(&r);
            struct p9_qid qid = {.type = P9_QTDIR};
            for (unsigned i = 0; i < nq && !r.bad; i++) {
                p9_r_qid(&r, &qid);
            }
            if (!p9_r_done(&r) || nq > k) {
                err = EIO;
            } else if (nq < k) {
                /* an element is missing, or one before it is not a directory */
                err = (nq > 0 ? (qid.type & P9_QTDIR) != 0 : *is_dir) ? ENOENT : ENOTDIR;
                made = nq > 0;
            } else if (k > 0) {
                *is_dir = (qid.type & P9_QTDIR) != 0;
            }
        }
        req_end(&q);
        if (err != 0) {
            /* 9P leaves newfid unmade after a walk that stopped short, but diod 1.0.24 keeps it where
             * the walk stopped (after an Rlerror it has none) */
            if (made || from == fid) {
                (void)clunk(fid, *sess);
            } else {
                fid_free(fid, *sess);
            }
            return err;
        }
        from = fid;
        done += k;
    } while (done < n);
    *out = fid;
    return 0;
}

/* ----------------------------------------------------------------------------------------- descriptors */

static struct lfs_file *file_get(int fd)
{
    if (fd < LFS_FD_FIRST || fd >= LFS_FD_FIRST + LFS_FILES) {
        return NULL;
    }
    struct lfs_file *f = &lfs.files[fd - LFS_FD_FIRST];
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    bool used = f->used;
    (void)rt_mutex_unlock(&lfs.lock);
    return used ? f : NULL;
}

/* The descriptor locked for one call, in the current session; NULL with errno set otherwise. */
static struct lfs_file *file_lock(int fd)
{
    struct lfs_file *f = file_get(fd);
    if (f == NULL) {
        errno = EBADF;
        return NULL;
    }
    (void)rt_mutex_lock(&f->io, RT_FOREVER);
    if (!f->used || !lsvc_current(&lfs.conn, f->sess)) {
        (void)rt_mutex_unlock(&f->io);
        errno = EBADF;
        return NULL;
    }
    return f;
}

static void file_unlock(struct lfs_file *f)
{
    (void)rt_mutex_unlock(&f->io);
}

static int fail(int err)
{
    errno = err;
    return -1;
}

static uint32_t p9_flags(int flags)
{
    uint32_t f = (uint32_t)(flags & O_ACCMODE);
    f |= (flags & O_TRUNC) != 0 ? P9_L_TRUNC : 0u;
    f |= (flags & O_APPEND) != 0 ? P9_L_APPEND : 0u;
    return f;
}

int lfs_open(const char *path, int flags, mode_t mode)
{
    struct lfs_path p;
    int err = resolve(path, &p);
    if (err != 0) {
        return fail(err);
    }
    int acc = flags & O_ACCMODE;
    if (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR) {
        return fail(EINVAL);
    }
    bool writes = acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0;
    if (writes && lfs.ex[p.ex].ro) {
        return fail(EROFS);
    }
    uint32_t fid, sess;
    bool is_dir;
    uint32_t pf = p9_flags(flags);
    err = walk(&p, p.n, &fid, &sess, &is_dir);
    uint8_t op = P9_TLOPEN;
    if (err == 0) {
        if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
            err = EEXIST;
        } else if ((flags & O_DIRECTORY) != 0 && !is_dir) {
            err = ENOTDIR;
        } else if (is_dir && acc != O_RDONLY) {
            err = EISDIR;
        }
        if (err != 0) {
            (void)clunk(fid, sess);
            return fail(err);
        }
    } else if (err == ENOENT && (flags & O_CREAT) != 0 && p.n > 0) {
        err = walk(&p, p.n - 1, &fid, &sess, &is_dir);
        if (err != 0) {
            return fail(err);
        }
        op = P9_TLCREATE;
        is_dir = false;
    } else {
        return fail(err);
    }
    struct req q;
    err = req_begin_in(&q, op, sess);
    if (err == 0) {
        p9_w_u32(&q.w, fid);
        if (op == P9_TLCREATE) {
            unsigned last = p.n - 1;
            p9_w_str(&q.w, p.buf + p.at[last], p.len[last]);
            p9_w_u32(&q.w, pf);
            p9_w_u32(&q.w, (uint32_t)(mode & 07777));
            p9_w_u32(&q.w, 0); /* gid */
        } else {
            p9_w_u32(&q.w, pf);
        }
        err = req_call(&q);
        if (err == 0 && q.s->fixed_len != P9_QID + 4u) {
            err = EIO;
        }
        req_end(&q);
    }
    if (err != 0) {
        (void)clunk(fid, sess);
        return fail(err);
    }
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    int fd = -1;
    for (unsigned i = 0; i < LFS_FILES && fd < 0; i++) {
        struct lfs_file *f = &lfs.files[i];
        if (!f->used) {
            f->used = true;
            f->dir = is_dir;
            f->append = (flags & O_APPEND) != 0;
            f->access = (uint8_t)acc;
            f->sess = sess;
            f->fid = fid;
            f->off = 0;
            fd = LFS_FD_FIRST + (int)i;
        }
    }
    (void)rt_mutex_unlock(&lfs.lock);
    if (fd < 0) {
        (void)clunk(fid, sess);
        return fail(EMFILE);
    }
    return fd;
}

int lfs_close(int fd)
{
    struct lfs_file *f = file_get(fd);
    if (f == NULL) {
        return fail(EBADF);
    }
    (void)rt_mutex_lock(&f->io, RT_FOREVER);
    bool current = lsvc_current(&lfs.conn, f->sess);
    int err = current ? clunk(f->fid, f->sess) : EBADF;
    (void)rt_mutex_lock(&lfs.lock, RT_FOREVER);
    f->used = false;
    (void)rt_mutex_unlock(&lfs.lock);
    (void)rt_mutex_unlock(&f->io);
    /* the descriptor is free either way; an error of the file's close in Linux (ENOSPC, EIO) is said */
    return err != 0 ? fail(err) : 0;
}

/* One Tread of at most the session's iounit at off into buf: the count, or -errno. */
static ssize_t read_once(struct lfs_file *f, void *buf, size_t n, uint64_t off, uint8_t type)
{
    struct req q;
    int err = req_begin_in(&q, type, f->sess);
    if (err != 0) {
        return -err;
    }
    uint32_t max = lsvc_iounit(&lfs.conn);
    uint32_t count = n < max ? (uint32_t)n : max;
    p9_w_u32(&q.w, f->fid);
    p9_w_u64(&q.w, off);
    p9_w_u32(&q.w, count);
    q.s->data = buf;
    q.s->data_cap = count;
    err = req_call(&q);
    ssize_t got = err == 0 ? (ssize_t)q.s->data_len : -err;
    req_end(&q);
    return got;
}

static ssize_t read_at(struct lfs_file *f, void *buf, size_t n, uint64_t off)
{
    if (f->dir) {
        return -EISDIR;
    }
    if (f->access == O_WRONLY) {
        return -EBADF;
    }
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < lsvc_iounit(&lfs.conn) ? n - done : lsvc_iounit(&lfs.conn);
        ssize_t got = read_once(f, (uint8_t *)buf + done, want, off + done, P9_TREAD);
        if (got < 0) {
            return done > 0 ? (ssize_t)done : got;
        }
        done += (size_t)got;
        if ((size_t)got < want) {
            break; /* end of file, or a short read: no more now */
        }
    }
    return (ssize_t)done;
}

static ssize_t write_at(struct lfs_file *f, const void *buf, size_t n, uint64_t off)
{
    if (f->access == O_RDONLY) {
        return -EBADF;
    }
    size_t done = 0;
    while (done < n) {
        struct req q;
        int err = req_begin_in(&q, P9_TWRITE, f->sess);
        if (err != 0) {
            return done > 0 ? (ssize_t)done : -err;
        }
        uint32_t max = lsvc_iounit(&lfs.conn);
        uint32_t count = n - done < max ? (uint32_t)(n - done) : max;
        p9_w_u32(&q.w, f->fid);
        p9_w_u64(&q.w, off + done);
        p9_w_u32(&q.w, count);
        q.s->bulk = (const uint8_t *)buf + done;
        q.s->bulk_len = count;
        /* the size field counts the data that follows the header */
        size_t len = p9_w_end(&q.w);
        if (len != 0) {
            uint32_t size = (uint32_t)len + count;
            q.s->req[0] = (uint8_t)size;
            q.s->req[1] = (uint8_t)(size >> 8);
            q.s->req[2] = (uint8_t)(size >> 16);
            q.s->req[3] = (uint8_t)(size >> 24);
        }
        q.s->req_len = len;
        err = len == 0 ? EIO : lsvc_call(&lfs.conn, q.s, LSVC_TIMEOUT);
        uint32_t wrote = 0;
        if (err == 0) {
            struct p9_r r;
            p9_r_init(&r, q.s->fixed, q.s->fixed_len);
            wrote = p9_r_u32(&r);
            if (!p9_r_done(&r) || wrote > count) {
                err = EIO;
            }
        }
        req_end(&q);
        if (err != 0) {
            return done > 0 ? (ssize_t)done : -err;
        }
        done += wrote;
        if (wrote < count) {
            break; /* the file system took less (full): say how much */
        }
    }
    return (ssize_t)done;
}

ssize_t lfs_read(int fd, void *buf, size_t n)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    ssize_t r = read_at(f, buf, n, f->off);
    if (r > 0) {
        f->off += (uint64_t)r;
    }
    file_unlock(f);
    return r < 0 ? fail((int)-r) : r;
}

ssize_t lfs_pread(int fd, void *buf, size_t n, off_t off)
{
    if (off < 0) {
        return fail(EINVAL);
    }
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    ssize_t r = read_at(f, buf, n, (uint64_t)off);
    file_unlock(f);
    return r < 0 ? fail((int)-r) : r;
}

/* Tgetattr of a fid: its basic attributes, or an errno. */
static int attr_of(uint32_t fid, uint32_t sess, struct p9_attr *a)
{
    struct req q;
    int err = req_begin_in(&q, P9_TGETATTR, sess);
    if (err != 0) {
        return err;
    }
    p9_w_u32(&q.w, fid);
    p9_w_u64(&q.w, P9_GETATTR_BASIC);
    err = req_call(&q);
    if (err == 0 && !p9_parse_getattr(q.s->fixed, q.s->fixed_len, a)) {
        err = EIO;
    }
    req_end(&q);
    return err;
}

/* Linux's size of an open file, or -errno. */
static int64_t file_size(struct lfs_file *f)
{
    struct p9_attr a;
    int err = attr_of(f->fid, f->sess, &a);
    return err != 0 ? -err : (int64_t)(a.size & INT64_MAX);
}

ssize_t lfs_write(int fd, const void *buf, size_t n)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    if (f->append) { /* Linux appends whatever the offset; the position follows the end */
        int64_t size = file_size(f);
        if (size >= 0) {
            f->off = (uint64_t)size;
        }
    }
    ssize_t r = write_at(f, buf, n, f->off);
    if (r > 0) {
        f->off += (uint64_t)r;
    }
    file_unlock(f);
    return r < 0 ? fail((int)-r) : r;
}

ssize_t lfs_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (off < 0) {
        return fail(EINVAL);
    }
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    ssize_t r = write_at(f, buf, n, (uint64_t)off);
    file_unlock(f);
    return r < 0 ? fail((int)-r) : r;
}

off_t lfs_lseek(int fd, off_t off, int whence)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    int64_t base;
    if (whence == SEEK_SET) {
        base = 0;
    } else if (whence == SEEK_CUR) {
        base = (int64_t)f->off;
    } else if (whence == SEEK_END) {
        base = file_size(f);
    } else {
        file_unlock(f);
        return fail(EINVAL);
    }
    off_t r;
    if (base < 0) {
        r = fail((int)-base);
    } else if ((off < 0 && -(int64_t)off > base) || (off > 0 && (int64_t)off > INT64_MAX - base)) {
        r = fail(off < 0 ? EINVAL : EOVERFLOW);
    } else if (f->dir && !(whence == SEEK_SET && off == 0)) {
        r = fail(EINVAL); /* a directory only rewinds (rewinddir) */
    } else {
        f->off = (uint64_t)(base + off);
        r = (off_t)f->off;
    }
    file_unlock(f);
    return r;
}

static void fill_stat(const struct p9_attr *a, struct stat *st)
{
    *st = (struct stat){0};
    st->st_ino = (ino_t)a->qid.path;
    st->st_mode = (mode_t)a->mode;
    st->st_nlink = (nlink_t)a->nlink;
    st->st_uid = (uid_t)a->uid;
    st->st_gid = (gid_t)a->gid;
    st->st_rdev = (dev_t)a->rdev;
    st->st_size = (off_t)(a->size & INT64_MAX);
    st->st_blksize = (blksize_t)a->blksize;
    st->st_blocks = (blkcnt_t)a->blocks;
    st->st_atim.tv_sec = (time_t)a->atime_sec;
    st->st_atim.tv_nsec = (long)a->atime_nsec;
    st->st_mtim.tv_sec = (time_t)a->mtime_sec;
    st->st_mtim.tv_nsec = (long)a->mtime_nsec;
    st->st_ctim.tv_sec = (time_t)a->ctime_sec;
    st->st_ctim.tv_nsec = (long)a->ctime_nsec;
}

static int getattr(uint32_t fid, uint32_t sess, struct stat *st)
{
    struct p9_attr a;
    int err = attr_of(fid, sess, &a);
    if (err == 0) {
        fill_stat(&a, st);
    }
    return err;
}

int lfs_fstat(int fd, struct stat *st)
{
    if (st == NULL) {
        return fail(EFAULT);
    }
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    int err = getattr(f->fid, f->sess, st);
    file_unlock(f);
    return err != 0 ? fail(err) : 0;
}

int lfs_stat(const char *path, struct stat *st)
{
    if (st == NULL) {
        return fail(EFAULT);
    }
    struct lfs_path p;
    int err = resolve(path, &p);
    if (err != 0) {
        return fail(err);
    }
    uint32_t fid, sess;
    bool is_dir;
    err = walk(&p, p.n, &fid, &sess, &is_dir);
    if (err != 0) {
        return fail(err);
    }
    err = getattr(fid, sess, st);
    (void)clunk(fid, sess);
    return err != 0 ? fail(err) : 0;
}

/* Walks to the parent of p's last component for an operation on that name (which must exist). */
static int parent(const struct lfs_path *p, uint32_t *fid, uint32_t *sess)
{
    if (p->n == 0) {
        return EBUSY; /* the export's root itself: not removed, renamed or made here */
    }
    bool is_dir;
    return walk(p, p->n - 1, fid, sess, &is_dir);
}

/* Tmkdir of p's last component in its parent. */
int lfs_mkdir(const char *path, mode_t mode)
{
    struct lfs_path p;
    int err = resolve(path, &p);
    if (err != 0) {
        return fail(err);
    }
    if (lfs.ex[p.ex].ro) {
        return fail(EROFS);
    }
    uint32_t dfid, sess;
    err = parent(&p, &dfid, &sess);
    if (err != 0) {
        return fail(err == EBUSY ? EEXIST : err);
    }
    struct req q;
    err = req_begin_in(&q, P9_TMKDIR, sess);
    if (err == 0) {
        unsigned last = p.n - 1;
        p9_w_u32(&q.w, dfid);
        p9_w_str(&q.w, p.buf + p.at[last], p.len[last]);
        p9_w_u32(&q.w, (uint32_t)(mode & 07777));
        p9_w_u32(&q.w, 0); /* gid */
        err = req_call(&q);
        if (err == 0 && q.s->fixed_len != P9_QID) {
            err = EIO;
        }
        req_end(&q);
    }
    (void)clunk(dfid, sess);
    return err != 0 ? fail(err) : 0;
}

/* Tremove of the file (unlink) or directory (rmdir) at path. Tremove rather than 9P2000.L's Tunlinkat,
 * which diod 1.0.24 answers with EOPNOTSUPP. The server clunks the fid whatever the result. */
static int remove_path(const char *path, bool want_dir)
{
    struct lfs_path p;
    int err = resolve(path, &p);
    if (err != 0) {
        return fail(err);
    }
    if (lfs.ex[p.ex].ro) {
        return fail(EROFS);
    }
    if (p.n == 0) {
        return fail(EBUSY); /* the export's root */
    }
    uint32_t fid, sess;
    bool is_dir;
    err = walk(&p, p.n, &fid, &sess, &is_dir);
    if (err != 0) {
        return fail(err);
    }
    if (is_dir != want_dir) {
        (void)clunk(fid, sess);
        return fail(want_dir ? ENOTDIR : EISDIR);
    }
    struct req q;
    err = req_begin_in(&q, P9_TREMOVE, sess);
    if (err == 0) {
        p9_w_u32(&q.w, fid);
        err = req_simple(&q);
    }
    fid_free(fid, sess);
    return err != 0 ? fail(err) : 0;
}

int lfs_unlink(const char *path)
{
    return remove_path(path, false);
}

int lfs_rmdir(const char *path)
{
    return remove_path(path, true);
}

/* Trename (the file's fid, the new parent's, the new name): diod 1.0.24 has no Trenameat. */
int lfs_rename(const char *from, const char *to)
{
    struct lfs_path a, b;
    int err = resolve(from, &a);
    if (err == 0) {
        err = resolve(to, &b);
    }
    if (err != 0) {
        return fail(err);
    }
    if (a.ex != b.ex) {
        return fail(EXDEV);
    }
    if (lfs.ex[a.ex].ro) {
        return fail(EROFS);
    }
    if (a.n == 0 || b.n == 0) {
        return fail(EBUSY);
    }
    uint32_t fid, dfid, sess, sess_b;
    bool is_dir;
    err = walk(&a, a.n, &fid, &sess, &is_dir);
    if (err != 0) {
        return fail(err);
    }
    err = parent(&b, &dfid, &sess_b);
    if (err != 0) {
        (void)clunk(fid, sess);
        return fail(err);
    }
    struct req q;
    err = sess != sess_b ? EBADF : req_begin_in(&q, P9_TRENAME, sess);
    if (err == 0) {
        p9_w_u32(&q.w, fid);
        p9_w_u32(&q.w, dfid);
        p9_w_str(&q.w, b.buf + b.at[b.n - 1], b.len[b.n - 1]);
        err = req_simple(&q);
    }
    (void)clunk(fid, sess);
    (void)clunk(dfid, sess_b);
    return err != 0 ? fail(err) : 0;
}

static int fid_op(int fd, uint8_t type, uint64_t size)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    int err = type == P9_TSETATTR && f->access == O_RDONLY ? EINVAL : 0;
    struct req q;
    if (err == 0) {
        err = req_begin_in(&q, type, f->sess);
    }
    if (err == 0) {
        p9_w_u32(&q.w, f->fid);
        if (type == P9_TSETATTR) {
            p9_w_u32(&q.w, P9_SETATTR_SIZE);
            p9_w_u32(&q.w, 0); /* mode */
            p9_w_u32(&q.w, 0); /* uid */
            p9_w_u32(&q.w, 0); /* gid */
            p9_w_u64(&q.w, size);
            for (unsigned i = 0; i < 4; i++) { /* atime, mtime: not set */
                p9_w_u64(&q.w, 0);
            }
        }
        err = req_simple(&q);
    }
    file_unlock(f);
    return err != 0 ? fail(err) : 0;
}

int lfs_fsync(int fd)
{
    return fid_op(fd, P9_TFSYNC, 0);
}

int lfs_ftruncate(int fd, off_t len)
{
    if (len < 0) {
        return fail(EINVAL);
    }
    return fid_op(fd, P9_TSETATTR, (uint64_t)len);
}

ssize_t lfs_readdir(int fd, void *buf, size_t cap)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    ssize_t r = f->dir ? read_once(f, buf, cap, f->off, P9_TREADDIR) : -ENOTDIR;
    file_unlock(f);
    return r < 0 ? fail((int)-r) : r;
}

int lfs_seekdir(int fd, uint64_t cookie)
{
    struct lfs_file *f = file_lock(fd);
    if (f == NULL) {
        return -1;
    }
    f->off = cookie;
    file_unlock(f);
    return 0;
}

void lfs_stats(struct lsvc_stats *out)
{
    if (lfs.n_ex == 0) {
        *out = (struct lsvc_stats){0};
        return;
    }
    lsvc_get_stats(&lfs.conn, out);
}
