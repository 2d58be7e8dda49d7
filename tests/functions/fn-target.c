/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program built with -finstrument-functions and linked with
 * libflightrec-functions, with a known call tree:
 *   run_tree -> tree_a -> tree_b, tree_b
 *            -> tree_a -> tree_b, tree_b
 *            -> plugin_work (dlopen'ed PLUGIN) -> plugin_inner
 * then it dumps its recording to OUT.  Built as fn-bare (FN_BARE) it links
 * nothing of flightrec: `flightrec record` traces it (OUT is not written).
 * usage: fn-target OUT PLUGIN
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#ifndef FN_BARE
#include <flightrec.h>
#endif

static volatile int sink;

__attribute__((noinline)) static void tree_b(int i)
{
    sink += i;
}

__attribute__((noinline)) static void tree_a(int i)
{
    tree_b(i);
    tree_b(i + 1);
}

__attribute__((noinline)) static int run_tree(const char *plugin)
{
    tree_a(1);
    tree_a(2);
    void *h = dlopen(plugin, RTLD_NOW);
    if (h == NULL) {
        fprintf(stderr, "fn-target: %s\n", dlerror());
        return 1;
    }
    int (*work)(int) = (int (*)(int))dlsym(h, "plugin_work");
    if (work == NULL)
        return 1;
    sink += work(2);
    return 0;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (run_tree(argv[2]) != 0)
        return 1;
#ifdef FN_BARE
    return 0;
#else
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || flightrec_dump(fd) != 0)
        return 1;
    return close(fd) == 0 ? 0 : 1;
#endif
}
