import { AvhError } from '../errors';
import { GitCommandError } from './gitErrors';
import type { GitRepository } from './repository';

/** Reading a ref, and the one compare-and-set every ref move of ours goes through. */

/**
 * "No such ref": our sentinel for a ref that must not exist yet (as `expected`) or must go (as `next`). Never sent to
 * git as an object id (it is SHA-1's length): compareAndSetRef turns it into update-ref's create and delete verbs,
 * which take no null id, so the same call works in a SHA-256 repository.
 */
export const ZERO_OID = '0'.repeat(40);

/** The update-ref --stdin line that moves `ref` from `expected` to `next` (either may be ZERO_OID). */
function refLine(ref: string, next: string, expected: string): string {
  if (expected === ZERO_OID) return `create ${ref} ${next}`;
  if (next === ZERO_OID) return `delete ${ref} ${expected}`;
  return `update ${ref} ${next} ${expected}`;
}

/** The current value of `ref`, or null when it does not exist. Read-only. */
export async function readRef(repo: GitRepository, ref: string): Promise<string | null> {
  const { stdout, code } = await repo.git.run(repo.root, ['rev-parse', '--verify', '-q', ref], { okCodes: [1] });
  return code === 0 ? stdout.trim() || null : null;
}

/**
 * Moves `ref` from `expected` to `next` atomically (and, in the same ref transaction, `extra` refs); the one
 * compare-and-set every ref move of ours goes through. Failure contract: already at `next` (a re-run) is success;
 * moved by someone else is 'ref-moved'; still at `expected` means git refused (a reference-transaction hook, a
 * full disk): 'ref-update-refused'. Each failure leaves every ref as it was.
 */
export async function compareAndSetRef(
  repo: GitRepository,
  ref: string,
  next: string,
  expected: string,
  reflog: string,
  durable = false,
  extra: readonly { ref: string; oid: string }[] = [],
): Promise<void> {
  const args = [
    ...(durable ? ['-c', 'core.fsync=reference', '-c', 'core.fsyncMethod=fsync'] : []),
    'update-ref',
    '-m',
    reflog,
    '--stdin',
  ];
  const input = [
    'start',
    refLine(ref, next, expected),
    ...extra.map((e) => `update ${e.ref} ${e.oid}`),
    'prepare',
    'commit',
    '',
  ].join('\n');
  try {
    await repo.git.run(repo.root, args, { input });
  } catch (error) {
    if (!(error instanceof GitCommandError) || error.reason === 'index-locked') throw error;
    const now = await readRef(repo, ref).catch(() => undefined);
    if (now === (next === ZERO_OID ? null : next)) return;
    if (error.reason === 'ref-locked') throw error;
    if (now !== undefined && now !== (expected === ZERO_OID ? null : expected)) {
      throw new AvhError(
        'ref-moved',
        'The branch moved while Agent Version History was updating it; nothing was changed. Try again.',
        {},
        { cause: error },
      );
    }
    throw new AvhError(
      'ref-update-refused',
      'Git refused to move the branch (a reference-transaction hook, a full disk or a permissions problem); ' +
        'nothing was changed. Fix the cause, then try again.',
      {},
      { cause: error },
    );
  }
}
