import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { excludedSecretPaths, EXCLUDE_BLOCK_END, EXCLUDE_BLOCK_START } from '../../src/core/git/secretExclusion';
import { resolveRepository } from '../../src/core/git/repository';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason, recordingLog, repoPicture } from '../support/assertions';
import { cliJson, runCliProcess } from '../support/cliProcess';
import { FAKE } from '../support/fakeSecrets';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  head,
  makeRepo,
  read,
  subjectOf,
  write,
} from '../support/gitFixtures';

const headFiles = (repo: string, rev = 'HEAD') =>
  git(repo, 'ls-tree', '-r', '-z', '--name-only', rev).split('\0').filter(Boolean).sort();
const statusLines = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').trim();
const infoExclude = (repo: string) => read(repo, '.git/info/exclude');

/** Every file under `dir`, read as bytes and joined: the store's snapshot, journal, locks and temp files. */
function allBytesUnder(dir: string): string {
  if (!fs.existsSync(dir)) return '';
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => fs.readFileSync(path.join(e.parentPath, e.name)).toString('latin1'))
    .join('\n');
}

/** True when no commit reachable from any ref (our private refs included) holds `needle` in any file. */
function reachableHistoryLacks(repo: string, needle: string): boolean {
  const revs = git(repo, 'rev-list', '--all').trim().split('\n');
  return gitStatus(repo, 'grep', '-F', '-q', '-e', needle, ...revs, '--').code === 1;
}

