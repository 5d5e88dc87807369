/**
 * Typed errors. Every failure the product reports carries a reason; user-facing copy is chosen from the
 * reason (and safe details such as counts or branch names), never from raw git stderr, prompts or file contents.
 */
export type ErrorReason =
  | 'invalid-input'
  | 'not-a-repository'
  | 'repository-missing'
  | 'unborn-branch'
  | 'detached-head'
  | 'index-locked'
  | 'ref-locked'
  | 'unmerged-entries'
  | 'operation-in-progress'
  | 'dirty-conflict'
  | 'recovery-required'
  | 'restore-in-progress'
  | 'turn-unknown'
  | 'turn-already-ended'
  | 'confirmation-required'
  | 'revert-conflict'
  | 'ref-moved'
  | 'ref-update-refused'
  | 'git-failed'
  | 'git-timeout'
  | 'store-unavailable'
  | 'lock-timeout'
  | 'branch-lost'
  | 'branch-on-remote'
  | 'branch-unavailable'
  // Issue 25: causes git names that have copy of their own.
  | 'repository-not-trusted'
  | 'unreadable-file'
  | 'filter-failed'
  | 'folder-read-only';

/** The closing sentence of a refusal that left everything as it was. */
export const NOTHING_CHANGED = 'Nothing was changed.';

export interface AvhErrorOptions {
  cause?: unknown;
  /** A closing sentence (NOTHING_CHANGED) after the statement; copy that wraps the error uses the statement alone. */
  closing?: string;
}

export class AvhError extends Error {
  /** What went wrong and what helps, without the closing sentence: for copy that wraps this error in its own. */
  readonly statement: string;

  constructor(
    readonly reason: ErrorReason,
    statement: string,
    readonly details: Readonly<Record<string, string | number | boolean | null>> = {},
    options?: AvhErrorOptions,
  ) {
    super(options?.closing ? `${statement} ${options.closing}` : statement, { cause: options?.cause });
    this.name = 'AvhError';
    this.statement = statement;
  }
}

export function isAvhError(error: unknown, reason?: ErrorReason): error is AvhError {
  return error instanceof AvhError && (reason === undefined || error.reason === reason);
}

/**
 * A message safe to show or log for any thrown value: AvhError messages are written by us; anything else is reduced to
 * its class.
 */
export function safeMessage(error: unknown): string {
  if (error instanceof AvhError) return error.message;
  if (error instanceof Error) return `Unexpected ${error.name}`;
  return 'Unexpected failure';
}
