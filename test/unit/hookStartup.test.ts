/**
 * What a hook process saves at its start (docs/design.md, "Fast hook events"): the early status's output through a
 * temporary file instead of a pipe (spawnCollect's stdoutViaFile), and the bundles loaded from a V8 code cache
 * (src/cli/codeCache.ts). Both must give exactly what the plain way gives, and fall back to it on any doubt.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { codeCacheFile, requireBundle, wrapCommonJs } from '../../src/cli/codeCache';
import { GitCommandError, runGit } from '../../src/core/git/gitRunner';
import { PROBE_STATUS_ARGS, startProbeStatus } from '../../src/core/git/statusProbe';
import { cleanupTempDirs, makeRepo, tempDir, write } from '../support/gitFixtures';

const ROOT = path.resolve(__dirname, '../../..');

/** Our temporary output files (agent-versions-<pid>-…) in the temporary folder, by this process. */
function ourTempFiles(): string[] {
  return fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`agent-versions-${process.pid}-`));
}

describe('hook start-up: the early status through a file, the bundles from a code cache', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('the status through a file is byte for byte the piped one (odd names, 1 MB of output), exit codes and failures are kept, no file is left', async () => {
    const repo = makeRepo();
    write(repo, 'README.md', 'changed\n');
    write(repo, 'new file ü\nline.txt', 'x\n');
    for (let i = 0; i < 2000; i++)
      write(repo, `many/a-rather-long-file-name-to-make-the-output-large-${i}.txt`, `${i}\n`);
    const env = { GIT_OPTIONAL_LOCKS: '0' };
    const piped = await runGit(repo, PROBE_STATUS_ARGS, { env });
    const viaFile = await runGit(repo, PROBE_STATUS_ARGS, { env, stdoutViaFile: true });
    assert.ok(piped.stdout.length > 100_000, 'large enough to outgrow a pipe buffer');
    assert.equal(viaFile.stdout, piped.stdout);
    assert.equal(await startProbeStatus(repo), piped.stdout);
    // A failure is still a failure (its message is the full path's to give: stderr is dropped).
    const failed = await runGit(repo, ['rev-parse', '--verify', 'no-such-ref'], { stdoutViaFile: true }).catch(
      (e: unknown) => e,
    );
    assert.ok(failed instanceof GitCommandError);
    assert.equal(failed.exitCode, 128);
    const ok = await runGit(repo, ['diff', '--quiet', 'HEAD'], { stdoutViaFile: true, okCodes: [1] });
    assert.equal(ok.code, 1);
    const timedOut = await runGit(repo, ['-c', 'alias.slow=!sleep 2', 'slow'], {
      stdoutViaFile: true,
      timeoutMs: 200,
    }).catch((e: unknown) => e);
    assert.ok(timedOut instanceof GitCommandError && timedOut.reason === 'git-timeout');
    // A start that fails (the folder is gone) is the same failure as with pipes.
    const gone = await runGit(path.join(repo, 'no-such-folder'), ['status'], { stdoutViaFile: true }).catch(
      (e: unknown) => e,
    );
    assert.ok(gone instanceof GitCommandError && gone.reason === 'not-a-repository', String(gone));
    assert.match(gone.message, /no longer exists/);
    assert.deepEqual(ourTempFiles(), [], 'every output file is unlinked as soon as it is open');
  });

  it("a bundle loads the same from its code cache, without one, and with a cache V8 refuses (garbage, another bundle's)", () => {
    const dir = tempDir('avh-code-cache-');
    const bundle = path.join(dir, 'bundle.js');
    fs.writeFileSync(
      bundle,
      [
        '"use strict";',
        'const path = require("node:path");',
        'exports.where = () => [path.basename(__filename), path.basename(__dirname), typeof module.exports];',
        'exports.add = (a, b) => a + b;',
        'exports.stackLine = () => new Error("here").stack.split("\\n")[1];',
        '',
      ].join('\n'),
    );
    const expectLoaded = (label: string) => {
      const loaded = requireBundle<{
        where: () => string[];
        add: (a: number, b: number) => number;
        stackLine: () => string;
      }>(bundle);
      assert.deepEqual(loaded.where(), ['bundle.js', path.basename(dir), 'object'], label);
      assert.equal(loaded.add(2, 3), 5, label);
      assert.match(loaded.stackLine(), /bundle\.js:5:/, `${label}: stack traces name the bundle's own line`);
    };
    expectLoaded('no cache');
    // The cache as the build writes it (codeCacheWriter.ts): V8 accepts it for this very source.
    const script = new vm.Script(wrapCommonJs(fs.readFileSync(bundle, 'utf8')), { filename: bundle });
    fs.writeFileSync(codeCacheFile(bundle), script.createCachedData());
    assert.equal(
      new vm.Script(wrapCommonJs(fs.readFileSync(bundle, 'utf8')), {
        filename: bundle,
        cachedData: fs.readFileSync(codeCacheFile(bundle)),
      }).cachedDataRejected,
      false,
    );
    expectLoaded('from the cache');
    fs.writeFileSync(codeCacheFile(bundle), Buffer.from('not a code cache at all'));
    expectLoaded('garbage cache');
    fs.writeFileSync(
      codeCacheFile(bundle),
      new vm.Script(wrapCommonJs('exports.other = 1;'), { filename: bundle }).createCachedData(),
    );
    expectLoaded("another bundle's cache");
    assert.ok(codeCacheFile(bundle).includes(`.${process.version}-${process.arch}.`), 'another Node never reads it');
  });

  it('a bundle rewritten since its cache was made (same length: V8 alone would accept the cache) runs its new code', () => {
    const dir = tempDir('avh-code-cache-');
    const bundle = path.join(dir, 'op.js');
    fs.writeFileSync(bundle, 'exports.op = (a, b) => a + b;\n');
    const oldCache = new vm.Script(wrapCommonJs(fs.readFileSync(bundle, 'utf8')), {
      filename: bundle,
    }).createCachedData();
    fs.writeFileSync(codeCacheFile(bundle), oldCache);
    assert.equal(requireBundle<{ op: (a: number, b: number) => number }>(bundle).op(2, 3), 5);
    fs.writeFileSync(bundle, 'exports.op = (a, b) => a - b;\n');
    const later = new Date(Date.now() + 2000);
    fs.utimesSync(bundle, later, later); // a rebuild comes later than the cache it replaces
    const rewritten = wrapCommonJs(fs.readFileSync(bundle, 'utf8'));
    assert.equal(
      new vm.Script(rewritten, { filename: bundle, cachedData: oldCache }).cachedDataRejected,
      false,
      'V8 compares only the length',
    );
    assert.equal(requireBundle<{ op: (a: number, b: number) => number }>(bundle).op(2, 3), -1);
  });

  it('the build wrote caches this Node accepts for both CLI bundles, and the command runs from them', () => {
    for (const name of ['cliHook.js', 'cliMain.js']) {
      const bundle = path.join(ROOT, 'dist', name);
      const cache = codeCacheFile(bundle);
      assert.ok(fs.existsSync(cache), `${cache} (npm run build writes it)`);
      const script = new vm.Script(wrapCommonJs(fs.readFileSync(bundle, 'utf8')), {
        filename: bundle,
        cachedData: fs.readFileSync(cache),
      });
      assert.equal(script.cachedDataRejected, false, name);
    }
    const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^agent-versions \d+\.\d+\.\d+\n$/);
  });

  it('a fast prompt and a fast Stop load neither node:crypto nor node:zlib; the bundles have their own package scope (dist/package.json)', () => {
    const repo = makeRepo();
    const preload = path.join(tempDir('avh-preload-'), 'modules.js');
    const loaded = path.join(path.dirname(preload), 'loaded.txt');
    fs.writeFileSync(
      preload,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(loaded)}, process.moduleLoadList.join('\\n')));\n`,
    );
    const event = (name: string, measured: boolean) => {
      const input = JSON.stringify({
        session_id: 'startup-modules',
        transcript_path: path.join(repo, 'no-transcript.jsonl'),
        cwd: repo,
        hook_event_name: name,
        ...(name === 'UserPromptSubmit' ? { prompt: 'explain' } : { stop_hook_active: false }),
      });
      const r = spawnSync(
        process.execPath,
        [...(measured ? ['-r', preload] : []), path.join(ROOT, 'dist/cli.js'), 'hook', 'claude-code', '--json'],
        { cwd: repo, input, encoding: 'utf8', env: { ...process.env, COPILOT_CLI: '', AVH_HOOK_PATH_LOG: '' } },
      );
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as { action: string };
    };
    // The first prompt of a chat takes the full path (it records the chat); its Stop and the next prompt are fast.
    event('UserPromptSubmit', false);
    event('Stop', false);
    for (const name of ['UserPromptSubmit', 'Stop']) {
      assert.match(event(name, true).action, /^(began|ended)$/);
      // (The full CLI's bundle loads both at its top: neither loaded also says the event took the fast path.)
      const modules = fs.readFileSync(loaded, 'utf8').split('\n');
      assert.ok(!modules.includes('NativeModule crypto'), `${name} loaded node:crypto`);
      assert.ok(!modules.includes('NativeModule zlib'), `${name} loaded node:zlib`);
    }
    assert.equal(fs.readFileSync(path.join(ROOT, 'dist/package.json'), 'utf8'), '{ "type": "commonjs" }\n');
  });
});
