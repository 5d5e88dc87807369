// Lint step: fails when the import graph of src/ (and the webview app) has a cycle. Every relative import counts,
// type-only ones too: a type cycle ties two files together as much as a value cycle does. Prints each cycle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src'];
const EXTENSIONS = ['.ts', '.svelte', '.mjs', '.js'];
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g;

function files(dir) {
  const abs = path.join(root, dir);
  try {
    if (!statSync(abs).isDirectory()) return [];
  } catch {
    return [];
  }
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? files(path.join(dir, e.name))
      : EXTENSIONS.includes(path.extname(e.name))
        ? [path.join(dir, e.name)]
        : [],
  );
}

function resolve(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = path.join(path.dirname(from), spec);
  for (const candidate of [
    base,
    ...EXTENSIONS.map((x) => base + x),
    ...EXTENSIONS.map((x) => path.join(base, `index${x}`)),
  ]) {
    try {
      if (statSync(path.join(root, candidate)).isFile()) return path.normalize(candidate);
    } catch {
      /* next */
    }
  }
  return null;
}

const all = roots.flatMap(files);
const edges = new Map(all.map((f) => [f, new Set()]));
for (const file of all) {
  const text = readFileSync(path.join(root, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  for (const m of text.matchAll(IMPORT)) {
    const target = resolve(file, m[1] ?? m[2]);
    if (target && edges.has(target) && target !== file) edges.get(file).add(target);
  }
}

// Tarjan's strongly connected components: every component of more than one file is a cycle.
let index = 0;
const stack = [];
const meta = new Map();
const cycles = [];
function connect(v) {
  meta.set(v, { index, low: index, on: true });
  index++;
  stack.push(v);
  for (const w of edges.get(v)) {
    if (!meta.has(w)) {
      connect(w);
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
    } else if (meta.get(w).on) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
  }
  if (meta.get(v).low === meta.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      meta.get(w).on = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const v of edges.keys()) if (!meta.has(v)) connect(v);

if (cycles.length === 0) {
  console.log(`import graph: ${all.length} files, no cycles`);
} else {
  for (const c of cycles) console.error(`import cycle: ${c.join(' <-> ')}`);
  console.error(`${cycles.length} import cycle(s) in ${roots.join(', ')}`);
  process.exitCode = 1;
}
