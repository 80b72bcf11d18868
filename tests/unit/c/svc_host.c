/*
 * Host stand-ins for rtos/linuxsvc/ (svc_host.h): the kernel objects as pthread objects found by their
 * address, each channel as a stream socket.
 */
#include "svc_host.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rtos/chan.h"
#include "rtos/console.h"
#include "rtos/sync.h"
#include "rtos/system.h"
#include "rtos/time.h"

static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;

rt_time_t rt_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (rt_time_t)ts.tv_sec * 1000000000u + (rt_time_t)ts.tv_nsec;
}

static struct timespec abs_after(rt_time_t timeout)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout % 1000000000u;
    ts.tv_sec += (time_t)(timeout / 1000000000u + ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return ts;
}

int rt_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

/* ---------------------------------------------------------------------------- mutexes, semaphores */

#define OBJS 128

/* A waiter for a mutex, in the mutex's FIFO (on the waiter's stack). */
struct mtx_waiter {
    bool granted;
    struct mtx_waiter *next;
};

static struct mtx {
    const void *key;
    pthread_mutex_t m;
    pthread_cond_t c;
    bool locked;
    struct mtx_waiter *head, *tail;
} mtxs[OBJS];

static struct sem {
    const void *key;
    pthread_mutex_t m;
    pthread_cond_t c;
    uint32_t count, max;
} sems[OBJS];

static void cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
}

static struct mtx *mtx_of(const void *key)
{
    pthread_mutex_lock(&table);
    struct mtx *free_one = NULL;
    for (unsigned i = 0; i < OBJS; i++) {
        if (mtxs[i].key == key) {
            pthread_mutex_unlock(&table);
            return &mtxs[i];
        }
        if (mtxs[i].key == NULL && free_one == NULL) {
            free_one = &mtxs[i];
        }
    }
    free_one->key = key;
    pthread_mutex_init(&free_one->m, NULL);
    cond_init(&free_one->c);
    free_one->locked = false;
    free_one->head = free_one->tail = NULL;
    pthread_mutex_unlock(&table);
    return free_one;
}

/* A mutex with a timeout on CLOCK_MONOTONIC that, as the rtos's, hands itself over at an unlock to its
 * first waiter (here first come, the rtos: most urgent first), who owns it before it even runs. */
int rt_mutex_init(rt_mutex_t *m)
{
    (void)mtx_of(m);
    return RT_OK;
}

int rt_mutex_lock(rt_mutex_t *m, rt_time_t timeout)
{
    struct mtx *x = mtx_of(m);
    struct timespec until = abs_after(timeout == RT_FOREVER ? RT_SEC(3600) : timeout);
    pthread_mutex_lock(&x->m);
    if (!x->locked) {
        x->locked = true;
        pthread_mutex_unlock(&x->m);
        return RT_OK;
    }
    struct mtx_waiter me = {.granted = false};
    if (x->tail != NULL) {
        x->tail->next = &me;
    } else {
        x->head = &me;
    }
    x->tail = &me;
    while (!me.granted) {
        if (pthread_cond_timedwait(&x->c, &x->m, &until) == ETIMEDOUT && !me.granted) {
            struct mtx_waiter **p = &x->head, *prev = NULL; /* leave the queue */
            while (*p != &me) {
                prev = *p;
                p = &(*p)->next;
            }
            *p = me.next;
            if (x->tail == &me) {
                x->tail = prev;
            }
            pthread_mutex_unlock(&x->m);
            return RT_ETIMEDOUT;
        }
    }
    pthread_mutex_unlock(&x->m);
    return RT_OK;
}

int rt_mutex_unlock(rt_mutex_t *m)
{
    struct mtx *x = mtx_of(m);
    pthread_mutex_lock(&x->m);
    struct mtx_waiter *w = x->head;
    if (w != NULL) { /* stays locked: w owns it now */
        x->head = w->next;
        if (x->head == NULL) {
            x->tail = NULL;
        }
        w->granted = true;
        pthread_cond_broadcast(&x->c);
    } else {
        x->locked = false;
    }
    pthread_mutex_unlock(&x->m);
    return RT_OK;
}

static struct sem *sem_of(const void *key)
{
    pthread_mutex_lock(&table);
    struct sem *free_one = NULL;
    for (unsigned i = 0; i < OBJS; i++) {
        if (sems[i].key == key) {
            pthread_mutex_unlock(&table);
            return &sems[i];
        }
        if (sems[i].key == NULL && free_one == NULL) {
            free_one = &sems[i];
        }
    }
    free_one->key = key;
    pthread_mutex_init(&free_one->m, NULL);
    cond_init(&free_one->c);
    pthread_mutex_unlock(&table);
    return free_one;
}

int rt_sem_init(rt_sem_t *s, uint32_t initial, uint32_t max)
{
    struct sem *x = sem_of(s);
    x->count = initial;
    x->max = max;
    return RT_OK;
}

