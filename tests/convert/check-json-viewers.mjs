// SPDX-License-Identifier: BSD-2-Clause
// Loads a Chrome JSON trace with two real readers and prints what each
// made of it, one line per thread, for tests to compare exactly:
//   devtools TID NAME: slices N, depth D
//   speedscope PROFILE: slices N, depth D
// then the count of warnings/errors each reader printed.  The DevTools
// performance engine (npm @paulirish/trace_engine) is used through its
// published entry point; speedscope (npm speedscope) ships only a browser
// bundle, so its own Trace Event importer is taken from the bundle and run
// in a sandbox without a page.  Exit status 1 if a reader throws.
//
// With --detail, every slice each reader made, for exact checks:
//   devtools slice TID NAME TS_NS+DUR_NS
//   speedscope slice PROFILE NAME OPEN_NS..CLOSE_NS depth D
//
// usage: node check-json-viewers.mjs NODE_MODULES TRACE.json [--detail]
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';
import vm from 'node:vm';

const [modules, tracePath, ...flags] = process.argv.slice(2);
const detail = flags.includes('--detail');
const details = [];
const trace = JSON.parse(fs.readFileSync(tracePath, 'utf8'));

function depthOf(node) {
  let deepest = 0;
  for (const child of node.children) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}

function countNodes(node) {
  let n = 1;
  for (const child of node.children) n += countNodes(child);
  return n;
}

async function devtools() {
  const entry = path.join(modules, '@paulirish/trace_engine/analyze-trace.mjs');
  const { analyzeEvents } = await import(url.pathToFileURL(entry).href);
  const complaints = [];
  const error = console.error;
  console.error = (...args) => complaints.push(args.join(' '));
  let parsed;
  try {
    ({ parsedTrace: parsed } = await analyzeEvents(trace.traceEvents));
  } finally {
    console.error = error;
  }
  const lines = [];
  for (const [, proc] of parsed.data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      // Slices are the entries with a duration; instants are leaves too.
      const slices = thread.entries.filter(e => e.ph === 'X').length;
      if (detail)
        for (const e of thread.entries.filter(e => e.ph === 'X'))
          details.push(`devtools slice ${tid} ${e.name} ` +
                       `${Math.round(e.ts * 1000)}+${Math.round(e.dur * 1000)}`);
      let depth = 0;
      for (const root of thread.tree.roots) depth = Math.max(depth, depthOf(root));
      const nodes = [...thread.tree.roots].reduce((n, r) => n + countNodes(r), 0);
      lines.push(`devtools ${tid} ${thread.name}: slices ${slices}, ` +
                 `entries ${nodes}, depth ${depth}`);
    }
  }
  lines.sort();
  lines.push(`devtools complaints: ${complaints.length}`);
  for (const c of complaints.slice(0, 5)) lines.push(`  ${c}`);
  return lines;
}

function speedscope() {
  const dir = path.join(modules, 'speedscope/dist/release');
  const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f));
  let source = fs.readFileSync(path.join(dir, bundle), 'utf8');
  // The importer the app picks for a Trace Event Format file, found by the
  // message it logs, is exported in place of mounting the app.
  const pick = /if\((\w+)\(r\)\)return console\.log\("Importing as Trace Event Format profile"\),(\w+)\(r\)/.exec(source);
  const mount = source.lastIndexOf('console.log(`speedscope v');
  if (!pick || mount < 0)
    throw new Error('speedscope bundle: Trace Event importer not found');
  source = source.slice(0, mount) +
      `globalThis.importTraceEvents=${pick[2]};})();`;
  // No page: every browser object is an inert callable.
  const inert = new Proxy(function () {}, {
    get: (target, key) => key === Symbol.toPrimitive ? () => '' :
                          key === 'then' ? undefined : inert,
    apply: () => inert,
    construct: () => inert,
    set: () => true,
  });
  const warnings = [];
  const sandbox = {
    console: { log() {}, info() {}, error: (...a) => warnings.push(a.join(' ')),
               warn: (...a) => warnings.push(a.join(' ')) },
    window: inert, document: inert, navigator: inert, location: inert,
    localStorage: inert, requestAnimationFrame: inert,
    setTimeout, clearTimeout, TextDecoder, TextEncoder, URL, URLSearchParams,
  };
  sandbox.globalThis = sandbox;
  sandbox.self = sandbox;
  vm.createContext(sandbox);
  vm.runInContext(source, sandbox);
  const group = sandbox.importTraceEvents(trace);
  const lines = [];
  for (const profile of group.profiles) {
    let slices = 0, depth = 0, deepest = 0;
    const open = [];
    profile.forEachCall((node, value) => {
      slices++;
      deepest = Math.max(deepest, ++depth);
      open.push(value);
    }, (node, value) => {
      depth--;
      const began = open.pop();
      // speedscope keeps Trace Event times in microseconds.
      if (detail)
        details.push(`speedscope slice ${profile.getName()} ` +
                     `${node.frame.name} ${Math.round(began * 1000)}..` +
                     `${Math.round(value * 1000)} depth ${depth}`);
    });
    lines.push(`speedscope ${profile.getName()}: slices ${slices}, ` +
               `depth ${deepest}`);
  }
  lines.sort();
  lines.push(`speedscope warnings: ${warnings.length}`);
  for (const w of warnings.slice(0, 5)) lines.push(`  ${w}`);
  return lines;
}

try {
  const lines = [...await devtools(), ...speedscope(), ...details.sort()];
  process.stdout.write(lines.join('\n') + '\n');
} catch (e) {
  process.stdout.write(`reader failed: ${e.stack}\n`);
  process.exit(1);
}
