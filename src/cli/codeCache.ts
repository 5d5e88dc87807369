/**
 * Loading the hook fast path's bundle with a V8 code cache (docs/design.md, "Fast hook events"): compiling
 * dist/cliHook.js takes 2.5–4 ms of every hook event here, reading its compiled form back about 0.5 ms. The build
 * writes the cache beside the bundle (codeCacheWriter.ts), for the Node that built it, so it is as trusted as the
 * bundle itself (never in a shared temporary folder: cached code runs without being parsed). Any other Node, a
 * bundle written since (V8 itself compares only the source's length), a missing file, or a cache V8 refuses (other
 * flags) loads the bundle as plain `require` would.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type * as vm from 'node:vm';

/**
 * The cache file for `bundle` as it is now, under this very Node: the Node version and architecture, and the bundle's
 * size and modification time, are in the name (a rebuilt or edited bundle names another file).
 */
export function codeCacheFile(bundle: string): string {
  const st = fs.statSync(bundle, { bigint: true });
  return `${bundle}.${process.version}-${process.arch}.${st.size}-${st.mtimeNs}.v8cache`;
}

/** The CommonJS wrapper, as one line: the bundle's own lines keep their numbers. */
export function wrapCommonJs(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) { ${source}\n})`;
}

/**
 * Compiles a CommonJS bundle exactly as the cache was made for (optionally from `cachedData`) and runs its top
 * level.
 */
export function runBundle<T>(file: string, cachedData?: Buffer): { script: vm.Script; exports: T } {
  // Loaded here, not at the top: the CLI's entry answers most pre-tool events without loading any bundle.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Script } = require('node:vm') as typeof vm;
  const script = new Script(wrapCommonJs(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  const module = { exports: {} as T };
  (script.runInThisContext() as (...args: unknown[]) => void).call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    path.dirname(file),
  );
  return { script, exports: module.exports };
}

/** Loads a CommonJS bundle as `require` would, from its code cache when this Node has one that V8 accepts. */
export function requireBundle<T>(file: string): T {
  let cachedData: Buffer;
  try {
    cachedData = fs.readFileSync(codeCacheFile(file));
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(file) as T;
  }
  return runBundle<T>(file, cachedData).exports;
}
