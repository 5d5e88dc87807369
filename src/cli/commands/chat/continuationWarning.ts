import { continuationWarningText } from '../../../core/history/wording';
import { terminalSafe } from '../../output';
import type { ContinuationInfo } from '../../../core/versionHistory';

/** The warning entry's sentence (the same words as Version History). */
export function warningLine(w: ContinuationInfo): string {
  return terminalSafe(continuationWarningText(w.newBranch, w.oldBranch));
}
