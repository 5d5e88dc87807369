/**
 * The hook fast path (docs/design.md, "Fast hook events"): the common events — a prompt that begins a turn of a
 * known chat (on a clean tree, or on a dirty one with its base snapshot), a turn that ends (with no change, or with
 * its version) — recorded without sql.js, xstate or the full CLI bundle. It appends the journal records the full path
 * would have written (the same statements, built by the same functions in turnRecords.ts) under the same locks,
 * deciding (fastPlans.ts) from the facts file (hookFacts.ts) that describes the exact journal state on disk. Anything
 * else, and any doubt, declines: the caller then runs the full path (runHook.ts) unchanged. Nothing is written before
 * the first append but a dirty begin's base snapshot ref (made by beginTurn's own request), which a declined append
 * deletes again, so a declined event leaves nothing; once the first record is acknowledged nothing declines.
 */
import * as fs from 'node:fs';
import { AvhError } from '../../core/errors';
import { failpoint } from '../../core/failpoints';
import { type OperationSteps, runWithSteps } from '../../core/operations/operationGate';
import { OPERATIONS } from '../../core/operations/operationKinds';
import { readLockHolder } from '../../core/store/pidLock';
import { appendRecordIfUnchanged, journalFileKey, type JournalState } from '../../core/store/journalAppend';
import { processGit } from '../../core/git/gitRunner';
import { guessRepositoryFromFiles, GitRepository, stateDirOf } from '../../core/git/repository';
import { leasePath } from '../../core/git/repositoryLease';
import { inspectHealthDirect, startProbeStatus } from '../../core/git/statusProbe';
import { commitWorkingTree, compareAndSetRef, indexRepairPending, ZERO_OID } from '../../core/git/workingTree';
import { chatFactsOf, readHookFacts, writeHookFacts } from '../../core/turns/hookFacts';
import { endOfChat, mayReEnd } from '../../core/turns/turnDecisions';
import { versionFailureReason } from '../../core/turns/versionCommit';
import { foldTurnWrites } from '../../core/turns/toolWrites';
import { type NoVersionReason, turnVersionStatement } from '../../core/turns/turnRecords';
import { validateBeginTurn } from '../../core/turns/validation';
import { DEFAULT_COMPACT_EVERY } from '../../core/store/storeLayout';
import { parseCommandLine } from '../commandParser';
import { spec as hookSpec } from '../commands/hook';
import type { EarlyProbe } from './earlyProbe';
import {
  decline,
  Decline,
  type MadeRef,
  type Planned,
  type PlannedVersion,
  planBegin,
  planCheckpoint,
  planEnd,
  type Prepared,
} from './fastPlans';
import type { HookEvent } from './hookEvent';
import { HOOK_LEASE_WAIT_MS, hookFolder, HookResult, ignored, parseHookInput } from './hookInput';
import { recordToolEvent } from './toolWriteHook';
import { destructiveCommandOf, guardAnswer } from './checkpointHook';
import type { DestructiveCommand } from './destructiveCommand';

const STORE_LOCK_WAIT_MS = 3000;

export type FastHookAnswer =
  /** `stdout`: what the agent must read instead of the result (a guard's deny answer), printed without --json. */
  { kind: 'done'; result: HookResult; json: boolean; stdout?: string } | { kind: 'declined'; reason: string };
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
    // Test-only (compiled out of the bundles users get): which path each event took, and whether an engine was loaded
    // (in the test build's bundles: whether the full CLI's bundle was).
    const engines = Object.keys(require.cache).filter((m) =>
      /[\\/]node_modules[\\/](sql\.js|simple-git)[\\/]|[\\/]cliMain\.js$/.test(m),
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
  const invocation = await readInvocation(argv, readStdin);
  // What the full path answers too (runHook): an event we do not act on opens nothing and changes nothing.
  if (invocation.event.action.kind === 'ignore')
    return { kind: 'done', result: ignored(invocation.event), json: invocation.json };
  // A tool's written files: one appended line, the same on the full path (toolWriteHook.ts).
  if (invocation.event.action.kind === 'wrote')
    return { kind: 'done', result: recordToolEvent(invocation.event, cwd, invocation.repo), json: invocation.json };
  // A command about to run: most return here at once; a destructive one takes its checkpoint first.
  if (invocation.event.action.kind === 'before-command') {
    const found = destructiveCommandOf(invocation.event);
    if (!found) return { kind: 'done', result: ignored(invocation.event), json: invocation.json };
    const answer = await checkpoint(invocation, found, invocation.event.action.command, cwd);
    if (answer.kind !== 'done' || !invocation.guard || answer.json) return answer;
    const stdout = guardAnswer(invocation.agent, found, answer.result);
    return stdout !== null ? { ...answer, stdout } : answer;
  }
  const prepared = await prepare(invocation, cwd, early);
  const { event, chat } = prepared;
  if (event.action.kind === 'end' && !endOfChat(chat.running)) {
    // An error after a cancel may re-end the chat's latest turn (reEnds): the full path reads it.
    if (mayReEnd(event.action.outcome)) decline('ended-turn');
    // What the full path answers too (endOfChat): a Stop with no running turn.
    return { kind: 'done', result: ignored(event), json: prepared.json };
  }
  const steps = openingSteps(prepared);
  const { action } = event;
  try {
    if (action.kind === 'begin') {
      return await runWithSteps(prepared.repo, OPERATIONS.turnBegin, steps, async (opened) =>
        append(prepared, await planBegin(prepared, action.prompt, opened, action.anchor)),
      );
    }
    if (action.kind === 'end') {
      return await runWithSteps(prepared.repo, OPERATIONS.turnEnd, steps, async () => {
        const planned = await planEnd(prepared, action.outcome);
        return planned.version ? appendThenCommit(prepared, planned, planned.version) : append(prepared, planned);
      });
    }
  } catch (error) {
    // The turn gate refused (a rebase in progress, detached HEAD, …): the full path says why.
    if (error instanceof AvhError && error.details.blocker !== undefined) decline('gate');
    throw error;
  }
  decline('event');
}

