import * as fs from 'node:fs';
import * as path from 'node:path';
import { crashNow, onCrash } from '../failpoints';
import type { LockLiveness } from '../store/lockLiveness';
import { fileNamedIn, GitCommandError, gitErrorCode, messageFor, reasonOf, verbOf } from './gitErrors';
import { findGitExecutable, GIT_NOT_FOUND, GIT_ONLY_INSIDE, untrustedFolderOf } from './gitExecutable';
import type { LaunchOutcome, LaunchRequest } from './gitLauncherProcess';
import { spawnCollect, SpawnOutcome } from './spawnCollect';

/**
 * How one git command runs. Argument arrays only, no shell, no terminal prompts, no pager or editor, a timeout,
 * and an environment stripped of inherited GIT_* variables that would redirect the repository (a hook's
 * environment can carry them).
 */
export interface GitOptions {
  env?: Readonly<Record<string, string>>;
  input?: string | Buffer;
  timeoutMs?: number;
  /** Exit codes that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: readonly number[];
  /**
   * stdout through a temporary file, stderr dropped (spawnCollect's SpawnRequest.stdoutViaFile): a hook's early
   * status. A failure then carries no GitErrorCode.
   */
  stdoutViaFile?: boolean;
  /**
   * Aborting kills the git process (SIGKILL) and rejects with a GitCommandError whose reason is 'cancelled': a read
   * the caller no longer needs (the editor's hover, once the editor changed). Only for commands that change nothing.
   */
  signal?: AbortSignal;
  /** Told the child's pid right after a direct spawn (the hook's early status, cancelled for a tool event). */
  onSpawn?: (pid: number | undefined) => void;
  /** stdout goes nowhere (spawnCollect's SpawnRequest.stdoutIgnored): for a command run for its stderr. */
  stdoutIgnored?: boolean;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** The paths the user chose to keep in versions ("Include in Versions"), read when a scan finds something. */
export type IncludedPathsSource = () => Promise<ReadonlySet<string>>;

/**
 * What the client needs of a launcher process (gitLauncherProcess.ts's GitLauncher): handed in when one starts
 * (gitLauncher.ts), so a short-lived process that never starts one never loads it.
 */
export interface Launcher {
  /** Whether a command sent now is answered by a running launcher. */
  readonly available: boolean;
  run(request: Omit<LaunchRequest, 'id'>, signal?: AbortSignal): Promise<LaunchOutcome>;
  start(): void;
  stop(): void;
  whenReady(): Promise<boolean>;
}

export interface GitClientOptions {
  /** Whether a process recorded by pid and start time is gone: the lock files' provider (lockLiveness.ts). */
  liveness: () => LockLiveness;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/** How long a command refused for another process's index.lock is tried again, and how often. */
const INDEX_LOCK_RETRY_MS = 2000;
const INDEX_LOCK_RETRY_POLL_MS = 25;
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

/** The environment every git process of ours runs with: `extra` over process.env minus redirecting variables. */
export function baseEnv(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING_VARS) delete env[name];
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GCM_INTERACTIVE: 'never',
    GIT_EDITOR: 'true',
    GIT_PAGER: 'cat',
    LC_ALL: 'C',
    LANGUAGE: 'C',
  });
  return { ...env, ...extra };
}

/**
 * Configuration every git process of ours runs with, as `-c` pairs before the subcommand (issue 25): what our
 * parsers read and what our overwrite checks trust must not depend on the user's configuration.
 * docs/design/repositories.md says why each is here. Not GIT_CONFIG_COUNT: it would collide with a caller's own
 * and leak into hooks and filters.
 */
export const PINNED_CONFIG: readonly string[] = [
  // Every check that decides whether content may be overwritten (status, diff-files, add, read-tree -m -u) looks
  // at the files themselves: a monitor that lags would make them skip an edit made a moment ago.
  'core.fsmonitor=false',
  // `git log --format=…` output is only what the format asks for: no gpg text before a signed commit's record.
  'log.showSignature=false',
  // Our commit messages are UTF-8 bytes (no `encoding` header), and %s/%B come out as UTF-8 whatever a commit says.
  'i18n.commitEncoding=UTF-8',
  'i18n.logOutputEncoding=UTF-8',
  'color.ui=false',
  // The few outputs without -z (stderr naming a file) print names as they are, not octal-quoted.
  'core.quotePath=false',
];

