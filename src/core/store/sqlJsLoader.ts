import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { SqlJsStatic } from 'sql.js';
import { AvhError } from '../errors';

let loading: Promise<SqlJsStatic> | undefined;

/** The bundle ships the wasm beside dist/extension.js and dist/cli.js; compiled tests take it from node_modules. */
function locateWasm(): string {
  const beside = path.join(__dirname, 'sql-wasm.wasm');
  if (fs.existsSync(beside)) return beside;
  // Not a literal: the bundler must leave this fallback alone (the bundle never reaches it).
  const fromPackage = ['sql.js', 'dist', 'sql-wasm.wasm'].join('/');
  return require.resolve(fromPackage);
}

/**
 * Loads the sql.js wasm once per process, on first use (activation stays cheap). A failed load is retried on the next
 * call.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  loading ??= initSqlJs({ locateFile: locateWasm }).catch((error: unknown) => {
    loading = undefined;
    throw new AvhError('store-unavailable', 'Could not load the SQLite engine (sql-wasm.wasm)', {}, { cause: error });
  });
  return loading;
}
