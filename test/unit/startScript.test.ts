// scripts/start.mjs without a browser: bad input is refused with a specific message before anything is
// prepared or started (and a folder it did not make is never touched); the "is the .vsix current" check that
// lets a second `npm start` skip packaging. The whole run (code-server + Chromium) is test/e2e/start.e2e.test.ts.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { repoPicture } from '../support/assertions';
import { cleanupTempDirs, makeRepo, tempDir, testGitEnv, write } from '../support/gitFixtures';

const START = path.resolve(__dirname, '../../../scripts/start.mjs');
// Node >= 20.19 loads an ES module without top-level await through require().
const startModule = createRequire(__filename)(START) as { packageIsCurrent(root: string): boolean };

function start(...args: string[]) {
  const r = spawnSync(process.execPath, [START, ...args], { encoding: 'utf8', env: testGitEnv(), timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function assertRefused(r: ReturnType<typeof start>, message: RegExp): void {
  assert.equal(r.code, 2, `${r.stdout}${r.stderr}`);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stdout, /preparing/, 'nothing was prepared');
}

describe('npm start: input checks and reuse (scripts/start.mjs)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('refuses a bad --port, an unknown option and contradictory options', () => {
    assertRefused(start('--port', 'abc'), /--port must be a number from 1 to 65535, got "abc"/);
    assertRefused(start('--port', '70000'), /--port must be a number from 1 to 65535/);
    assertRefused(start('--bogus'), /Unknown option '--bogus'[\s\S]*Usage: npm start/);
    assertRefused(start('--repo', makeRepo(), '--reset-demo'), /--demo-repo and --reset-demo do not apply/);
  });

  it('refuses a --port that is already taken on 127.0.0.1', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      assertRefused(
        start('--port', String(port), '--demo-repo', path.join(tempDir(), 'demo')),
        new RegExp(`port ${port} on 127.0.0.1 is in use`),
      );
    } finally {
      server.close();
    }
  });

  it('refuses a --repo that does not exist or is not a git repository, and creates nothing there', () => {
    assertRefused(start('--repo', path.join(tempDir(), 'missing')), /there is no such folder; nothing was started/);
    const plain = tempDir('avh-plain-');
    write(plain, 'notes.txt', 'mine\n');
    const picture = repoPicture(plain);
    assertRefused(start('--repo', plain), /is not inside a git repository; nothing was started/);
    assert.deepEqual(repoPicture(plain), picture);
  });

  it('never takes over a --demo-repo folder it did not make', () => {
    const mine = makeRepo();
    const picture = repoPicture(mine);
    assertRefused(
      start('--demo-repo', mine),
      /already exists and was not made by npm start; nothing was started or changed/,
    );
    assert.deepEqual(repoPicture(mine), picture);
  });

  it('the .vsix counts as current only when it, dist/extension.js and dist/cli.js are newer than every input', () => {
    const root = tempDir('avh-pkg-');
    write(root, 'src/extension.ts', 'export {};\n');
    write(root, 'package.json', '{}\n');
    const past = (seconds: number) => new Date(Date.now() - seconds * 1000);
    const touch = (rel: string, when: Date) => fs.utimesSync(path.join(root, rel), when, when);
    // Folders count too (a deleted source changes its folder's mtime).
    for (const input of ['src/extension.ts', 'src', 'package.json']) touch(input, past(100));
    assert.equal(startModule.packageIsCurrent(root), false, 'nothing packaged yet');
    for (const out of ['dist/extension.js', 'dist/cli.js', 'dist/agent-version-history.vsix']) {
      write(root, out, 'x');
      touch(out, past(50));
    }
    assert.equal(startModule.packageIsCurrent(root), true);
    touch('src/extension.ts', past(10)); // a source edited after packaging
    assert.equal(startModule.packageIsCurrent(root), false);
    touch('src/extension.ts', past(100));
    write(root, 'media/icon.svg', '<svg/>'); // a new shipped asset
    assert.equal(startModule.packageIsCurrent(root), false);
    touch('media/icon.svg', past(100));
    touch('media', past(100));
    assert.equal(startModule.packageIsCurrent(root), true);
    fs.rmSync(path.join(root, 'media/icon.svg'));
    assert.equal(startModule.packageIsCurrent(root), false, 'a shipped file was deleted');
    touch('media', past(100));
    fs.rmSync(path.join(root, 'dist/cli.js'));
    assert.equal(startModule.packageIsCurrent(root), false, 'an output is missing');
  });
});
