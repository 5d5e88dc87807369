// `npm run install-extension` (scripts/installExtension.mjs) as a real process. A desktop VS Code cannot exist
// on this machine, so the tests that need one put a stand-in `code` script (named as such) first on PATH.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTempDirs, tempDir } from '../support/gitFixtures';

const SCRIPT = path.resolve(__dirname, '../../../scripts/installExtension.mjs');

function installExtension(pathDirs: string[], ...args: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: pathDirs.join(path.delimiter) },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A stand-in for the desktop `code` CLI (mock: no desktop VS Code here) that records its arguments. */
function standInCode(exitCode: number): { dir: string; argsFile: string } {
  const dir = tempDir('avh-code-');
  const argsFile = path.join(dir, 'args.json');
  const script = `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(argsFile)}, JSON.stringify(process.argv.slice(2)));\nprocess.exit(${exitCode});\n`;
  fs.writeFileSync(path.join(dir, 'code'), script, { mode: 0o755 });
  return { dir, argsFile };
}

function fakeVsix(): string {
  const file = path.join(tempDir('avh-vsix-'), 'agent-version-history.vsix');
  fs.writeFileSync(file, 'PK');
  return file;
}

describe('install-extension (scripts/installExtension.mjs)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('without a desktop `code` on PATH: says what to do instead, installs nothing, exits 1', () => {
    const r = installExtension([tempDir('avh-empty-path-')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No desktop VS Code `code` command on PATH, so nothing was installed/);
    assert.match(r.stderr, /Install from VSIX/);
    assert.match(r.stderr, /npm start/);
  });

  it('with a stand-in `code` (mock: no desktop VS Code here): runs `code --install-extension <vsix> --force`', () => {
    const code = standInCode(0);
    const vsix = fakeVsix();
    const r = installExtension([code.dir], '--vsix', vsix);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(fs.readFileSync(code.argsFile, 'utf8')), ['--install-extension', vsix, '--force']);
    assert.match(r.stdout, /installed/);
  });

  it('with a stand-in `code` that fails (mock): reports the failure and exits 1', () => {
    const code = standInCode(3);
    const r = installExtension([code.dir], '--vsix', fakeVsix());
    assert.equal(r.code, 1);
    assert.match(r.stderr, /`code --install-extension` failed \(exit 3\)/);
  });

  it('a --vsix that is not an existing .vsix file is refused before anything runs', () => {
    const code = standInCode(0);
    const r = installExtension([code.dir], '--vsix', path.join(code.dir, 'missing.vsix'));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /missing\.vsix: not an existing \.vsix file; nothing was installed/);
    assert.equal(fs.existsSync(code.argsFile), false, '`code` was not run');
  });
});
