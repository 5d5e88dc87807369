// Lint step: fails when the import graph of src/ (and the webview app) has a cycle, or when a file imports one of a
// layer above its own (scripts/importLayers.mjs: the rule `layers/no-upward-import`). Every relative import counts,
// type-only ones too: a type cycle ties two files together as much as a value cycle does. Prints each finding.
// `--root DIR` checks another tree laid out like this repository (the rule's own test runs it on a fixture).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { internalImports, LAYERS, upwardImports } from './importLayers.mjs';

const args = process.argv.slice(2);
const rootFlag = args.indexOf('--root');
const root =
  rootFlag >= 0
    ? path.resolve(args.splice(rootFlag, 2)[1])
    : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const roots = args.length > 0 ? args : ['src'];
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

// Layers: only files of src/ have one (declaration files declare, they import nothing).
const layerName = (rank) => LAYERS[rank][0];
const ranked = new Map([...edges].filter(([file]) => file.startsWith(`src${path.sep}`) && !file.endsWith('.d.ts')));
const posixEdges = new Map([...ranked].map(([f, targets]) => [posix(f), [...targets].map(posix)]));
const upward = upwardImports(posixEdges);
const internal = internalImports(posixEdges);
for (const f of upward) {
  if (f.unranked)
    console.error(`layers/unranked-file: ${f.from} belongs to no layer: add its folder to scripts/importLayers.mjs`);
  else
    console.error(
      `layers/no-upward-import: ${f.from} (layer of ${layerName(f.fromRank)}) imports ${f.to} ` +
        `(layer of ${layerName(f.toRank)}, above it)`,
    );
}

for (const f of internal)
  console.error(
    `layers/core-through-facade: ${f.from} imports ${f.to}, an internal of the core: import it through ` +
      'src/core/versionHistory.ts (or name the module in CORE_PUBLIC, scripts/importLayers.mjs)',
  );

function posix(file) {
  return file.split(path.sep).join('/');
}

if (cycles.length === 0 && upward.length === 0 && internal.length === 0) {
  console.log(
    `import graph: ${all.length} files, no cycles, no import from a lower layer to a higher one, ` +
      'the core reached through its façade',
  );
} else {
  for (const c of cycles) console.error(`import cycle: ${c.join(' <-> ')}`);
  if (cycles.length > 0) console.error(`${cycles.length} import cycle(s) in ${roots.join(', ')}`);
  if (upward.length + internal.length > 0)
    console.error(`${upward.length + internal.length} layer finding(s) (scripts/importLayers.mjs)`);
  process.exitCode = 1;
}
