/**
 * Shared helpers for the git benchmarks: the raw git baseline (started exactly as the product starts git), statistics,
 * the synthetic repository builder, a PATH shim that counts git processes, and a trace that times every git call.
 */
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readyLauncher } from '../src/core/git/gitLauncher';
import { configureGitExecutable, gitExecutable } from '../src/core/git/gitRunner';
import { spawnCollect, type SpawnOutcome } from '../src/core/git/spawnCollect';

type LaunchRequestFields = { args: string[]; env: NodeJS.ProcessEnv };

export interface Spawned {
  code: number;
  stdout: string;
  stderr: string;
}

const RAW_TIMEOUT_MS = 10 * 60_000;

/**
 * The raw baseline: `git <args>` and nothing else, started the way the product starts its git in this process (the
 * same executable; through the git launcher when one runs, as every git of the product's then goes: the bench starts
 * one; else spawned by the same spawnCollect). So a ratio compares our work with git's, never two ways of starting
 * a process: a spawn from this large process costs several times one from the launcher (spawnProbe). The user's
 * environment (no LC_ALL=C or prompt switches of ours). Rejects when git exits non-zero.
 */
export async function git(
  cwd: string,
  args: readonly string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Spawned> {
  const env = options.env ? { ...process.env, ...options.env } : process.env;
  const request = { cwd, env, input: options.input, timeoutMs: RAW_TIMEOUT_MS };
  const executable = gitExecutable(cwd);
  const launcher = readyLauncher();
  const outcome: SpawnOutcome | { kind: 'launcher-gone' } = launcher
    ? await launcher.run({ git: executable, args: [...args], ...request })
    : await spawnCollect(executable, args, request);
  if (outcome.kind !== 'closed') throw new Error(`git ${args.join(' ')} did not run (${outcome.kind})`);
  const result = { code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr };
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
  return result;
}

export const now = () => performance.now();

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = now();
  await fn();
  return now() - started;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  // Nearest-rank percentile.
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const median = (values: readonly number[]) => percentile(values, 50);

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export const ratio = (a: number, b: number) => a / b;
export const fmtRatio = (r: number) => `${r.toFixed(2)}×`;

// ---------------------------------------------------------------------------------------------------------------
// Synthetic repository

/** A deterministic pool of pseudo-random "words" that file contents are sliced from (text, compresses like prose-ish code). */
function textPool(bytes: number, seed: number): Buffer {
  const pool = Buffer.alloc(bytes);
  let x = seed >>> 0 || 1;
  const rand = () => {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  const letters = 'etaoinshrdlucmfwypvbgkjqxz';
  let i = 0;
  let lineLen = 0;
  while (i < bytes) {
    const wordLen = 1 + (rand() % 9);
    for (let k = 0; k < wordLen && i < bytes; k++) pool[i++] = letters.charCodeAt(rand() % (k === 0 ? 26 : 12));
    lineLen += wordLen + 1;
    if (i < bytes) {
      if (lineLen > 60 + (rand() % 30)) {
        pool[i++] = 0x0a;
        lineLen = 0;
      } else {
        pool[i++] = 0x20;
      }
    }
  }
  return pool;
}

export interface BenchRepo {
  dir: string;
  /** Relative paths of every tracked file. */
  files: string[];
  /** The single commit the repository starts with. */
  base: string;
  fileBytes: number;
  totalBytes: number;
  buildMs: { writeAndImport: number; index: number };
}

const FILES_PER_DIR = 20;
const DIRS_PER_TOP = 50;

export function relPath(i: number): string {
  const leaf = Math.floor(i / FILES_PER_DIR);
  const top = Math.floor(leaf / DIRS_PER_TOP);
  return `pkg${String(top).padStart(3, '0')}/mod${String(leaf % DIRS_PER_TOP).padStart(2, '0')}/file${String(i).padStart(6, '0')}.txt`;
}

/**
 * Builds a repository of `count` files of ~`fileBytes` pseudo-random text in nested folders (20 per folder, 50
 * folders per top folder) with one commit on `main`, fast: the files are written with fs while the same bytes
 * stream into one `git fast-import` (objects land in a single pack, as in a real repository, instead of one loose
 * file per object), then the index is built from HEAD and refreshed (one hash pass, so every entry has stat
 * data, as after a normal commit). gc.auto is off so no background gc runs during the measurements.
 */
export async function buildRepo(dir: string, count: number, fileBytes: number): Promise<BenchRepo> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const t0 = now();
  await git(dir, ['init', '-q', '-b', 'main']);
  for (const [key, value] of [
    ['user.name', 'Bench User'],
    ['user.email', 'bench@example.invalid'],
    ['commit.gpgsign', 'false'],
    ['gc.auto', '0'],
  ]) {
    await git(dir, ['config', key, value]);
  }
  const importer = childProcess.spawn('git', ['-c', 'pack.compression=1', 'fast-import', '--quiet', '--done'], {
    cwd: dir,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const importErr: Buffer[] = [];
  importer.stderr.on('data', (d: Buffer) => importErr.push(d));
  const importExit = new Promise<number>((resolve, reject) => {
    importer.on('error', reject);
    importer.on('close', (code) => resolve(code ?? -1));
  });
  const send = async (chunk: Buffer | string) => {
    if (!importer.stdin.write(chunk)) await new Promise<void>((resolve) => importer.stdin.once('drain', resolve));
  };

  const pool = textPool(8 * 1024 * 1024, 0x9e3779b9 ^ count);
  const files: string[] = [];
  let totalBytes = 0;
  let lastDir = '';
  const add = async (rel: string, content: Buffer, mark: number) => {
    fs.writeFileSync(path.join(dir, rel), content);
    await send(`blob\nmark :${mark}\ndata ${content.length}\n`);
    await send(content);
    await send('\n');
    files.push(rel);
    totalBytes += content.length;
  };
  for (let i = 0; i < count; i++) {
    const rel = relPath(i);
    const parent = path.dirname(rel);
    if (parent !== lastDir) {
      fs.mkdirSync(path.join(dir, parent), { recursive: true });
      lastDir = parent;
    }
    const offset = (i * 104_729) % (pool.length - fileBytes);
    const header = Buffer.from(`// ${rel}\n`);
    await add(rel, Buffer.concat([header, pool.subarray(offset, offset + fileBytes - header.length)]), i + 1);
  }
  await add('.gitignore', Buffer.from('build/\n*.log\n'), count + 1);
  const message = 'Initial import\n';
  const ident = 'Bench User <bench@example.invalid> 1700000000 +0000';
  await send(
    `commit refs/heads/main\nauthor ${ident}\ncommitter ${ident}\ndata ${Buffer.byteLength(message)}\n${message}`,
  );
  for (let i = 0; i < files.length; i++) await send(`M 100644 :${i + 1} ${files[i]}\n`);
  await send('\ndone\n');
  importer.stdin.end();
  const code = await importExit;
  if (code !== 0) throw new Error(`git fast-import exited ${code}: ${Buffer.concat(importErr).toString('utf8')}`);
  const tImport = now();
  await git(dir, ['read-tree', 'HEAD']);
  await git(dir, ['update-index', '-q', '--refresh']);
  // The files written in the index's own second are "racily clean": git writes them smudged and hashes them again on
  // every later status or add until a refresh a second later rewrites the index. A repository a user has open is past
  // that (their editor's `git status` refreshes it); a build that happens to straddle a second would otherwise leave
  // a varying share of the files to hash on every run, for the product and raw git alike (whichever keeps a copy of
  // the user's index). So: a second later, refreshed again.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await git(dir, ['update-index', '-q', '--refresh']);
  const tIndex = now();
  const base = (await git(dir, ['rev-parse', 'HEAD'])).stdout.trim();
  await assertClean(dir);
  return {
    dir,
    files,
    base,
    fileBytes,
    totalBytes,
    buildMs: { writeAndImport: tImport - t0, index: tIndex - tImport },
  };
}

/** The 100 (or `n`) files a turn edits: spread evenly across the tree. */
export function pickFiles(repo: BenchRepo, n = 100): string[] {
  const tracked = repo.files.length - 1; // not .gitignore
  const step = Math.floor(tracked / n);
  return Array.from({ length: n }, (_, k) => repo.files[k * step + 3]);
}

/** Modifies `files` the same way for every variant: appends one line (sizes change, so git never misses the edit). */
export function modifyFiles(repo: BenchRepo, files: readonly string[], tag: string): void {
  for (const rel of files) fs.appendFileSync(path.join(repo.dir, rel), `edited by ${tag}\n`);
}

/** Untimed: the branch at `commit`, index and working tree matching it, no untracked files. */
export async function resetTo(repo: BenchRepo, commit: string): Promise<void> {
  await git(repo.dir, ['reset', '-q', '--hard', commit]);
  await git(repo.dir, ['clean', '-fdq']);
}

export async function headOf(dir: string): Promise<string> {
  return (await git(dir, ['rev-parse', 'HEAD'])).stdout.trim();
}

export async function assertClean(dir: string): Promise<void> {
  const { stdout } = await git(dir, ['status', '--porcelain']);
  if (stdout.length > 0) throw new Error(`bench: expected a clean tree in ${dir}, got:\n${stdout.slice(0, 500)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Counting git processes: a `git` shim first on PATH appends one line per process, then execs the real git.

export class GitProcessCounter {
  private readonly shimDir: string;
  private readonly logFile: string;
  private savedPath: string | undefined;

  constructor(workDir: string) {
    this.shimDir = path.join(workDir, 'git-shim');
    this.logFile = path.join(workDir, 'git-shim.log');
    fs.mkdirSync(this.shimDir, { recursive: true });
    const realGit = childProcess.execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(
      path.join(this.shimDir, 'git'),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> "${this.logFile}"\nexec "${realGit}" "$@"\n`,
      { mode: 0o755 },
    );
  }

  /** Runs `fn` with the shim first on PATH; returns the git command lines started meanwhile (one per process). */
  async count(fn: () => Promise<unknown>): Promise<string[]> {
    fs.writeFileSync(this.logFile, '');
    this.savedPath = process.env.PATH;
    process.env.PATH = `${this.shimDir}${path.delimiter}${this.savedPath ?? ''}`;
    configureGitExecutable([]); // git is resolved once per folder: forget it, so the shim first on PATH is the git found
    try {
      await fn();
    } finally {
      process.env.PATH = this.savedPath;
      configureGitExecutable([]);
    }
    return fs
      .readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
  }
}

/** The git subcommand of a command line (skips `-c k=v` and other leading options). */
export function verb(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') {
      i++;
      continue;
    }
    if (!args[i].startsWith('-')) return args[i];
  }
  return 'git';
}

