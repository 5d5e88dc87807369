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
  | 'not-a-turn-change'
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

/**
 * The brand our errors carry, shared by every copy of this module: the CLI ships as three bundles (dist/cli.js,
 * cliMain.js, cliHook.js), each with its own AvhError class, and an error made in one is judged in another (stdin is
 * read by the entry and refused in the full CLI). `Symbol.for` is one symbol per process, whichever bundle asks.
 */
const AVH_ERROR_BRAND = Symbol.for('agent-version-history.error');

type Branded = { readonly [AVH_ERROR_BRAND]: readonly string[] };

function brandsOf(value: unknown): readonly string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const brands = (value as Partial<Branded>)[AVH_ERROR_BRAND];
  return Array.isArray(brands) ? brands : undefined;
}

/**
 * `instanceof AvhError` (and of a subclass that declares its own static `brand`) holds for an error made by any
 * bundle's copy of the class: it tests the brand, not the prototype chain. A subclass without a brand of its own is
 * tested the ordinary way.
 */
export class AvhError extends Error {
  /** The name this class is recognised by across bundles; every subclass that may cross one declares its own. */
  static readonly brand: string = 'AvhError';

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!Object.hasOwn(this, 'brand')) return Function.prototype[Symbol.hasInstance].call(this, value);
    return brandsOf(value)?.includes((this as typeof AvhError).brand) === true;
  }

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
    const brands: string[] = [];
    for (let c: unknown = new.target; c !== Error && typeof c === 'function'; c = Object.getPrototypeOf(c)) {
      if (Object.hasOwn(c, 'brand')) brands.push((c as typeof AvhError).brand);
    }
    Object.defineProperty(this, AVH_ERROR_BRAND, { value: Object.freeze(brands) });
  }
}

/** Our error (made by any bundle), with `reason` when one is given: judged by the brand and the reason. */
export function isAvhError(error: unknown, reason?: ErrorReason): error is AvhError {
  return (
    brandsOf(error)?.includes(AvhError.brand) === true &&
    typeof (error as AvhError).reason === 'string' &&
    (reason === undefined || (error as AvhError).reason === reason)
  );
}

/**
 * A message safe to show or log for any thrown value: AvhError messages are written by us; anything else is reduced to
 * its class.
 */
export function safeMessage(error: unknown): string {
  if (isAvhError(error)) return error.message;
  if (error instanceof Error) return `Unexpected ${error.name}`;
  return 'Unexpected failure';
}
