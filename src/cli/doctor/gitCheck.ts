import * as path from 'node:path';
import {
  gitExecutableFor,
  gitVersion,
  MIN_GIT_VERSION,
  TESTED_GIT_VERSION,
  versionAtLeast,
} from '../../core/diagnostics';
import { Check, ok, problem, warning } from './check';

const version = (v: readonly [number, number]) => v.join('.');

/** Which git this runs, and whether it is new enough. */
export async function checkGit(folder: string): Promise<Check> {
  const found = gitExecutableFor(folder);
  if (!('path' in found))
    return problem(
      'git',
      found.problem,
      `Install git ${version(TESTED_GIT_VERSION)} or newer and make sure it is on PATH (outside this repository).`,
      { path: null },
    );
  const gitPath = found.path;
  const v = await gitVersion(path.resolve(folder));
  const facts = {
    path: gitPath,
    version: v?.text ?? null,
    minimum: version(MIN_GIT_VERSION),
    tested: version(TESTED_GIT_VERSION),
  };
  if (!v) return problem('git', `${gitPath} did not report a version.`, 'Reinstall git, then run doctor again.', facts);
  if (!versionAtLeast(v, MIN_GIT_VERSION)) {
    return problem(
      'git',
      `git ${v.text} at ${gitPath} is older than ${version(MIN_GIT_VERSION)}: ` +
        'it cannot make the saves of your work durable (core.fsync).',
      `Install git ${version(TESTED_GIT_VERSION)} or newer.`,
      facts,
    );
  }
  if (!versionAtLeast(v, TESTED_GIT_VERSION)) {
    return warning(
      'git',
      `git ${v.text} at ${gitPath} is older than ${version(TESTED_GIT_VERSION)}, the oldest version tested.`,
      `Install git ${version(TESTED_GIT_VERSION)} or newer.`,
      facts,
    );
  }
  return ok('git', `git ${v.text} at ${gitPath}`, facts);
}
