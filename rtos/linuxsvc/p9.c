/*
 * 9P2000.L encoding and the checks on replies (p9.h). Every read and write is bounded by its buffer.
 */
#include "p9.h"

#include <errno.h>
#include <string.h>

void p9_w_begin(struct p9_w *w, uint8_t *buf, size_t cap, uint8_t type, uint16_t tag)
{
    *w = (struct p9_w){.buf = buf, .cap = cap};
    p9_w_u32(w, 0); /* the size, written by p9_w_end */
    p9_w_u8(w, type);
    p9_w_u16(w, tag);
}

static uint8_t *w_room(struct p9_w *w, size_t n)
{
    if (w->over || n > w->cap - w->len) {
        w->over = true;
        return NULL;
    }
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        p[i] = (uint8_t)(v >> (8u * i));
    }
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        v |= (uint64_t)p[i] << (8u * i);
    }
    return v;
}

static void w_int(struct p9_w *w, uint64_t v, unsigned n)
{
    uint8_t *p = w_room(w, n);
    if (p != NULL) {
        put_le(p, v, n);
    }
}

void p9_w_u8(struct p9_w *w, uint8_t v)
{
    w_int(w, v, 1);
}

void p9_w_u16(struct p9_w *w, uint16_t v)
{
    w_int(w, v, 2);
}

void p9_w_u32(struct p9_w *w, uint32_t v)
{
    w_int(w, v, 4);
}

void p9_w_u64(struct p9_w *w, uint64_t v)
{
    w_int(w, v, 8);
}

void p9_w_bytes(struct p9_w *w, const void *p, size_t n)
{
    uint8_t *d = w_room(w, n);
    if (d != NULL && n != 0) {
        memcpy(d, p, n);
    }
}

void p9_w_str(struct p9_w *w, const char *s, size_t n)
{
    if (n > UINT16_MAX) {
        w->over = true;
        return;
    }
    p9_w_u16(w, (uint16_t)n);
    p9_w_bytes(w, s, n);
}

size_t p9_w_end(struct p9_w *w)
{
    if (w->over || w->len > UINT32_MAX) {
        return 0;
    }
    put_le(w->buf, w->len, 4);
    return w->len;
}

void p9_r_init(struct p9_r *r, const uint8_t *buf, size_t len)
{
    *r = (struct p9_r){.buf = buf, .len = len};
}

static const uint8_t *r_take(struct p9_r *r, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->buf + r->pos;
    r->pos += n;
    return p;
}

static uint64_t r_int(struct p9_r *r, unsigned n)
{
    const uint8_t *p = r_take(r, n);
    return p == NULL ? 0 : get_le(p, n);
}

uint8_t p9_r_u8(struct p9_r *r)
{
    return (uint8_t)r_int(r, 1);
}

uint16_t p9_r_u16(struct p9_r *r)
{
    return (uint16_t)r_int(r, 2);
}

uint32_t p9_r_u32(struct p9_r *r)
{
    return (uint32_t)r_int(r, 4);
}

uint64_t p9_r_u64(struct p9_r *r)
{
    return r_int(r, 8);
}

void p9_r_str(struct p9_r *r, const char **s, uint16_t *n)
{
    uint16_t len = p9_r_u16(r);
    const uint8_t *p = r_take(r, len);
    *s = p == NULL ? "" : (const char *)p;
    *n = p == NULL ? 0 : len;
}

void p9_r_qid(struct p9_r *r, struct p9_qid *q)
{
    q->type = p9_r_u8(r);
    q->version = p9_r_u32(r);
    q->path = p9_r_u64(r);
}

bool p9_r_done(const struct p9_r *r)
{
    return !r->bad && r->pos == r->len;
}

void p9_hdr_parse(const uint8_t raw[P9_HDR], struct p9_hdr *h)
{
    h->size = (uint32_t)get_le(raw, 4);
    h->type = raw[4];
    h->tag = (uint16_t)get_le(raw + 5, 2);
}

uint8_t p9_reply_type(uint8_t t)
{
    switch (t) {
    case P9_TSTATFS:
    case P9_TLOPEN:
    case P9_TLCREATE:
    case P9_TGETATTR:
    case P9_TSETATTR:
    case P9_TREADDIR:
    case P9_TFSYNC:
    case P9_TMKDIR:
    case P9_TRENAMEAT:
    case P9_TUNLINKAT:
    case P9_TVERSION:
    case P9_TATTACH:
    case P9_TFLUSH:
    case P9_TWALK:
    case P9_TREAD:
    case P9_TWRITE:
    case P9_TCLUNK:
    case P9_TRENAME:
    case P9_TREMOVE:
        return (uint8_t)(t + 1u);
    default:
        return 0;
    }
}

