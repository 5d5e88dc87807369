// Bundles the extension host and the CLI with esbuild (sql.js inside, vscode external) and copies the
// sql.js wasm beside them so the packaged .vsix and the CLI both load it from dist/.
//
// Two builds:
// - dist/ is what users get. AVH_PRODUCTION_BUILD is defined true, so every test hook guarded by
//   `typeof AVH_PRODUCTION_BUILD === 'undefined'` (failpoints, `agentVersions._test.*` commands) is dead code,
//   and minifySyntax removes it, the calls to the emptied failpoint() and the strings they name.
// - dist/test-extension/ is the same package with the hooks kept, laid out like the repository (package.json,
//   dist/extension.js, dist/cli.js + cliMain.js + cliHook.js, dist/sql-wasm.wasm, media/): the extension-host suite
//   loads it as its extensionDevelopmentPath, the end-to-end runner packages it as a test .vsix for the walk that kills
//   the extension host at a failpoint, and the CLI tests that need a failpoint run its dist/cli.js
//   (test/support/cliProcess.ts). Every other CLI test runs dist/cli.js itself: the bundles users get.
// While the test runner's unit and fault layers run dist/ (AVH_DIST_READ_ONLY, scripts/test.mjs), this script refuses
// to rewrite it: a bundle rewritten under a running test is half a file, and its code cache is gone.
// The Version History webview (src/vscode/historyView/app/, Svelte) is built first by Vite into dist/webview/;
// both builds ship it.
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');
const TEST_EXTENSION_DIR = path.join(dist, 'test-extension');
const wasm = require.resolve('sql.js/dist/sql-wasm.wasm');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  minifySyntax: true,
};
const production = { ...common, define: { AVH_PRODUCTION_BUILD: 'true' } };

if (process.env.AVH_DIST_READ_ONLY) {
  console.error(`scripts/build.mjs: ${dist} is being run by tests (AVH_DIST_READ_ONLY is set); not rebuilding it now.`);
  process.exit(1);
}
mkdirSync(dist, { recursive: true });
await viteBuild({ configFile: path.join(root, 'vite.config.ts'), logLevel: 'warn' });
// The extension host starts git through a small launcher process (src/core/git/gitLauncher.ts), bundled beside it.
const launcher = { define: { AVH_GIT_LAUNCHER: '"gitLauncher.js"' } };
await build({
  ...production,
  define: { ...production.define, ...launcher.define },
  entryPoints: [path.join(root, 'src/extension.ts')],
  outfile: path.join(dist, 'extension.js'),
  external: ['vscode'],
  mainFields: ['module', 'main'], // jsonc-parser (connect from VS Code): see the full CLI's build below
});
// The CLI is four bundles (docs/design.md, "Fast hook events"): dist/cli.js, the command, is a tiny entry that
// answers a harmless pre-tool event and otherwise requires dist/cliRun.js, the rest of the entry; for a hook event
// that starts the one git process, then requires dist/cliHook.js (the fast path: no sql.js, no xstate) by a path;
// everything else requires dist/cliMain.js, the full CLI.
// jsonc-parser's UMD build hides its requires from the bundler: mainFields takes its ES module build.
/** The small bundles must stay small: neither engine may creep into them through an import. */
const light = ({ metafile }) => {
  const heavy = Object.keys(metafile.inputs).filter((input) =>
    /node_modules\/(sql\.js|simple-git|xstate)\//.test(input),
  );
  if (heavy.length > 0) throw new Error(`the CLI entry and the hook fast path must not bundle ${heavy.join(', ')}`);
};
/**
 * esbuild turns each module's `import * as fs from 'node:fs'` into `__toESM(require('node:fs'))`, which copies every
 * property of the builtin into a fresh object, once per importing module: about 7 ms of the hook fast path's 18 ms
 * load here (bench/RESULTS.md, hook section). Our code only reads named members of those namespaces, never
 * `.default`, so the CLI bundles use the builtin module itself; the replacement keeps the line's length (source
 * maps stay exact), and a bundle that reads `.default` of a builtin namespace fails the build instead.
 */
