import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError, ErrorReason } from '../errors';
import { crashNow, onCrash } from '../failpoints';
import { readyLauncher } from './gitLauncher';
import { spawnCollect, SpawnOutcome } from './spawnCollect';

/**
 * The only place that starts git. Argument arrays only, no shell, no terminal prompts, no pager or editor,
 * a timeout, and an environment stripped of inherited GIT_* variables that would redirect the repository
 * (a hook's environment can carry them). Hot paths use this thin spawn wrapper instead of simple-git: see
 * docs/design.md ("Why a thin spawn wrapper") for the measurement.
 */
export interface GitOptions {
  env?: Readonly<Record<string, string>>;
  input?: string | Buffer;
  timeoutMs?: number;
  /** Exit codes that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: readonly number[];
  /** stdout through a temporary file, stderr dropped (spawnCollect's SpawnRequest.stdoutViaFile): a hook's early status. */
  stdoutViaFile?: boolean;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const REDIRECTING_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

/** The environment every git process of ours runs with (the health probe's simple-git instance uses it too). */
export function baseEnv(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING_VARS) delete env[name];
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GCM_INTERACTIVE: 'never',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
    LANGUAGE: 'C',
  });
  return { ...env, ...extra };
}

// ---- which git runs ----

const GIT_NOT_FOUND = 'Git was not found on PATH. Install git, then try again.';
const GIT_ONLY_INSIDE =
  'The only git on PATH is inside this repository; Agent Version History will not run it. Put an installed git first on PATH (or set git.path in VS Code), then try again.';
let configuredGit: readonly string[] = [];
/** Resolved git per working folder (the folder decides which PATH entries are untrusted). */
const resolved = new Map<string, string>();

/**
 * The git the user chose (VS Code's `git.path`, a machine setting a repository cannot set: one path or a list,
 * tried in order). Only absolute paths to an existing executable count; none usable → PATH is searched.
 */
export function configureGitExecutable(candidates: string | readonly string[] | null | undefined): void {
  configuredGit = (typeof candidates === 'string' ? [candidates] : (candidates ?? [])).filter(
    (c) => typeof c === 'string' && c.length > 0,
  );
  resolved.clear();
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The working tree around `dir` (nearest folder holding `.git`), else `dir` itself: its files are the repository's, not the user's. */
export function untrustedFolderOf(dir: string): string {
  const start = path.resolve(dir);
  for (let d = start; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return start;
  }
}

/**
 * Finds git as an absolute path: the first usable configured path, else the first `git` on PATH. Relative PATH
 * entries ('.', '' and the like name the current folder) and entries inside `untrusted` are skipped, so a `git`
 * committed to a repository never runs. Returns why not when none is usable.
 */
export function findGitExecutable(
  env: NodeJS.ProcessEnv,
  configured: readonly string[],
  untrusted: string,
  platform: NodeJS.Platform = process.platform,
): { git: string } | { missing: 'not-found' | 'only-inside' } {
  for (const file of configured)
    if (path.isAbsolute(file) && isExecutableFile(file)) return { git: path.resolve(file) };
  // A filesystem root as the untrusted folder would distrust everything: it is never a repository worth that.
  const distrust = path.dirname(untrusted) === untrusted ? () => false : (file: string) => isInside(file, untrusted);
  const pathVar = platform === 'win32' ? (env.Path ?? env.PATH ?? '') : (env.PATH ?? '');
  const name = platform === 'win32' ? 'git.exe' : 'git';
  let skipped = false;
  for (const dir of pathVar.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(path.resolve(dir), name);
    if (!isExecutableFile(file)) continue;
    if (!distrust(file)) return { git: file };
    skipped = true;
  }
  return { missing: skipped ? 'only-inside' : 'not-found' };
}

/** The absolute path of the git to run in `cwd`, resolved once per folder: never one from the repository itself. */
export function gitExecutable(cwd: string): string {
  const known = resolved.get(cwd);
  if (known !== undefined) return known;
  const found = findGitExecutable(process.env, configuredGit, untrustedFolderOf(cwd));
  if (!('git' in found))
    throw new GitCommandError(
      'git-failed',
      [],
      -1,
      found.missing === 'only-inside' ? GIT_ONLY_INSIDE : GIT_NOT_FOUND,
      '',
    );
  resolved.set(cwd, found.git);
  return found.git;
}

// ---- running it ----

/** Test-only bookkeeping for crash points: the git processes this process started that have not finished die with it. */
const runningChildren = new Set<number>();
if (typeof AVH_PRODUCTION_BUILD === 'undefined') {
  onCrash(() => {
    for (const pid of runningChildren) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already finished */
      }
    }
  });
}

/**
 * Runs `git <args>` in cwd with the resolved git (never one found in cwd); rejects with a GitCommandError
 * (reason mapped from stderr) on failure.
 */
