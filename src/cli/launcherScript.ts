import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fsyncDirectory, writeAll } from '../core/store/atomicWrite';

/**
 * The launcher: a POSIX shell script at a stable path (`~/.agent-versions/bin/agent-versions`) that hook commands
 * and terminals run instead of an installation's versioned folder, which the extension's next update deletes. The
 * extension rewrites it at every activation to point at its current installation; it runs that CLI with `node`
 * when one is on PATH, else with the editor's own runtime (ELECTRON_RUN_AS_NODE=1, as VS Code's git extension runs
 * its askpass helper). When the installation is gone it says so on stderr and exits 1: every agent treats 1 as a
 * non-blocking error and shows the message; 2 would block the user's prompt. docs/design/vscode-connect.md.
 */

/** The variable the launcher sets for the CLI it runs: its own path (installation.ts, launcherInUseNow). */
export const LAUNCHER_ENV = 'AGENT_VERSIONS_LAUNCHER';
/** The launcher's second line: how a file is known to be ours (and its format's version). */
const MARKER = '# agent-versions launcher 1';
/** The exit code of a launcher that cannot run the CLI: a warning for every agent, never a block (2). */
export const LAUNCHER_FAILED_EXIT = 1;

export interface LauncherTarget {
  /** The launcher's own path. */
  file: string;
  /** The CLI entry (dist/cli.js) of the installation it runs. */
  cli: string;
  /** The editor's runtime (the extension host's process.execPath), for when `node` is not on PATH. */
  runtime: string;
  /**
   * The folder holding the extension's installed versions, and the prefix of their folder names
   * (`publisher.name-`): when an update removed `cli`'s folder before the new version's activation rewrote the
   * launcher, it runs the CLI of the version that is there.
   */
  siblings?: { dir: string; prefix: string };
}

/** Where the extension keeps its launcher: the same path for every editor and version, so commands never change. */
export function defaultLauncherFile(home: string = os.homedir()): string {
  return path.join(home, '.agent-versions', 'bin', 'agent-versions');
}

/** One word in single quotes (the only quoting the launcher uses, so launcherTarget can read it back). */
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function unquoted(value: string): string | null {
  if (!/^'.*'$/s.test(value)) return null;
  return value.slice(1, -1).split(`'\\''`).join("'");
}

/** The launcher's text for `target`. Only shell builtins before the exec: it must work on a PATH without Node. */
export function launcherScript(target: LauncherTarget): string {
  const siblings = target.siblings;
  return [
    '#!/bin/sh',
    MARKER,
    '# Written by the Agent Version History extension each time it starts (edits are overwritten): it runs the',
    '# CLI of the installation below, with node when it is on PATH, else with the editor’s own runtime.',
    `self=${quoted(target.file)}`,
    `cli=${quoted(target.cli)}`,
    `runtime=${quoted(target.runtime)}`,
    ...(siblings
      ? [
          `siblings=${quoted(siblings.dir)}`,
          `prefix=${quoted(siblings.prefix)}`,
          'if [ ! -f "$cli" ]; then',
          '  # An update removed that folder before the new version rewrote this file: run the version installed now.',
          '  for found in "$siblings"/"$prefix"*/dist/cli.js; do',
          '    if [ -f "$found" ]; then cli=$found; fi',
          '  done',
          'fi',
        ]
      : []),
    'if [ ! -f "$cli" ]; then',
    '  echo "agent-versions: the Agent Version History extension is no longer installed ($cli is gone), so' +
      ' nothing was recorded. Install the extension again (VS Code then updates this launcher), or remove the' +
      ' agent-versions hooks from the agent\'s settings." >&2',
    `  exit ${LAUNCHER_FAILED_EXIT}`,
    'fi',
    'unset NODE_EXTRA_CA_CERTS',
    `${LAUNCHER_ENV}=$self`,
    `export ${LAUNCHER_ENV}`,
    'if command -v node >/dev/null 2>&1; then',
    '  exec node "$cli" "$@"',
    'fi',
    'if [ -x "$runtime" ]; then',
    '  ELECTRON_RUN_AS_NODE=1',
    '  export ELECTRON_RUN_AS_NODE',
    '  exec "$runtime" "$cli" "$@"',
    'fi',
    'echo "agent-versions: nothing can run the CLI: node is not on PATH and the editor that wrote this launcher' +
      ' ($runtime) is gone, so nothing was recorded. Start VS Code once (it updates this launcher), or install' +
      ' Node.js." >&2',
    `exit ${LAUNCHER_FAILED_EXIT}`,
    '',
  ].join('\n');
}

/** The launcher's text, when `file` is a launcher of ours (small, with our marker); null otherwise. */
function readLauncher(file: string): string | null {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > 64 * 1024) return null;
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n', 2)[1] === MARKER ? text : null;
  } catch {
    return null;
  }
}

/** Whether `file` is a launcher of ours. */
export function isLauncherFile(file: string): boolean {
  return readLauncher(file) !== null;
}

/** The CLI a launcher of ours points at now, or null (not a launcher of ours). */
export function launcherTarget(file: string): string | null {
  const text = readLauncher(file);
  const line = text?.split('\n').find((l) => l.startsWith('cli='));
  return line === undefined ? null : unquoted(line.slice('cli='.length));
}

export type LauncherInstall = 'written' | 'unchanged' | 'foreign';

/**
 * Writes the launcher for `target` unless it already holds exactly that: atomically (temp file with its final
 * mode, fsync, rename, directory fsync), so an agent's hook never runs a half-written or non-executable file. A file
 * at that path that is not a launcher of ours is left alone ('foreign').
 */
export function installLauncher(target: LauncherTarget): LauncherInstall {
  const text = launcherScript(target);
  let current: string | null = null;
  try {
    current = fs.readFileSync(target.file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (current !== null && readLauncher(target.file) === null) return 'foreign';
  if (current === text && (fs.statSync(target.file).mode & 0o111) !== 0) return 'unchanged';
  const dir = path.dirname(target.file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${target.file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o755);
  try {
    writeAll(fd, Buffer.from(text, 'utf8'));
    fs.fchmodSync(fd, 0o755); // the umask may have taken bits off
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, target.file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fsyncDirectory(dir);
  return 'written';
}
