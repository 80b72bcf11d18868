/*
 * The physical console, shared by every CPU under one lock. Lines of different writers never mix: a
 * partition's unfinished line (a prompt) is ended on screen before anything else is written.
 */
#include "hyp/console.h"

#include "arch/spinlock.h"
#include "drivers/pl011.h"
#include "lib/string.h"

static spinlock_t con_lock;
static bool con_tags = true;
/* Tag of the partition whose output line is open on the console (printed without its newline), or NULL.
 * Protected by con_lock. */
static const char *open_owner;

void con_init(void)
{
    pl011_init();
}

void con_set_tags(bool tags)
{
    con_tags = tags;
}

/* Caller holds con_lock. */
static void emit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            pl011_putc('\r');
        }
        pl011_putc(s[i]);
    }
}

void con_write(const char *s, size_t n)
{
    spin_lock(&con_lock);
    if (open_owner != NULL) {
        emit("\n", 1);
        open_owner = NULL;
    }
    emit(s, n);
    spin_unlock(&con_lock);
}

void con_line(const char *tag, const char *s, size_t n, bool complete)
{
    spin_lock(&con_lock);
    if (open_owner != NULL && open_owner != tag) {
        emit("\n", 1); /* another partition's unfinished line (a prompt): end it on screen */
        open_owner = NULL;
    }
    if (open_owner != tag && con_tags) {
        emit("[", 1);
        emit(tag, strlen(tag));
        emit("] ", 2);
    }
    emit(s, n);
    if (complete) {
        emit("\n", 1);
    }
    open_owner = complete ? NULL : tag;
    spin_unlock(&con_lock);
}
