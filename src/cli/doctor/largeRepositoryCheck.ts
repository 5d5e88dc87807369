import type { GitRepository } from '../../core/git/repository';
import { Check, ok, warning } from './check';
import {
  indexScale,
  isLarge,
  needsUntrackedCache,
  UNTRACKED_CACHE_FIX,
  UNTRACKED_CACHE_GAIN,
} from '../../core/versionHistory';

/**
 * Doctor's `large-repository` line (issue 36), only for a repository above LARGE_REPOSITORY_ENTRIES files: ok when
 * its index holds an untracked cache (our probe then asks git in the mode the cache serves: statusProbe.ts), else a
 * warning naming the setting, with its measured difference. Reads the index file only.
 */
export function checkLargeRepository(repo: GitRepository): Check | null {
  const scale = indexScale(repo.gitDir);
  if (!isLarge(scale)) return null;
  const files = scale.entries.toLocaleString('en-US');
  const facts = { entries: scale.entries, untrackedCache: scale.untrackedCache };
  if (!needsUntrackedCache(scale))
    return ok(
      'large-repository',
      `${files} files tracked; git's untracked cache serves the look at the working tree each event takes.`,
      facts,
    );
  return warning(
    'large-repository',
    `${files} files tracked, and git keeps no untracked cache here: every prompt and Stop waits for a status that ` +
      `reads every folder for new files (${UNTRACKED_CACHE_GAIN} with the cache).`,
    `${UNTRACKED_CACHE_FIX} (your own status builds the cache; Agent Version History only reads it).`,
    facts,
  );
}
