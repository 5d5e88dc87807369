/**
 * The hook fast path (docs/design.md, "Fast hook events"): the common events — a prompt that begins a turn of a
 * known chat on a clean tree, a turn that ends with nothing changed — recorded without sql.js, simple-git or the
 * full CLI bundle. It appends the journal record the full path would have written (the same statements, built by
 * the same functions in turnRecords.ts) under the same locks, deciding from the facts file (hookFacts.ts) that
 * describes the exact journal state on disk. Anything else, and any doubt, declines: the caller then runs the full
 * path (runHook.ts) unchanged. Nothing is written before the one append, so declining is always safe.
 */
import * as fs from 'node:fs';
import { AvhError } from '../../core/errors';
import { randomUuid } from '../../core/randomId';
import { type GatePassed, type OperationSteps, runWithSteps } from '../../core/session/operationGate';
import { OPERATIONS } from '../../core/session/operationKinds';
import { readLockHolder } from '../../core/store/pidLock';
import { appendRecordIfUnchanged, journalFileKey } from '../../core/store/journalAppend';
import type { JournalStatement } from '../../core/store/journal';
import { processGit } from '../../core/git/gitRunner';
import { guessRepositoryFromFiles, GitRepository, stateDirOf } from '../../core/git/repository';
import { leasePath } from '../../core/git/repositoryLease';
import { factsFromHealth, turnGate } from '../../core/git/repositoryGate';
import { inspectHealthDirect } from '../../core/git/statusProbe';
import { indexRepairPending } from '../../core/git/workingTree';
import {
  chatFactsOf,
  HookChatFacts,
  HookFacts,
  HookRunningTurn,
  readHookFacts,
  writeHookFacts,
} from '../../core/turns/hookFacts';
import {
  cancellationOrder,
  cleanTreeBase,
  endOfChat,
  unchangedSinceBase,
  versionStateAtEnd,
} from '../../core/turns/turnDecisions';
import {
  insertTurnStatement,
  touchChatStatement,
  turnRunningStatement,
  turnTerminalStatement,
  turnVersionStatement,
} from '../../core/turns/turnRecords';
import { validateBeginTurn } from '../../core/turns/validation';
import { parseCommandLine } from '../commandParser';
import { spec as hookSpec } from '../commands/hook';
import type { EarlyProbe } from './earlyProbe';
import type { HookEvent } from './hookEvent';
import { HOOK_LEASE_WAIT_MS, hookFolder, HookResult, ignored, parseHookInput } from './hookInput';

const STORE_LOCK_WAIT_MS = 3000;

export type FastHookAnswer = { kind: 'done'; result: HookResult; json: boolean } | { kind: 'declined'; reason: string };

interface Prepared {
  event: HookEvent;
  json: boolean;
  repo: GitRepository;
  facts: HookFacts;
  chatId: string;
  chat: HookChatFacts;
  /** The probe's status, already started by the entry (earlyProbe.ts). */
  status?: Promise<string>;
}

class Decline {
  constructor(readonly reason: string) {}
}

function decline(reason: string): never {
  throw new Decline(reason);
}

/**
 * Handles `hook <agent> …` when the fast path can, or declines (with the reason, for tests and `--verbose`).
 * Never throws; after its record is written it always answers 'done'.
 */
export async function tryFastHook(
  argv: readonly string[],
  readStdin: () => Promise<string>,
  cwd: string,
  early?: EarlyProbe,
): Promise<FastHookAnswer> {
  const answer = await fastHook(argv, readStdin, cwd, early).catch((error: unknown) => ({
    kind: 'declined' as const,
    reason: error instanceof Decline ? error.reason : 'error',
  }));
  if (typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_HOOK_PATH_LOG) {
    // Test-only (compiled out of the bundles users get): which path each event took, and whether an engine was loaded.
    const engines = Object.keys(require.cache).filter((m) =>
      /[\\/]node_modules[\\/](sql\.js|simple-git)[\\/]/.test(m),
    ).length;
    fs.appendFileSync(
      process.env.AVH_HOOK_PATH_LOG,
      `${answer.kind === 'done' ? `fast engines=${engines}` : `declined:${answer.reason}`}\n`,
    );
  }
  return answer;
}