function plainBuiltins(file) {
  const code = readFileSync(file, 'utf8');
  const wrapped = /(\w+) = __toESM\(require\("(node:[\w/]+)"\)\)/g;
  for (const [, name] of code.matchAll(wrapped)) {
    if (new RegExp(`\\b${name}\\.default\\b`).test(code))
      throw new Error(`${path.basename(file)}: ${name}.default is read; plainBuiltins cannot unwrap it`);
  }
  writeFileSync(
    file,
    code.replace(wrapped, (_, name, id) =>
      `${name} = require("${id}")`.padEnd(`${name} = __toESM(require("${id}"))`.length, ' '),
    ),
  );
}
/** The command's bundles (and the git launcher) into `out`, with `options` (production: the test hooks dropped). */
async function buildCli(out, options) {
  await build({
    ...options,
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile: path.join(out, 'cliMain.js'),
    mainFields: ['module', 'main'],
  });
  await build({
    ...options,
    entryPoints: [path.join(root, 'src/cli/hooks/fastHook.ts')],
    outfile: path.join(out, 'cliHook.js'),
    metafile: true,
  }).then(light);
  await build({
    ...options,
    entryPoints: [path.join(root, 'src/core/git/gitLauncherMain.ts')],
    outfile: path.join(out, 'gitLauncher.js'),
    metafile: true,
  }).then(light);
  await build({
    ...options,
    define: { ...options.define, AVH_CLI_MAIN: '"cliMain.js"', AVH_CLI_HOOK: '"cliHook.js"' },
    entryPoints: [path.join(root, 'src/cli/entryRun.ts')],
    outfile: path.join(out, 'cliRun.js'),
    metafile: true,
  }).then(light);
  // The command's entry: only what answers a harmless pre-tool event; the rest of the entry is cliRun.js.
  await build({
    ...options,
    define: { ...options.define, AVH_CLI_RUN: '"cliRun.js"' },
    entryPoints: [path.join(root, 'src/cli/entry.ts')],
    outfile: path.join(out, 'cli.js'),
    banner: { js: '#!/usr/bin/env node' },
    metafile: true,
  }).then(light);
  for (const bundle of ['cli.js', 'cliRun.js', 'cliHook.js', 'cliMain.js', 'gitLauncher.js'])
    plainBuiltins(path.join(out, bundle));
  chmodSync(path.join(out, 'cli.js'), 0o755);
}
await buildCli(dist, production);
// The code caches of the two bundles the command loads (src/cli/codeCache.ts), written by this Node in a process of
// its own started as a hook starts it (src/cli/codeCacheWriter.ts); a Node that did not write them loads the bundles
// without. The .vsix leaves them out (.vscodeignore): the Node that runs its CLI is rarely this one.
const cacheWriter = path.join(dist, '.codeCacheWriter.js');
await build({
  ...production,
  entryPoints: [path.join(root, 'src/cli/codeCacheWriter.ts')],
  outfile: cacheWriter,
  sourcemap: false,
});
for (const file of readdirSync(dist).filter((f) => f.endsWith('.v8cache'))) rmSync(path.join(dist, file));
const written = spawnSync(process.execPath, [cacheWriter, dist], {
  cwd: dist,
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: '' },
});
rmSync(cacheWriter);
if (written.status !== 0) throw new Error("writing the CLI bundles' code caches failed");
copyFileSync(wasm, path.join(dist, 'sql-wasm.wasm'));
// The bundles' own package scope: Node reads the nearest package.json of every CommonJS file it loads (for its
// "type"), and without this one it parsed the project's 13 KB manifest on every command and hook event (~2 ms).
const PACKAGE_SCOPE = '{ "type": "commonjs" }\n';
writeFileSync(path.join(dist, 'package.json'), PACKAGE_SCOPE);

rmSync(TEST_EXTENSION_DIR, { recursive: true, force: true });
mkdirSync(path.join(TEST_EXTENSION_DIR, 'dist'), { recursive: true });
copyFileSync(path.join(root, 'package.json'), path.join(TEST_EXTENSION_DIR, 'package.json'));
await build({
  ...common,
  define: launcher.define,
  entryPoints: [path.join(root, 'src/extension.ts')],
  outfile: path.join(TEST_EXTENSION_DIR, 'dist/extension.js'),
  external: ['vscode'],
  mainFields: ['module', 'main'],
});
// The command too, with the same hooks kept: the CLI tests that need a failpoint run this dist/cli.js.
await buildCli(path.join(TEST_EXTENSION_DIR, 'dist'), common);
copyFileSync(wasm, path.join(TEST_EXTENSION_DIR, 'dist/sql-wasm.wasm'));
writeFileSync(path.join(TEST_EXTENSION_DIR, 'dist/package.json'), PACKAGE_SCOPE);
cpSync(path.join(dist, 'webview'), path.join(TEST_EXTENSION_DIR, 'dist/webview'), { recursive: true });
// The view's icon: the end-to-end tests package this folder as a test .vsix (scripts/vscode/runE2E.mjs).
cpSync(path.join(root, 'media'), path.join(TEST_EXTENSION_DIR, 'media'), { recursive: true });
