/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runs the fuzz target over corpus files without libFuzzer, so ctest
 * replays the corpus (and every crasher ever added to it) on each build.
 * Arguments: files or directories.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (f == NULL) {
        perror(path);
        return 1;
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (buf == NULL) {
                fclose(f);
                return 1;
            }
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    d = opendir(path);
    if (d == NULL) {
        perror(path);
        return 1;
    }
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        rc |= run_path(sub, count);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0, count = 0;

    for (int i = 1; i < argc; i++)
        rc |= run_path(argv[i], &count);
    printf("replayed %d inputs\n", count);
    return rc != 0 || count == 0;
}