describe('secrets never enter versions (issue 15; real git, real processes, real sql.js files)', function () {
  this.timeout(60_000);
  afterEach(cleanupTempDirs);

  it('a turn writing .env, deploy/id_rsa and config.js with keys: the version holds only the ordinary files, the three stay byte-identical, JSON names the rules, nothing holds the secret text', () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const openai = FAKE.openaiProject();
    const privateKey = `${FAKE.privateKeyHeader()}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n`;
    const aws = FAKE.awsKeyId();
    const secrets = {
      '.env': `OPENAI_API_KEY=${openai}\n`,
      'deploy/id_rsa': privateKey,
      'config.js': `module.exports = { region: 'eu-west-1', accessKeyId: '${aws}' };\n`,
    };
    const { turnId } = cliJson<{ turnId: string }>(
      ['turn', 'begin', '--chat', 'c', '--prompt', 'add my keys', '--verbose'],
      { cwd: repo },
    );
    for (const [file, text] of Object.entries(secrets)) write(repo, file, text);
    write(repo, 'src/app.ts', 'export const app = 1;\n');
    write(repo, 'README.md', '# demo, now documented\n');
    const end = runCliProcess(['turn', 'end', turnId, '--outcome', 'completed', '--json', '--verbose'], { cwd: repo });
    assert.equal(end.code, 0, end.stderr);
    const json = JSON.parse(end.stdout) as { version: string; excluded: { path: string; reason: string }[] };

    assert.equal(head(repo), json.version);
    assert.equal(subjectOf(repo), '[Agent] add my keys');
    assert.deepEqual(headFiles(repo), ['.gitignore', 'README.md', 'src/app.ts']);
    assert.deepEqual(
      json.excluded.sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: '.env', reason: 'dotenv-file' },
        { path: 'config.js', reason: 'aws-access-key-id' },
        { path: 'deploy/id_rsa', reason: 'ssh-private-key-file' },
      ],
    );
    for (const [file, text] of Object.entries(secrets)) assert.equal(read(repo, file), text, `${file} is untouched`);
    // git itself now treats them as ignored: status is clean and a later `git add -A` would skip them.
    assert.equal(statusLines(repo), '');
    assert.match(
      infoExclude(repo),
      new RegExp(
        `${EXCLUDE_BLOCK_START.replace(/[()]/g, '\\$&')}\n/\\.env\n/config\\.js\n/deploy/id_rsa\n${EXCLUDE_BLOCK_END}\n`,
      ),
    );
    // One stderr line per file, naming it and its rule.
    for (const file of Object.keys(secrets)) {
      assert.equal(
        end.stderr.split('\n').filter((l) => l.startsWith(`agent-versions: ${file} looks like it holds secrets`))
          .length,
        1,
        end.stderr,
      );
    }
    for (const needle of [openai, aws, 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ']) {
      assert.ok(
        !end.stdout.includes(needle) && !end.stderr.includes(needle),
        'CLI output and --verbose log lines hold no secret text',
      );
      assert.ok(
        !allBytesUnder(path.join(repo, '.git', 'agent-versions')).includes(needle),
        'no store row (snapshot or journal) holds secret text',
      );
      assert.ok(reachableHistoryLacks(repo, needle), 'no reachable commit holds secret text');
    }
    assertNothingLost(repo, before);
  });

  it(".env.example with placeholders is versioned; a tracked .env keeps being versioned; doctor's lookup reports the tracked match", async () => {
    const repo = makeRepo();
    write(repo, '.env', 'API_URL=https://example.test\n');
    git(repo, 'add', '.env');
    git(repo, 'commit', '-q', '-m', 'the user tracks .env on purpose');
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, '.env', `API_URL=https://example.test\nOPENAI_API_KEY=${FAKE.openaiLegacy()}\n`);
      write(repo, '.env.example', 'API_URL=\nOPENAI_API_KEY=your-key-here\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.deepEqual(end.excluded, []);
      assert.ok(end.version);
      assert.equal(git(repo, 'show', 'HEAD:.env'), read(repo, '.env'), 'the tracked .env change is in the version');
      assert.equal(git(repo, 'show', 'HEAD:.env.example'), 'API_URL=\nOPENAI_API_KEY=your-key-here\n');
      assert.equal(
        fs.existsSync(path.join(repo, '.git', 'info', 'exclude'))
          ? infoExclude(repo).includes(EXCLUDE_BLOCK_START)
          : false,
        false,
      );
      assert.deepEqual(await history.secretsInTrackedFiles(), [{ path: '.env', rule: 'dotenv-file' }]);
    } finally {
      await history.close();
    }
  });

  it('a file the user staged, or one in HEAD they unstaged, is theirs and is versioned', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'certs/dev.pem', 'not really a key\n');
      git(repo, 'add', 'certs/dev.pem');
      write(repo, 'certs/other.pem', 'left out\n');
      const end = await history.endTurn(turnId, 'completed');
      assert.deepEqual(end.excluded, [{ path: 'certs/other.pem', rule: 'private-key-file' }]);
      assert.deepEqual(headFiles(repo), ['.gitignore', 'README.md', 'certs/dev.pem']);
      // In HEAD but unstaged with `git rm --cached`: still the user's file (in HEAD's tree), so never excluded.
      git(repo, 'rm', '-q', '--cached', 'certs/dev.pem');
      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'p2' });
      write(repo, 'certs/dev.pem', 'changed\n');
      const end2 = await history.endTurn(t2.turnId, 'completed');
      assert.deepEqual(end2.excluded, []);
      assert.equal(git(repo, 'show', 'HEAD:certs/dev.pem'), 'changed\n');
    } finally {
      await history.close();
    }
  });

  it('Include in Versions: the file enters the next version, and the choice survives reopening the store', async () => {
    const repo = makeRepo();
    const env = `STRIPE_KEY=${FAKE.stripeLive()}\n`;
    let history = await VersionHistory.open(repo);
    try {
      const first = await history.beginTurn({ chatId: 'c', prompt: 'one' });
      write(repo, '.env', env);
      write(repo, 'deploy/id_rsa', `${FAKE.privateKeyHeader()}\n`);
      write(repo, 'a.txt', 'a\n');
      const end1 = await history.endTurn(first.turnId, 'completed');
      assert.deepEqual(end1.excluded.map((f) => f.path).sort(), ['.env', 'deploy/id_rsa']);
      // Refusals change nothing: a path we did not leave out, and malformed paths.
      const picture = repoPicture(repo);
      for (const bad of ['a.txt', '../.env', '/etc/passwd', '', 42, 'x/./y']) {
        await expectReason(history.includeSecretFile(bad), 'invalid-input');
      }
      assert.deepEqual(repoPicture(repo), picture);
      await history.includeSecretFile('.env');
      assert.deepEqual(await excludedSecretPaths(history.repository), ['deploy/id_rsa']);
    } finally {
      await history.close();
    }
    // A restart: the choice comes back from the store, and the exclude line is gone for good.
    history = await VersionHistory.open(repo);
    try {
      const second = await history.beginTurn({ chatId: 'c', prompt: 'two' });
      write(repo, 'b.txt', 'b\n');
      const end2 = await history.endTurn(second.turnId, 'completed');
      assert.deepEqual(end2.excluded, []);
      assert.equal(git(repo, 'show', 'HEAD:.env'), env);
      assert.equal(
        gitStatus(repo, 'cat-file', '-e', 'HEAD:deploy/id_rsa').code !== 0,
        true,
        'the other file stays out',
      );
      // Remembered per path: deleted and written again later, it is still included.
      const third = await history.beginTurn({ chatId: 'c', prompt: 'three' });
      fs.rmSync(path.join(repo, '.env'));
      const end3 = await history.endTurn(third.turnId, 'completed');
      assert.ok(end3.version);
      const fourth = await history.beginTurn({ chatId: 'c', prompt: 'four' });
      write(repo, '.env', env);
      const end4 = await history.endTurn(fourth.turnId, 'completed');
      assert.deepEqual(end4.excluded, []);
      assert.equal(git(repo, 'show', 'HEAD:.env'), env);
    } finally {
      await history.close();
    }
  });

  it('Add to .gitignore: appends an anchored pattern and removes our exclude line; the file stays ignored and untouched', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'deploy/id_rsa', `${FAKE.privateKeyHeader()}\n`);
      write(repo, 'weird [name]*.pem', 'x\n');
      await history.endTurn(turnId, 'completed');
      await history.gitignoreSecretFile('deploy/id_rsa');
      await history.gitignoreSecretFile('weird [name]*.pem');
      assert.equal(read(repo, '.gitignore'), 'ignored/\n*.log\n/deploy/id_rsa\n/weird \\[name]\\*.pem\n');
      assert.deepEqual(await excludedSecretPaths(history.repository), []);
      assert.ok(!infoExclude(repo).includes(EXCLUDE_BLOCK_START), 'an empty block is removed');
      // Only .gitignore itself changed; git now ignores both files through it.
      assert.equal(statusLines(repo), 'M .gitignore');
      assert.equal(gitStatus(repo, 'check-ignore', '-q', 'weird [name]*.pem').code, 0);
      assert.equal(
        gitStatus(repo, 'check-ignore', '-q', 'weird n-other.pem').code,
        1,
        'the pattern matches that one name, not a glob of it',
      );
      assert.equal(read(repo, 'deploy/id_rsa'), `${FAKE.privateKeyHeader()}\n`);
      await expectReason(history.gitignoreSecretFile('deploy/id_rsa'), 'invalid-input');
    } finally {
      await history.close();
    }
  });

  it('Undo of the turn that created .env leaves .env in place; an [Interrupted] commit leaves it out too', async () => {
    const repo = makeRepo();
    const env = `ANTHROPIC_API_KEY=${FAKE.anthropic()}\n`;
    const history = await VersionHistory.open(repo);
    try {
      const before = contentInventory(repo);
      const t1 = await history.beginTurn({ chatId: 'c', prompt: 'one' });
      write(repo, '.env', env);
      write(repo, 'src/a.ts', 'a\n');
      const end1 = await history.endTurn(t1.turnId, 'completed');
      assert.deepEqual(
        end1.excluded.map((f) => f.path),
        ['.env'],
      );
      const undo = await history.undo();
      assert.equal(undo.result, 'restored');
      assert.equal(fs.existsSync(path.join(repo, 'src/a.ts')), false, 'the turn is undone');
      assert.equal(read(repo, '.env'), env, 'the excluded file is neither deleted nor overwritten');
      assertNothingLost(repo, before);

      // A running turn undone: its partial work is saved as [Interrupted], without the new secret file.
      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'two' });
      write(repo, 'src/b.ts', 'b\n');
      write(repo, 'service-account.json', '{"type":"service_account"}\n');
      const undo2 = await history.undo(t2.turnId);
      assert.ok(undo2.preserved);
      assert.equal(subjectOf(repo, undo2.preserved).startsWith('[Interrupted]'), true);
      assert.deepEqual(headFiles(repo, undo2.preserved), ['.gitignore', 'README.md', 'src/b.ts']);
      assert.equal(read(repo, 'service-account.json'), '{"type":"service_account"}\n');
      assert.equal(read(repo, '.env'), env);
      assert.deepEqual(await excludedSecretPaths(history.repository), ['.env', 'service-account.json']);
      assert.ok(reachableHistoryLacks(repo, FAKE.anthropic()));
    } finally {
      await history.close();
    }
  });

  it('a restore that would write over an excluded file is refused and the file is untouched (it is treated as ignored)', async () => {
    const repo = makeRepo();
    write(repo, 'config.js', 'module.exports = {};\n');
    git(repo, 'add', 'config.js');
    git(repo, 'commit', '-q', '-m', 'user config');
    const keyed = `module.exports = { accessKeyId: '${FAKE.awsKeyId()}' };\n`;
    const history = await VersionHistory.open(repo);
    try {
      const t1 = await history.beginTurn({ chatId: 'c', prompt: 'drop config' });
      fs.rmSync(path.join(repo, 'config.js'));
      assert.ok((await history.endTurn(t1.turnId, 'completed')).version);
      const t2 = await history.beginTurn({ chatId: 'c', prompt: 'config with a key' });
      write(repo, 'config.js', keyed);
      write(repo, 'b.txt', 'b\n');
      const end2 = await history.endTurn(t2.turnId, 'completed');
      assert.deepEqual(end2.excluded, [{ path: 'config.js', rule: 'aws-access-key-id' }]);
      assert.equal((await history.undo(t2.turnId)).result, 'restored');
      assert.equal(read(repo, 'config.js'), keyed, 'undo of the turn that created it leaves it');
      // Undoing turn 1 would bring back the tracked config.js over the excluded one: refused, nothing changed.
      const picture = repoPicture(repo);
      const refused = await expectReason(history.undo(t1.turnId), 'dirty-conflict');
      assert.match(refused.message, /1 ignored file .* would be overwritten/);
      assert.deepEqual(repoPicture(repo), picture);
      assert.equal(read(repo, 'config.js'), keyed);
    } finally {
      await history.close();
    }
  });

  it('a secret file present before the turn is left out of the base snapshot, and beginTurn names it', async () => {
    const repo = makeRepo();
    write(repo, 'notes.txt', 'dirty tree\n');
    write(repo, 'credentials.json', '{"client_secret":"x"}\n');
    const history = await VersionHistory.open(repo);
    try {
      const begin = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      assert.deepEqual(begin.excluded, [{ path: 'credentials.json', rule: 'credentials-json' }]);
      assert.notEqual(begin.baseCommit, head(repo));
      assert.deepEqual(headFiles(repo, begin.baseCommit), ['.gitignore', 'README.md', 'notes.txt']);
      assert.equal(read(repo, 'credentials.json'), '{"client_secret":"x"}\n');
    } finally {
      await history.close();
    }
  });

  it('binary files and files over 1 MB are checked by name only', async () => {
    const repo = makeRepo();
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      const binary = Buffer.concat([Buffer.from([0, 0, 1, 2]), Buffer.from(FAKE.privateKeyHeader())]);
      write(repo, 'assets/font.bin', binary);
      write(repo, 'assets/store.p12', binary);
      write(repo, 'gen/big.js', `${'x'.repeat(1024 * 1024)}\nconst k = '${FAKE.awsKeyId()}';\n`);
      const end = await history.endTurn(turnId, 'completed');
      assert.deepEqual(end.excluded, [{ path: 'assets/store.p12', rule: 'private-key-file' }]);
      assert.deepEqual(headFiles(repo), ['.gitignore', 'README.md', 'assets/font.bin', 'gen/big.js']);
    } finally {
      await history.close();
    }
  });

  it('log lines and errors of the whole flow never hold the secret text or the file names', async () => {
    const repo = makeRepo();
    const lines: string[] = [];
    const token = FAKE.githubClassic();
    const history = await VersionHistory.open(repo, { log: recordingLog(lines) });
    try {
      const { turnId } = await history.beginTurn({ chatId: 'c', prompt: 'p' });
      write(repo, 'scripts/publish.sh', `export GH_TOKEN=${token}\n`);
      const end = await history.endTurn(turnId, 'completed');
      assert.deepEqual(end.excluded, [{ path: 'scripts/publish.sh', rule: 'github-token' }]);
      const refused = await expectReason(history.includeSecretFile('scripts/other.sh'), 'invalid-input');
      assert.ok(!refused.message.includes('other.sh'));
      await history.includeSecretFile('scripts/publish.sh');
    } finally {
      await history.close();
    }
    assert.ok(lines.some((l) => l.startsWith('turn.version') && l.includes('excluded=1')));
    for (const line of lines) assert.ok(!line.includes(token) && !line.includes('publish.sh'), line);
    const dir = (await resolveRepository(repo)).stateDir;
    assert.ok(!allBytesUnder(dir).includes(token));
  });
});
