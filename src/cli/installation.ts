import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLauncherFile, LAUNCHER_ENV, launcherTarget } from './launcherScript';
// Resolved at build time: esbuild inlines the one field, tsc emits package.json beside the compiled tree.
import { name as PACKAGE_NAME, version } from '../../package.json';

/** This installation's version, from package.json. */
export const CLI_VERSION: string = version;

/**
 * The script a shell runs to reach this installation: the bundles' command `dist/cli.js`, the small entry beside
 * the full CLI bundle `dist/cliMain.js` this module is part of (src/cli/entry.ts), or, in the tsc output,
 * `main.js` beside this module. Symlinks are resolved, so an `npm install -g` bin link or `npm link` of a clone
 * names the real file.
 */
export function cliEntryFile(): string {
  const here = fs.realpathSync(__filename);
  const dir = path.dirname(here);
  switch (path.basename(here)) {
    case 'installation.js':
      return path.join(dir, 'main.js');
    case 'cliMain.js':
    case 'extension.js': // the extension host's bundle, which connects from VS Code: the CLI beside it
      return path.join(dir, 'cli.js');
    default:
      return here;
  }
}

/** Quotes one word for a POSIX shell (hooks run through one); plain paths stay unquoted for readability. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.,:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What the hook command starts Node without (docs/design.md, "Fast hook events"). Node reads and parses the CA
 * bundle `NODE_EXTRA_CA_CERTS` names at every start, before any of our code runs: 35–45 ms of a ~100 ms
 * `node -e 0` on a machine that sets it (bench/RESULTS.md, hook section), on every prompt and every stop. A hook
 * makes no TLS connection of Node's own (git's network commands use git's certificate settings), so the command
 * drops the variable through env(1). Only where hooks run in a POSIX shell; on Windows the command is the plain one.
 */
const HOOK_UNSET_ENV: readonly string[] = process.platform === 'win32' ? [] : ['NODE_EXTRA_CA_CERTS'];

/**
 * The program that runs the CLI: a Node binary, or an Electron one (VS Code's own, `process.execPath` in its
 * extension host) that runs as Node only with ELECTRON_RUN_AS_NODE=1, as VS Code's git extension runs its askpass
 * helper. Without the variable, Electron would start another editor window.
 */
export interface Runtime {
  path: string;
  electron: boolean;
}

/** The runtime of this process. */
export function thisRuntime(): Runtime {
  return { path: process.execPath, electron: process.versions.electron !== undefined };
}

/** The variable assignments env(1) makes before the runtime's path: Electron's, or none. */
function runtimeAssignments(runtime: Runtime): string[] {
  return runtime.electron ? ['ELECTRON_RUN_AS_NODE=1'] : [];
}

/**
 * The options a hook command of ours may end with, in the order hookCommand writes them: `--init` (connect --init),
 * `--tool` (a tool event's entry), `--guard-destructive` (the pre-tool entry of connect --guard-destructive).
 */
const HOOK_COMMAND_OPTIONS: readonly string[] = ['--init', '--tool', '--guard-destructive'];

export interface HookCommandOptions {
  /** `hook … --init`: in a folder without git, create the repository first. */
  init?: boolean;
  /**
   * `hook … --tool`: the entry of a tool event (the agent's 'wrote' and 'before-tool' events). The CLI's entry then
   * starts no `git status` before it reads the payload (cli/entry.ts): a tool event needs none. Without it a tool
   * event is handled the same, only later.
   */
  tool?: boolean;
  /** `hook … --guard-destructive`: the pre-tool entry answers the agent's deny/ask form for a destructive command. */
  guardDestructive?: boolean;
  /** The CLI the command runs, by its own path (default: this installation's entry, through the launcher if any). */
  cliFile?: string;
  /** The launcher the command runs (default: the one in use, useLauncher; null: none, the direct form). */
  launcher?: string | null;
  /** What runs the CLI in the direct form (default: this process's runtime). */
  runtime?: Runtime;
}

let launcherInUse: string | null | undefined;

/**
 * Hook commands name `file`, a launcher at a stable path that the extension keeps pointing at its current
 * installation (launcherScript.ts), instead of this installation's versioned folder; null: the direct form. Unset,
 * it is the launcher this process was started by ($AGENT_VERSIONS_LAUNCHER, when that file is one of ours).
 */