async function fastHook(
  argv: readonly string[],
  readStdin: () => Promise<string>,
  cwd: string,
  early: EarlyProbe | undefined,
): Promise<FastHookAnswer> {
  if (typeof AVH_PRODUCTION_BUILD === 'undefined' && process.env.AVH_HOOK_FAST === 'off') decline('switched-off');
  const prepared = await prepare(argv, readStdin, cwd, early);
  const { event, facts, chat } = prepared;
  if (event.action.kind === 'end' && !endOfChat(chat.running)) {
    // What the full path answers too (endOfChat): a Stop with no running turn.
    return { kind: 'done', result: ignored(event), json: prepared.json };
  }
  // A dead holder's lease: the full open settles what it left.
  if (readLockHolder(leasePath(prepared.repo))?.alive === false) decline('dead-lease');
  const { action } = event;
  // The full path's opening (session/operationGate.ts), bound to the facts file and the direct probe: prepare()
  // declined whatever would need settling, so nothing is left to settle under the lease.
  const steps: OperationSteps = {
    leaseWaitMs: HOOK_LEASE_WAIT_MS,
    refuseRecovery: async () => {
      if (facts.recoveryRequired) decline('unsettled');
    },
    settle: async () => undefined,
    probe: () => inspectHealthDirect(prepared.repo, prepared.status),
    latchFacts: async () => ({ recoveryRequired: facts.recoveryRequired, restoreInFlight: facts.restoreInFlight }),
    // Left behind, the lease names this process and is stale once it exits; never a reason to record twice.
    releaseFailed: () => undefined,
  };
  try {
    if (action.kind === 'begin') {
      return await runWithSteps(prepared.repo, OPERATIONS.turnBegin, steps, async (opened) =>
        append(prepared, planBegin(prepared, action.prompt, opened)),
      );
    }
    if (action.kind === 'end') {
      return await runWithSteps(prepared.repo, OPERATIONS.turnEnd, steps, async () =>
        append(prepared, await planEnd(prepared, action.outcome)),
      );
    }
  } catch (error) {
    // The turn gate refused (a rebase in progress, detached HEAD, …): the full path says why.
    if (error instanceof AvhError && error.details.blocker !== undefined) decline('gate');
    throw error;
  }
  decline('event');
}

/** The one write: the planned record appended if the journal is still the facts' state, then the facts updated. */
async function append(prepared: Prepared, planned: Planned): Promise<FastHookAnswer> {
  const appended = await appendRecordIfUnchanged(
    prepared.repo.stateDir,
    prepared.facts.journal,
    planned.statements,
    STORE_LOCK_WAIT_MS,
  );
  if (appended.kind !== 'appended') decline(appended.kind);
  // Acknowledged: from here nothing may decline (the full path would record the event a second time).
  writeHookFacts(prepared.repo.stateDir, {
    ...prepared.facts,
    journal: appended.state,
    chats: { ...prepared.facts.chats, [prepared.chatId]: planned.chat },
  });
  return { kind: 'done', result: planned.result, json: prepared.json };
}

/** Everything decided before the lease: the command line, the event, the repository and its facts. */
async function prepare(
  argv: readonly string[],
  readStdin: () => Promise<string>,
  cwd: string,
  early: EarlyProbe | undefined,
): Promise<Prepared> {
  // The hook command's spec alone parses every `hook …` line as the whole registry does (commandParser.ts).
  const invocation = parseCommandLine(argv, [hookSpec]);
  if (invocation.kind !== 'run' || invocation.command !== 'hook') decline('not-a-hook');
  const { values, args } = invocation;
  if (values.verbose) decline('verbose');
  const event = await parseHookInput({ agent: args[0], payload: args[1], readStdin });
  if (event.action.kind === 'ignore') decline('event');
  if (event.action.kind === 'begin')
    validateBeginTurn({ chatId: event.chatId, prompt: event.action.prompt, agent: event.agent });
  const found = guessRepositoryFromFiles(hookFolder(cwd, values.repo, event));
  if (!found) decline('no-repository');
  const stateDir = stateDirOf(found.gitDir);
  const facts = readHookFacts(stateDir);
  // The repository git resolved when the facts were written, and the very journal state they describe.
  if (!facts || facts.root !== found.root || facts.gitDir !== found.gitDir) decline('no-facts');
  if (journalFileKey(stateDir) !== facts.journal.key) decline('stale');
  if (facts.recoveryRequired || facts.restoreInFlight || facts.unsettled > 0) decline('unsettled');
  const repo: GitRepository = { root: found.root, gitDir: found.gitDir, stateDir, git: processGit() };
  if (indexRepairPending(repo)) decline('unsettled');
  const chat = chatFactsOf(facts, event.chatId);
  if (!chat) decline('unknown-chat');
  // The early status is this repository's only if it was started in the same root.
  const status = early?.root === repo.root ? early.status : undefined;
  return { event, json: values.json === true, repo, facts, chatId: event.chatId, chat, status };
}

