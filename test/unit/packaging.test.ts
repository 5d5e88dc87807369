/**
 * What ships: the .vsix packaged from the bundles `npm run build` wrote (the production esbuild bundles every other
 * test runs) holds no failpoint handling and no `agentVersions._test.*` command, and the production CLI ignores
 * AVH_FAILPOINT. The test build's CLI (what the fault suite runs) still honours it: the contrast proves the check can
 * fail. Read-only on dist/: the package is made from a copy, so the other test worker's runs of dist/cli.js never see
 * a bundle being rewritten (scripts/build.mjs refuses to run under the test runner at all).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, TEST_BUILD_CLI } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  head,
  makeRepo,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');
const PRODUCTION_CLI = CLI;
/** Strings only test hooks contain. */
const TEST_ONLY = [
  'AVH_FAILPOINT',
  'agentVersions._test',
  'recentLog',
  'recoveryState',
  'failpoint',
  ':during',
  'preparing:after',
  'turn-store-mutation:before',
  'AVH_HOOK_PATH_LOG',
  'AVH_HOOK_FAST',
  'hook-fast:',
];

/**
 * The .vsix `npm run package` makes, made from a copy of the package's files (dist/ as built, read-only here) by the
 * same vsce command line as the `package` script, into a temporary folder.
 */
function packageCopy(): string {
  const script = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { package: string } }
  ).scripts.package;
  const vsce = /^npm run build && vsce (package .*) -o dist\/agent-version-history\.vsix$/.exec(script);
  assert.ok(
    vsce,
    `the package script is "npm run build && vsce package … -o dist/agent-version-history.vsix": ${script}`,
  );
  const stage = tempDir('avh-package-');
  for (const entry of [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'THIRD-PARTY-NOTICES.txt',
    '.vscodeignore',
    'media',
    'dist',
  ])
    fs.cpSync(path.join(ROOT, entry), path.join(stage, entry), {
      recursive: true,
      filter: (src) => !src.endsWith('.vsix'),
    });
  const out = path.join(tempDir('avh-vsix-out-'), 'agent-version-history.vsix');
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/@vscode/vsce/vsce'), ...vsce[1].split(' '), '-o', out],
    { cwd: stage, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 180_000 },
  );
  assert.equal(r.status, 0, `vsce package failed:\n${r.stdout}\n${r.stderr}`);
  return out;
}

/** A repository with one completed agent turn, made by the CLI under test (so Undo has something to undo). */
function repoWithTurn(cli: string): string {
  const repo = makeRepo();
  const env = { ...testGitEnv(), AVH_FAILPOINT: undefined };
  const begun = JSON.parse(
    execFileSync(process.execPath, [cli, 'turn', 'begin', '--chat', 'c', '--prompt', 'add app', '--json'], {
      cwd: repo,
      env,
      encoding: 'utf8',
    }),
  ) as { turnId: string };
  write(repo, 'app.ts', 'by the agent\n');
  execFileSync(process.execPath, [cli, 'turn', 'end', begun.turnId, '--outcome', 'completed', '--json'], {
    cwd: repo,
    env,
    encoding: 'utf8',
  });
  return repo;
}