export function useLauncher(file: string | null): void {
  launcherInUse = file;
}

/** The launcher hook commands name now (useLauncher), or null. */
export function launcherInUseNow(): string | null {
  if (launcherInUse !== undefined) return launcherInUse;
  const fromEnv = process.env[LAUNCHER_ENV];
  return fromEnv !== undefined && path.isAbsolute(fromEnv) && isLauncherFile(fromEnv) ? fromEnv : null;
}

/** A hook command's words without the options it ends with, and those options. */
function splitOptions(words: string[]): { words: string[]; options: string[] } {
  let n = words.length;
  while (n > 0 && HOOK_COMMAND_OPTIONS.includes(words[n - 1])) n--;
  return { words: words.slice(0, n), options: words.slice(n) };
}

/**
 * The hook command written into an agent's settings. With a launcher in use: the launcher, by its stable path
 * (`~/.agent-versions/bin/agent-versions hook <agent>`), which survives the extension's updates and picks a runtime
 * itself. Otherwise the direct form: this runtime and this CLI by absolute paths, so it works whatever PATH the
 * agent's shell has, started through env(1) without the variables in HOOK_UNSET_ENV (and, for Electron, with
 * ELECTRON_RUN_AS_NODE=1).
 */
export function hookCommand(agent: string, options: HookCommandOptions = {}): string {
  const init = [
    ...(options.init ? ['--init'] : []),
    ...(options.tool ? ['--tool'] : []),
    ...(options.guardDestructive ? ['--guard-destructive'] : []),
  ];
  const launcher =
    options.cliFile !== undefined ? null : options.launcher !== undefined ? options.launcher : launcherInUseNow();
  if (launcher !== null) return [launcher, 'hook', agent, ...init].map(shellWord).join(' ');
  const runtime = options.runtime ?? thisRuntime();
  return [...hookEnvWords(runtime), runtime.path, options.cliFile ?? cliEntryFile(), 'hook', agent, ...init]
    .map(shellWord)
    .join(' ');
}

/** Whether a hook command ends with --init (the hook creates the repository in a folder without git). */
export function hookCommandInits(command: string): boolean {
  return splitOptions(shellWords(command)).options.includes('--init');
}

/**
 * The command connect would write now in place of `command`, one of ours, keeping its options (--init, --tool,
 * --guard-destructive). A command that runs one of our launchers is in the current form with that launcher; any
 * other, in the form hookCommand gives now (the launcher's, when one is in use: a command naming an installation's
 * own folder is then older).
 */
export function currentFormOf(command: string, agent: string): string {
  const { options } = splitOptions(shellWords(command));
  const flags = {
    init: options.includes('--init'),
    tool: options.includes('--tool'),
    guardDestructive: options.includes('--guard-destructive'),
  };
  const launcher = launcherOf(command);
  return hookCommand(agent, launcher !== null ? { ...flags, launcher } : flags);
}

/** Whether a hook command of ours answers destructive commands with the agent's deny/ask form (connect's flag). */
export function hookCommandGuards(command: string): boolean {
  return splitOptions(shellWords(command)).options.includes('--guard-destructive');
}

/** The hook commands `connect` writes: one for the agent's lifecycle events, and the tool events' forms of it. */
export interface HookCommands {
  /** Prompts, ends: `… hook <agent> [--init]`. */
  lifecycle: string;
  /** A tool's written files ('wrote'): `… --tool`. */
  tool: string;
  /** A tool about to run ('before-tool'): `… --tool [--guard-destructive]`. */
  beforeTool: string;
}

/**
 * The commands connect would write now for an agent connected with `commands` (its entries in one settings file):
 * the same launcher or direct form, `--init` and the guard as any of them has them.
 */
export function currentCommandsOf(commands: readonly string[], agent: string): HookCommands {
  const init = commands.some(hookCommandInits);
  const guardDestructive = commands.some(hookCommandGuards);
  const launcher = commands.length > 0 ? launcherOf(commands[0]) : null;
  return hookCommands(agent, launcher !== null ? { init, guardDestructive, launcher } : { init, guardDestructive });
}

