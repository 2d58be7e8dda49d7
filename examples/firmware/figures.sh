#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Figures for docs/recording.md ("Firmware"): instructions of the produce
# path (arm-none-eabi-objdump), code of the core as linked into the demo
# (its link map), RAM of the region and per ring.
#   examples/firmware/figures.sh [BUILD_DIR]
#   FUNCTIONS=1: also each function of the core as linked, largest first
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/firmware}
"$here/build.sh" "$build" demo
for cpu in cortex-m3 cortex-m33; do
    arm-none-eabi-gcc -mcpu=$cpu -mthumb -mfloat-abi=soft -std=c11 -O2 \
        -ffreestanding -DFLIGHTREC_PORT_FIRMWARE -DFLIGHTREC_PORT_COUNTER \
        -I"$root/include" -c "$root/tests/firmware/produce-probe.c" \
        -o "$build/probe-$cpu.o"
    for fn in probe_produce probe_masked; do
        # The fast path: from the entry to the first return, straight on
        # (the filter's early exit and the slow path's call are branches
        # off it).
        arm-none-eabi-objdump -d --no-show-raw-insn "$build/probe-$cpu.o" |
            awk -v f="<$fn>:" -v cpu=$cpu -v fn=$fn '
                $2 == f { on = 1; next }
                on && /^$/ { exit }
                on && $2 != ".word" { n++; if ($2 == "bl") calls = calls " " $4 }
                on && ($0 ~ /(pop|ldmia).*pc}/ || $0 ~ /bx[ \t]+lr/) && n > 6 {
                    printf "%s %s: %d instructions to the return, calls:%s\n",
                           cpu, fn, n, calls; exit }'
    done
done
arm-none-eabi-objdump -d --no-show-raw-insn "$build/demo.elf" |
    awk '/<flightrec_port_counter>:/ { on = 1; next } on && /^$/ { exit }
         on && $2 != ".word" { n++ }
         END { printf "cortex-m3 flightrec_port_counter (TIMER0, 64-bit): %d instructions\n", n }'
# Code of each object as linked (gc-sections dropped the rest): the
# .text and .rodata input sections of the link map's memory map part.
python3 - "$build/demo.map" "${FUNCTIONS:-0}" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = text[text.index("Linker script and memory map"):]
sizes = {}
sections = []
# A long section name ends its line; its address and size follow on the
# next one.
pattern = (r"^ (\.(?:text|rodata)\S*)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)"
           r"\s+(\S+\.o)$")
port = ("port-cortexm.o", "startup-mps2.o", "demo.o")
for m in re.finditer(pattern, text, re.M):
    name = m.group(3).rsplit("/", 1)[-1]
    size = int(m.group(2), 16)
    sizes[name] = sizes.get(name, 0) + size
    if name not in port:
        sections.append((size, name, m.group(1)))
core = {k: v for k, v in sizes.items() if k not in port}
for name, size in sorted(core.items()):
    print("  %-18s %6d" % (name, size))
if sys.argv[2] == "1":
    for size, name, section in sorted(sections, reverse=True):
        print("    %6d %-18s %s" % (size, name, section))
print("core code as linked (-Os): %d bytes; port: %d; demo and start: %d"
      % (sum(core.values()), sizes.get("port-cortexm.o", 0),
         sizes.get("demo.o", 0) + sizes.get("startup-mps2.o", 0)))
PY
arm-none-eabi-size "$build/demo.elf"