describe('what ships (production build)', function () {
  this.timeout(240_000);
  after(cleanupTempDirs);

  let VSIX = '';
  before(() => {
    VSIX = packageCopy();
  });

  it('the packaged .vsix contains no failpoint or _test strings, and no test build', () => {
    const listing = execFileSync('unzip', ['-Z1', VSIX], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.ok(listing.includes('extension/dist/extension.js'), listing.join('\n'));
    assert.ok(listing.includes('extension/dist/cli.js'), listing.join('\n'));
    // The licenses of what the bundles contain (the codicon font's CC BY 4.0 attribution among them) ship with them.
    assert.ok(listing.includes('extension/THIRD-PARTY-NOTICES.txt'), listing.join('\n'));
    // The command is a small entry; the rest of the entry, the hook fast path and the full CLI it loads sit beside it.
    for (const bundle of ['cliRun.js', 'cliHook.js', 'cliMain.js', 'gitLauncher.js'])
      assert.ok(listing.includes(`extension/dist/${bundle}`), listing.join('\n'));
    // The bundles' own package scope, so Node does not parse the extension's manifest on every hook event.
    assert.ok(listing.includes('extension/dist/package.json'), listing.join('\n'));
    // The CLI's code caches fit only the Node that built them (src/cli/codeCache.ts): not shipped.
    assert.deepEqual(
      listing.filter((f) => f.endsWith('.v8cache')),
      [],
    );
    assert.deepEqual(
      listing.filter((f) => /test-extension|\.map$|^extension\/(src|out|test)\//.test(f)),
      [],
    );
    const unpacked = tempDir('avh-vsix-');
    execFileSync('unzip', ['-q', VSIX, '-d', unpacked]);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (/\.(js|json|wasm)$/.test(entry.name)) {
          // Code and manifests: the README and CHANGELOG may name the test hooks in prose.
          const text = fs.readFileSync(full).toString('latin1');
          for (const s of TEST_ONLY) if (text.includes(s)) found.push(`${path.relative(unpacked, full)}: ${s}`);
        }
      }
    };
    walk(unpacked);
    assert.deepEqual(found, []);
    assert.ok(fs.existsSync(path.join(unpacked, 'extension/dist/extension.js')), 'the scan saw the bundles');
  });

  it('the production command is the small entry: `connect` writes dist/cli.js (not the full bundle it loads) into the hook command', () => {
    const repo = makeRepo();
    const out = execFileSync(process.execPath, [PRODUCTION_CLI, 'connect', 'claude-code', '--dry-run', '--json'], {
      cwd: repo,
      env: testGitEnv(),
      encoding: 'utf8',
    });
    assert.equal(
      (JSON.parse(out) as { command: string }).command,
      `env -u NODE_EXTRA_CA_CERTS ${process.execPath} ${PRODUCTION_CLI} hook claude-code`,
    );
    assert.ok(
      fs.statSync(PRODUCTION_CLI).size < fs.statSync(path.join(ROOT, 'dist/cliMain.js')).size / 4,
      'dist/cli.js stays a small entry',
    );
  });

  it('the test build keeps the hooks the extension-host suite and the CLI fault tests need', () => {
    const text = fs.readFileSync(path.join(ROOT, 'dist/test-extension/dist/extension.js'), 'utf8');
    for (const s of ['AVH_FAILPOINT', 'agentVersions._test.recentLog', 'agentVersions._test.recoveryState'])
      assert.ok(text.includes(s), s);
    const cliMain = fs.readFileSync(path.join(ROOT, 'dist/test-extension/dist/cliMain.js'), 'utf8');
    const cliHook = fs.readFileSync(path.join(ROOT, 'dist/test-extension/dist/cliHook.js'), 'utf8');
    for (const s of ['AVH_FAILPOINT', 'preparing:after']) assert.ok(cliMain.includes(s), s);
    for (const s of ['AVH_HOOK_PATH_LOG', 'AVH_HOOK_FAST', 'hook-fast:']) assert.ok(cliHook.includes(s), s);
  });

  it('the production CLI ignores AVH_FAILPOINT; the test build (fault suite) is killed there', () => {
    for (const [cli, killed] of [
      [PRODUCTION_CLI, false],
      [TEST_BUILD_CLI, true],
    ] as const) {
      const repo = repoWithTurn(cli);
      const before = contentInventory(repo);
      const headBefore = head(repo);
      const r = spawnSync(process.execPath, [cli, 'undo', '--json'], {
        cwd: repo,
        env: { ...testGitEnv(), AVH_FAILPOINT: 'preparing:after' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (killed) {
        assert.equal(r.signal, 'SIGKILL', `${cli}: ${r.stderr}`);
        assert.equal(head(repo), headBefore);
      } else {
        assert.equal(r.status, 0, `${cli}: ${r.stderr}`);
        assert.notEqual(head(repo), headBefore);
        assert.equal(fs.existsSync(path.join(repo, 'app.ts')), false);
        assert.equal(git(repo, 'status', '--porcelain'), '');
      }
      assertNothingLost(repo, before);
    }
  });
});
