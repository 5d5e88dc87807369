import { AvhError } from '../core/errors';

/** 0 ok; 1 failed and nothing changed; 2 bad usage or input; 3 blocked because recovery is required. */
export const EXIT = { ok: 0, failed: 1, usage: 2, recoveryRequired: 3 } as const;

/** A failure the CLI itself detected, with a message written by us (safe to print) and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A command line we cannot run. The message (written by us, naming at most a short echo of the argument) says
 * what is wrong; `command` selects the usage text printed under it, so the user sees how to fix it.
 */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message, EXIT.usage);
  }
}

/** Reasons that mean the input named something that cannot be acted on: usage errors (exit 2). */
const INPUT_REASONS: ReadonlySet<string> = new Set([
  'invalid-input',
  'binary-file',
  'no-such-file',
  'unknown-revision',
  'outside-repository',
  'not-a-turn-change',
]);

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof AvhError) {
    if (INPUT_REASONS.has(error.reason)) return EXIT.usage;
    if (error.reason === 'recovery-required') return EXIT.recoveryRequired;
  }
  return EXIT.failed;
}