/**
 * The full path's opening (operations/operationGate.ts), bound to the facts file and the direct probe: prepare()
 * declined whatever would need settling, so nothing is left to settle under the lease. A dead holder's lease
 * declines: the full open settles what it left.
 */
function openingSteps(prepared: Prepared): OperationSteps {
  const { facts } = prepared;
  if (readLockHolder(leasePath(prepared.repo))?.alive === false) decline('dead-lease');
  return {
    leaseWaitMs: HOOK_LEASE_WAIT_MS,
    refuseRecovery: async () => {
      if (facts.recoveryRequired) decline('unsettled');
    },
    settle: async () => undefined,
    probe: () => inspectHealthDirect(prepared.repo, prepared.status()),
    latchFacts: async () => ({ recoveryRequired: facts.recoveryRequired, restoreInFlight: facts.restoreInFlight }),
    // Left behind, the lease names this process and is stale once it exits; never a reason to record twice.
    releaseFailed: () => undefined,
  };
}

/**
 * A destructive command's checkpoint (issue 34), under the lease of its operation kind as the full path takes it
 * (commandCheckpoints.ts): no running turn, or nothing the command can destroy, records nothing; otherwise the
 * snapshot, then its row appended like any other record. What the gate refuses declines: the full path says why.
 */
async function checkpoint(
  invocation: Invocation,
  found: DestructiveCommand,
  command: string,
  cwd: string,
): Promise<FastHookAnswer> {
  // No early status: the entry did not know this event would need one (a tool event's runs none).
  const prepared = await prepare(invocation, cwd, undefined);
  const { event } = prepared;
  if (prepared.chat.running.length === 0) return { kind: 'done', result: ignored(event), json: prepared.json };
  // Checkpoints of archived turns are pruned by the full path's checkpoint, which has the store (hookFacts.ts).
  if (prepared.facts.checkpointsToPrune > 0) decline('checkpoints-to-prune');
  // The row and the facts' update land before a compaction is due (journalAppend.ts).
  if (prepared.facts.journal.lastSeq + 1 - prepared.facts.journal.baseSeq >= DEFAULT_COMPACT_EVERY)
    decline('compaction-due');
  const steps = openingSteps(prepared);
  try {
    return await runWithSteps(prepared.repo, OPERATIONS.commandCheckpoint, steps, async (opened) => {
      const planned = await planCheckpoint(prepared, found, command, opened);
      if (!planned) return { kind: 'done', result: ignored(event), json: prepared.json };
      return append(prepared, planned);
    });
  } catch (error) {
    if (error instanceof AvhError && error.details.blocker !== undefined) decline('gate');
    throw error;
  }
}

/** The one write: the planned record appended if the journal is still the facts' state, then the facts updated. */
async function append(prepared: Prepared, planned: Planned): Promise<FastHookAnswer> {
  let appended: Awaited<ReturnType<typeof appendRecordIfUnchanged>>;
  try {
    appended = await appendRecordIfUnchanged(
      prepared.repo.stateDir,
      prepared.facts.journal,
      planned.statements,
      STORE_LOCK_WAIT_MS,
    );
  } catch (error) {
    await unmake(prepared.repo, planned.made);
    throw error;
  }
  if (appended.kind !== 'appended') {
    await unmake(prepared.repo, planned.made);
    decline(appended.kind);
  }
  // Acknowledged: from here nothing may decline (the full path would record the event a second time).
  foldEnded(prepared, planned);
  writeFactsAfter(prepared, planned, appended.state);
  return { kind: 'done', result: planned.result, json: prepared.json };
}

/**
 * Each ended turn folds the files its agent reported writing into its own record, as endTurn does after its terminal
 * write (best effort there too: a failure leaves the lines in the chat's file).
 */
function foldEnded(prepared: Prepared, planned: Planned): void {
  for (const turn of planned.ended) {
    try {
      foldTurnWrites(prepared.repo.stateDir, prepared.chatId, turn.id, turn.createdAt);
    } catch {
      // see above
    }
  }
}

