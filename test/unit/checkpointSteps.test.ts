/**
 * Issue 34, the view's side: checkpoints taken before an agent's destructive commands as steps under their turn in
 * the Version History model (viewModel.ts, through the façade), the end-of-turn notice's steps and sentence, Restore
 * to Before This Command from a step, and pruning with the turn's history. Real git, real sql.js files; the
 * commands themselves really run (`git reset --hard`, `git clean -fdx`).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DurableStore } from '../../src/core/store/durableStore';
import { CHECKPOINT_REF_PREFIX, savedFilesDir } from '../../src/core/turns/commandCheckpoints';
import { VersionHistory } from '../../src/core/versionHistory';
import { checkpointNoticeText } from '../../src/core/history/wording';
import type { VersionsView } from '../../src/vscode/historyView/protocol';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  gitStatus,
  makeRepo,
  read,
  write,
} from '../support/gitFixtures';

function versions(view: VersionsView) {
  assert.equal(view.kind, 'versions');
  if (view.kind !== 'versions') throw new Error('not a versions view');
  return view;
}

function repoWithIgnored(): string {
  const repo = makeRepo();
  write(repo, '.gitignore', '.env\nnode_modules/\n');
  write(repo, 'a.txt', 'a0\n');
  write(repo, 'src/keep.ts', 'keep\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'start');
  write(repo, '.env', 'SECRET=1\n');
  return repo;
}

const exists = (repo: string, rel: string) => fs.existsSync(path.join(repo, rel));

describe('checkpoint steps in Version History (issue 34; real git)', function () {
  this.timeout(120_000);
  afterEach(cleanupTempDirs);

  it('a running turn lists its steps against the working tree, a finished one against its version; the notice counts them', async () => {
    const repo = repoWithIgnored();
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'chat-a', prompt: 'Tidy up', agent: 'claude-code' });
      write(repo, 'a.txt', 'a by the agent\n');
      write(repo, 'new.txt', 'new by the agent\n');
      const reset = await history.checkpointBeforeCommand({
        chatId: 'chat-a',
        command: 'cd src && git reset --hard',
        label: 'git reset --hard',
        reachesIgnored: false,
      });
      assert.ok(reset);
      git(repo, 'reset', '-q', '--hard');

      let view = versions(await history.versionsView(50));
      const open = view.openTurns?.find((t) => t.id === turnId);
      assert.equal(open?.state, 'running');
      assert.deepEqual(open?.steps, [
        {
          id: reset.checkpointId,
          label: 'git reset --hard',
          command: 'cd src && git reset --hard',
          createdAt: open!.steps![0].createdAt,
          savedFiles: 0,
          deleted: 0,
          modified: 1,
          files: [{ path: 'a.txt', status: 'modified' }],
        },
      ]);
      assert.equal(view.checkpoints, undefined, 'a running turn’s steps are under it, not with the versions');

      const clean = await history.checkpointBeforeCommand({
        chatId: 'chat-a',
        command: 'git clean -fdx',
        label: 'git clean -x',
        reachesIgnored: true,
      });
      assert.ok(clean);
      assert.equal(clean.savedFiles, 1, '.env kept aside');
      git(repo, 'clean', '-q', '-fdx');
      assert.equal(exists(repo, '.env'), false);
      write(repo, 'b.txt', 'b by the agent\n');
      assert.deepEqual(await history.stepsOfEndedTurns(0), [], 'a running turn is no end-of-turn notice yet');
      await history.endTurn(turnId, 'completed');

      view = versions(await history.versionsView(50));
      assert.equal(view.openTurns, undefined);
      assert.equal(view.checkpoints?.length, 1);
      const turn = view.checkpoints![0];
      assert.equal(turn.turnId, turnId);
      assert.equal(turn.label, 'Tidy up');
      assert.equal(turn.oid, view.rows[0].oid, 'named by its version, the top row');
      assert.deepEqual(
        turn.steps.map((s) => [s.label, s.command, s.files]),
        [
          [
            'git reset --hard',
            'cd src && git reset --hard',
            [
              { path: 'a.txt', status: 'modified' },
              { path: 'new.txt', status: 'deleted' },
            ],
          ],
          [
            'git clean -x',
            'git clean -fdx',
            [
              { path: '.env', status: 'deleted' },
              { path: 'new.txt', status: 'deleted' },
            ],
          ],
        ],
        'against the version: b.txt (added after) is not listed; .env (ignored, saved by the clean) is',
      );

      const ended = await history.stepsOfEndedTurns(Date.now() - 60_000);
      assert.deepEqual(
        ended.map((s) => s.id),
        [reset.checkpointId, clean.checkpointId],
      );
      assert.equal(
        checkpointNoticeText(ended[1]),
        'The agent ran `git clean -x`; 2 files it deleted were saved — Restore to Before This Command.',
      );
      assert.equal(
        checkpointNoticeText(ended[0]),
        'The agent ran `git reset --hard`; 1 file it deleted and 1 it changed were saved — Restore to Before This Command.',
      );
      assert.deepEqual(
        await history.stepsOfEndedTurns(Date.now() + 60_000),
        [],
        'turns that ended before `since`: none',
      );

      // Restore to Before This Command from the step: the tree just before `git clean -fdx`, .env written back.
      const restored = await history.restoreBeforeCommand(clean.checkpointId);
      assert.equal(restored.result, 'restored');
      assert.equal(restored.broughtBack, 1);
      assert.equal(read(repo, 'a.txt'), 'a0\n');
      assert.equal(read(repo, 'new.txt'), 'new by the agent\n');
      assert.equal(read(repo, '.env'), 'SECRET=1\n');
      assert.equal(exists(repo, 'b.txt'), false, 'the work after the command is in the version it restored over');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a step of a turn that changed nothing in the end (the agent’s `git stash` took its work) is listed under it', async () => {
    const repo = repoWithIgnored();
    const before = contentInventory(repo);
    const history = await VersionHistory.open(repo);
    try {
      const { turnId } = await history.beginTurn({ chatId: 'chat-s', prompt: 'Stash it', agent: 'codex' });
      write(repo, 'a.txt', 'edited\n');
      const stash = await history.checkpointBeforeCommand({
        chatId: 'chat-s',
        command: 'git stash',
        label: 'git stash',
        reachesIgnored: false,
      });
      assert.ok(stash);
      git(repo, 'stash', '-q');
      await history.endTurn(turnId, 'completed');
      const view = versions(await history.versionsView(50));
      const quiet = view.openTurns?.find((t) => t.id === turnId);
      assert.equal(quiet?.state, 'no-change');
      assert.deepEqual(quiet?.steps?.[0].files, [{ path: 'a.txt', status: 'modified' }]);
      const [step] = await history.stepsOfEndedTurns(0);
      assert.equal(step.id, stash.checkpointId);
      await history.restoreBeforeCommand(stash.checkpointId);
      assert.equal(read(repo, 'a.txt'), 'edited\n');
      git(repo, 'stash', 'drop', '-q');
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });

  it('a checkpoint’s ref, saved files and row go when its turn leaves the hot store (archived); newer ones stay', async () => {
    const repo = repoWithIgnored();
    let history = await VersionHistory.open(repo);
    let old: { checkpointId: string };
    try {
      const first = await history.beginTurn({ chatId: 'chat-p', prompt: 'Turn 0', agent: 'claude-code' });
      const taken = await history.checkpointBeforeCommand({
        chatId: 'chat-p',
        command: 'git clean -fdx',
        label: 'git clean -x',
        reachesIgnored: true,
      });
      assert.ok(taken && taken.savedFiles === 1);
      old = taken;
      write(repo, 'f0.txt', 'f0\n');
      await history.endTurn(first.turnId, 'completed');
      for (let i = 1; i < 12; i++) {
        const t = await history.beginTurn({ chatId: 'chat-p', prompt: `Turn ${i}`, agent: 'claude-code' });
        write(repo, `f${i}.txt`, `f${i}\n`);
        await history.endTurn(t.turnId, 'completed');
      }
    } finally {
      await history.close();
    }
    const stateDir = path.join(repo, '.git', 'agent-versions');
    assert.ok(fs.existsSync(savedFilesDir(stateDir, old.checkpointId)));
    assert.equal(gitStatus(repo, 'rev-parse', '-q', '--verify', `${CHECKPOINT_REF_PREFIX}${old.checkpointId}`).code, 0);

    // A leftover of a checkpoint killed before its row: a ref and a folder no row names.
    const orphan = '00000000-0000-4000-8000-000000000000';
    git(repo, 'update-ref', `${CHECKPOINT_REF_PREFIX}${orphan}`, 'HEAD');
    fs.mkdirSync(savedFilesDir(stateDir, orphan), { recursive: true });

    // The history archive moves the old turns out, as a long history would at the default keep.
    const { store } = await DurableStore.open(stateDir, { compactEvery: 1, archiveKeep: 4, archiveMargin: 4 });
    await store.transaction((tx) => tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_rotation', '1')"));
    await store.read(() => undefined);
    await store.close();

    history = await VersionHistory.open(repo);
    try {
      assert.equal((await history.checkpoints()).length, 1, 'archiving alone removes nothing');
      const before = contentInventory(repo);
      const t = await history.beginTurn({ chatId: 'chat-p', prompt: 'Newer', agent: 'claude-code' });
      const newer = await history.checkpointBeforeCommand({
        chatId: 'chat-p',
        command: 'rm -rf src',
        label: 'rm -r',
        reachesIgnored: true,
      });
      assert.ok(newer);
      await history.endTurn(t.turnId, 'completed');
      assert.deepEqual(
        (await history.checkpoints()).map((c) => c.id),
        [newer.checkpointId],
        'the archived turn’s checkpoint row went at the next checkpoint',
      );
      for (const id of [old.checkpointId, orphan]) {
        assert.notEqual(gitStatus(repo, 'rev-parse', '-q', '--verify', `${CHECKPOINT_REF_PREFIX}${id}`).code, 0);
        assert.equal(fs.existsSync(savedFilesDir(stateDir, id)), false);
      }
      assert.equal(
        gitStatus(repo, 'rev-parse', '-q', '--verify', `${CHECKPOINT_REF_PREFIX}${newer.checkpointId}`).code,
        0,
      );
      assert.ok(fs.existsSync(savedFilesDir(stateDir, newer.checkpointId)), 'the new checkpoint’s saved .env stays');
      await assert.rejects(history.restoreBeforeCommand(old.checkpointId), /No checkpoint with this id/);
      assertNothingLost(repo, before);
    } finally {
      await history.close();
    }
  });
});
