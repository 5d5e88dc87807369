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
  /** A read the caller no longer needed was stopped (its git process killed). */
  | 'cancelled'
  /** Line attribution (issue 26): a binary file, a file not in that version, a revision that is no commit. */
  | 'binary-file'
  | 'no-such-file'
  | 'unknown-revision'
  | 'outside-repository'
  /** Undo This Change on a line no agent turn's version wrote (the user's, or partial work not yet a version). */
  | 'not-a-turn-change';

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
