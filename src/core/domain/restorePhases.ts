/**
 * The restore saga's phases (docs/design/restore-saga.md), in order: the one registry the store's phase list
 * (schema.ts), the machine (restoreMachine.ts), the crash points (failpoints), the disposition's ordinals
 * (disposition.ts) and the fault suites' crash sweep (test/support/crashSweep.ts) are all derived from. Adding a phase
 * here adds it to each of them; its effect is then required by the saga (sagaPhases.ts) at compile time. Pure data: the
 * store imports it, and no crash point's name is spelled here (they ship in no production bundle: failpoints.ts).
 */

/** One phase: its persisted name and, when it runs an effect, the machine state and the promise actor it invokes. */
export interface PhaseDeclaration {
  readonly name: string;
  /**
   * How the phase reaches the store before its effect runs: 'always' (write-ahead: a crash after it means something
   * else, see disposition.ts), 'with-commits' (only together with a commit the previous effect produced), 'with-effect'
   * (the effect is itself one store transaction that records it) or 'none' (no effect of its own).
   */
  readonly writeAhead: 'always' | 'with-commits' | 'with-effect' | 'none';
  /** The machine state that runs the effect, and the named promise actor (tests swap it with `.provide()`). */
  readonly run?: { readonly state: string; readonly effect: string };
  /** The machine context field the effect's output sets. */
  readonly output?: 'preserved' | 'restoreCommit';
  /** Entered only when the guard holds (otherwise the machine goes on to the next phase). */
  readonly onlyWhen?: 'needsPreserve';
  /** A roll-forward may resume here (the disposition's `resume`). */
  readonly resumable?: boolean;
  /** Crash points inside the effect, besides `<name>:before` and `<name>:after`. */
  readonly steps?: readonly string[];
  /** Crash points inside the effect of an Undo that keeps later work only. */
  readonly keepsLaterSteps?: readonly string[];
  /** git commands the crash sweep kills while they run inside this phase. */
  readonly killedDuring?: readonly string[];
  /** The crash points at the phase's boundaries: both for a phase with an effect, else none unless named here. */
  readonly boundaries?: readonly ('before' | 'after')[];
}

export const RESTORE_PHASE_REGISTRY = [
  // Admission: the operation row is written in this phase (admitOperation); nothing has happened yet.
  { name: 'preparing', writeAhead: 'none', boundaries: ['after'] },
  {
    name: 'preflight',
    writeAhead: 'with-commits',
    run: { state: 'preflight', effect: 'preflight' },
  },
  // The first specification's phase for checking out the turn's branch: an Undo of a turn on another branch is refused
  // instead, so it never runs (docs/product-contract.md §5.3); it stays in the store's list of phases.
  { name: 'checkout-branch', writeAhead: 'none' },
  {
    name: 'preserve-dirty-tree',
    writeAhead: 'always',
    run: { state: 'preserving', effect: 'preserveDirtyTree' },
    output: 'preserved',
    onlyWhen: 'needsPreserve',
    // Not `commit-tree`: nothing makes it slow enough to land a kill inside it, and its one object write is atomic
    // (temp file + rename), so a kill there equals the crash points around it (after-write-tree / after-commit).
    steps: ['after-write-tree', 'after-commit', 'after-update-ref'],
    killedDuring: ['add'],
  },
  {
    name: 'write-restore-commit',
    writeAhead: 'with-commits',
    run: { state: 'writingRestoreCommit', effect: 'writeRestoreCommit' },
    output: 'restoreCommit',
  },
  {
    name: 'update-worktree',
    writeAhead: 'always',
    run: { state: 'updatingWorktree', effect: 'updateWorktree' },
    resumable: true,
    keepsLaterSteps: ['branch-moved'],
    killedDuring: ['read-tree'],
  },
  {
    name: 'update-branch',
    writeAhead: 'with-commits',
    run: { state: 'updatingBranch', effect: 'updateBranch' },
    resumable: true,
    killedDuring: ['update-ref'],
  },
  {
    name: 'turn-store-mutation',
    writeAhead: 'with-effect',
    run: { state: 'mutatingStore', effect: 'mutateTurnStore' },
    resumable: true,
  },
  { name: 'completed', writeAhead: 'none' },
] as const satisfies readonly PhaseDeclaration[];

type Registered = (typeof RESTORE_PHASE_REGISTRY)[number];

export type RestorePhase = Registered['name'];

/** Restore phases in order (docs/design/restore-saga.md); the schema's CHECK list and the disposition's ordinals. */
export const RESTORE_PHASES: readonly RestorePhase[] = RESTORE_PHASE_REGISTRY.map((p) => p.name);

/** A phase that runs an effect in the machine. */
export type EffectPhase = Extract<Registered, { run: object }>;
export type EffectPhaseName = EffectPhase['name'];
/** The phases a roll-forward may resume at. */
export type ResumablePhase = Extract<Registered, { resumable: true }>['name'];

export const EFFECT_PHASES: readonly EffectPhase[] = RESTORE_PHASE_REGISTRY.filter((p): p is EffectPhase => 'run' in p);
