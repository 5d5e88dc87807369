import { AvhError, safeMessage } from './errors';

/**
 * What leaves the product as an error (returned to an API caller, printed by the CLI): the reason, our own
 * message and the safe details only. A fresh object: no `cause` chain, no git `stderr` or `args` (git's output
 * can name files and remote URLs; our command lines can carry commit messages).
 */
export function toPublicError(error: unknown): Error {
  if (error instanceof AvhError) return new AvhError(error.reason, error.message, { ...error.details });
  return new Error(safeMessage(error));
}
