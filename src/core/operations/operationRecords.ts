import { AvhError } from '../errors';
import { RESTORE_IN_PROGRESS_MESSAGE } from './operationLease';
import type { StoreReader, StoreTx } from '../store/durableStore';
import type { OperationKind, OperationStatus, PreservationReason, RestorePhase, UndoScope } from '../store/schema';

/** The durable record of one Undo/Redo/Restore (docs/product-contract.md §5.3), written before each effect. */
export interface OperationRow {
  id: string;
  kind: OperationKind;
  phase: RestorePhase;
  status: OperationStatus;
  turn_id: string | null;
  source_branch: string;
  source_head: string;
  target_commit: string;
  /**
   * 'everything': the commit holds target_commit's tree. 'turn' / 'file': the reverse of the turn (target_commit is its
   * base) or of one path of it.
   */
  scope: UndoScope;
  scope_path: string | null;
  /** Undo This Change: the hunk of the turn (scope 'file', JSON of TurnChange); null for every other restore. */
  scope_change?: string | null;
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
  if (inFlightOperation(tx)) throw new AvhError('restore-in-progress', RESTORE_IN_PROGRESS_MESSAGE);
  tx.run(
    `INSERT INTO operations (id, kind, phase, status, turn_id, source_branch, source_head, target_commit, scope, ` +
      `scope_path, scope_change, preservation, attempts, started_at, updated_at)
          VALUES (?, ?, 'preparing', 'in-flight', ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
    [
      op.id,
      op.kind,
      op.turn_id,
      op.source_branch,
      op.source_head,
      op.target_commit,
      op.scope,
      op.scope_path,
      op.scope_change ?? null,
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

/** Reconciliation takes the operation up again: one more attempt, so a later look knows a new process settled it. */
export function countAttempt(tx: StoreTx, id: string): void {
  tx.run('UPDATE operations SET attempts = attempts + 1 WHERE id = ?', [id]);
}

/** The restore's single store write: turn undone/redone, redo stack, operation completed. Idempotent. */
export function applyTurnStoreMutation(tx: StoreTx, op: OperationRow, restoreCommit: string): void {
  const current = getOperation(tx, op.id);
  if (!current || current.status !== 'in-flight') return;
  const branch = op.source_branch;
  if (op.kind === 'undo') {
    // Undo This File leaves the turn in effect (only one path went back): Redo brings the file back, the turn stays.
    const undoneTurn = op.scope === 'file' ? null : op.turn_id;
    if (undoneTurn) tx.run('UPDATE turns SET undone_by = ? WHERE id = ?', [op.id, undoneTurn]);
    // The redo stack holds consecutive Undos only: one that did not start where the stack's top left the branch
    // (a commit, a turn or a restore came between), or that first saved work made since ([Interrupted]: edits, a
    // running turn's partial work), starts a new stack, so no Redo ever reaches past newer work.
    const top = tx.get<{ result_commit: string }>(
      'SELECT result_commit FROM redo_entries WHERE branch = ? ORDER BY position DESC LIMIT 1',
      [branch],
    );
    if (top && (top.result_commit !== op.source_head || op.preserve_commit))
      tx.run('DELETE FROM redo_entries WHERE branch = ?', [branch]);
    const position =
      (tx.get<{ p: number | null }>('SELECT MAX(position) AS p FROM redo_entries WHERE branch = ?', [branch])?.p ?? 0) +
      1;
    tx.run(
      'INSERT INTO redo_entries (op_id, position, branch, result_commit, redo_target, turn_id) VALUES (?, ?, ?, ' +
        '?, ?, ?)',
      [op.id, position, branch, restoreCommit, op.preserve_commit ?? op.source_head, undoneTurn],
    );
  } else if (op.kind === 'redo') {
    markPartialTurnUndone(tx, op);
    const top = tx.get<{ op_id: string; turn_id: string | null }>(
      'SELECT op_id, turn_id FROM redo_entries WHERE branch = ? ORDER BY position DESC LIMIT 1',
      [branch],
    );
    if (top) {
      tx.run('DELETE FROM redo_entries WHERE op_id = ?', [top.op_id]);
      if (top.turn_id) tx.run('UPDATE turns SET undone_by = NULL WHERE id = ?', [top.turn_id]);
      // The next undo down the stack now starts from this redo's result (same tree as that undo left).
      tx.run(
        'UPDATE redo_entries SET result_commit = ? WHERE branch = ? AND position = (SELECT MAX(position) FROM ' +
          'redo_entries WHERE branch = ?)',
        [restoreCommit, branch, branch],
      );
    }
  } else {
    markPartialTurnUndone(tx, op);
    tx.run('DELETE FROM redo_entries WHERE branch = ?', [branch]);
  }
  tx.run("UPDATE operations SET phase = 'completed', status = 'completed', updated_at = ? WHERE id = ?", [
    Date.now(),
    op.id,
  ]);
}

/**
 * A Redo or Restore that saved a stopped (or running) turn's partial work as `[Interrupted]` took that work away as
 * an Undo of the turn would: the turn is undone by it, so the next Undo does not aim at it again.
 */
function markPartialTurnUndone(tx: StoreTx, op: OperationRow): void {
  if (op.turn_id && op.preserve_commit)
    tx.run('UPDATE turns SET undone_by = ? WHERE id = ? AND undone_by IS NULL', [op.id, op.turn_id]);
}