export function runGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  let git: string;
  try {
    git = gitExecutable(cwd);
  } catch (error) {
    return Promise.reject(error);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const env = baseEnv(options.env);
  // A git:<verb>:during crash point needs the child here, to kill it: those test runs always spawn directly.
  const launcher =
    typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_FAILPOINT?.startsWith('git:')
      ? undefined
      : readyLauncher();
  let child: number | undefined;
  const started =
    typeof AVH_PRODUCTION_BUILD === 'undefined'
      ? (pid: number | undefined) => {
          child = pid;
          killDuringFailpoint(pid, args);
        }
      : undefined;
  const request = { cwd, env, input: options.input, timeoutMs, stdoutViaFile: options.stdoutViaFile };
  const outcome = launcher
    ? launcher.run({ git, args: [...args], ...request })
    : spawnCollect(git, args, request, started);
  if (typeof AVH_PRODUCTION_BUILD === 'undefined' && child !== undefined) {
    const pid = child;
    runningChildren.add(pid);
    void outcome.finally(() => runningChildren.delete(pid));
  }
  return outcome.then((o) => {
    if (o.kind === 'closed') return settle(args, options, o);
    if (o.kind === 'spawn-error') throw spawnFailed(cwd, args, o.code);
    throw new GitCommandError(
      'git-failed',
      args,
      -1,
      `git ${verbOf(args)} did not finish: the process that started it stopped`,
      '',
    );
  });
}

/** What a finished git process means: its output, or the failure mapped from its stderr. The same for both ways of starting it. */
function settle(
  args: readonly string[],
  options: GitOptions,
  closed: Extract<SpawnOutcome, { kind: 'closed' }>,
): GitResult {
  const { code: exit, stdout, stderr } = closed;
  if (closed.timedOut) throw new GitCommandError('git-timeout', args, exit, `git ${verbOf(args)} timed out`, stderr);
  if (exit === 0 || options.okCodes?.includes(exit)) return { stdout, stderr, code: exit };
  const reason = reasonFromStderr(stderr);
  throw new GitCommandError(reason, args, exit, messageFor(reason, args, exit), stderr);
}

const FOLDER_GONE =
  'The folder to work in no longer exists (it was moved or deleted). Open the folder where it is now, then try again. Nothing was changed.';

function spawnFailed(cwd: string, args: readonly string[], code: string | undefined): GitCommandError {
  // spawn says ENOENT for a missing working folder too: that is not a missing git.
  if (code === 'ENOENT' && !isFolder(cwd)) return new GitCommandError('not-a-repository', args, -1, FOLDER_GONE, '');
  if (code === 'ENOENT') resolved.delete(cwd); // uninstalled or moved since: look again next time
  return new GitCommandError(
    'git-failed',
    args,
    -1,
    code === 'ENOENT' ? GIT_NOT_FOUND : `git ${verbOf(args)} could not start`,
    '',
  );
}

/**
 * Test-only (compiled out of the bundles users get): AVH_FAILPOINT=git:<subcommand>:during SIGKILLs the git child
 * a moment after it starts and then this process, so fault tests leave the repository exactly as a crash in the
 * middle of that git command would.
 */
function killDuringFailpoint(pid: number | undefined, args: readonly string[]): void {
  const wanted = process.env.AVH_FAILPOINT;
  if (!wanted || !pid || wanted !== `git:${verbOf(args)}:during`) return;
  const delayMs = Number(process.env.AVH_FAILPOINT_DELAY_MS ?? '5');
  // The named command dies with this process, like any other that runs side by side with it (onCrash below). One
  // that already finished (a read-tree that refused at once) is not "during": a later run of that command is.
  setTimeout(() => {
    if (runningChildren.has(pid)) crashNow();
  }, delayMs);
}

/** A failed git command. `stderr` is kept for classification only; it is never shown or logged (it may name remotes or files). */
export class GitCommandError extends AvhError {
  constructor(
    reason: ErrorReason,
    readonly args: readonly string[],
    readonly exitCode: number,
    message: string,
    readonly stderr: string,
  ) {
    super(reason, message, { command: verbOf(args), exitCode });
    this.name = 'GitCommandError';
  }
}

function verbOf(args: readonly string[]): string {
  // Skip `-c key=value` pairs and other leading options to name the subcommand.
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') {
      i++;
      continue;
    }
    if (!args[i].startsWith('-')) return args[i];
  }
  return 'git';
}

/** The one mapping from git's stderr to reasons. */
export function reasonFromStderr(stderr: string): ErrorReason {
  if (/index\.lock': File exists/.test(stderr)) return 'index-locked';
  if (/Unable to create '.*\.lock': File exists|cannot lock ref .*File exists/.test(stderr)) return 'ref-locked';
  if (/not a git repository/i.test(stderr)) return 'not-a-repository';
  if (/cannot lock ref|is at [0-9a-f]+ but expected|reference already exists/.test(stderr)) return 'ref-moved';
  if (/needs merge|unmerged|you need to resolve your current index first/i.test(stderr)) return 'unmerged-entries';
  if (
    /would be overwritten|would lose untracked files|not uptodate\. Cannot merge|Entry '.*' not uptodate/.test(stderr)
  )
    return 'dirty-conflict';
  return 'git-failed';
}

export function messageFor(reason: ErrorReason, args: readonly string[], exit: number): string {
  switch (reason) {
    case 'index-locked':
      return 'Another git process is using this repository (index.lock is held). Wait for it to finish, or remove .git/index.lock if no git process is running, then try again.';
    case 'ref-locked':
      return 'A git lock file for a branch is held (a .lock file under .git/refs, or .git/HEAD.lock for the current branch). Wait for the other git process to finish, or remove the stale .lock file if none is running, then try again.';
    case 'not-a-repository':
      return 'This folder is not a git repository.';
    case 'ref-moved':
      return 'The branch moved while Agent Version History was updating it; nothing was changed. Try again.';
    case 'unmerged-entries':
      return 'The repository has unresolved merge conflicts. Resolve them outside VS Code, then try again.';
    case 'dirty-conflict':
      return 'Local changes would be overwritten; nothing was changed.';
    default:
      return `git ${verbOf(args)} failed (exit ${exit})`;
  }
}
