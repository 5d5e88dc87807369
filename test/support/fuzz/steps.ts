import { RESTORE_CRASH_POINTS } from '../crashSweep';
import { describeEdit, drawEdit, Edit } from './edits';
import type { Prng } from './prng';
import type { Snapshot } from './snapshot';

export type Chat = 'A' | 'B';
export type Outcome = 'completed' | 'cancelled' | 'errored';
export type RestoreOp = 'undo' | 'redo' | 'restore';

/**
 * One step of a run, as data: a failing run prints its list, and a shorter list replays (turns are named by their
 * place in the run, `turn #k`, so a list with steps taken out still means something).
 */
export type Step =
  | { kind: 'edit'; who: 'user' | 'agent'; edit: Edit }
  | { kind: 'commit' }
  | { kind: 'begin'; chat: Chat }
  | { kind: 'end'; chat: Chat; outcome: Outcome }
  | { kind: 'undo'; yes: boolean }
  | { kind: 'undoOnly'; turn: number; yes: boolean }
  | { kind: 'undoFile'; turn: number; path: string; yes: boolean }
  | { kind: 'redo' }
  | { kind: 'restore'; back: number; yes: boolean }
  | { kind: 'kill'; op: RestoreOp; back: number; point: string; resolve: 'accept' | 'save-and-accept' }
  | { kind: 'status' };

/** What the generator needs to know of the run so far. */
export interface GeneratorView {
  tree: Snapshot;
  running: ReadonlySet<Chat>;
  /** Turns that made a version, with the paths they changed (non-ignored), by their number in the run. */
  versions: readonly { turn: number; changed: readonly string[] }[];
  /** The last step undid something that Redo can bring back. */
  redoable: boolean;
}

/** Every crash point of the saga: its phase boundaries, the steps inside its effects, and git killed mid-command. */
const KILL_POINTS = RESTORE_CRASH_POINTS;

export function drawStep(r: Prng, v: GeneratorView): Step {
  const anyRunning = v.running.size > 0;
  const idle: Chat[] = (['A', 'B'] as Chat[]).filter((c) => !v.running.has(c));
  const kind = r.weighted<Step['kind'] | 'agentEdit'>({
    edit: anyRunning ? 1.5 : 4,
    agentEdit: anyRunning ? 5 : 0,
    commit: 1,
    // A second chat starts while the first runs now and then (overlapping turns).
    begin: idle.length === 0 ? 0 : anyRunning ? 0.6 : 3,
    end: anyRunning ? 3.5 : 0,
    undo: 1.6,
    undoOnly: v.versions.length > 0 ? 0.6 : 0,
    undoFile: v.versions.some((t) => t.changed.length > 0) ? 0.6 : 0,
    redo: v.redoable ? 2.5 : 0.4,
    restore: 0.6,
    kill: 0.5,
    status: 0.2,
  });
  switch (kind) {
    case 'edit':
      return { kind, who: 'user', edit: drawEdit(r, v.tree) };
    case 'agentEdit':
      return { kind: 'edit', who: 'agent', edit: drawEdit(r, v.tree) };
    case 'begin':
      return { kind, chat: r.pick(idle) };
    case 'end':
      return {
        kind,
        chat: r.pick([...v.running].sort()),
        outcome: r.weighted<Outcome>({ completed: 6, cancelled: 2, errored: 1 }),
      };
    case 'undo':
      return { kind, yes: r.chance(0.5) };
    case 'undoOnly':
      return { kind, turn: r.pick(v.versions).turn, yes: r.chance(0.5) };
    case 'undoFile': {
      const t = r.pick(v.versions.filter((x) => x.changed.length > 0));
      return { kind, turn: t.turn, path: r.pick(t.changed), yes: r.chance(0.5) };
    }
    case 'restore':
      return { kind, back: 1 + r.int(6), yes: r.chance(0.5) };
    case 'kill':
      return {
        kind,
        op: r.pick<RestoreOp>(['undo', 'redo', 'restore']),
        back: 1 + r.int(4),
        point: r.pick(KILL_POINTS),
        resolve: r.chance(0.5) ? 'accept' : 'save-and-accept',
      };
    default:
      return { kind };
  }
}

export function describeStep(s: Step): string {
  switch (s.kind) {
    case 'edit':
      return `${s.who} ${describeEdit(s.edit)}`;
    case 'commit':
      return 'user commits everything (git add -A; git commit)';
    case 'begin':
      return `turn begin in chat ${s.chat}`;
    case 'end':
      return `turn end in chat ${s.chat}: ${s.outcome}`;
    case 'undo':
      return `undo${s.yes ? ' --yes' : ''}`;
    case 'undoOnly':
      return `undo --turn <turn #${s.turn}> --only turn${s.yes ? ' --yes' : ''}`;
    case 'undoFile':
      return `undo-file ${JSON.stringify(s.path)} --turn <turn #${s.turn}>${s.yes ? ' --yes' : ''}`;
    case 'redo':
      return 'redo';
    case 'restore':
      return `restore HEAD~${s.back} (first parent)${s.yes ? ' --yes' : ''}`;
    case 'kill':
      return `${s.op === 'restore' ? `restore HEAD~${s.back}` : s.op} SIGKILLed at ${s.point}, then status (recover ${s.resolve})`;
    case 'status':
      return 'status';
  }
}
