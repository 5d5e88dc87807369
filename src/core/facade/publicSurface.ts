// What the CLI and the extension use of the core besides the VersionHistory class, re-exported by the façade
// (src/core/versionHistory.ts): they import the core through it and the named public modules of
// scripts/importLayers.mjs, never its internals (the rule layers/core-through-facade).
export { AttributionCache, attributionKey, lineAt, ownerBlocks } from '../blame/attributionCache';
export type { FileAttribution, LineRange, TurnAttribution } from '../blame/lineAttribution';
export type { ContinuationInfo } from '../chats/chatBranches';
export { commonGitDir } from '../git/gitDirs';
export { guessBranchTip } from '../git/healthProbe';
export {
  indexScale,
  isLarge,
  needsUntrackedCache,
  UNTRACKED_CACHE_FIX,
  UNTRACKED_CACHE_GAIN,
} from '../git/largeRepository';
export type { SecretFinding } from '../git/secretScanner';
export {
  assessHealth,
  type RecoveryAssessment,
  RecoveryBlockedError,
  type RecoverySettlement,
} from '../recovery/recoveryActions';
export { describeAge, type StaleGitLock } from '../recovery/staleLocks';
export type { HistoryCounts } from '../restore/historyCounts';
export { ConfirmationRequired } from '../restore/refusals';
export {
  type ConfirmationWords,
  keptUndoResult,
  otherChatsRefusal,
  revertConflictStatement,
} from '../restore/restoreCopy';
export type {
  RestoreOptions,
  RestorePreview,
  RestoreRequest,
  RestoreResult,
  UndoOnly,
} from '../restore/restoreService';
export { anyLaterWork, describeLaterWork } from '../restore/revertPlan';
export { leftOutMessage } from '../secrets/secretChoices';
export { loadSqlJs } from '../store/sqlJsLoader';
export type { ToolWrites } from '../turns/toolWrites';
export type { VersionInfo } from '../turns/versions';
