#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Function tracing from the user's side.  fn-target (built with
# -finstrument-functions, linked with libflightrec-functions) runs
#   run_tree -> tree_a -> tree_b, tree_b;  tree_a -> tree_b, tree_b;
#            -> plugin_work (dlopen'ed) -> plugin_inner
# and dumps its recording; the real `flightrec print` and `convert` must
# show exactly these names, nesting and counts in every format, and a
# stripped program, a missing or a replaced shared object give addresses
# and one message each, never a failure.
# usage: check-functions.sh FLIGHTREC FN_TARGET FN_PLUGIN SCRATCH VIEWERS_MJS
#        NODE_MODULES FN_BARE FN_THREADS
set -eu
flightrec=$1 target=$2 plugin=$3 dir=$4 viewers=$5 modules=$6 bare=$7
threads=$8
here=$(cd "$(dirname "$0")" && pwd)
convert_dir=$here/../convert
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
expect() { # NAME EXPECTED ACTUAL
    if [ "$2" != "$3" ]; then
        fail "$1: expected '$2', got '$3'"
    fi
}

cp "$target" ./fn-target
cp "$plugin" ./fn-plugin.so
./fn-target t.rec "$dir/fn-plugin.so"

entries="run_tree tree_a tree_b tree_b tree_a tree_b tree_b plugin_work plugin_inner"
exits="tree_b tree_b tree_a tree_b tree_b tree_a plugin_inner plugin_work run_tree"
# The names after the address of FUNCTION_ENTRY (or _EXIT) lines, in order.
names() { # PRINT-OUTPUT EVENT
    awk -v ev="$2" '$5 == ev { print ($7 == "" ? $6 : $7) }' "$1" | tr '\n' ' ' |
        sed 's/ $//'
}

# print
"$flightrec" print t.rec >print.txt 2>print.err
expect "print entries" "$entries" "$(names print.txt FUNCTION_ENTRY)"
expect "print exits" "$exits" "$(names print.txt FUNCTION_EXIT)"
expect "print messages" "" "$(cat print.err)"
# The object records: each path item's characters as text.
expect "print object path" "$dir/fn-target" "$(awk '$5 == "OBJECT_LOAD" { n++ } n == 1 && $5 == "OBJECT_PATH" { printf "%s", substr($7, 2, length($7) - 2) }' print.txt)"
"$flightrec" print --no-symbols t.rec >plain.txt
expect "--no-symbols names" "0" "$(grep -c 'FUNCTION_.* tree_' plain.txt || true)"
expect "--no-symbols entries" "9" "$(grep -c 'FUNCTION_ENTRY 0x[0-9a-f]*$' plain.txt)"

# print --csv: the function column (11th) of FUNCTION_ENTRY/EXIT rows,
# empty with --no-symbols; --json: the "function" key, absent then.
"$flightrec" print --csv t.rec >print.csv
csv_names() { # CSV EVENT
    awk -F, -v ev="$2" '$4 == ev { print $11 }' "$1" | tr '\n' ' ' | sed 's/ $//'
}
expect "csv header" "time_ns,ring,thread,event,event_id,data,thread_name,kind,count,flags,function" "$(head -n 1 print.csv)"
expect "csv entries" "$entries" "$(csv_names print.csv FUNCTION_ENTRY)"
expect "csv exits" "$exits" "$(csv_names print.csv FUNCTION_EXIT)"
expect "csv other rows unnamed" "0" "$(awk -F, 'NR > 1 && $4 !~ /^FUNCTION_/ && $11 != ""' print.csv | wc -l | tr -d ' ')"
"$flightrec" print --csv --no-symbols t.rec >plain.csv
expect "csv --no-symbols" "" "$(csv_names plain.csv FUNCTION_ENTRY | tr -d ' ')"
expect "csv --no-symbols rows" "9" "$(awk -F, '$4 == "FUNCTION_ENTRY"' plain.csv | wc -l | tr -d ' ')"
json_names() { # JSON EVENT
    grep "\"event\":\"$2\"" "$1" | sed -n 's/.*"function":"\([^"]*\)".*/\1/p' |
        tr '\n' ' ' | sed 's/ $//'
}
"$flightrec" print --json t.rec >print.json
expect "json entries" "$entries" "$(json_names print.json FUNCTION_ENTRY)"
expect "json exits" "$exits" "$(json_names print.json FUNCTION_EXIT)"
expect "json keys" "18" "$(grep -c '"function":' print.json)"
"$flightrec" print --json --no-symbols t.rec >plain.json
expect "json --no-symbols" "0" "$(grep -c '"function":' plain.json || true)"
# report: function spans by name (by address with --no-symbols)
span_names() { # REPORT-JSON
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%s:%d" % (s["name"], s["duration_ns"]["count"]) for s in d["spans"])))' "$1"
}
"$flightrec" report --json t.rec >report.json 2>report.err
expect "report spans" "plugin_inner:1 plugin_work:1 run_tree:1 tree_a:2 tree_b:4" "$(span_names report.json)"
expect "report messages" "" "$(cat report.err)"
"$flightrec" report t.rec >report.txt
expect "report text" "tree_b 4" "$(awk '$1 == "tree_b" { print $1, $2 }' report.txt)"
"$flightrec" report --json --no-symbols t.rec >plain-report.json
expect "report --no-symbols" "5" "$(span_names plain-report.json | grep -o "function 0x[0-9a-f]*:" | wc -l | tr -d " ")"

