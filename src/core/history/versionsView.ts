// Builds the Version History's data for the core's façade: what the view renders (versionsModel.ts).
// No vscode: the core's façade (VersionHistory.versionsView) calls it, and plain-Node tests run it.
import { branchNotices } from '../chats/chatBranches';
import type { RepoContext } from '../context';
import { isAvhError } from '../errors';
import { readVersionLog } from '../git/versionLog';
import type { TerminalOutcome } from '../outcomes';
import { readRecovery } from '../operations/recoveryLatch';
import { isUndoable, redoStack, turnsAboveVersions, type TurnsAboveVersions } from '../restore/historyCounts';
import { type CheckpointStep, checkpointSteps } from '../turns/checkpointSteps';
import { agentSubject, kindOfSubject } from '../domain/promptSummary';
import { readSymbolicHead } from '../turns/turnLedger';
import { getChat, type TurnRow } from '../turns/turnRecords';
import type { StoreReader } from '../store/durableStore';
import { workingChanges } from '../turns/workingChanges';
import type { ChangedFile } from '../git/versionLog';
import { BLOCKED_MESSAGE } from './wording';
import {
  type BranchNotices,
  type CheckpointedTurn,
  type CommandStep,
  type OpenTurn,
  type OpenTurnState,
  STEP_FILES_LISTED,
  type VersionRow,
  type VersionsView,
} from '../domain/versionsModel';

interface TurnJoinRow {
  id: string;
  chat_id: string;
  agent: string | null;
  recovery: string;
  terminal_outcome: TerminalOutcome | null;
  undone_by: string | null;
  branch: string | null;
  base_commit: string | null;
  version_commit: string | null;
  no_version_reason: string | null;
  title: string | null;
  /** The agent whose hook recorded where the turn sits in its conversation (turn_anchors), or null. */
  anchor_agent: string | null;
}

/**
 * Kinds whose commit holds a turn's own changes: an agent turn's version, or a cancelled turn's saved partial
 * changes.
 */
const TURN_KINDS: ReadonlySet<string> = new Set(['agent', 'interrupted']);

/** Ids per IN (…) query: far below SQLite's variable limit, and few queries even at 10,000 versions. */
const IDS_PER_QUERY = 500;

/**
 * The Version History view's model for the current branch: the first `limit` versions, newest first, from one
 * `git log` (with files changed and +/−) joined with the turn store in one read. Read-only.
 */
