import * as fs from 'node:fs';
import * as path from 'node:path';
import { git } from './gitFixtures';

/**
 * For a "during" point, makes the git command slow in the ways git itself allows (a clean/smudge filter for
 * `add` and `read-tree -u`, a reference-transaction hook for `update-ref`), so the kill can land while it runs.
 * Returns a function that removes them again.
 */
export function slowGit(repo: string): () => void {
  const attributes = path.join(repo, '.git', 'info', 'attributes');
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  fs.mkdirSync(path.dirname(attributes), { recursive: true });
  fs.writeFileSync(attributes, '* filter=avhslow\n');
  git(repo, 'config', 'filter.avhslow.clean', 'sleep 0.2; cat');
  git(repo, 'config', 'filter.avhslow.smudge', 'sleep 0.2; cat');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(hook, '#!/bin/sh\nsleep 0.3\nexit 0\n', { mode: 0o755 });
  return () => {
    fs.rmSync(attributes, { force: true });
    fs.rmSync(hook, { force: true });
    git(repo, 'config', '--remove-section', 'filter.avhslow');
  };
}

/**
 * Proof that the kill landed while git ran: git's own trace2 event stream has the command's start but no exit
 * event for it (a git that had already finished would have written one).
 */
export function killedWhileRunning(traceFile: string, verb: string): boolean {
  const events = fs.readFileSync(traceFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event: string; sid: string; name?: string });
  const sids = events.filter((e) => e.event === 'cmd_name' && e.name === verb).map((e) => e.sid);
  const last = sids[sids.length - 1];
  return last !== undefined && !events.some((e) => e.sid === last && (e.event === 'exit' || e.event === 'atexit'));
}
