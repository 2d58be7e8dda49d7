#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The inline recording paths contain no lock-prefixed (atomic
# read-modify-write) instruction, no system call and no call other than to
# the out-of-line slow paths (directly, or through the header's cold
# helpers that copy a record in and out of them, which are checked too).
#   check-hot-path.sh PROBE_BINARY
set -eu
status=0
for fn in probe_produce probe_record probe_produce_2 probe_produce_n \
          flightrec__prepare_cold flightrec__add_cold \
          flightrec__produce_n_cold; do
    failed=$status
    status=0
    # The function and the parts the compiler split off or specialised
    # (fn.cold, fn.constprop.0, fn.part.0): each is checked.
    code=$(objdump -d --no-show-raw-insn "$1" |
        awk -v f="$fn" '
            $2 ~ /^<.*>:$/ {
                name = substr($2, 2, length($2) - 3)
                on = name == f || index(name, f ".") == 1
                next
            }
            on && /^$/ { on = 0 }
            on')
    if [ -z "$code" ]; then
        case $fn in
        probe_*)
            echo "$fn: not found in $1" >&2
            exit 1 ;;
        *)  # a cold helper the compiler inlined or left out
            status=$failed
            continue ;;
        esac
    fi
    # lock prefixes, xchg with memory (locked implicitly; xchg of registers
    # is padding), int 0x80 / syscall / sysenter.
    rmw='(^|[[:space:]])(lock|syscall|sysenter)([[:space:]]|$)|xchg[^(]*\(|int[[:space:]]+\$0x80'
    if echo "$code" | grep -Eq "$rmw"; then
        echo "$fn: atomic read-modify-write or system call:" >&2
        echo "$code" | grep -E "$rmw" >&2
        status=1
    fi
    # Allowed calls: the slow paths (record_generic is theirs, where the
    # library's own copy of a cold helper has a slow path inlined), and the
    # PIC thunk of 32-bit x86.
    calls=$(echo "$code" | grep -E '(call|jmp)[[:space:]]+[0-9a-f]+ <' |
        grep -Ev '<(flightrec__(produce|prepare|add|produce_2|produce_n)_(slow|slow_late|cold|filtered)|record_generic|probe_[a-z_0-9]+|__x86\.get_pc_thunk\.[a-z]+)(\.(cold|constprop|part|isra)(\.[0-9]+)?)*(\+0x[0-9a-f]+)?>' || true)
    if [ -n "$calls" ]; then
        echo "$fn: calls other than the slow paths:" >&2
        echo "$calls" >&2
        status=1
    fi
    [ $status -eq 0 ] &&
        echo "$fn: $(echo "$code" | wc -l) instructions, no lock prefix, no syscall"
    status=$((status | failed))
done
exit $status
