/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Other processes see a session file only once it is a region: while the
 * runtime reserves the file's space (its first posix_fallocate(), before
 * the header is written), the session directory holds no session name, so
 * that `flightrec ls` run at that moment neither warns about a file that
 * is "not a flightrec region" nor shows it.  Once recording runs there is
 * exactly one session file, with the region's magic, and no hidden file
 * is left.
 */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flightrec.h>
#include <flightrec/region.h>

#include "../../src/region/session.h"

static char sessions[4200];
static int reservations;
static int named_while_reserving = -1;

/* Names in the session directory: those of sessions, and the others. */
static void count_names(int *session_names, int *other_names)
{
    *session_names = *other_names = 0;
    DIR *d = opendir(sessions);
    if (d == NULL)
        return;
    struct dirent *e;
    size_t suffix = strlen(FR_SESSION_SUFFIX);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(e->d_name);
        if (len > suffix &&
            strcmp(e->d_name + len - suffix, FR_SESSION_SUFFIX) == 0)
            ++*session_names;
        else
            ++*other_names;
    }
    closedir(d);
}

/* The runtime's space reservation, seen from inside: this program's
 * definition is the one the statically linked runtime calls. */
int posix_fallocate(int fd, off_t offset, off_t len)
{
    if (reservations++ == 0) {
        int others;
        count_names(&named_while_reserving, &others);
    }
    return fallocate(fd, 0, offset, len) == 0 ? 0 : errno;
}

TEST(session_file_is_named_once_its_header_is_filled)
{
    char base[4096];
    snprintf(base, sizeof(base), "%s/publish-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(base) != NULL);
    setenv("XDG_RUNTIME_DIR", base, 1);
    unsetenv("FLIGHTREC_SHM");
    snprintf(sessions, sizeof(sessions), "%s/flightrec", base);

    flightrec_produce(FLIGHTREC_USER(1), 1); /* starts the runtime */
    CHECK(reservations >= 1);
    CHECK_EQ_I(named_while_reserving, 0);
    int named, others;
    count_names(&named, &others);
    CHECK_EQ_I(named, 1);
    CHECK_EQ_I(others, 0);

    char path[8192];
    snprintf(path, sizeof(path), "%s/%d-%llu%s", sessions, (int)getpid(),
             (unsigned long long)fr_process_start_time((int32_t)getpid()),
             FR_SESSION_SUFFIX);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    uint32_t magic = 0;
    CHECK_EQ_I(read(fd, &magic, sizeof(magic)), (int)sizeof(magic));
    CHECK_EQ_U(magic, FLIGHTREC_REGION_MAGIC);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    close(fd);
    unlink(path);
    rmdir(sessions);
    rmdir(base);
}

TEST_MAIN()
