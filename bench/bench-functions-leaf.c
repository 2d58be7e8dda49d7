/* SPDX-License-Identifier: BSD-2-Clause */
/* The instrumented leaf of bench-functions (built with
 * -finstrument-functions; the rest of the benchmark is not, so that
 * flightrec's inline recording there is not instrumented too). */
extern volatile int bench_sink;
void bench_leaf_hooks(int i);

__attribute__((noinline)) void bench_leaf_hooks(int i)
{
    bench_sink += i;
}