# Under `flightrec record` the preload library records the objects too.
"$flightrec" record -o r.rec -- ./fn-target r-own.rec "$dir/fn-plugin.so"
"$flightrec" print r.rec >r.txt 2>r.err
expect "record entries" "$entries" "$(names r.txt FUNCTION_ENTRY)"
expect "record messages" "" "$(cat r.err)"
# Both the preload library and libflightrec-functions record objects: each
# once all the same.
expect "record objects once" "0" "$(awk '$5 == "OBJECT_LOAD" { print $6 }' r.txt | sort | uniq -d | wc -l | tr -d ' ')"
# A program that links nothing of flightrec: the preload library's hooks.
cp "$bare" ./fn-bare
"$flightrec" record -o b.rec -- ./fn-bare unused "$dir/fn-plugin.so"
"$flightrec" print b.rec >b.txt 2>b.err
expect "bare entries" "$entries" "$(names b.txt FUNCTION_ENTRY)"
expect "bare exits" "$exits" "$(names b.txt FUNCTION_EXIT)"
expect "bare messages" "" "$(cat b.err)"
# ... and a program that calls no hook records no objects; its exec's
# FUNCTION_ENTRY (libc's address) stays hex, and nothing is said of it.
"$flightrec" record -o n.rec -- sh -c 'exec /bin/true'
"$flightrec" print n.rec >n.txt 2>n.err
expect "no hooks, no objects" "0" "$(grep -c OBJECT_ n.txt || true)"
expect "no hooks: exec" "1" "$(grep -c 'FUNCTION_ENTRY 0x[0-9a-f]*$' n.txt)"
expect "no hooks: messages" "" "$(cat n.err)"

# ftrace: B with the name, E closing it
"$flightrec" convert --to ftrace -o t.ftrace t.rec 2>convert.err
expect "ftrace begins" "$entries" "$(sed -n 's/.*tracing_mark_write: B|[0-9]*|//p' t.ftrace | tr '\n' ' ' | sed 's/ $//')"
expect "ftrace ends" "9" "$(grep -c 'tracing_mark_write: E|' t.ftrace)"
expect "ftrace object items hidden" "0" "$(grep -c OBJECT_ t.ftrace || true)"
python3 "$convert_dir/check-ftrace.py" t.ftrace >/dev/null || fail "check-ftrace.py"

# Chrome JSON: complete events named by function, nested as called
"$flightrec" convert --to json -o t.json t.rec
tree=$(python3 - t.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
xs = sorted((e for e in ev if e.get("ph") == "X"), key=lambda e: (e["ts"], -e["dur"]))
out, stack = [], []
for e in xs:
    while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
        stack.pop()
    out.append("%s<%s" % (e["name"], stack[-1]["name"] if stack else ""))
    stack.append(e)
print(" ".join(out))
EOF
)
expect "json nesting" "run_tree< tree_a<run_tree tree_b<tree_a tree_b<tree_a tree_a<run_tree tree_b<tree_a tree_b<tree_a plugin_work<run_tree plugin_inner<plugin_work" "$tree"
python3 "$convert_dir/check-json.py" t.json >/dev/null || fail "check-json.py"
if [ -d "$modules" ]; then
    node "$viewers" "$modules" t.json >viewers.txt 2>&1 || fail "JSON viewers: $(cat viewers.txt)"
    grep -q "devtools [0-9]* fn-target: slices 9, entries 9, depth 3" viewers.txt ||
        fail "devtools: $(cat viewers.txt)"
    grep -q "speedscope .*: slices 9, depth 3" viewers.txt ||
        fail "speedscope: $(cat viewers.txt)"
else
    fail "no JSON readers in $modules (scripts/install-deps.sh test)"
fi

# Perfetto: slices named by function, at the right depths (listed as they
# end)
"$flightrec" convert --to perfetto -o t.pftrace t.rec
protoc --proto_path="$convert_dir" --decode=perfetto.protos.Trace \
    perfetto-trace.proto <t.pftrace >/dev/null || fail "protoc decode"
python3 "$convert_dir/check-perfetto.py" t.pftrace --detail >pf.txt || fail "check-perfetto.py"
expect "perfetto slices" "tree_b:2 tree_b:2 tree_a:1 tree_b:2 tree_b:2 tree_a:1 plugin_inner:2 plugin_work:1 run_tree:0" \
    "$(awk '$1 == "slice" { print $3 ":" $6 }' pf.txt | tr '\n' ' ' | sed 's/ $//')"

