/*
 * Host stand-ins for rtos/linuxsvc/ (svc_host.h): the kernel objects as pthread objects found by their
 * address, the channel as a stream socket.
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

static struct mtx {
    const void *key;
    pthread_mutex_t m;
    pthread_cond_t c;
    bool locked;
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
    pthread_mutex_unlock(&table);
    return free_one;
}

/* A mutex with a timeout on CLOCK_MONOTONIC: a flag under a pthread mutex and a condition. */
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
    while (x->locked) {
        if (pthread_cond_timedwait(&x->c, &x->m, &until) == ETIMEDOUT && x->locked) {
            pthread_mutex_unlock(&x->m);
            return RT_ETIMEDOUT;
        }
    }
    x->locked = true;
    pthread_mutex_unlock(&x->m);
    return RT_OK;
}

int rt_mutex_unlock(rt_mutex_t *m)
{
    struct mtx *x = mtx_of(m);
    pthread_mutex_lock(&x->m);
    x->locked = false;
    pthread_cond_signal(&x->c);
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

/* ------------------------------------------------------------------------------------- the channel */

struct rt_chan {
    int unused;
};

static struct rt_chan the_chan;
static pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;
static int chan_fd = -1;
static bool chan_open, chan_eof;
static unsigned chan_events;
static uint64_t chan_sent;
static void (*close_hook)(void);

void svc_host_set_fd(int fd)
{
    pthread_mutex_lock(&chan_lock);
    chan_fd = fd;
    chan_eof = false;
    chan_events |= RT_CHAN_CONNECT;
    pthread_mutex_unlock(&chan_lock);
}

void svc_host_on_close(void (*fn)(void))
{
    close_hook = fn;
}

uint64_t svc_host_sent(void)
{
    pthread_mutex_lock(&chan_lock);
    uint64_t n = chan_sent;
    pthread_mutex_unlock(&chan_lock);
    return n;
}

static int fd_now(void)
{
    pthread_mutex_lock(&chan_lock);
    int fd = chan_eof ? -1 : chan_fd;
    pthread_mutex_unlock(&chan_lock);
    return fd;
}

static void saw_eof(void)
{
    pthread_mutex_lock(&chan_lock);
    if (!chan_eof) {
        chan_eof = true;
        chan_events |= RT_CHAN_DISCONNECT;
    }
    pthread_mutex_unlock(&chan_lock);
}

int rt_chan_open(const char *name, rt_chan_t **out)
{
    if (strcmp(name, "rtmux-files") != 0) {
        return RT_ENOENT;
    }
    pthread_mutex_lock(&chan_lock);
    int r = chan_open ? RT_EBUSY : RT_OK;
    chan_open = true;
    pthread_mutex_unlock(&chan_lock);
    *out = &the_chan;
    return r;
}

int rt_chan_close(rt_chan_t *ch)
{
    (void)ch;
    pthread_mutex_lock(&chan_lock);
    chan_open = false;
    if (chan_fd >= 0) {
        close(chan_fd);
    }
    chan_fd = -1;
    chan_eof = false;
    chan_events = 0;
    pthread_mutex_unlock(&chan_lock);
    if (close_hook != NULL) {
        close_hook();
    }
    return RT_OK;
}

int rt_chan_send(rt_chan_t *ch, const void *buf, size_t len, rt_time_t timeout)
{
    (void)ch;
    (void)timeout;
    int fd = fd_now();
    if (fd < 0) {
        return RT_ENOTCONN;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
        if (n <= 0) {
            saw_eof();
            break;
        }
        done += (size_t)n;
    }
    pthread_mutex_lock(&chan_lock);
    chan_sent += done;
    pthread_mutex_unlock(&chan_lock);
    return done == 0 && len != 0 ? RT_ENOTCONN : (int)done;
}

int rt_chan_recv(rt_chan_t *ch, void *buf, size_t len, rt_time_t timeout)
{
    (void)ch;
    (void)timeout; /* linuxsvc only receives what is there (RT_NO_WAIT) */
    int fd = fd_now();
    if (fd < 0) {
        return RT_EWOULDBLOCK;
    }
    ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
        return (int)n;
    }
    if (n == 0) {
        saw_eof();
    }
    return RT_EWOULDBLOCK;
}

int rt_chan_wait(rt_chan_t *const chans[], unsigned n, unsigned want, unsigned ready[], rt_time_t timeout)
{
    (void)chans;
    (void)n;
    rt_time_t deadline = rt_time_now() + timeout;
    for (;;) {
        pthread_mutex_lock(&chan_lock);
        unsigned ev = chan_events & want & (RT_CHAN_CONNECT | RT_CHAN_DISCONNECT);
        chan_events &= ~ev;
        int fd = chan_eof ? -1 : chan_fd;
        pthread_mutex_unlock(&chan_lock);
        if (ev != 0) {
            ready[0] = ev;
            return 1;
        }
        rt_time_t now = rt_time_now();
        if (now >= deadline) {
            return timeout == RT_NO_WAIT ? RT_EWOULDBLOCK : RT_ETIMEDOUT;
        }
        if (fd < 0) {
            usleep(1000);
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = (int)((deadline - now) / 1000000u) + 1;
        if (poll(&p, 1, ms > 50 ? 50 : ms) > 0) {
            char c;
            ssize_t k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (k > 0 && (want & RT_CHAN_READABLE) != 0) {
                ready[0] = RT_CHAN_READABLE;
                return 1;
            }
            if (k == 0) {
                saw_eof();
            }
        }
    }
}

bool rt_chan_connected(rt_chan_t *ch)
{
    (void)ch;
    return fd_now() >= 0;
}

unsigned rt_chan_events(rt_chan_t *ch)
{
    (void)ch;
    pthread_mutex_lock(&chan_lock);
    unsigned ev = chan_events & (RT_CHAN_CONNECT | RT_CHAN_DISCONNECT);
    chan_events = 0;
    pthread_mutex_unlock(&chan_lock);
    return ev;
}
