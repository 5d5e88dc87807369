// Bundles the extension host and the CLI with esbuild (sql.js inside, vscode external) and copies the
// sql.js wasm beside them so the packaged .vsix and the CLI both load it from dist/.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');
mkdirSync(dist, { recursive: true });

const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: 'linked', logLevel: 'warning' };
await build({ ...common, entryPoints: [path.join(root, 'src/extension.ts')], outfile: path.join(dist, 'extension.js'), external: ['vscode'] });
// jsonc-parser's UMD build hides its requires from the bundler: take its ES module build.
await build({ ...common, entryPoints: [path.join(root, 'src/cli/main.ts')], outfile: path.join(dist, 'cli.js'), banner: { js: '#!/usr/bin/env node' }, mainFields: ['module', 'main'] });
chmodSync(path.join(dist, 'cli.js'), 0o755);
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), path.join(dist, 'sql-wasm.wasm'));
