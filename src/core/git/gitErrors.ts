import { AvhError, ErrorReason } from '../errors';
import { printableName } from './pathBytes';

/**
 * The one place that reads git's stderr (as VS Code's git extension reads it once, in `getGitErrorCode`): a failed
 * command's stderr becomes a GitErrorCode on its GitCommandError, and callers test that code, never the text.
 * stderr is kept for this reading only; it is never shown or logged (it may name remotes or files).
 */
export type GitErrorCode =
  | 'index-locked'
  | 'ref-locked'
  | 'not-a-repository'
  | 'ref-moved'
  | 'unmerged-entries'
  | 'dirty-conflict'
  | 'bare-repository'
  | 'unsafe-repository'
  | 'no-identity'
  | 'no-commits'
  | 'tree-not-written'
  | 'auth-failed'
  | 'no-such-path'
  | 'no-such-revision'
  | 'unreadable-file'
  | 'filter-failed';

/** A remote refused the credentials (or there were none to give: prompts are off). */
const AUTH_FAILED = new RegExp(
  [
    'Authentication failed',
    'Permission denied',
    'could not read (Username|Password)',
    'terminal prompts disabled',
    'Host key verification failed',
    'publickey',
    'HTTP 40[13]',
    'returned error: 40[13]',
  ].join('|'),
  'i',
);

/**
 * stderr → code, first match wins; the codes in REASONS name an error reason of their own. The two file rows come
 * after those, so they never change the reason a failure had: git names the file in them (read by fileNamedIn),
 * never its content.
 */
const STDERR_CODES: readonly (readonly [RegExp, GitErrorCode])[] = [
  [/index\.lock': File exists/, 'index-locked'],
  [/Unable to create '.*\.lock': File exists|cannot lock ref .*File exists/, 'ref-locked'],
  [/not a git repository/i, 'not-a-repository'],
  [/cannot lock ref|is at [0-9a-f]+ but expected|reference already exists/, 'ref-moved'],
  [/needs merge|unmerged|you need to resolve your current index first/i, 'unmerged-entries'],
  [
    /would be overwritten|would lose untracked files|not uptodate\. Cannot merge|Entry '.*' not uptodate/,
    'dirty-conflict',
  ],
  [/must be run in a work tree/, 'bare-repository'],
  [/dubious ownership/, 'unsafe-repository'],
  [/tell me who you are|empty ident|auto-detect/i, 'no-identity'],
  [/does not have any commits yet|unknown revision|bad (?:default )?revision 'HEAD'/, 'no-commits'],
  [/not able to write tree/i, 'tree-not-written'],
  // Before auth-failed, whose "Permission denied" is a remote's: these name a local file.
  [/error: open\(".+"\): Permission denied|unable to index file '.+'/, 'unreadable-file'],
  [/: (?:clean|smudge) filter '?.+?'? failed/, 'filter-failed'],
  [AUTH_FAILED, 'auth-failed'],
  // git blame / cat-file of a path a commit does not have, or of a name that is no object.
  [/no such path '.*' in |There is no path .* in the commit|does not exist in '/, 'no-such-path'],
  [/bad revision|ambiguous argument|Not a valid object name|invalid object name/i, 'no-such-revision'],
];

/** Where git names the file a failure is about, per code (the first match's first group). */
const NAMED_FILE: Partial<Record<GitErrorCode, readonly RegExp[]>> = {
  'unreadable-file': [/error: open\("(.+)"\): Permission denied/, /unable to index file '(.+)'/],
  'filter-failed': [/fatal: (.+): (?:clean|smudge) filter '?.+?'? failed/],
  'unsafe-repository': [/dubious ownership in repository at '(.+)'/],
  'ref-locked': [/Unable to create '(.+\.lock)': File exists/],
};

/** The file a failure with `code` names in its stderr (a name only, never content), or undefined. Pure. */
export function fileNamedIn(code: GitErrorCode | undefined, stderr: string): string | undefined {
  for (const pattern of (code && NAMED_FILE[code]) || []) {
    const match = pattern.exec(stderr);
    if (match) return match[1];
  }
  return undefined;
}

const REASONS: Partial<Record<GitErrorCode, ErrorReason>> = {
  'index-locked': 'index-locked',
  'ref-locked': 'ref-locked',
  'not-a-repository': 'not-a-repository',
  'ref-moved': 'ref-moved',
  'unmerged-entries': 'unmerged-entries',
  'dirty-conflict': 'dirty-conflict',
  'unsafe-repository': 'repository-not-trusted',
  'unreadable-file': 'unreadable-file',
  'filter-failed': 'filter-failed',
};

/** What a failed command's stderr says went wrong, or undefined when it is nothing we tell apart. Pure. */
export function gitErrorCode(stderr: string): GitErrorCode | undefined {
  for (const [pattern, code] of STDERR_CODES) if (pattern.test(stderr)) return code;
  return undefined;
}

/** The error reason of a failure with `code` ('git-failed' for codes that have no reason of their own). */
export function reasonOf(code: GitErrorCode | undefined): ErrorReason {
  return (code && REASONS[code]) ?? 'git-failed';
}

/** The one mapping from git's stderr to reasons. */
export function reasonFromStderr(stderr: string): ErrorReason {
  return reasonOf(gitErrorCode(stderr));
}

/**
 * A failed git command. `stderr` is kept for classification only; it is never shown or logged (it may name remotes or
 * files).
 */
export class GitCommandError extends AvhError {
  /** Recognised across bundles (errors.ts): the entry's early status probe is judged by the hook fast path. */
  static override readonly brand: string = 'GitCommandError';

  /** What stderr says went wrong (read by gitErrorCode); undefined when git said nothing we tell apart. */
  readonly gitErrorCode: GitErrorCode | undefined;

  constructor(
    reason: ErrorReason,
    readonly args: readonly string[],
    readonly exitCode: number,
    message: string,
    readonly stderr: string,
  ) {
    const code = gitErrorCode(stderr);
    const file = fileNamedIn(code, stderr);
    super(reason, message, { command: verbOf(args), exitCode, ...(file !== undefined ? { file } : {}) });
    this.name = 'GitCommandError';
    this.gitErrorCode = code;
  }
}

/** The git subcommand of `args`: `-c key=value` pairs and other leading options are skipped. */
export function verbOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') {
      i++;
      continue;
    }
    if (!args[i].startsWith('-')) return args[i];
  }
  return 'git';
}

