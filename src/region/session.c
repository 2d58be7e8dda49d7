/* SPDX-License-Identifier: BSD-2-Clause */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "BEFORE PATH AFTER: why" into @message; returns @rc. */
static int say(char *message, size_t size, int rc, const char *before,
               const char *path, const char *after)
{
    if (message != NULL && size != 0)
        snprintf(message, size, "%s%s%s: %s", before, path, after,
                 strerror(-rc));
    return rc;
}

int fr_session_dir(char *path, size_t size, int create, char *message,
                   size_t message_size)
{
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    int n;
    if (runtime != NULL && runtime[0] == '/')
        n = snprintf(path, size, "%s/flightrec", runtime);
    else
        n = snprintf(path, size, "/dev/shm/flightrec-%u",
                     (unsigned)getuid());
    if (n < 0 || (size_t)n >= size)
        return say(message, message_size, -ENAMETOOLONG,
                   "session directory ", "(too long)", "");
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST)
        return say(message, message_size, -errno,
                   "cannot create session directory ", path, "");
    struct stat st;
    if (lstat(path, &st) != 0)
        return say(message, message_size, -errno, "session directory ", path,
                   "");
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
        return say(message, message_size, -ENOTDIR, "session directory ",
                   path, " is not a directory");
    if (st.st_uid != getuid())
        return say(message, message_size, -EPERM, "session directory ",
                   path, " belongs to another user");
    if ((st.st_mode & 0077) != 0)
        return say(message, message_size, -EPERM, "session directory ",
                   path, " is open to other users (it must be 0700)");
    return 0;
}

int fr_session_path(char *out, size_t size, const char *dir, int32_t pid,
                    uint64_t start_time)
{
    int n = snprintf(out, size, "%s/%d-%llu%s", dir, (int)pid,
                     (unsigned long long)start_time, FR_SESSION_SUFFIX);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

uint64_t fr_process_start_time(int32_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields count from
     * the last ')'.  Field 22 is the start time; after ')' come 3..52. */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return 0;
    }
    return strtoull(p + 1, NULL, 10);
}
