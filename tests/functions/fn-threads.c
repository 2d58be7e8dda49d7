/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Four threads dlopen() the same plugin at once and call it, then the
 * program dumps its recording: the plugin is recorded as loaded once, and
 * each thread's two calls are named (check-functions.sh).
 * usage: fn-threads OUT PLUGIN
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <flightrec.h>

#define NI __attribute__((no_instrument_function))

static const char *plugin;
static pthread_barrier_t start;

NI static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    void *h = dlopen(plugin, RTLD_NOW);
    if (h == NULL)
        return arg;
    int (*work)(int) = (int (*)(int))dlsym(h, "plugin_work");
    if (work == NULL)
        return h;
    (void)work(1);
    return NULL;
}

NI int main(int argc, char **argv)
{
    enum { THREADS = 4 };
    if (argc != 3)
        return 2;
    plugin = argv[2];
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 1;
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        failed |= rc != NULL;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (failed || fd < 0 || flightrec_dump(fd) != 0)
        return 1;
    return close(fd) == 0 ? 0 : 1;
}
