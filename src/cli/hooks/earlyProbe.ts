import * as path from 'node:path';
import { guessRepositoryFromFiles } from '../../core/git/repository';
import { startProbeStatus } from '../../core/git/statusProbe';

/** The status of the repository an event most likely names, started before the fast path's code loads. */
export interface EarlyProbe {
  root: string;
  gitDir: string;
  status: Promise<string>;
}

/**
 * Starts the fast path's one git process as early as possible, so it runs while the rest of the hook code loads
 * (docs/design.md, "Fast hook events"). A guess from the payload's `cwd` and the `.git` files, read-only: the fast
 * path uses it only for the very repository it resolves itself, and its decision is checked against the journal
 * under the store lock like any other. Undefined when there is nothing to guess from (`--repo`, Codex's notify).
 */
export async function startEarlyProbe(
  argv: readonly string[],
  readStdin: () => Promise<string>,
  cwd: string,
): Promise<EarlyProbe | undefined> {
  // Only the plain form `hook <agent> [--json]`: other options or a payload argument are the fast path's to parse.
  if (argv[0] !== 'hook' || argv.length < 2 || argv.slice(2).some((a) => a !== '--json')) return undefined;
  // An agent runs its hook in the project's folder: the status starts there before stdin is read (reading it
  // starts Node's stream machinery, ~10 ms here), and is used when the payload names the same repository.
  const here = guessRepositoryFromFiles(cwd);
  const started = here ? probeOf(here.root, here.gitDir) : undefined;
  let folder = cwd;
  try {
    const event = JSON.parse(await readStdin()) as { cwd?: unknown; hook_event_name?: unknown } | null;
    // A tool event needs no status (it appends one line: toolWriteHook.ts): the one started is stopped.
    if (typeof event?.hook_event_name === 'string' && TOOL_EVENTS.has(event.hook_event_name)) {
      started?.cancel();
      return undefined;
    }
    if (typeof event?.cwd === 'string') folder = path.resolve(cwd, event.cwd);
  } catch {
    return undefined; // the full path reports bad input
  }
  const found = folder === cwd ? here : guessRepositoryFromFiles(folder);
  if (!found) return undefined;
  return started?.root === found.root ? started : probeOf(found.root, found.gitDir);
}

/**
 * The agents' tool events (the 'wrote' and 'before-tool' events of their tables, agents/registry.ts; a unit test
 * keeps the two equal), named here because this module is in the small entry bundle, which does not load the agents.
 */
export const TOOL_EVENTS: ReadonlySet<string> = new Set([
  'PostToolUse',
  'AfterTool',
  'tool.execute.after',
  'PreToolUse',
  'BeforeTool',
  'tool.execute.before',
]);

function probeOf(root: string, gitDir: string): EarlyProbe & { cancel: () => void } {
  let pid: number | undefined;
  const status = startProbeStatus(root, undefined, (p) => (pid = p), gitDir);
  status.catch(() => undefined); // a failure is the fast path's to decline on, when it uses the result
  const cancel = () => {
    try {
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    } catch {
      // it already exited
    }
  };
  return { root, gitDir, status, cancel };
}