export async function buildVersionsView(ctx: RepoContext, limit: number): Promise<VersionsView> {
  const latchFirst = await ctx.store.read((r) => readRecovery(r));
  if (latchFirst) return { kind: 'blocked', message: BLOCKED_MESSAGE };
  const ref = readSymbolicHead(ctx.repo.gitDir);
  const branch = ref ? ref.slice('refs/heads/'.length) : null;
  // One extra commit tells whether there is more to load, without a second git process.
  const commits = await readVersionLog(ctx.repo.root, limit + 1);
  const hasMore = commits.length > limit;
  if (hasMore) commits.length = limit;
  const head = commits[0]?.oid ?? null;
  const ids = [...new Set(commits.flatMap((c) => (c.turnId ? [c.turnId] : [])))];

  const joined = await ctx.store.read(
    (r) => {
      const turns: TurnJoinRow[] = [];
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        const chunk = ids.slice(i, i + IDS_PER_QUERY);
        turns.push(
          ...r.all<TurnJoinRow>(
            `SELECT t.id, t.chat_id, t.agent, t.recovery, t.terminal_outcome, t.undone_by, t.branch, t.base_commit,
              t.version_commit, t.no_version_reason, c.title,
              (SELECT a.agent FROM turn_anchors a WHERE a.turn_id = t.id) AS anchor_agent
         FROM turns t LEFT JOIN chats c ON c.id = t.chat_id WHERE t.id IN (${chunk.map(() => '?').join(',')})`,
            chunk,
          ),
        );
      }
      return {
        recovery: readRecovery(r),
        turns,
        canRedo: branch ? redoStack(r, branch, head).length > 0 : false,
        // Each chat's newest turn stays hot, so the hot table is empty only when the archive is too.
        anyTurn: r.get<{ x: number }>('SELECT 1 AS x FROM turns LIMIT 1') !== undefined,
        ...aboveWithTitles(r, branch),
      };
    },
    { history: true },
  ); // the rows' turns may be archived (a long history, or pages past the first)
  // The latch may have been set while git ran: the store read above is the one that counts.
  if (joined.recovery) return { kind: 'blocked', message: BLOCKED_MESSAGE };

  // Chats are checked when the view lists their rows (a long-merged, deleted branch elsewhere stays quiet here).
  const notices = await viewNotices(ctx, branch, new Set(joined.turns.map((t) => t.chat_id)));
  const chatBranchOf = new Map((notices?.chats ?? []).map((c) => [c.chatId, c.state]));
  const turnsById = new Map(joined.turns.map((t) => [t.id, t]));
  // The rows' own turns that Undo can take back (what undoableTurns selects, for these ids only).
  const undoable = new Set(joined.turns.filter((t) => branch !== null && isUndoable(t, branch)).map((t) => t.id));
  const chatNumbers = new Map<string, number>();
  const rows: VersionRow[] = commits.map((c) => {
    const kind = kindOfSubject(c.subject);
    // [Restore] commits name the turn they undid in the same trailer: the turn belongs to its own row only.
    const t = c.turnId && TURN_KINDS.has(kind) ? turnsById.get(c.turnId) : undefined;
    let chatIndex = 0;
    if (t) {
      chatIndex = chatNumbers.get(t.chat_id) ?? chatNumbers.size + 1;
      chatNumbers.set(t.chat_id, chatIndex);
    }
    return {
      oid: c.oid,
      // The badge names the kind, so the label drops the subject's "[Agent] " / "[Restore] " … prefix.
      label: kind === 'user' ? c.subject : c.subject.replace(/^\[\w+\] /, ''),
      kind,
      time: c.time,
      filesChanged: c.filesChanged,
      insertions: c.insertions,
      deletions: c.deletions,
      isHead: c.oid === head,
      turn: t
        ? {
            id: t.id,
            chatId: t.chat_id,
            chatTitle: t.title,
            agent: t.agent,
            outcome: t.terminal_outcome,
            undone: t.undone_by !== null,
            // A turn of a chat whose branch is gone keeps its Undo: the refusal explains why and offers the one
            // action that helps.
            canUndo: kind === 'agent' && (undoable.has(t.id) || (t.undone_by === null && chatBranchOf.has(t.chat_id))),
            chatIndex,
            // Only the hooks of agents with a way to fork their conversation record an anchor (issue 32).
            canContinueChat: kind === 'agent' && t.anchor_agent !== null && t.anchor_agent === t.agent,
            ...(chatBranchOf.has(t.chat_id) ? { chatBranch: chatBranchOf.get(t.chat_id) } : {}),
          }
        : null,
    };
  });
  const noticed = notices ? { notices } : {};
  if (rows.length === 0 && !joined.anyTurn) return { kind: 'empty', branch, ...noticed };
  const openTurns = joined.above ? await openTurnsOf(ctx, joined.above, joined.chatTitles, commits[0]?.time) : [];
  const checkpoints = await attachSteps(ctx, rows, openTurns);
  return {
    kind: 'versions',
    branch,
    rows,
    hasMore,
    canRedo: joined.canRedo,
    hasTurns: joined.anyTurn,
    ...noticed,
    ...(openTurns.length > 0 ? { openTurns } : {}),
    ...(checkpoints.length > 0 ? { checkpoints } : {}),
  };
}

/**
 * The checkpoints taken before destructive commands (issue 34) as steps: each open turn's under it (`steps`, against
 * the working tree now), and the listed versions' turns that have any, newest first (against the version). A
 * failure to work them out leaves them out and is logged content-free; the list stays.
 */
async function attachSteps(
  ctx: RepoContext,
  rows: readonly VersionRow[],
  open: OpenTurn[],
): Promise<CheckpointedTurn[]> {
  const versionRows = new Map<string, VersionRow>();
  for (const r of rows) if (r.turn && !versionRows.has(r.turn.id)) versionRows.set(r.turn.id, r);
  const openIds = new Set(open.map((t) => t.id));
  let steps: Map<string, CheckpointStep[]>;
  try {
    steps = await checkpointSteps(ctx, [
      ...open.map((t) => ({ turnId: t.id, end: null })),
      ...[...versionRows.values()]
        .filter((r) => !openIds.has(r.turn!.id))
        .map((r) => ({ turnId: r.turn!.id, end: r.oid })),
    ]);
  } catch (error) {
    ctx.log.warn('view.checkpoints-failed', { reason: isAvhError(error) ? error.reason : 'unexpected' });
    return [];
  }
  for (const t of open) {
    const list = steps.get(t.id);
    if (list) t.steps = list.map(stepView);
  }
  const turns: CheckpointedTurn[] = [];
  for (const [turnId, row] of versionRows) {
    const list = openIds.has(turnId) ? undefined : steps.get(turnId);
    if (!list) continue;
    turns.push({
      turnId,
      oid: row.oid,
      label: row.label,
      time: row.time,
      agent: row.turn!.agent,
      chatTitle: row.turn!.chatTitle,
      steps: list.map(stepView),
    });
  }
  return turns;
}

