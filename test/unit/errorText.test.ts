/**
 * Errors carry no raw git output (docs/product-contract.md §9, privacy): git's stderr can name files and remote URLs. A
 * canary in real git stderr never reaches an error handed to API callers, nor anything the CLI prints (with --json and
 * --verbose).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import { AvhError } from '../../src/core/errors';
import { GitCommandError, runGit } from '../../src/core/git/gitRunner';
import { toPublicError } from '../../src/core/publicError';
import { repoPicture } from '../support/assertions';
import { runCliProcess } from '../support/cliProcess';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  makeRepo,
  tempDir,
  testGitEnv,
} from '../support/gitFixtures';

const CANARY = 'canary-7f3a';
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

async function gitFailure(repo: string, args: string[]): Promise<GitCommandError> {
  try {
    await runGit(repo, args, { timeoutMs: 20_000 });
  } catch (error) {
    assert.ok(error instanceof GitCommandError, String(error));
    return error;
  }
  assert.fail('git should have failed');
}

/** Everything an API caller could read off the error. */
function everything(error: Error): string {
  return [
    util.inspect(error, { showHidden: true, depth: 20 }),
    JSON.stringify(error),
    String(error.stack),
    error.message,
  ].join('\n');
}

describe('error text carries no raw git output', () => {
  after(cleanupTempDirs);

  it('an API error from real git stderr naming a remote URL or a file keeps reason and message only', async () => {
    const repo = makeRepo();
    const failures = [
      await gitFailure(repo, ['ls-remote', `https://${CANARY}-user:${CANARY}-token@127.0.0.1:9/${CANARY}.git`]),
      await gitFailure(repo, ['show', `HEAD:${CANARY}-secret.txt`]),
    ];
    for (const raw of failures) {
      assert.ok(raw.stderr.includes(CANARY), 'the canary is in git stderr (the test can fail)');
      const pub = toPublicError(new AvhError(raw.reason, 'wrapped', {}, { cause: raw }));
      const direct = toPublicError(raw);
      for (const e of [pub, direct]) {
        assert.ok(e instanceof AvhError);
        assert.equal(e.reason, raw.reason);
        assert.equal(everything(e).includes(CANARY), false, everything(e));
      }
      assert.equal(direct.message, raw.message);
    }
    const unknown = toPublicError(new TypeError(`cannot read ${CANARY}`));
    assert.equal(everything(unknown).includes(CANARY), false);
  });

  it('the CLI prints reason and message only when git fails with a canary in stderr (mock: a git wrapper fails one subcommand)', () => {
    const repo = makeRepo();
    const wrapperDir = tempDir('avh-gitwrap-');
    fs.writeFileSync(
      path.join(wrapperDir, 'git'),
      `#!/bin/sh\nfor a in "$@"; do if [ "$a" = "$CANARY_VERB" ]; then\n` +
        `  echo "fatal: unable to access 'https://${CANARY}:tok@example.invalid/${CANARY}.git/': cannot open ${CANARY}-file.txt" >&2; exit 128\nfi; done\n` +
        `exec '${REAL_GIT}' "$@"\n`,
      { mode: 0o755 },
    );
    const before = contentInventory(repo);
    const picture = repoPicture(repo);
    for (const [verb, args] of [
      ['rev-parse', ['versions']],
      ['status', ['undo']],
      ['status', ['turn', 'begin', '--chat', 'c', '--prompt', 'p']],
    ] as const) {
      for (const json of [[], ['--json']]) {
        const env = {
          ...testGitEnv(),
          PATH: `${wrapperDir}${path.delimiter}${process.env.PATH ?? ''}`,
          CANARY_VERB: verb,
        };
        const r = runCliProcess(['--verbose', ...args, ...json], { cwd: repo, env });
        assert.notEqual(r.code, 0, `${args.join(' ')} should fail`);
        assert.equal(`${r.stdout}${r.stderr}`.includes(CANARY), false, `${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, /^agent-versions: \S/m);
        if (json.length > 0) {
          const { error } = JSON.parse(r.stdout) as { error: { reason: string; message: string } };
          assert.deepEqual(Object.keys(error).sort(), ['message', 'reason']);
        }
      }
    }
    assert.deepEqual(repoPicture(repo), picture);
    assertNothingLost(repo, before);
  });
});
