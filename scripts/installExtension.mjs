// `npm run install-extension`: installs the packaged .vsix into the desktop VS Code whose `code` command is on
// PATH (`code --install-extension <vsix> --force`), packaging it first when it is missing or older than the
// sources. Without a `code` on PATH it says what to do instead and exits 1.
//
//   npm run install-extension -- [--vsix <a .vsix to install instead of building one>]
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensurePackaged, vsixPath } from './start.mjs';

const say = (line) => console.log(`[install-extension] ${line}`);

function fail(message, code = 1) {
  console.error(`[install-extension] ${message}`);
  process.exit(code);
}

/** The first executable named `name` on PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK);
        return file;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

let values;
try {
  ({ values } = parseArgs({
    options: { vsix: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  }));
} catch (err) {
  fail(`${err.message}\nUsage: npm run install-extension -- [--vsix <file.vsix>]`, 2);
}
if (values.help) {
  console.log(
    'Usage: npm run install-extension -- [--vsix <file.vsix>]\nInstalls Agent Version History into the desktop VS Code whose `code` command is on PATH.',
  );
  process.exit(0);
}
if (
  values.vsix !== undefined &&
  (!values.vsix.endsWith('.vsix') || !existsSync(values.vsix) || !statSync(values.vsix).isFile())
) {
  fail(`--vsix ${values.vsix}: not an existing .vsix file; nothing was installed.`, 2);
}

const code = process.platform === 'win32' ? onPath('code.cmd') : onPath('code');
if (!code) {
  fail(
    [
      'No desktop VS Code `code` command on PATH, so nothing was installed. Either:',
      '  - put `code` on PATH (in VS Code: F1 → "Shell Command: Install \'code\' command in PATH" on macOS; the Linux and',
      '    Windows installers add it), then run `npm run install-extension` again;',
      `  - or install the file by hand: \`npm run package\`, then in VS Code's Extensions view: … → Install from VSIX… → ${path.relative(process.cwd(), vsixPath)};`,
      '  - or try it without installing anything: `npm start` opens a private VS Code in your browser.',
    ].join('\n'),
  );
}

try {
  const vsix = values.vsix ? path.resolve(values.vsix) : await ensurePackaged();
  say(`${code} --install-extension ${vsix} --force`);
  const r = spawnSync(code, ['--install-extension', vsix, '--force'], { stdio: 'inherit' });
  if (r.status !== 0)
    fail(`\`code --install-extension\` failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}).`);
  say('installed. Reload VS Code windows that are open (F1 → "Developer: Reload Window") to use it.');
} catch (err) {
  fail(err.message);
}