int rt_sem_take(rt_sem_t *s, rt_time_t timeout)
{
    struct sem *x = sem_of(s);
    struct timespec until = abs_after(timeout == RT_FOREVER ? RT_SEC(3600) : timeout);
    pthread_mutex_lock(&x->m);
    while (x->count == 0) {
        if (pthread_cond_timedwait(&x->c, &x->m, &until) == ETIMEDOUT && x->count == 0) {
            pthread_mutex_unlock(&x->m);
            return RT_ETIMEDOUT;
        }
    }
    x->count--;
    pthread_mutex_unlock(&x->m);
    return RT_OK;
}

int rt_sem_give(rt_sem_t *s)
{
    struct sem *x = sem_of(s);
    pthread_mutex_lock(&x->m);
    int r = RT_OK;
    if (x->count >= x->max) {
        r = RT_EOVERFLOW;
    } else {
        x->count++;
        pthread_cond_signal(&x->c);
    }
    pthread_mutex_unlock(&x->m);
    return r;
}

/* ------------------------------------------------------------------------------------------ the DTB */

static char exports[1024];
static uint32_t exports_len;
static uint8_t exports_ro[32];

void svc_host_set_exports(const char *const *paths, const bool *ro, unsigned n)
{
    exports_len = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t len = strlen(paths[i]) + 1;
        memcpy(exports + exports_len, paths[i], len);
        exports_len += (uint32_t)len;
        memset(exports_ro + 4 * i, 0, 4);
        exports_ro[4 * i + 3] = ro[i] ? 1 : 0;
    }
}

