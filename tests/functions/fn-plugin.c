/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared object fn-target loads with dlopen(): built with
 * -finstrument-functions, its functions are recorded through the hooks the
 * program linked. */
__attribute__((noinline)) static int plugin_inner(int x)
{
    return x * 3;
}

int plugin_work(int x);
int plugin_work(int x)
{
    return plugin_inner(x) + 1;
}
