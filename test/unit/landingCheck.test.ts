import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { treeChanges } from '../../src/core/git/worktreeUpdate';
import { contextOf } from '../../src/core/repoContextOf';
import { refuseWritesThatCannotLand } from '../../src/core/restore/restoreEffects';
import { assertLandable, type Plan } from '../../src/core/restore/restorePlan';
import { settled } from '../../src/core/restore/targetLookup';
import { VersionHistory } from '../../src/core/versionHistory';
import { expectReason } from '../support/assertions';
import { cleanupTempDirs, git, head, makeRepo, write } from '../support/gitFixtures';

/**
 * The landing checks a restore makes ahead, while the probe runs (restorePlan.ts `assertLandable`): their outcome
 * counts only for the list of changes they looked at; any other list is checked when planning ends. Real git, a real
 * ignored file in the way of the update.
 */
describe('landing checks made ahead of the probe (real git)', () => {
  after(cleanupTempDirs);

  /** A repository whose HEAD deleted the tracked keep.log, with an ignored keep.log back in the tree. */
  async function ignoredFileInTheWay() {
    const repo = makeRepo();
    write(repo, 'keep.log', 'tracked log\n');
    git(repo, 'add', '-f', 'keep.log');
    git(repo, 'commit', '-q', '-m', 'keep.log');
    const withLog = head(repo);
    git(repo, 'rm', '-q', 'keep.log');
    git(repo, 'commit', '-q', '-m', 'no keep.log');
    write(repo, 'keep.log', 'the app wrote its log again\n'); // ignored by *.log
    const history = await VersionHistory.open(repo);
    const ctx = contextOf(history);
    const changes = await treeChanges(ctx.repo, head(repo), withLog);
    return { repo, history, ctx, changes };
  }

  const planOf = (changes: Plan['changes'], landing: Plan['landing']) => ({ changes, landing }) as Plan;

  it('a check made ahead on the same list is the answer; on another list it is made again', async () => {
    const { repo, history, ctx, changes } = await ignoredFileInTheWay();
    try {
      assert.ok(changes.some((c) => c.path === 'keep.log'));
      const passed = { changes, checked: settled(Promise.resolve()) };
      // The same list: the outcome found ahead stands (here, a pass).
      await assertLandable(ctx, planOf(changes, passed));
      // Planning ended with another list than the one looked at ahead (HEAD moved meanwhile): checked now, refused.
      const other = { changes: [], checked: settled(Promise.resolve()) };
      const refused = await expectReason(assertLandable(ctx, planOf(changes, other)), 'dirty-conflict');
      assert.match(refused.message, /keep\.log/);
      // No check ahead at all (a preview's plan, or no branch tip to guess): checked now.
      await expectReason(assertLandable(ctx, planOf(changes, null)), 'dirty-conflict');
      // A refusal found ahead on the same list is the one reported.
      const ahead = { changes, checked: settled(refuseWritesThatCannotLand(ctx, changes)) };
      const reported = await expectReason(assertLandable(ctx, planOf(changes, ahead)), 'dirty-conflict');
      assert.match(reported.message, /keep\.log/);
      assert.equal(fs.readFileSync(path.join(repo, 'keep.log'), 'utf8'), 'the app wrote its log again\n');
    } finally {
      await history.close();
    }
  });
});
