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
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* How this program's renameat2() and link() treat the runtime's naming
 * of its file. */
enum { LINK_AS_IS, LINK_REFUSED, LINK_EXIT_WHEN_TAKEN };
static int link_mode = LINK_AS_IS;
/* Also refuse renameat2()'s RENAME_NOREPLACE (older file systems), so
 * that the runtime falls back to link(). */
static int noreplace_refused;

/* The runtime's renameat2(), seen from inside as link() below. */
int renameat2(int from_dir, const char *from, int to_dir, const char *to,
              unsigned int flags)
{
    if (link_mode == LINK_REFUSED || noreplace_refused) {
        errno = EINVAL;
        return -1;
    }
    int rc = (int)syscall(SYS_renameat2, from_dir, from, to_dir, to, flags);
    if (rc != 0 && errno == EEXIST && link_mode == LINK_EXIT_WHEN_TAKEN)
        exit(0);
    return rc;
}

/* The runtime's link(), seen from inside as posix_fallocate() above:
 * refused as a file system without hard links refuses it (vfat, some
 * FUSE file systems), or, when the name is taken, the moment at which
 * another thread's exit() would run the atexit handlers. */
int link(const char *from, const char *to)
{
    if (link_mode == LINK_REFUSED) {
        errno = EPERM;
        return -1;
    }
    int rc = linkat(AT_FDCWD, from, AT_FDCWD, to, 0);
    if (rc != 0 && errno == EEXIST && link_mode == LINK_EXIT_WHEN_TAKEN)
        exit(0);
    return rc;
}

/* A fresh session directory for this case, in sessions[]. */
static void use_fresh_directory(char *base, size_t size)
{
    snprintf(base, size, "%s/publish-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(base) != NULL);
    setenv("XDG_RUNTIME_DIR", base, 1);
    unsetenv("FLIGHTREC_SHM");
    unsetenv("FLIGHTREC_KEEP");
    snprintf(sessions, sizeof(sessions), "%s/flightrec", base);
}

/* This process's session file (its first program's name). */
static void own_session_path(char *path, size_t size)
{
    snprintf(path, size, "%s/%d-%llu%s", sessions, (int)getpid(),
             (unsigned long long)fr_process_start_time((int32_t)getpid()),
             FR_SESSION_SUFFIX);
}

/* The first word of the file at @path, 0 if none. */
static uint32_t first_word(const char *path)
{
    uint32_t word = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    if (read(fd, &word, sizeof(word)) != (ssize_t)sizeof(word))
        word = 0;
    close(fd);
    return word;
}

/* Starts the runtime; checks that the session directory then holds this
 * process's session file alone, a region, whose path goes to @a path. */
static void start_with_one_session(char *path, size_t size)
{
    flightrec_produce(FLIGHTREC_USER(1), 1); /* starts the runtime */
    int named, others;
    count_names(&named, &others);
    CHECK_EQ_I(named, 1);
    CHECK_EQ_I(others, 0);
    own_session_path(path, size);
    CHECK_EQ_U(first_word(path), FLIGHTREC_REGION_MAGIC);
}

/*
 * Where the file system has no hard links, the session file still gets its
 * name (before the hidden name, it had it from the start): other processes
 * see the session.
 */
TEST(session_file_is_named_without_hard_links)
{
    char base[4096];
    use_fresh_directory(base, sizeof(base));
    link_mode = LINK_REFUSED;
    char path[8192];
    start_with_one_session(path, sizeof(path));
    unlink(path);
    rmdir(sessions);
    rmdir(base);
}

/*
 * An earlier program of the process (it called exec) left PID-START.region,
 * kept for a dump.  The program exits (another thread's exit(), say) while
 * its runtime is naming its own file: the atexit removal must take this
 * program's file, never the earlier program's, and leave no hidden file.
 */
static void exit_while_naming(int use_link);

TEST(exit_while_naming_keeps_the_earlier_programs_file)
{
    exit_while_naming(0);
}

/* The same where the file system refuses RENAME_NOREPLACE: link(). */
TEST(exit_while_linking_keeps_the_earlier_programs_file)
{
    exit_while_naming(1);
}

static void exit_while_naming(int use_link)
{
    char base[4096];
    use_fresh_directory(base, sizeof(base));
    CHECK_EQ_I(mkdir(sessions, 0700), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* The earlier program's file, named as the runtime names this
         * process's (its own view of its start time: under qemu-user it
         * is not what another process reads). */
        char earlier[8192];
        snprintf(earlier, sizeof(earlier), "%s/%d-%llu%s", sessions,
                 (int)getpid(),
                 (unsigned long long)fr_process_start_time((int32_t)getpid()),
                 FR_SESSION_SUFFIX);
        int fd = open(earlier, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            _exit(3);
        uint32_t magic = FLIGHTREC_REGION_MAGIC;
        if (write(fd, &magic, sizeof(magic)) != (ssize_t)sizeof(magic))
            _exit(3);
        close(fd);
        link_mode = LINK_EXIT_WHEN_TAKEN;
        noreplace_refused = use_link;
        flightrec_produce(FLIGHTREC_USER(1), 1); /* starts the runtime */
        _exit(4); /* the name was not taken: the case did not happen */
    }
    int status = 0;
    CHECK_EQ_I(waitpid(child, &status, 0), (int)child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_I(WEXITSTATUS(status), 0);
    /* Left: the earlier program's file alone (4 bytes), no hidden file. */
    int named, others;
    count_names(&named, &others);
    CHECK_EQ_I(named, 1);
    CHECK_EQ_I(others, 0);
    DIR *d = opendir(sessions);
    CHECK(d != NULL);
    struct dirent *e;
    char earlier[8192] = "";
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            snprintf(earlier, sizeof(earlier), "%s/%s", sessions, e->d_name);
    closedir(d);
    struct stat st;
    CHECK_EQ_I(stat(earlier, &st), 0);
    CHECK_EQ_I((int)st.st_size, 4);
    CHECK_EQ_U(first_word(earlier), FLIGHTREC_REGION_MAGIC);
    unlink(earlier);
    rmdir(sessions);
    rmdir(base);
}

TEST(session_file_is_named_once_its_header_is_filled)
{
    char base[4096];
    use_fresh_directory(base, sizeof(base));
    char path[8192];
    start_with_one_session(path, sizeof(path));
    CHECK(reservations >= 1);
    CHECK_EQ_I(named_while_reserving, 0);
    struct stat st;
    CHECK_EQ_I(stat(path, &st), 0);
    CHECK_EQ_U(st.st_mode & 0777, 0600);
    /* The rings' mapping has the file's name, not a deleted hidden one
     * (lsof and /proc/PID/maps showed a deleted file after link()). */
    FILE *maps = fopen("/proc/self/maps", "r");
    CHECK(maps != NULL);
    char line[9000];
    int named_mappings = 0, deleted = 0;
    while (fgets(line, sizeof(line), maps) != NULL) {
        named_mappings += strstr(line, path) != NULL;
        deleted += strstr(line, sessions) != NULL &&
                   strstr(line, "(deleted)") != NULL;
    }
    fclose(maps);
    CHECK(named_mappings >= 1);
    CHECK_EQ_I(deleted, 0);
    unlink(path);
    rmdir(sessions);
    rmdir(base);
}

TEST_MAIN()