/** PINNED_CONFIG as git arguments. */
const PINNED_ARGS: readonly string[] = PINNED_CONFIG.flatMap((pair) => ['-c', pair]);

/**
 * On a case-sensitive disk `core.ignorecase=true` (a repository copied from macOS or Windows, or set by a tool)
 * makes git match `foo.txt` to the index entry `Foo.txt`: a case-only rename then looks like a deletion. There it
 * is pinned false; on a case-insensitive disk (or when it cannot be told) the user's setting stands.
 */
const CASE_SENSITIVE_ARGS: readonly string[] = ['-c', 'core.ignorecase=false'];

/**
 * Whether the disk holding `dir` tells names apart by case: the last component of its path with letters, spelled
 * with its case flipped, names nothing or another entry. Two lstat calls; null when it cannot be told.
 */
export function caseSensitiveAt(dir: string): boolean | null {
  const parts = dir.split(path.sep);
  for (let i = parts.length - 1; i > 0; i--) {
    const flipped = flipCase(parts[i]);
    if (flipped === parts[i]) continue;
    const original = parts.slice(0, i + 1).join(path.sep);
    const other = [...parts.slice(0, i), flipped].join(path.sep);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(original);
    } catch {
      return null;
    }
    try {
      const o = fs.lstatSync(other);
      return !(o.ino === st.ino && o.dev === st.dev);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? true : null;
    }
  }
  return null;
}

function flipCase(name: string): string {
  let out = '';
  for (const ch of name) {
    const upper = ch.toUpperCase();
    out += ch === upper ? ch.toLowerCase() : upper;
  }
  return out;
}

const FOLDER_GONE =
  'The folder to work in no longer exists (it was moved or deleted). Open the folder where it is now, then try ' +
  'again. Nothing was changed.';

/**
 * The one way git runs (VS Code's `Git` object in extensions/git/src/git.ts is the model): which executable (the
 * user's git.path, else PATH outside the repository, resolved once per folder), how it is started (spawned here,
 * or by the launcher process once one is ready: gitLauncherProcess.ts), and what a finished process means (its
 * output, or a GitCommandError whose reason and code come from the stderr table in gitErrors.ts). Every
 * GitRepository holds the client its git runs through: the process's (gitRunner.ts's processGit) unless whoever
 * resolved it passed another (resolveRepository's second argument). It also carries what the git layer needs
 * from outside it: the liveness of recorded processes and, per repository, the user's included paths, so no git
 * module reaches into the store.
 *
 * Hot paths use this thin spawn wrapper instead of simple-git: bench/RESULTS.md §2.5 measured simple-git's 50 ms
 * wait after every silent command, and the health probe measured the same either way (healthProbe.ts).
 */
export class GitClient {
  private configured: readonly string[] = [];
  /** Resolved git per working folder (the folder decides which PATH entries are untrusted). */
  private readonly resolved = new Map<string, string>();
  private launcher: Launcher | undefined;
  /** Test-only bookkeeping for crash points: the git processes this client started that have not finished. */
  private readonly running = new Set<number>();
  private readonly includedPathSources = new WeakMap<object, IncludedPathsSource>();
  /** The pinned arguments per working folder (PINNED_ARGS, plus core.ignorecase=false on a case-sensitive disk). */
  private readonly pinned = new Map<string, readonly string[]>();
  /** The provider that judges whether a recorded process is gone (temporary index names, our index.lock). */
  readonly liveness: () => LockLiveness;

