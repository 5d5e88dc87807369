import { AvhError } from '../core/errors';

/** 0 ok; 1 failed and nothing changed; 2 bad usage or input; 3 blocked because recovery is required. */
export const EXIT = { ok: 0, failed: 1, usage: 2, recoveryRequired: 3 } as const;

export class UsageError extends Error {}

export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof AvhError) {
    if (error.reason === 'invalid-input') return EXIT.usage;
    if (error.reason === 'recovery-required') return EXIT.recoveryRequired;
  }
  return EXIT.failed;
}
