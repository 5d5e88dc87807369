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
  git(repo, 'config', 'filter.avhslow.clean', 'sleep 1; cat');
  git(repo, 'config', 'filter.avhslow.smudge', 'sleep 1; cat');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(hook, '#!/bin/sh\nsleep 1\nexit 0\n', { mode: 0o755 });
  return () => {
    fs.rmSync(attributes, { force: true });
    fs.rmSync(hook, { force: true });
    git(repo, 'config', '--remove-section', 'filter.avhslow');
  };
}

/**
 * Proof that the kill landed while git ran: git's own trace2 event stream has the command's `start` event (git was
 * running it) but no `exit`/`atexit` event for that process (a git that had finished would have written one).
 */
export function killedWhileRunning(traceFile: string, verb: string): boolean {
  const events = fs.readFileSync(traceFile, 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; sid: string; argv?: string[] });
  const started = events.filter((e) => e.event === 'start' && (e.argv ?? []).filter((a) => !a.startsWith('-')).slice(1).find((a) => !a.includes('='))  === verb);
  const last = started[started.length - 1];
  return last !== undefined && !events.some((e) => e.sid === last.sid && (e.event === 'exit' || e.event === 'atexit'));
}