// ---------------------------------------------------------------------------------------------------------------
// Timing every git call made through child_process.spawn (the product's runGit uses it): spawn → 'close'.

export interface GitCall {
  verb: string;
  args: string[];
  /** The git-relevant variables the call set (GIT_OPTIONAL_LOCKS, GIT_INDEX_FILE). */
  env: Record<string, string>;
  /** Just before child_process.spawn was called. */
  startMs: number;
  /** How long the spawn() call itself blocked this process (fork + exec setup; grows with the parent's heap). */
  spawnMs: number;
  /** The child's 'close' event (exited, pipes drained). */
  endMs: number;
}

/** The two DurableStore methods the trace times (wrapped on the instance for the duration of one call). */
export interface TraceableStore {
  transaction: (...args: never[]) => Promise<unknown>;
  read: (...args: never[]) => Promise<unknown>;
}

export interface CoreTrace {
  totalMs: number;
  calls: GitCall[];
  /** Durations of each durable store transaction (journal append + fsync, under the store's lock). */
  storeTx: number[];
  /** Durations of each store read. */
  storeRead: number[];
  /** Each store transaction and read as [start, end] on the trace's clock (they may overlap git calls). */
  storeSpans: Span[];
}

/** [start, end] in ms on one clock. */
export type Span = readonly [number, number];