bool p9_hdr_ok(const struct p9_hdr *h, uint32_t msize)
{
    if (h->size < P9_HDR || h->size > msize) {
        return false;
    }
    return h->type == P9_RLERROR || p9_reply_type((uint8_t)(h->type - 1u)) == h->type;
}

size_t p9_bulk_at(uint8_t type)
{
    return type == P9_RREAD || type == P9_RREADDIR ? 4u : 0u;
}

bool p9_parse_getattr(const uint8_t *body, size_t len, struct p9_attr *a)
{
    struct p9_r r;
    p9_r_init(&r, body, len);
    a->valid = p9_r_u64(&r);
    p9_r_qid(&r, &a->qid);
    a->mode = p9_r_u32(&r);
    a->uid = p9_r_u32(&r);
    a->gid = p9_r_u32(&r);
    a->nlink = p9_r_u64(&r);
    a->rdev = p9_r_u64(&r);
    a->size = p9_r_u64(&r);
    a->blksize = p9_r_u64(&r);
    a->blocks = p9_r_u64(&r);
    a->atime_sec = p9_r_u64(&r);
    a->atime_nsec = p9_r_u64(&r);
    a->mtime_sec = p9_r_u64(&r);
    a->mtime_nsec = p9_r_u64(&r);
    a->ctime_sec = p9_r_u64(&r);
    a->ctime_nsec = p9_r_u64(&r);
    for (unsigned i = 0; i < 4; i++) { /* btime (2), gen, data_version: not used */
        (void)p9_r_u64(&r);
    }
    return p9_r_done(&r);
}

bool p9_next_dirent(const uint8_t *data, size_t len, size_t *pos, struct p9_dirent *e, bool *bad)
{
    *bad = false;
    if (*pos >= len) {
        return false;
    }
    struct p9_r r;
    p9_r_init(&r, data, len);
    r.pos = *pos;
    p9_r_qid(&r, &e->qid);
    e->offset = p9_r_u64(&r);
    e->type = p9_r_u8(&r);
    p9_r_str(&r, &e->name, &e->name_len);
    if (r.bad || e->name_len == 0 || memchr(e->name, '/', e->name_len) != NULL ||
        memchr(e->name, '\0', e->name_len) != NULL) {
        *bad = true;
        return false;
    }
    *pos = r.pos;
    return true;
}

int p9_errno_local(uint32_t linux_errno)
{
    /* Linux's numbers (asm-generic/errno*.h, which arm64 uses) from 35 up that a file or socket call
     * may meet, with the C library's name for each. */
    static const struct {
        uint16_t linux_no;
        int local;
    } map[] = {
        {35, EDEADLK},      {36, ENAMETOOLONG},  {37, ENOLCK},          {38, ENOSYS},
        {39, ENOTEMPTY},    {40, ELOOP},         {42, ENOMSG},          {61, ENODATA},
        {62, ETIME},        {71, EPROTO},        {74, EBADMSG},         {75, EOVERFLOW},
        {84, EILSEQ},       {88, ENOTSOCK},      {89, EDESTADDRREQ},    {90, EMSGSIZE},
        {91, EPROTOTYPE},   {92, ENOPROTOOPT},   {93, EPROTONOSUPPORT}, {95, EOPNOTSUPP},
        {97, EAFNOSUPPORT}, {98, EADDRINUSE},    {99, EADDRNOTAVAIL},   {100, ENETDOWN},
        {101, ENETUNREACH}, {103, ECONNABORTED}, {104, ECONNRESET},     {105, ENOBUFS},
        {106, EISCONN},     {107, ENOTCONN},     {110, ETIMEDOUT},      {111, ECONNREFUSED},
        {112, EHOSTDOWN},   {113, EHOSTUNREACH}, {114, EALREADY},       {115, EINPROGRESS},
        {116, ESTALE},      {122, EDQUOT},       {125, ECANCELED},
    };
    if (linux_errno >= 1 && linux_errno <= 34) {
        return (int)linux_errno; /* EPERM .. ERANGE: the same numbers */
    }
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (map[i].linux_no == linux_errno) {
            return map[i].local;
        }
    }
    return EIO;
}