/** A lock file git named by its absolute path, from the repository's `.git/` on when it is inside one. */
function lockFromGitDir(file: string): string {
  const at = file.lastIndexOf('/.git/');
  return at < 0 ? file : file.slice(at + 1);
}

/**
 * The user-facing sentence for a failed command, chosen from its reason and the file git named (a name, never
 * content; pathBytes.ts prints one that is not UTF-8).
 */
export function messageFor(reason: ErrorReason, args: readonly string[], exit: number, file?: string): string {
  const named = file === undefined ? 'a file' : printableName(file);
  switch (reason) {
    case 'repository-not-trusted':
      return (
        `Git refuses ${file === undefined ? 'this repository' : printableName(file)} because it is owned by another ` +
        'user (safe.directory).'
      );
    case 'unreadable-file':
      return `Git cannot read ${named} (permission denied). Make it readable, or add it to .gitignore, then try again.`;
    case 'filter-failed':
      return `The filter configured for ${named} (.gitattributes) failed. Fix the filter's command, then try again.`;
    case 'index-locked':
      return (
        'Another git process is using this repository (index.lock is held). Wait for it to finish, or remove ' +
        '.git/index.lock if no git process is running, then try again.'
      );
    case 'ref-locked':
      return (
        'A git lock file for a branch is held (a .lock file under .git/refs, or .git/HEAD.lock for the current ' +
        `branch${file === undefined ? '' : `; git named ${printableName(lockFromGitDir(file))}`}). Wait for the ` +
        'other git process to finish, or remove the stale .lock files if none is running, then try again.'
      );
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
