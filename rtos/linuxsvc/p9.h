/*
 * 9P2000.L messages: what the rtos's file client sends and the checks on what Linux answers.
 *
 * Pure functions over byte buffers (no kernel, no allocation), so the host fuzzes them with sanitizers
 * (tests/unit/c/fuzz_p9.c). Little endian, as 9P is. A writer never writes past its buffer: a message
 * that does not fit sets `over` and is not sent. A reader never reads past its frame: a field that does
 * not fit sets `bad`, returns zeros, and the caller refuses the whole reply.
 *
 * The messages, fields and numbers are 9P2000.L's as Linux's v9fs client and diod use them.
 */
#ifndef RTOS_LINUXSVC_P9_H
#define RTOS_LINUXSVC_P9_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* size[4] type[1] tag[2] */
#define P9_HDR      7u
#define P9_NOTAG    0xFFFFu
#define P9_NOFID    0xFFFFFFFFu
#define P9_MAXWELEM 16u /* names in one Twalk */
#define P9_QID      13u /* type[1] version[4] path[8] */
/* What a Tread/Twrite may carry is msize less this: 9P's I/O header allowance (Linux's v9fs and diod
 * both take 24, one more than Twrite's 23 bytes before its data). */
#define P9_IOHDR 24u
/* The largest message either side sends: the client offers it in Tversion and the server may lower it.
 * 8 KiB + the I/O header: a read or write of 8 KiB is one message, and two fit the default 16 KiB ring. */
#define P9_MSIZE (8192u + P9_IOHDR)
/* Bytes of an Rread/Rreaddir header before the data (size type tag count). */
#define P9_RIOHDR 11u

enum p9_type {
    P9_RLERROR = 7,
    P9_TSTATFS = 8,
    P9_TRENAME = 20,
    P9_RRENAME = 21,
    P9_TLOPEN = 12,
    P9_RLOPEN = 13,
    P9_TLCREATE = 14,
    P9_RLCREATE = 15,
    P9_TGETATTR = 24,
    P9_RGETATTR = 25,
    P9_TSETATTR = 26,
    P9_RSETATTR = 27,
    P9_TREADDIR = 40,
    P9_RREADDIR = 41,
    P9_TFSYNC = 50,
    P9_RFSYNC = 51,
    P9_TMKDIR = 72,
    P9_RMKDIR = 73,
    P9_TRENAMEAT = 74,
    P9_RRENAMEAT = 75,
    P9_TUNLINKAT = 76,
    P9_RUNLINKAT = 77,
    P9_TVERSION = 100,
    P9_RVERSION = 101,
    P9_TATTACH = 104,
    P9_RATTACH = 105,
    P9_TFLUSH = 108,
    P9_RFLUSH = 109,
    P9_TWALK = 110,
    P9_RWALK = 111,
    P9_TREAD = 116,
    P9_RREAD = 117,
    P9_TWRITE = 118,
    P9_RWRITE = 119,
    P9_TCLUNK = 120,
    P9_RCLUNK = 121,
    P9_TREMOVE = 122,
    P9_RREMOVE = 123,
};

/* Tlopen/Tlcreate flags (9P2000.L's own numbers, Linux's generic open flags). */
#define P9_L_RDONLY 0u
#define P9_L_WRONLY 1u
#define P9_L_RDWR   2u
#define P9_L_CREAT  0100u
#define P9_L_EXCL   0200u
#define P9_L_TRUNC  01000u
#define P9_L_APPEND 02000u

/* Tgetattr request mask: the basic fields (mode .. blocks); Tsetattr valid bits. */
#define P9_GETATTR_BASIC 0x7FFu
#define P9_SETATTR_SIZE  0x8u

/* qid types */
#define P9_QTDIR     0x80u
#define P9_QTSYMLINK 0x02u

struct p9_qid {
    uint8_t type;
    uint32_t version;
    uint64_t path;
};