interface Planned {
  statements: JournalStatement[];
  result: HookResult;
  /** The chat's facts once the record is applied. */
  chat: HookChatFacts;
}

/** A clean tree on the chat's own branch: HEAD is the base (no snapshot commit), as beginTurn records it. */
function planBegin({ chat, chatId, event }: Prepared, prompt: string, opened: GatePassed<string | null>): Planned {
  const { branch, head } = cleanTreeOnBranch(opened);
  if (chat.branch !== null && chat.branch !== branch) decline('other-branch');
  const now = Date.now();
  const turnId = randomUuid();
  // The still-running turns end cancelled first, oldest turn number first (cancelOpenTurnsOfChat), then the new
  // turn begins.
  const cancelled = cancellationOrder(chat.running);
  const seq = chat.maxSeq + 1;
  const base = cleanTreeBase(head);
  const statements = [
    ...cancelled.map((t) => turnTerminalStatement(t.id, 'cancelled', versionStateAtEnd('cancelled', false), now)),
    touchChatStatement(chatId, null, event.agent, now),
    insertTurnStatement({ id: turnId, chatId, seq, prompt, agent: event.agent, branch, head, now }),
    turnRunningStatement(turnId, base.baseHead, base.baseCommit, base.baseTree),
  ];
  const turn: HookRunningTurn = { id: turnId, seq, ...base };
  return {
    statements,
    result: { agent: event.agent, event: event.event, action: 'began', turnId, cancelled: cancelled.map((t) => t.id) },
    chat: { branch: chat.branch, maxSeq: seq, running: [turn] },
  };
}

/**
 * The newest running turn gets the event's outcome, older ones end cancelled (endOfChat, as the full path). A
 * completed turn is taken only when nothing changed since its base (unchangedSinceBase), so endTurn would record
 * 'no-changes' with no version. A turn that did not complete needs no look at the tree. No recovery is latched
 * here: the facts said so, and the journal is still exactly their state.
 */
async function planEnd(
  { repo, chat, event, status }: Prepared,
  outcome: 'completed' | 'cancelled' | 'errored',
): Promise<Planned> {
  const { last, older } = endOfChat(chat.running) ?? decline('no-running-turn');
  if (outcome === 'completed') {
    // As endTurn's commit: its own probe and turn gate, under the lease.
    const health = await inspectHealthDirect(repo, status);
    const gate = turnGate(factsFromHealth(health), 'retry');
    if (!gate.ok) decline('gate');
    const { head } = cleanTreeOnBranch({ health, branch: gate.branch, head: gate.head });
    if (!unchangedSinceBase(last, head)) decline('changes');
  }
  const now = Date.now();
  const statements = [
    ...older.map((t) => turnTerminalStatement(t.id, 'cancelled', versionStateAtEnd('cancelled', false), now)),
    turnTerminalStatement(last.id, outcome, versionStateAtEnd(outcome, false), now),
    ...(outcome === 'completed' ? [turnVersionStatement(last.id, null, 'no-changes')] : []),
  ];
  return {
    statements,
    result: {
      agent: event.agent,
      event: event.event,
      action: 'ended',
      turnId: last.id,
      outcome,
      version: null,
      cancelled: older.map((t) => t.id),
    },
    chat: { ...chat, running: [] },
  };
}

/** Past the turn gate: on a branch with a commit, nothing to snapshot or commit, no nested repository to name. */
function cleanTreeOnBranch({ health, branch, head }: GatePassed<string | null>): { branch: string; head: string } {
  if (head === null) decline('gate');
  if (!health.clean || health.nestedRepositories.length > 0 || health.hiddenEntries > 0) decline('dirty');
  return { branch, head };
}
