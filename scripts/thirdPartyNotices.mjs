// Writes THIRD-PARTY-NOTICES.txt: the license of every package whose code or font ships inside the .vsix bundles
// (esbuild bundles the runtime dependencies into dist/*.js, Vite bundles Svelte into dist/webview/index.js and copies
// the codicon font). `--check` (run by `npm run lint`) fails when the file is not what this script would write, e.g.
// after a dependency's version changed. A new bundled dependency gets one line in SHIPPED.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'THIRD-PARTY-NOTICES.txt');

/** Package → what of it ships. */
const SHIPPED = [
  ['sql.js', 'dist/extension.js, dist/cliMain.js, dist/sql-wasm.wasm'],
  ['xstate', 'dist/extension.js, dist/cliMain.js'],
  ['valibot', 'dist/extension.js, dist/webview/index.js'],
  ['jsonc-parser', 'dist/extension.js, dist/cliMain.js'],
  ['smol-toml', 'dist/extension.js, dist/cliMain.js'],
  ['svelte', 'dist/webview/index.js'],
  ['@vscode/codicons', 'dist/webview/codicon.ttf, dist/webview/index.css (icon font, CC BY 4.0)'],
];

function licenseText(dir) {
  const file = fs.readdirSync(dir).find((f) => /^licen[sc]e(\.md|\.txt)?$/i.test(f));
  if (!file) throw new Error(`third-party notices: ${dir} has no LICENSE file`);
  return fs.readFileSync(path.join(dir, file), 'utf8').trim();
}

function notices() {
  const parts = [
    'Agent Version History ships code and files of the following packages, each under its own license, given in',
    'full below. Agent Version History itself is under the MIT License (LICENSE).',
    '',
  ];
  for (const [name, where] of SHIPPED) {
    const dir = path.join(root, 'node_modules', name);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    parts.push('='.repeat(100), `${name} ${pkg.version} (${pkg.license}) — in ${where}`, '='.repeat(100), '');
    if (name === '@vscode/codicons') {
      parts.push(
        'The codicon icon font is © Microsoft Corporation, from https://github.com/microsoft/vscode-codicons,',
        'licensed under Creative Commons Attribution 4.0 International (CC BY 4.0); it is shipped unmodified.',
        '',
      );
    }
    parts.push(licenseText(dir), '');
  }
  return `${parts.join('\n')}`;
}

const text = notices();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
  if (current !== text) {
    console.error('THIRD-PARTY-NOTICES.txt is out of date: run `node scripts/thirdPartyNotices.mjs`');
    process.exit(1);
  }
} else {
  fs.writeFileSync(out, text);
  console.log(`wrote ${path.relative(root, out)} (${SHIPPED.length} packages)`);
}