/** The facts of the journal state `journal`, the one this event's last record made. */
function writeFactsAfter(prepared: Prepared, planned: Planned, journal: JournalState): void {
  const { facts, chat, chatId } = prepared;
  writeHookFacts(prepared.repo.stateDir, {
    ...facts,
    journal,
    openTurns: facts.openTurns + planned.chat.running.length - chat.running.length,
    chats: { ...facts.chats, [chatId]: planned.chat },
    commitTree: prepared.seen.commitTree ?? facts.commitTree,
  });
}

/**
 * A completed turn's end with a version, in endTurn's write-ahead order: the terminal record ('pending') first; once
 * it is acknowledged, the commit (commitWorkingTree with endTurn's own request), then the version record. From the
 * first append on nothing declines: a commit that fails records its reason as endTurn does, and a version record
 * that cannot be appended (another process wrote the journal meanwhile) leaves the turn 'pending', as a crash there
 * would: the next full open settles it from the commit's Agent-Turn trailer (settlePendingTurns).
 */
async function appendThenCommit(
  prepared: Prepared,
  planned: Planned,
  { turnId, request }: PlannedVersion,
): Promise<FastHookAnswer> {
  const { repo } = prepared;
  const first = await appendRecordIfUnchanged(
    repo.stateDir,
    prepared.facts.journal,
    planned.statements,
    STORE_LOCK_WAIT_MS,
  );
  if (first.kind !== 'appended') decline(first.kind);
  // Acknowledged: from here nothing may decline (the full path would record the event a second time).
  foldEnded(prepared, planned);
  failpoint('turn-end:after-outcome');
  let version: string | null = null;
  let reason: NoVersionReason | null;
  try {
    const made = await commitWorkingTree(repo, request);
    version = made.commit;
    reason = version ? null : 'no-changes';
    // The version is HEAD now: the next event needs no read of its tree.
    if (version && made.commitTree) prepared.seen.commitTree = { commit: version, tree: made.commitTree };
  } catch (error) {
    reason = versionFailureReason(error);
  }
  const second = await appendRecordIfUnchanged(
    repo.stateDir,
    first.state,
    [turnVersionStatement(turnId, version, reason)],
    STORE_LOCK_WAIT_MS,
  ).catch(() => null);
  if (second?.kind === 'appended') writeFactsAfter(prepared, planned, second.state);
  return { kind: 'done', result: { ...planned.result, version }, json: prepared.json };
}

/**
 * The ref a declined event made, deleted by compare-and-set (only while it still names the commit made): the full
 * path then begins the turn from nothing, with its own snapshot. A failure here declines as an error all the same.
 */
async function unmake(repo: GitRepository, made: MadeRef | undefined): Promise<void> {
  if (made?.savedDir) fs.rmSync(made.savedDir, { recursive: true, force: true });
  if (made) await compareAndSetRef(repo, made.ref, ZERO_OID, made.commit, 'agent-versions: declined');
}

interface Invocation {
  /** The hook command's agent (`hook <agent>`). */
  agent: string;
  event: HookEvent;
  json: boolean;
  repo?: string;
  /** --guard-destructive: a destructive command gets the agent's deny answer (checkpointHook.ts guardAnswer). */
  guard: boolean;
}

/** The command line and the event it reads. */
async function readInvocation(argv: readonly string[], readStdin: () => Promise<string>): Promise<Invocation> {
  // The hook command's spec alone parses every `hook …` line as the whole registry does (commandParser.ts).
  const invocation = parseCommandLine(argv, [hookSpec]);
  if (invocation.kind !== 'run' || invocation.command !== 'hook') decline('not-a-hook');
  const { values, args } = invocation;
  if (values.verbose) decline('verbose');
  const event = await parseHookInput({ agent: args[0], payload: args[1], readStdin });
  return {
    agent: args[0],
    event,
    json: values.json === true,
    repo: values.repo,
    guard: values['guard-destructive'] === true,
  };
}

/** Everything decided before the lease: the repository and its facts. */
async function prepare(
  { event, json, repo: repoOption }: Invocation,
  cwd: string,
  early: EarlyProbe | undefined,
): Promise<Prepared> {
  if (event.action.kind === 'begin')
    validateBeginTurn({
      chatId: event.chatId,
      prompt: event.action.prompt,
      agent: event.agent,
      ...(event.action.anchor ? { anchor: event.action.anchor } : {}),
    });
  const found = guessRepositoryFromFiles(hookFolder(cwd, repoOption, event));
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
  // A note waits for this prompt (an Undo changed files since the agent last saw them): the full path prints it.
  if (event.action.kind === 'begin' && chat.notes > 0) decline('note');
  // The early status is this repository's only if it was started in the same root.
  let status = early?.root === repo.root ? early.status : undefined;
  const statusOnce = () => (status ??= startProbeStatus(repo.root, repo.git, undefined, repo.gitDir));
  return { event, json, repo, facts, chatId: event.chatId, chat, status: statusOnce, seen: {} };
}
