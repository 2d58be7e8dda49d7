/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Running a program from a test as a user would: its standard input from a
 * file, its standard output and error captured whole, its exit status.
 */
#ifndef FLIGHTREC_TEST_SPAWN_H
#define FLIGHTREC_TEST_SPAWN_H

struct spawn_run {
    int status;  /* exit status, or 128 + the signal that ended it */
    char *out;   /* standard output, NUL-terminated */
    char *err;   /* standard error, NUL-terminated */
};

/* Runs argv[0] (a path, else looked up in PATH) with @a argv (NULL-ended)
 * and waits for it: standard input from @a stdin_path (NULL: /dev/null),
 * standard output and error through files in @a scratch_dir. */
void spawn_run(struct spawn_run *r, const char *scratch_dir,
               const char *stdin_path, const char *const *argv);
void spawn_run_free(struct spawn_run *r);

/* The whole of the file at @a path, NUL-terminated (malloc'd); the test
 * fails if it cannot be read. */
char *spawn_slurp(const char *path);

#endif
