import { AvhError } from '../errors';
import type { StoreReader, StoreTx } from '../store/durableStore';
import type { OperationKind, OperationStatus, PreservationReason, RestorePhase, UndoScope } from '../store/schema';

/** The durable record of one Undo/Redo/Restore (SPEC §5.3), written before each effect. */
export interface OperationRow {
  id: string;
  kind: OperationKind;
  phase: RestorePhase;
  status: OperationStatus;
  turn_id: string | null;
  source_branch: string;
  source_head: string;
  target_commit: string;
  /** 'everything': the commit holds target_commit's tree. 'turn' / 'file': the reverse of the turn (target_commit is its base) or of one path of it. */
  scope: UndoScope;
  scope_path: string | null;
  preservation: PreservationReason;
  preserve_commit: string | null;
  restore_commit: string | null;
  attempts: number;
  last_error: string | null;
  started_at: number;
  updated_at: number;
}

export function inFlightOperation(r: StoreReader | StoreTx): OperationRow | undefined {
  return r.get<OperationRow>("SELECT * FROM operations WHERE status = 'in-flight'");
}

/** The most recently started operation that is no longer in flight (completed, failed, rolled back or latched). */
export function latestSettledOperation(r: StoreReader | StoreTx): OperationRow | undefined {
  return r.get<OperationRow>("SELECT * FROM operations WHERE status <> 'in-flight' ORDER BY started_at DESC LIMIT 1");
}

export function getOperation(r: StoreReader | StoreTx, id: string): OperationRow | undefined {
  return r.get<OperationRow>('SELECT * FROM operations WHERE id = ?', [id]);
}

/** Admission: compare-and-set on "no operation in flight" (a unique partial index backs it up). */
export function admitOperation(
  tx: StoreTx,
  op: Omit<
    OperationRow,
    'phase' | 'status' | 'attempts' | 'last_error' | 'updated_at' | 'preserve_commit' | 'restore_commit'
  >,
): void {
  if (inFlightOperation(tx))
    throw new AvhError(
      'restore-in-progress',
      'Another restore is in progress for this repository. Wait for it to finish, then try again.',
    );
  tx.run(
    `INSERT INTO operations (id, kind, phase, status, turn_id, source_branch, source_head, target_commit, scope, scope_path, preservation, attempts, started_at, updated_at)
          VALUES (?, ?, 'preparing', 'in-flight', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
    [
      op.id,
      op.kind,
      op.turn_id,
      op.source_branch,
      op.source_head,
      op.target_commit,
      op.scope,
      op.scope_path,
      op.preservation,
      op.started_at,
      op.started_at,
    ],
  );
}

export function setPhase(tx: StoreTx, id: string, phase: RestorePhase): void {
  tx.run('UPDATE operations SET phase = ?, updated_at = ? WHERE id = ?', [phase, Date.now(), id]);
}

export function recordCommits(
  tx: StoreTx,
  id: string,
  commits: { preserve_commit?: string; restore_commit?: string },
): void {
  if (commits.preserve_commit)
    tx.run('UPDATE operations SET preserve_commit = ? WHERE id = ?', [commits.preserve_commit, id]);
  if (commits.restore_commit)
    tx.run('UPDATE operations SET restore_commit = ? WHERE id = ?', [commits.restore_commit, id]);
}

export function finishOperation(
  tx: StoreTx,
  id: string,
  status: Exclude<OperationStatus, 'in-flight'>,
  lastError: string | null = null,
): void {
  tx.run('UPDATE operations SET status = ?, last_error = COALESCE(?, last_error), updated_at = ? WHERE id = ?', [
    status,
    lastError,
    Date.now(),
    id,
  ]);
}
