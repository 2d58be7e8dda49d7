/* SPDX-License-Identifier: BSD-2-Clause */
#include "spawn.h"

#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *spawn_slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        TEST_FAIL("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    CHECK(text != NULL);
    for (;;) {
        ssize_t n = read(fd, text + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        CHECK(n >= 0);
        if (n == 0)
            break;
        len += (size_t)n;
        if (len + 1 == cap) {
            cap *= 2;
            text = realloc(text, cap);
            CHECK(text != NULL);
        }
    }
    text[len] = '\0';
    close(fd);
    return text;
}

void spawn_run(struct spawn_run *r, const char *scratch_dir,
               const char *stdin_path, const char *const *argv)
{
    char out_path[700], err_path[700];
    snprintf(out_path, sizeof out_path, "%s/spawn-out.%ld", scratch_dir,
             (long)getpid());
    snprintf(err_path, sizeof err_path, "%s/spawn-err.%ld", scratch_dir,
             (long)getpid());
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], (char *const *)argv);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = spawn_slurp(out_path);
    r->err = spawn_slurp(err_path);
    unlink(out_path);
    unlink(err_path);
}

void spawn_run_free(struct spawn_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