  constructor(options: GitClientOptions) {
    this.liveness = options.liveness;
    // Test builds: the git processes that have not finished die with this process at a crash point.
    if (typeof AVH_PRODUCTION_BUILD === 'undefined') {
      onCrash(() => {
        for (const pid of this.running) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* already finished */
          }
        }
      });
    }
  }

  /**
   * The git the user chose (VS Code's `git.path`, a machine setting a repository cannot set: one path or a list,
   * tried in order). Only absolute paths to an existing executable count; none usable → PATH is searched.
   */
  configure(candidates: string | readonly string[] | null | undefined): void {
    this.configured = (typeof candidates === 'string' ? [candidates] : (candidates ?? [])).filter(
      (c) => typeof c === 'string' && c.length > 0,
    );
    this.resolved.clear();
  }

  /** The absolute path of the git to run in `cwd`, resolved once per folder: never one from the repository itself. */
  executable(cwd: string): string {
    const known = this.resolved.get(cwd);
    if (known !== undefined) return known;
    const found = findGitExecutable(process.env, this.configured, untrustedFolderOf(cwd));
    if (!('git' in found))
      throw new GitCommandError(
        'git-failed',
        [],
        -1,
        found.missing === 'only-inside' ? GIT_ONLY_INSIDE : GIT_NOT_FOUND,
        '',
      );
    this.resolved.set(cwd, found.git);
    return found.git;
  }

  /**
   * Runs `git <args>` in cwd with the resolved git (never one found in cwd); rejects with a GitCommandError
   * (reason and code from stderr) on failure.
   */
  async run(cwd: string, subcommand: readonly string[], options: GitOptions = {}): Promise<GitResult> {
    // Another process holding index.lock is nearly always brief (an editor refreshing the index): git refused
    // before it did anything, so the same command is tried again, for a bounded time (issue 25).
    const started = Date.now();
    for (;;) {
      try {
        return await this.runOnce(cwd, subcommand, options);
      } catch (error) {
        const locked = error instanceof GitCommandError && error.gitErrorCode === 'index-locked';
        if (!locked || Date.now() - started >= INDEX_LOCK_RETRY_MS) throw error;
        await new Promise((resolve) => setTimeout(resolve, INDEX_LOCK_RETRY_POLL_MS));
      }
    }
  }

  private runOnce(cwd: string, subcommand: readonly string[], options: GitOptions): Promise<GitResult> {
    if (options.signal?.aborted) return Promise.reject(cancelled(subcommand));
    let git: string;
    try {
      git = this.executable(cwd);
    } catch (error) {
      return Promise.reject(error);
    }
    const args = [...this.pinnedArgs(cwd), ...subcommand];
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const env = baseEnv(options.env);
    // A git:<verb>:during crash point needs the child here, to kill it: those test runs always spawn directly.
    const launcher =
      typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_FAILPOINT?.startsWith('git:')
        ? undefined
        : this.readyLauncher();
    let child: number | undefined;
    const { signal } = options;
    // Removed once git finished: its pid may name another process by the time the signal aborts.
    let stopKilling = () => {};
    const started =
      typeof AVH_PRODUCTION_BUILD === 'undefined' || signal
        ? (pid: number | undefined) => {
            child = pid;
            if (typeof AVH_PRODUCTION_BUILD === 'undefined') killDuringFailpoint(pid, args, this.running);
            if (signal && pid) {
              const kill = () => killQuietly(pid);
              signal.addEventListener('abort', kill, { once: true });
              stopKilling = () => signal.removeEventListener('abort', kill);
            }
            options.onSpawn?.(pid);
          }
        : options.onSpawn;
    const request = {
      cwd,
      env,
      input: options.input,
      timeoutMs,
      stdoutViaFile: options.stdoutViaFile,
      stdoutIgnored: options.stdoutIgnored,
    };
    const outcome = launcher
      ? launcher.run({ git, args: [...args], ...request }, signal)
      : spawnCollect(git, args, request, started);
    if (typeof AVH_PRODUCTION_BUILD === 'undefined' && child !== undefined) {
      const pid = child;
      this.running.add(pid);
      void outcome.finally(() => this.running.delete(pid));
    }
    const result = outcome.then((o) => {
      stopKilling();
      if (signal?.aborted) throw cancelled(args);
      if (o.kind === 'closed') return settle(args, options, o);
      if (o.kind === 'spawn-error') throw this.spawnFailed(cwd, args, o.code);
      throw new GitCommandError(
        'git-failed',
        args,
        -1,
        `git ${verbOf(args)} did not finish: the process that started it stopped`,
        '',
      );
    });
    if (!signal) return result;
    // Cancelled: answered at once (a child git started may hold its output open a while after the kill).
    const aborted = new Promise<never>((_resolve, reject) =>
      signal.addEventListener('abort', () => reject(cancelled(args)), { once: true }),
    );
    aborted.catch(() => undefined);
    return Promise.race([result, aborted]);
  }

  /** The `-c` pairs every command in `cwd` starts with (PINNED_CONFIG, and core.ignorecase where the disk needs it). */
  pinnedArgs(cwd: string): readonly string[] {
    let args = this.pinned.get(cwd);
    if (args === undefined) {
      args = caseSensitiveAt(cwd) === true ? [...PINNED_ARGS, ...CASE_SENSITIVE_ARGS] : PINNED_ARGS;
      // Unknown (the folder is gone): asked again next time rather than remembered.
      if (fs.existsSync(cwd)) this.pinned.set(cwd, args);
    }
    return args;
  }

  /**
   * Starts this client's launcher (the extension host at activation; `create` makes one unless it has one):
   * commands sent before it is ready are spawned directly, so starting it never delays one.
   */
  startLauncher(create: () => Launcher): void {
    this.launcher ??= create();
    this.launcher.start();
  }

  /** Stops this client's launcher, if it has one; later commands are spawned directly until one starts again. */
  stopLauncher(): void {
    this.launcher?.stop();
    this.launcher = undefined;
  }

  /** Whether the launcher is (or became) ready to take commands; for tests and the benchmark, which measure with it. */
  launcherReady(): Promise<boolean> {
    return this.launcher?.whenReady() ?? Promise.resolve(false);
  }

  /** The running launcher, when a command can be sent to it now. */
  readyLauncher(): Pick<Launcher, 'run'> | undefined {
    return this.launcher?.available ? this.launcher : undefined;
  }

  /** Makes `source` the answer to "which paths did the user include?" for `repo` (whoever opens its store sets it). */
  setIncludedPaths(repo: object, source: IncludedPathsSource): void {
    this.includedPathSources.set(repo, source);
  }

  /** The user's included paths for `repo`; none when no store is attached (then every finding is left out). */
  includedPaths(repo: object): Promise<ReadonlySet<string>> {
    const source = this.includedPathSources.get(repo);
    return source ? source() : Promise.resolve(new Set());
  }

  private spawnFailed(cwd: string, args: readonly string[], code: string | undefined): GitCommandError {
    // spawn says ENOENT for a missing working folder too: that is not a missing git.
    if (code === 'ENOENT' && !isFolder(cwd)) return new GitCommandError('not-a-repository', args, -1, FOLDER_GONE, '');
    if (code === 'ENOENT') this.resolved.delete(cwd); // uninstalled or moved since: look again next time
    return new GitCommandError(
      'git-failed',
      args,
      -1,
      code === 'ENOENT' ? GIT_NOT_FOUND : `git ${verbOf(args)} could not start`,
      '',
    );
  }
}