/** A step as the view shows it: counts of all its files, the first STEP_FILES_LISTED by name. */
export function stepView(step: CheckpointStep): CommandStep {
  const deleted = step.files.filter((f) => f.status === 'deleted').length;
  return {
    id: step.id,
    label: step.label,
    command: step.command,
    createdAt: step.createdAt,
    savedFiles: step.savedFiles,
    deleted,
    modified: step.files.length - deleted,
    files: step.files.slice(0, STEP_FILES_LISTED),
  };
}

/** The turns above the versions (none without a branch) and the titles of their chats. */
function aboveWithTitles(r: StoreReader, branch: string | null) {
  const above = branch ? turnsAboveVersions(r, branch) : null;
  const chats = [
    ...new Set([...(above?.running ?? []), ...(above?.stopped ?? []), ...(above?.quiet ?? [])].map((t) => t.chat_id)),
  ];
  const chatTitles = new Map<string, string | null>();
  for (const id of chats) chatTitles.set(id, getChat(r, id)?.title ?? null);
  return { above, chatTitles };
}

/**
 * The turns above the versions, newest first, each running or stopped one with the files it changed so far (its
 * base snapshot against the working tree: one status for all of them, no object written). A turn that changed
 * nothing is listed only while no commit is newer (`headTime`, seconds: the HEAD commit's time). A failure to count
 * leaves the counts out and is logged content-free; the rows stay.
 */
async function openTurnsOf(
  ctx: RepoContext,
  above: TurnsAboveVersions,
  chatTitles: ReadonlyMap<string, string | null>,
  headTime: number | undefined,
): Promise<OpenTurn[]> {
  const live = [...above.running, ...above.stopped];
  let counted: Map<string, ChangedFile[]> | null = null;
  if (live.length > 0) {
    try {
      counted = (
        await workingChanges(
          ctx.repo,
          live.map((t) => t.base_commit!),
        )
      ).changes;
    } catch (error) {
      ctx.log.warn('view.changes-so-far-failed', { reason: isAvhError(error) ? error.reason : 'unexpected' });
    }
  }
  const row = (t: TurnRow, state: OpenTurnState): OpenTurn => ({
    id: t.id,
    chatId: t.chat_id,
    chatTitle: chatTitles.get(t.chat_id) ?? null,
    agent: t.agent,
    label: agentSubject(t.prompt).slice('[Agent] '.length),
    state,
    startedAt: t.created_at,
    endedAt: t.ended_at,
    filesChanged: state === 'no-change' ? null : (counted?.get(t.base_commit!)?.length ?? null),
    canUndo: state !== 'no-change',
  });
  return [
    ...above.running.map((t) => row(t, 'running')),
    ...above.stopped.map((t) => row(t, stoppedState(t))),
    ...above.quiet
      .filter((t) => headTime === undefined || (t.ended_at ?? t.created_at) >= headTime * 1000)
      .map((t) => row(t, 'no-change')),
  ].sort((a, b) => b.startedAt - a.startedAt);
}

function stoppedState(turn: TurnRow): OpenTurnState {
  if (turn.terminal_outcome === 'errored') return 'errored';
  return turn.terminal_outcome === 'completed' ? 'unrecorded' : 'stopped';
}

/**
 * The branch-loss part of the view (docs/product-contract.md §7, §8): warning entries of this branch and chats whose
 * branch is gone. Absent when there is nothing to show. A failure to work them out never breaks the list (it is logged,
 * content-free).
 */
async function viewNotices(
  ctx: RepoContext,
  branch: string | null,
  chats: ReadonlySet<string>,
): Promise<BranchNotices | undefined> {
  try {
    const { warnings, issues } = await branchNotices(ctx, branch, { onlyChats: chats });
    if (warnings.length === 0 && issues.length === 0) return undefined; // the usual case: nothing to show, nothing sent
    return {
      warnings: warnings.map((w) => ({
        chatId: w.chatId,
        chatTitle: w.chatTitle ?? null,
        oldBranch: w.oldBranch,
        newBranch: w.newBranch,
        baseBranch: w.baseBranch,
        repository: w.repository,
        at: w.at,
      })),
      chats: issues,
    };
  } catch (error) {
    ctx.log.warn('view.branch-notices-failed', { reason: isAvhError(error) ? error.reason : 'unexpected' });
    return undefined;
  }
}