/**
 * Runs `fn`, timing every git process started through child_process.spawn (spawn → 'close') and, when `store`
 * is given, every store transaction and read. Nothing in src is modified: the spawn export and the store
 * instance's methods are wrapped for the duration of the call only.
 */
export async function traceGitCalls(fn: () => Promise<unknown>, store?: TraceableStore): Promise<CoreTrace> {
  // The real module object (a namespace import is a read-only copy); runGit reads `.spawn` from it at call time.
  const cp = process.getBuiltinModule('node:child_process') as { spawn: typeof childProcess.spawn };
  const original = cp.spawn;
  const calls: GitCall[] = [];
  const storeTx: number[] = [];
  const storeRead: number[] = [];
  const storeSpans: Span[] = [];
  const originalTx = store?.transaction;
  const originalRead = store?.read;
  let t0 = now();
  const timedMethod = (method: (...args: never[]) => Promise<unknown>, sink: number[]) =>
    function (this: unknown, ...args: never[]) {
      const started = now();
      const result = method.apply(this, args);
      const done = () => {
        const ended = now();
        sink.push(ended - started);
        storeSpans.push([started - t0, ended - t0]);
      };
      result.then(done, done);
      return result;
    };
  const ownTx = store !== undefined && Object.prototype.hasOwnProperty.call(store, 'transaction');
  const ownRead = store !== undefined && Object.prototype.hasOwnProperty.call(store, 'read');
  if (store && originalTx && originalRead) {
    store.transaction = timedMethod(originalTx, storeTx);
    store.read = timedMethod(originalRead, storeRead);
  }
  t0 = now();
  cp.spawn = ((command: string, args: readonly string[], options: childProcess.SpawnOptions) => {
    const startMs = now() - t0;
    const child = original(command, args as string[], options);
    if (path.basename(command) === 'git') {
      const env = (options?.env ?? {}) as Record<string, string | undefined>;
      const gitEnv: Record<string, string> = {};
      for (const name of ['GIT_OPTIONAL_LOCKS', 'GIT_INDEX_FILE'])
        if (env[name] !== undefined) gitEnv[name] = env[name] as string;
      const call: GitCall = {
        verb: verb(args),
        args: [...args],
        env: gitEnv,
        startMs,
        spawnMs: now() - t0 - startMs,
        endMs: NaN,
      };
      calls.push(call);
      child.on('close', () => {
        call.endMs = now() - t0;
      });
    }
    return child;
  }) as typeof childProcess.spawn;
  // In a process with a git launcher (the extension host; the bench starts one too), runGit sends its commands
  // there: those are timed at the launcher's run() (send → answer; the blocking part is the send).
  const launcher = readyLauncher() as { run: (request: LaunchRequestFields) => Promise<unknown> } | undefined;
  const originalRun = launcher?.run;
  if (launcher && originalRun) {
    launcher.run = function (this: unknown, request: LaunchRequestFields) {
      const startMs = now() - t0;
      const answer = originalRun.call(this, request);
      const gitEnv: Record<string, string> = {};
      for (const name of ['GIT_OPTIONAL_LOCKS', 'GIT_INDEX_FILE'])
        if (request.env[name] !== undefined) gitEnv[name] = request.env[name] as string;
      const call: GitCall = {
        verb: verb(request.args),
        args: [...request.args],
        env: gitEnv,
        startMs,
        spawnMs: now() - t0 - startMs,
        endMs: NaN,
      };
      calls.push(call);
      const done = () => {
        call.endMs = now() - t0;
      };
      answer.then(done, done);
      return answer;
    };
  }
  try {
    await fn();
  } finally {
    if (launcher && originalRun) delete (launcher as Partial<typeof launcher>).run;
    cp.spawn = original;
    if (store && originalTx && originalRead) {
      const bag = store as unknown as Record<string, unknown>;
      if (ownTx) store.transaction = originalTx;
      else delete bag.transaction;
      if (ownRead) store.read = originalRead;
      else delete bag.read;
    }
  }
  return { totalMs: now() - t0, calls, storeTx, storeRead, storeSpans };
}