struct p9_attr {
    uint64_t valid;
    struct p9_qid qid;
    uint32_t mode, uid, gid;
    uint64_t nlink, rdev, size, blksize, blocks;
    uint64_t atime_sec, atime_nsec, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

struct p9_dirent {
    struct p9_qid qid;
    uint64_t offset; /* the cookie of the next entry */
    uint8_t type;    /* DT_* */
    const char *name;
    uint16_t name_len; /* name is not NUL-terminated */
};

/* ------------------------------------------------------------------------------------------- writing */

struct p9_w {
    uint8_t *buf;
    size_t cap, len;
    bool over; /* something did not fit: the message is not valid */
};

/* Starts a message of `type` with `tag` in buf (its size is written by p9_w_end). */
void p9_w_begin(struct p9_w *w, uint8_t *buf, size_t cap, uint8_t type, uint16_t tag);
void p9_w_u8(struct p9_w *w, uint8_t v);
void p9_w_u16(struct p9_w *w, uint16_t v);
void p9_w_u32(struct p9_w *w, uint32_t v);
void p9_w_u64(struct p9_w *w, uint64_t v);
/* A string of n bytes (9P: len[2] then the bytes; n above 65535 sets over). */
void p9_w_str(struct p9_w *w, const char *s, size_t n);
void p9_w_bytes(struct p9_w *w, const void *p, size_t n);
/* Writes the size field; returns the message length, or 0 if something did not fit. */
size_t p9_w_end(struct p9_w *w);

/* ------------------------------------------------------------------------------------------- reading */

struct p9_r {
    const uint8_t *buf;
    size_t len, pos;
    bool bad; /* a field went past the end, or a value was out of range */
};

void p9_r_init(struct p9_r *r, const uint8_t *buf, size_t len);
uint8_t p9_r_u8(struct p9_r *r);
uint16_t p9_r_u16(struct p9_r *r);
uint32_t p9_r_u32(struct p9_r *r);
uint64_t p9_r_u64(struct p9_r *r);
/* A string: its bytes stay in the buffer (*s, *n); not NUL-terminated. */
void p9_r_str(struct p9_r *r, const char **s, uint16_t *n);
void p9_r_qid(struct p9_r *r, struct p9_qid *q);
/* True when every byte was read and nothing was bad: a reply with bytes left over is refused too. */
bool p9_r_done(const struct p9_r *r);

/* --------------------------------------------------------------------------------------------- frames */

/* What a frame header says. */
struct p9_hdr {
    uint32_t size;
    uint8_t type;
    uint16_t tag;
};

void p9_hdr_parse(const uint8_t raw[P9_HDR], struct p9_hdr *h);
/* Whether a reply header may be followed: size within [P9_HDR, msize] and an R-message type. */
bool p9_hdr_ok(const struct p9_hdr *h, uint32_t msize);
/* The R type answering T type t (t + 1), 0 if t is not a request. */
uint8_t p9_reply_type(uint8_t t);
/* For replies that carry bulk data (Rread, Rreaddir): the bytes of the body before it (count[4]);
 * 0 for every other type (the whole body is fixed fields). */
size_t p9_bulk_at(uint8_t type);
/* The largest body of a reply without bulk data that the client accepts (Rwalk with 16 qids). */
#define P9_FIXED_MAX (2u + P9_MAXWELEM * P9_QID)

/* ---------------------------------------------------------------------------------------- the replies */

/* Rgetattr's body into *a; false if malformed. */
bool p9_parse_getattr(const uint8_t *body, size_t len, struct p9_attr *a);
/* Rreaddir's data: the entry at *pos (advanced past it); false at the end or on a malformed entry
 * (*bad set then). */
bool p9_next_dirent(const uint8_t *data, size_t len, size_t *pos, struct p9_dirent *e, bool *bad);

/* Linux's errno value (Rlerror) as the rtos C library's: the numbers below 35 are the same, the others
 * differ (picolibc's are newlib's). Unknown values become EIO. */
int p9_errno_local(uint32_t linux_errno);

#endif /* RTOS_LINUXSVC_P9_H */