const void *rt_dt_prop(const char *path, const char *name, uint32_t *len)
{
    if (strcmp(path, "/rtmux-services") != 0 || exports_len == 0) {
        return NULL;
    }
    if (strcmp(name, "rtmux,files") == 0) {
        *len = exports_len;
        return exports;
    }
    if (strcmp(name, "rtmux,files-ro") == 0) {
        *len = sizeof(exports_ro);
        return exports_ro;
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------ the channels */

/* A channel: its Linux end is the other end of a stream socket (a server process or thread, or the
 * test itself). */
struct rt_chan {
    const char *name;
    int fd;
    bool open, eof;
    unsigned events; /* latched CONNECT / DISCONNECT */
    uint64_t sent;
    void (*close_hook)(void);
};

#define CHANS 8

static struct rt_chan chans[CHANS];
static pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;

/* The channel `name`, made on first mention (under chan_lock). */
static struct rt_chan *chan_named(const char *name)
{
    for (unsigned i = 0; i < CHANS; i++) {
        if (chans[i].name != NULL && strcmp(chans[i].name, name) == 0) {
            return &chans[i];
        }
    }
    for (unsigned i = 0; i < CHANS; i++) {
        if (chans[i].name == NULL) {
            chans[i] = (struct rt_chan){.name = name, .fd = -1};
            return &chans[i];
        }
    }
    return NULL;
}

void svc_host_set_chan_fd(const char *name, int fd)
{
    pthread_mutex_lock(&chan_lock);
    struct rt_chan *c = chan_named(name);
    c->fd = fd;
    c->eof = false;
    c->events |= fd >= 0 ? RT_CHAN_CONNECT : 0u;
    pthread_mutex_unlock(&chan_lock);
}

void svc_host_on_chan_close(const char *name, void (*fn)(void))
{
    pthread_mutex_lock(&chan_lock);
    chan_named(name)->close_hook = fn;
    pthread_mutex_unlock(&chan_lock);
}

uint64_t svc_host_chan_sent(const char *name)
{
    pthread_mutex_lock(&chan_lock);
    uint64_t n = chan_named(name)->sent;
    pthread_mutex_unlock(&chan_lock);
    return n;
}

void svc_host_set_fd(int fd)
{
    svc_host_set_chan_fd("rtmux-files", fd);
}

void svc_host_on_close(void (*fn)(void))
{
    svc_host_on_chan_close("rtmux-files", fn);
}

uint64_t svc_host_sent(void)
{
    return svc_host_chan_sent("rtmux-files");
}

static int fd_now(struct rt_chan *c)
{
    pthread_mutex_lock(&chan_lock);
    int fd = c->eof ? -1 : c->fd;
    pthread_mutex_unlock(&chan_lock);
    return fd;
}

static void saw_eof(struct rt_chan *c)
{
    pthread_mutex_lock(&chan_lock);
    if (!c->eof) {
        c->eof = true;
        c->events |= RT_CHAN_DISCONNECT;
    }
    pthread_mutex_unlock(&chan_lock);
}

/* A channel exists once the test gave it a socket (or a hook); others are RT_ENOENT. */
int rt_chan_open(const char *name, rt_chan_t **out)
{
    pthread_mutex_lock(&chan_lock);
    struct rt_chan *c = NULL;
    for (unsigned i = 0; i < CHANS && c == NULL; i++) {
        if (chans[i].name != NULL && strcmp(chans[i].name, name) == 0) {
            c = &chans[i];
        }
    }
    int r = c == NULL ? RT_ENOENT : c->open ? RT_EBUSY : RT_OK;
    if (r == RT_OK) {
        c->open = true;
        *out = c;
    }
    pthread_mutex_unlock(&chan_lock);
    return r;
}

int rt_chan_close(rt_chan_t *c)
{
    pthread_mutex_lock(&chan_lock);
    c->open = false;
    if (c->fd >= 0) {
        close(c->fd);
    }
    c->fd = -1;
    c->eof = false;
    c->events = 0;
    void (*hook)(void) = c->close_hook;
    pthread_mutex_unlock(&chan_lock);
    if (hook != NULL) {
        hook();
    }
    return RT_OK;
}

int rt_chan_send(rt_chan_t *c, const void *buf, size_t len, rt_time_t timeout)
{
    (void)timeout;
    int fd = fd_now(c);
    if (fd < 0) {
        return RT_ENOTCONN;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
        if (n <= 0) {
            saw_eof(c);
            break;
        }
        done += (size_t)n;
    }
    pthread_mutex_lock(&chan_lock);
    c->sent += done;
    pthread_mutex_unlock(&chan_lock);
    return done == 0 && len != 0 ? RT_ENOTCONN : (int)done;
}

int rt_chan_recv(rt_chan_t *c, void *buf, size_t len, rt_time_t timeout)
{
    (void)timeout; /* linuxsvc only receives what is there (RT_NO_WAIT) */
    int fd = fd_now(c);
    if (fd < 0) {
        return RT_EWOULDBLOCK;
    }
    ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
        return (int)n;
    }
    if (n == 0) {
        saw_eof(c);
    }
    return RT_EWOULDBLOCK;
}

/* A channel's conditions now (under nothing: it takes chan_lock itself). */
static unsigned conditions(struct rt_chan *c)
{
    int fd = fd_now(c);
    unsigned cond = 0;
    if (fd >= 0) {
        char b;
        ssize_t k = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (k > 0) {
            cond |= RT_CHAN_READABLE;
        } else if (k == 0) {
            saw_eof(c);
        } else {
            cond |= RT_CHAN_WRITABLE; /* a socket to a live peer takes what is sent */
        }
        if (k > 0) {
            cond |= RT_CHAN_WRITABLE;
        }
    }
    pthread_mutex_lock(&chan_lock);
    cond |= c->events & (RT_CHAN_CONNECT | RT_CHAN_DISCONNECT);
    if (c->eof) {
        cond &= ~(unsigned)RT_CHAN_WRITABLE;
    }
    pthread_mutex_unlock(&chan_lock);
    return cond;
}

int rt_chan_wait(rt_chan_t *const list[], unsigned n, unsigned want, unsigned ready[], rt_time_t timeout)
{
    if (n == 0 || n > 32) {
        return RT_EINVAL;
    }
    rt_time_t now = rt_time_now();
    rt_time_t deadline = timeout > RT_SEC(3600) ? now + RT_SEC(3600) : now + timeout;
    for (;;) {
        int count = 0;
        for (unsigned i = 0; i < n; i++) {
            ready[i] = conditions(list[i]) & want;
            count += ready[i] != 0;
        }
        if (count > 0) {
            pthread_mutex_lock(&chan_lock);
            for (unsigned i = 0; i < n; i++) {
                list[i]->events &= ~ready[i]; /* the latched events reported */
            }
            pthread_mutex_unlock(&chan_lock);
            return count;
        }
        now = rt_time_now();
        if (now >= deadline) {
            return timeout == RT_NO_WAIT ? RT_EWOULDBLOCK : RT_ETIMEDOUT;
        }
        struct pollfd p[32];
        nfds_t np = 0;
        for (unsigned i = 0; i < n; i++) {
            int fd = fd_now(list[i]);
            if (fd >= 0) {
                p[np++] = (struct pollfd){.fd = fd, .events = POLLIN};
            }
        }
        /* at most 5 ms at a time: a connect (svc_host_set_chan_fd) or a close shows no socket event */
        int ms = (int)((deadline - now) / 1000000u) + 1;
        (void)poll(p, np, ms > 5 ? 5 : ms);
    }
}

bool rt_chan_connected(rt_chan_t *c)
{
    return fd_now(c) >= 0;
}

unsigned rt_chan_events(rt_chan_t *c)
{
    pthread_mutex_lock(&chan_lock);
    unsigned ev = c->events & (RT_CHAN_CONNECT | RT_CHAN_DISCONNECT);
    c->events = 0;
    pthread_mutex_unlock(&chan_lock);
    return ev;
}