/** Wall time covered by at least one git process (calls may overlap). */
export function gitWallMs(calls: readonly GitCall[]): number {
  return unionMs(calls.map((c) => [c.startMs, c.endMs] as const));
}

/** Wall time covered by at least one of `spans` (they may overlap: a sum would count the overlap twice). */
export function unionMs(spans: readonly Span[]): number {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curStart = -1;
  let curEnd = -1;
  for (const [s, e] of sorted) {
    if (s > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) {
      curEnd = e;
    }
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}

/**
 * What one git process costs from this process right now: RSS (fork cost grows with it), the synchronous
 * spawn() call, and a whole `git --version` spawn → close; and the same `git --version` as both sides of every
 * comparison start it (git(): through the launcher when one runs). Medians of 11.
 */
export async function spawnProbe(): Promise<{ rssMb: number; spawnMs: number; processMs: number; text: string }> {
  const syncTimes: number[] = [];
  const totalTimes: number[] = [];
  for (let i = 0; i < 11; i++) {
    const started = now();
    const child = childProcess.spawn('git', ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    syncTimes.push(now() - started);
    child.stdout.resume();
    child.stderr.resume();
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', () => resolve());
    });
    totalTimes.push(now() - started);
  }
  const launched: number[] = [];
  for (let i = 0; i < 11; i++) launched.push(await timed(() => git(process.cwd(), ['--version'])));
  const rssMb = process.memoryUsage().rss / 1048576;
  const spawnMs = median(syncTimes);
  const processMs = median(totalTimes);
  const how = readyLauncher() ? 'through the git launcher' : 'spawned by spawnCollect';
  return {
    rssMb,
    spawnMs,
    processMs,
    text:
      `bench process RSS ${rssMb.toFixed(0)} MB; one \`git --version\` spawned from it costs ${ms(processMs)} spawn → ` +
      `close, of which the synchronous \`spawn()\` call ${ms(spawnMs)}; started as both sides of every comparison ` +
      `here start git (${how}) ${ms(median(launched))}`,
  };
}