# CTF: the LTTng-UST cyg_profile shape, read by babeltrace2
"$flightrec" convert --to ctf -o t.ctf t.rec
babeltrace2 t.ctf >ctf.txt || fail "babeltrace2"
expect "ctf func_entry" "9" "$(grep -c 'lttng_ust_cyg_profile:func_entry: .*addr = 0x' ctf.txt)"
expect "ctf func_exit" "9" "$(grep -c 'lttng_ust_cyg_profile:func_exit: .*addr = 0x' ctf.txt)"
# ... with the loaded objects as LTTng-UST's statedump has them, for readers
# that resolve the addresses themselves.
objects=$(grep -c ' OBJECT_LOAD ' print.txt)
expect "ctf bin_info" "$objects" "$(grep -c 'lttng_ust_statedump:bin_info: .*memsz = [1-9]' ctf.txt)"
expect "ctf build_id" "$objects" "$(grep -c 'lttng_ust_statedump:build_id: .*_build_id_length = 20,' ctf.txt)"
expect "ctf program" "1" "$(grep -c "bin_info: .*path = \"$dir/fn-target\", is_pic = 1, has_build_id = 1" ctf.txt)"
expect "ctf plugin" "1" "$(grep -c "bin_info: .*path = \"$dir/fn-plugin.so\", is_pic = 1, has_build_id = 1" ctf.txt)"
expect "ctf program base" "$(awk '$5 == "OBJECT_LOAD" { print $6; exit }' print.txt)" \
    "$(sed -n 's/.*bin_info: .*baddr = 0x\([0-9A-F]*\), .*fn-target".*/0x\1/p' ctf.txt | tr 'A-F' 'a-f')"

# Four threads loading the plugin at once: recorded as loaded once, every
# call named.
"$threads" th.rec "$dir/fn-plugin.so"
"$flightrec" print th.rec >th.txt 2>th.err
expect "threads: plugin loaded" "1" "$(awk '$5 == "OBJECT_LOAD" { n++ } $5 == "OBJECT_PATH" && n > 0 { p[n] = p[n] substr($7, 2, length($7) - 2) } END { for (i in p) if (p[i] ~ /fn-plugin.so$/) c++; print c + 0 }' th.txt)"
expect "threads: plugin_work" "4" "$(names th.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -c '^plugin_work$')"
expect "threads: plugin_inner" "4" "$(names th.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -c '^plugin_inner$')"
expect "threads: other entries" "0" "$(names th.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -vc '^plugin_')"
expect "threads: messages" "" "$(cat th.err)"

# A stripped program: its functions as addresses, one message; the
# plugin's still named.
cp fn-target fn-stripped
strip --strip-all fn-stripped
./fn-stripped s.rec "$dir/fn-plugin.so"
"$flightrec" print s.rec >s.txt 2>s.err || fail "print of a stripped program"
expect "stripped names" "plugin_work plugin_inner" \
    "$(names s.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -v '^0x' | tr '\n' ' ' | sed 's/ $//')"
expect "stripped addresses" "7" "$(names s.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -c '^0x')"
expect "stripped message" "1" "$(grep -c 'fn-stripped has no symbol for 0x[0-9a-f]* and maybe others (stripped?)' s.err)"
expect "stripped messages" "1" "$(wc -l <s.err | tr -d ' ')"
"$flightrec" convert --to json -o s.json s.rec 2>s-json.err || fail "convert of a stripped program"
expect "stripped json message" "1" "$(wc -l <s-json.err | tr -d ' ')"

# The shared object gone since the recording.
cp fn-plugin.so gone.so
./fn-target g.rec "$dir/gone.so"
rm gone.so
"$flightrec" print g.rec >g.txt 2>g.err || fail "print without the shared object"
expect "missing names" "run_tree tree_a tree_b tree_b tree_a tree_b tree_b" \
    "$(names g.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -v '^0x' | tr '\n' ' ' | sed 's/ $//')"
expect "missing message" "flightrec print: cannot open $dir/gone.so (No such file or directory); its functions are shown as addresses" "$(cat g.err)"

# Another file in its place: the build-id tells.
cp fn-plugin.so other.so
./fn-target o.rec "$dir/other.so"
cp fn-target other.so
"$flightrec" print o.rec >o.txt 2>o.err || fail "print with a replaced shared object"
expect "replaced message" "flightrec print: $dir/other.so is not the file that was recorded (its build-id differs); its functions are shown as addresses" "$(cat o.err)"
expect "replaced addresses" "2" "$(names o.txt FUNCTION_ENTRY | tr ' ' '\n' | grep -c '^0x')"

# A FIFO in its place: not opened for reading (it would block), said once.
cp fn-plugin.so fifo.so
./fn-target f.rec "$dir/fifo.so"
rm fifo.so
mkfifo fifo.so
timeout 30 "$flightrec" print f.rec >f.txt 2>f.err || fail "print with a FIFO for a shared object"
expect "fifo message" "flightrec print: $dir/fifo.so is not a regular file; its functions are shown as addresses" "$(cat f.err)"

if [ "$failures" -ne 0 ]; then
    echo "$failures failures" >&2
    exit 1
fi
echo "all function tracing checks passed"
