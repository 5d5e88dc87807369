import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, tempDir } from './gitFixtures';

/**
 * For a "during" point, makes `git <verb>` slow in the ways git itself allows (a clean/smudge filter for `add` and
 * `read-tree -u`, a reference-transaction hook for `update-ref`), so the kill can land while it runs. Only that
 * command waits: the filter and the hook look at the command line of the git that runs them (/proc), so the other
 * git commands before it (a status that compares racy files through the filter, an earlier ref update) run at full
 * speed. Returns a function that removes them again.
 */
export function slowGit(repo: string, verb: string): () => void {
  const attributes = path.join(repo, '.git', 'info', 'attributes');
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  // Where /proc cannot say, every command waits (slower, never a kill that misses).
  const waitInVerb = `case " $(tr '\\0' ' ' < /proc/$PPID/cmdline 2>/dev/null || echo ${verb}) " in *" ${verb} "*) sleep 1 ;; esac`;
  fs.mkdirSync(path.dirname(attributes), { recursive: true });
  fs.writeFileSync(attributes, '* filter=avhslow\n');
  git(repo, 'config', 'filter.avhslow.clean', `${waitInVerb}; cat`);
  git(repo, 'config', 'filter.avhslow.smudge', `${waitInVerb}; cat`);
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(hook, `#!/bin/sh\n${waitInVerb}\nexit 0\n`, { mode: 0o755 });
  return () => {
    fs.rmSync(attributes, { force: true });
    fs.rmSync(hook, { force: true });
    git(repo, 'config', '--remove-section', 'filter.avhslow');
  };
}

/** The process id of the last `git <verb>` in a trace2 event stream (git's session id ends in `-P<pid in hex>`). */
export function gitPidInTrace(traceFile: string, verb: string): number | null {
  const match = /-P([0-9a-f]+)$/.exec(lastStart(traceEvents(traceFile), verb)?.sid ?? '');
  return match ? parseInt(match[1], 16) : null;
}

/** Whether a process still runs (a zombie waiting for its parent counts as ended). */
export function processRuns(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Proof that the kill landed while git ran: git's own trace2 event stream has the command's `start` event (git was
 * running it) but no `exit`/`atexit` event for that process (a git that had finished would have written one).
 */
export function killedWhileRunning(traceFile: string, verb: string): boolean {
  const events = traceEvents(traceFile);
  const last = lastStart(events, verb);
  return last !== undefined && !events.some((e) => e.sid === last.sid && (e.event === 'exit' || e.event === 'atexit'));
}

interface TraceEvent {
  event: string;
  sid: string;
  argv?: string[];
}

function traceEvents(traceFile: string): TraceEvent[] {
  return fs
    .readFileSync(traceFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceEvent);
}

/** The last `start` event of `git <verb>` (the verb: the first word after git's options and `-c` settings). */
function lastStart(events: readonly TraceEvent[], verb: string): TraceEvent | undefined {
  return events
    .filter(
      (e) =>
        e.event === 'start' &&
        (e.argv ?? [])
          .filter((a) => !a.startsWith('-'))
          .slice(1)
          .find((a) => !a.includes('=')) === verb,
    )
    .at(-1);
}

/**
 * Holds git's transaction on `ref` at one of its reference-transaction hook states for two seconds: `prepared`
 * (git holds `<ref>.lock` with the new value; the ref has not moved yet) or `committed` (the ref has moved and
 * the lock is gone; git has not exited). A kill 300 ms into that `update-ref` then lands in exactly that state.
 * Other transactions pass at once. Returns a function that removes the hook again.
 */
export function holdRefTransaction(repo: string, state: 'prepared' | 'committed', ref: string): () => void {
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(
    hook,
    `#!/bin/sh\ninput=$(cat)\nif [ "$1" = ${state} ]; then\n  case "$input" in *" ${ref}"*) sleep 2 ;; esac\nfi\nexit 0\n`,
    { mode: 0o755 },
  );
  return () => fs.rmSync(hook, { force: true });
}

/**
 * For git commands nothing in git can slow (`write-tree`, `commit-tree`): a PATH whose `git` runs the real one
 * and then, for `verb` only, waits two seconds before exiting with git's status. A kill 300 ms into that command
 * lands after git wrote its objects and before our process learned of them: the latest point inside the command,
 * and the only one that differs from a kill before it (git writes each object to a temporary file and renames it).
 */
export function lingeringGitPath(verb: string): string {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const dir = tempDir('avh-lingering-git-');
  fs.writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh\n'${real}' "$@"\nstatus=$?\ncase " $* " in *" ${verb} "*) sleep 2 ;; esac\nexit $status\n`,
    { mode: 0o755 },
  );
  return `${dir}${path.delimiter}${process.env.PATH ?? ''}`;
}

/**
 * A PATH whose `git` waits two seconds before it runs `verb` (every other command runs at once): a kill in that
 * window lands before git has read or touched anything (no lock, no file written). Stands in for a sleeping
 * fsmonitor hook, which no git process of ours runs any more (gitClient.ts pins `core.fsmonitor=false`).
 */
export function heldGitPath(verb: string): string {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const dir = tempDir('avh-held-git-');
  fs.writeFileSync(
    path.join(dir, 'git'),
    `#!/bin/sh\ncase " $* " in *" ${verb} "*) sleep 2 ;; esac\nexec '${real}' "$@"\n`,
    { mode: 0o755 },
  );
  return `${dir}${path.delimiter}${process.env.PATH ?? ''}`;
}