/**
 * Test-only (compiled out of the bundles users get): AVH_FAILPOINT=git:<subcommand>:during SIGKILLs the git child a
 * moment after it starts and then this process, so fault tests leave the repository exactly as a crash in the
 * middle of that git command would. `running`: the client's unfinished children.
 */
function killDuringFailpoint(pid: number | undefined, args: readonly string[], running: ReadonlySet<number>): void {
  const wanted = process.env.AVH_FAILPOINT;
  if (!wanted || !pid || wanted !== `git:${verbOf(args)}:during`) return;
  const delayMs = Number(process.env.AVH_FAILPOINT_DELAY_MS ?? '5');
  // The named command dies with this process, like any other that runs side by side with it (the client's
  // onCrash). One that already finished (a read-tree that refused at once) is not "during": a later run is.
  setTimeout(() => {
    if (running.has(pid)) crashNow();
  }, delayMs);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already finished */
  }
}

const cancelled = (args: readonly string[]) =>
  new GitCommandError('cancelled', args, -1, `git ${verbOf(args)} was cancelled`, '');

/**
 * What a finished git process means: its output, or the failure read from its stderr. The same for both ways of
 * starting it.
 */
function settle(
  args: readonly string[],
  options: GitOptions,
  closed: Extract<SpawnOutcome, { kind: 'closed' }>,
): GitResult {
  const { code: exit, stdout, stderr } = closed;
  if (closed.timedOut) throw new GitCommandError('git-timeout', args, exit, `git ${verbOf(args)} timed out`, stderr);
  if (exit === 0 || options.okCodes?.includes(exit)) return { stdout, stderr, code: exit };
  const code = gitErrorCode(stderr);
  const reason = reasonOf(code);
  throw new GitCommandError(reason, args, exit, messageFor(reason, args, exit, fileNamedIn(code, stderr)), stderr);
}

function isFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
