/* SPDX-License-Identifier: BSD-2-Clause */
#include "convert-events.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Entry/exit pairs that are POSIX calls: shown as syscalls where viewers
 * have a syscall notion (LTTng syscall_entry_*, ftrace sys_*). */
static const char *const syscall_names[] = {
    "ACCEPT", "BIND", "CHOWN", "CLOSE", "CONNECT", "FCHMOD", "FCNTL",
    "FDATASYNC", "FSTAT", "FSYNC", "FTRUNCATE", "GETSOCKOPT", "IOCTL",
    "KEVENT", "KQUEUE", "LINK", "LISTEN", "LSEEK", "MKNOD", "MMAP", "MOUNT",
    "OPEN", "POLL", "READ", "READLINK", "READV", "RECV", "RECVFROM",
    "RECVMSG", "RENAME", "SELECT", "SEND", "SENDMSG", "SENDTO",
    "SETSOCKOPT", "SHUTDOWN", "SOCKET", "STATVFS", "SYMLINK", "UNLINK",
    "UNMOUNT", "WRITE", "WRITEV",
};

static const struct {
    const char *name;
    uint8_t role;
} special[] = {
    { "THREAD_SWITCH_IN", FR_ROLE_SWITCH_IN },
    { "THREAD_SWITCH_OUT", FR_ROLE_SWITCH_OUT },
    { "INTERRUPT_ENTRY", FR_ROLE_IRQ_ENTRY },
    { "INTERRUPT_EXIT", FR_ROLE_IRQ_EXIT },
    { "MALLOC_ENTRY", FR_ROLE_MALLOC_ENTRY },
    { "MALLOC_EXIT", FR_ROLE_MALLOC_EXIT },
    { "FREE_ENTRY", FR_ROLE_FREE_ENTRY },
    { "FREE_EXIT", FR_ROLE_FREE_EXIT },
    { "FUNCTION_ENTRY", FR_ROLE_FUNC_ENTRY },
    { "FUNCTION_EXIT", FR_ROLE_FUNC_EXIT },
    { "MUTEX_LOCK_ENTRY", FR_ROLE_LOCK_ENTRY },
    { "MUTEX_LOCK_EXIT", FR_ROLE_LOCK_EXIT },
    { "MUTEX_UNLOCK", FR_ROLE_UNLOCK },
    { "SCHEDULER_UNBLOCK", FR_ROLE_UNBLOCK },
};

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

void fr_events_init(struct fr_events *ev, const struct fr_source *src)
{
    memset(ev, 0, sizeof *ev);
    for (uint32_t id = 0; id + 1 < 512; id++) {
        char name[64], next[64];
        strncpy(name, src->event_name(src->arg, id), sizeof name - 1);
        name[sizeof name - 1] = '\0';
        for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
            if (strcmp(name, special[i].name) == 0)
                ev->role[id] = special[i].role;
        if (ev->role[id] != FR_ROLE_PLAIN)
            continue;
        size_t n = strlen(name);
        if (!ends_with(name, n, "_ENTRY"))
            continue;
        strncpy(next, src->event_name(src->arg, id + 1), sizeof next - 1);
        next[sizeof next - 1] = '\0';
        size_t base = n - 6;
        if (strlen(next) != base + 5 || memcmp(next, name, base) != 0 ||
            strcmp(next + base, "_EXIT") != 0 || base >= sizeof ev->base[0])
            continue;
        ev->role[id] = FR_ROLE_PAIR_ENTRY;
        ev->role[id + 1] = FR_ROLE_PAIR_EXIT;
        for (size_t i = 0; i < base; i++)
            ev->base[id][i] = (char)tolower((unsigned char)name[i]);
        ev->base[id][base] = '\0';
        memcpy(ev->base[id + 1], ev->base[id], sizeof ev->base[0]);
        for (size_t i = 0; i < sizeof syscall_names / sizeof syscall_names[0];
             i++)
            if (strlen(syscall_names[i]) == base &&
                memcmp(syscall_names[i], name, base) == 0)
                ev->syscall[id] = ev->syscall[id + 1] = 1;
    }
    /* Fixed base names so writers can use base[] for these roles too. */
    for (uint32_t id = 0; id < 512; id++) {
        switch (ev->role[id]) {
        case FR_ROLE_MALLOC_ENTRY:
        case FR_ROLE_MALLOC_EXIT:
            strcpy(ev->base[id], "malloc");
            break;
        case FR_ROLE_FREE_ENTRY:
        case FR_ROLE_FREE_EXIT:
            strcpy(ev->base[id], "free");
            break;
        default:
            break;
        }
    }
}

int fr_rtems_is_idle(int64_t thread_id)
{
    /* RTEMS object id: API in bits 24..26, class in 27..31; internal API
     * (1) threads (class 1) are the idle threads (and the rarely used MPCI
     * receive server). */
    return thread_id >= 0 && ((uint64_t)thread_id >> 24) == 0x09u;
}
