import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../../src/core/errors';
import { EventLog, formatEvent } from '../../src/core/log';
import { readRecovery, setRecovery } from '../../src/core/operations/recoveryLatch';
import { VersionHistory } from '../../src/core/versionHistory';
import { contextOf } from '../../src/core/repoContextOf';

/** Awaits `promise` and asserts it failed with an AvhError of `reason`; returns the error. */
export async function expectReason(promise: Promise<unknown>, reason: string): Promise<AvhError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AvhError, `expected AvhError, got ${String(error)}`);
    assert.equal(error.reason, reason, error.message);
    return error;
  }
  assert.fail(`expected a ${reason} failure`);
}

/** An event log that appends each formatted event line to `lines`. */
export function recordingLog(lines: string[]): EventLog {
  return {
    info: (e, f) => lines.push(formatEvent(e, f)),
    warn: (e, f) => lines.push(formatEvent(e, f)),
    error: (e, f) => lines.push(formatEvent(e, f)),
  };
}

/**
 * Byte-level picture of everything we could change: every file in the git dir except objects (a refused
 * operation may leave an unreferenced object, which changes nothing the user sees) and our own state
 * directory — so refs, reflogs, HEAD, the index file and operation markers — plus every worktree file
 * (ignored ones included).
 */
export function repoPicture(repo: string): Record<string, string> {
  const picture: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(repo, full);
      if (rel === path.join('.git', 'objects') || rel === path.join('.git', 'agent-versions')) continue;
      const st = fs.lstatSync(full);
      if (st.isDirectory()) walk(full);
      else
        picture[rel] = crypto
          .createHash('sha1')
          .update(st.isSymbolicLink() ? fs.readlinkSync(full) : fs.readFileSync(full))
          .digest('hex');
    }
  };
  walk(repo);
  return picture;
}

/** Seeds a recovery-required latch with the real store, as a crashed restore would leave it. */
export async function seedRecoveryLatch(folder: string, operationId: string): Promise<void> {
  const history = await VersionHistory.open(folder);
  try {
    await contextOf(history).store.transaction((tx) =>
      setRecovery(tx, operationId, 'ambiguous', 'update-worktree', Date.now()),
    );
  } finally {
    await history.close();
  }
}

export async function recoveryLatchPresent(folder: string): Promise<boolean> {
  const history = await VersionHistory.open(folder);
  try {
    return (await contextOf(history).store.read((r) => readRecovery(r))) !== null;
  } finally {
    await history.close();
  }
}