export function hookCommands(
  agent: string,
  options: Omit<HookCommandOptions, 'tool' | 'guardDestructive'> & { guardDestructive?: boolean } = {},
): HookCommands {
  const { guardDestructive, ...rest } = options;
  return {
    lifecycle: hookCommand(agent, rest),
    tool: hookCommand(agent, { ...rest, tool: true }),
    beforeTool: hookCommand(agent, { ...rest, tool: true, guardDestructive }),
  };
}

/** The launcher of ours a hook command runs (`<launcher> hook <agent> [--init]`), or null. */
export function launcherOf(command: string): string | null {
  const { words } = splitOptions(shellWords(command));
  return words.length === 3 && words[1] === 'hook' && path.isAbsolute(words[0]) && isLauncherFile(words[0])
    ? words[0]
    : null;
}

/** The words before the runtime in hookCommand's direct form: `env -u NAME … [ELECTRON_RUN_AS_NODE=1]`, or none. */
export function hookEnvWords(runtime: Runtime = thisRuntime()): string[] {
  const words = [...HOOK_UNSET_ENV.flatMap((name) => ['-u', name]), ...runtimeAssignments(runtime)];
  return words.length > 0 ? ['env', ...words] : [];
}

/** The environment a hook process of hookCommand gets from the one given (doctor times a hook run with it). */
export function hookProcessEnv(env: NodeJS.ProcessEnv, runtime: Runtime = thisRuntime()): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of HOOK_UNSET_ENV) delete out[name];
  if (runtime.electron) out.ELECTRON_RUN_AS_NODE = '1';
  return out;
}

/**
 * Whether a hook command runs this very installation's hook for `agent`, in whatever form: through a launcher that
 * points here now, or naming this CLI by its path whatever runs it (another Node, the editor's runtime, an older
 * form's env words).
 */
export function runsThisInstallation(command: string, agent: string): boolean {
  const cli = cliEntryFile();
  const launcher = launcherOf(command);
  if (launcher !== null)
    return splitOptions(shellWords(command)).words[2] === agent && launcherTarget(launcher) === cli;
  const expected = [cli, 'hook', agent];
  return splitOptions(shellWords(command)).words.slice(-expected.length).join('\0') === expected.join('\0');
}

/** Splits a hook command into words (single and double quotes, backslash escapes): enough to recognise ours. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      current += command.slice(i + 1, end === -1 ? undefined : end);
      i = end === -1 ? command.length : end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++)
        current += command[j] === '\\' && j + 1 < command.length ? command[++j] : command[j];
      i = j;
      inWord = true;
    } else if (c === '\\' && i + 1 < command.length) {
      current += command[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/**
 * Whether a hook command runs agent-versions' hook for `agent`, from this or any other installation:
 * `… <agent-versions | …/dist/cli.js | …/src/cli/main.js> hook <agent> [--init]` (so a stale path or the README's
 * `agent-versions hook claude-code` is recognised, and another tool's "hook claude-code" is not).
 */
export function isOurHookCommand(command: string, agent: string): boolean {
  const { words } = splitOptions(shellWords(command));
  const n = words.length;
  if (n < 3 || words[n - 2] !== 'hook' || words[n - 1] !== agent) return false;
  const script = words[n - 3];
  if (path.basename(script) === 'agent-versions') return true;
  const root = /(^|\/)dist\/cli\.js$/.test(script)
    ? path.dirname(path.dirname(script))
    : /(^|\/)src\/cli\/main\.js$/.test(script)
      ? path.dirname(path.dirname(path.dirname(script)))
      : null;
  if (root === null) return false;
  // When the script still exists, its package must be ours; a vanished one (a moved clone) is judged by its shape.
  return (
    !fs.existsSync(script) || packageNameAt(root) === PACKAGE_NAME || packageNameAt(path.dirname(root)) === PACKAGE_NAME
  );
}

function packageNameAt(dir: string): string | null {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed && typeof parsed.name === 'string'
      ? parsed.name
      : null;
  } catch {
    return null;
  }
}

/** The files a hook command names by absolute path that no longer exist (an old Node, a moved clone). */
export function missingFilesOf(command: string): string[] {
  return shellWords(command).filter((w) => path.isAbsolute(w) && !fs.existsSync(w));
}
