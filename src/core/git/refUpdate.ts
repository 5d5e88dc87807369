import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { commonGitDir } from './gitDirs';
import { GitCommandError } from './gitErrors';
import { OID_OF_FORMAT } from '../domain/objectId';
import { objectFormatFromFiles, type GitRepository } from './repository';

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
  if (expected === ZERO_OID && extra.length === 0 && !durable && createdLoose(repo, ref, next)) return;
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

/** A ref of ours a loose file may create: under refs/agent-versions/, plain name components only. */
const PRIVATE_REF = /^refs\/agent-versions(?:\/[A-Za-z0-9][A-Za-z0-9_-]*)+$/;
/** A packed-refs file larger than this is not read for the one name: git creates the ref instead. */
const PACKED_REFS_READ_LIMIT = 1 << 20;

/**
 * Creates private ref `ref` at `next` as git's files backend does (`<ref>.lock` made exclusively, the id written,
 * renamed into place), one git process fewer on every base snapshot. Only where that is all git would do: a ref of
 * ours that does not exist (loose or packed), in a repository whose refs are files, with no reflog or shared
 * permissions configured for it. False, having written nothing, whenever anything differs (a lock held, a name
 * taken, a folder in the way): the caller runs `git update-ref`, which decides and reports as always. A private ref
 * is no user ref: the rule that our internal commits run no git hook covers its reference-transaction hook too.
 */
function createdLoose(repo: GitRepository, ref: string, next: string): boolean {
  if (!PRIVATE_REF.test(ref) || process.env.GIT_COMMON_DIR !== undefined) return false;
  const common = commonGitDir(repo.gitDir);
  let config: string;
  try {
    if (!OID_OF_FORMAT[objectFormatFromFiles(repo)].test(next)) return false;
    config = fs.readFileSync(path.join(common, 'config'), 'utf8');
  } catch {
    return false;
  }
  // Reftable refs, a reflog for every ref, group-shared files, or settings from an included file: git's business.
  if (/refstorage|logallrefupdates\s*=\s*always|sharedrepository|^\s*\[\s*include/im.test(config)) return false;
  if (fs.existsSync(path.join(common, 'reftable'))) return false;
  const file = path.join(common, ...ref.split('/'));
  try {
    const packed = path.join(common, 'packed-refs');
    if (fs.existsSync(packed)) {
      if (fs.statSync(packed).size > PACKED_REFS_READ_LIMIT) return false;
      if (fs.readFileSync(packed, 'utf8').includes(` ${ref}\n`)) return false;
    }
    if (fs.existsSync(file)) return false;
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch {
    return false;
  }
  const lock = `${file}.lock`;
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch {
    return false;
  }
  try {
    try {
      fs.writeSync(fd, `${next}\n`);
    } finally {
      fs.closeSync(fd);
    }
    // Never over a ref made meanwhile (a rename would replace it): git's create refuses that case.
    if (fs.existsSync(file)) throw new Error('taken');
    fs.renameSync(lock, file);
    return true;
  } catch {
    fs.rmSync(lock, { force: true });
    return false;
  }
}
