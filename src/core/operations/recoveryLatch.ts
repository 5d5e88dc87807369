import { AvhError } from '../errors';
import { RECOVERY_REQUIRED_MESSAGE } from '../git/repositoryGate';
import type { DurableStore, StoreReader, StoreTx } from '../store/durableStore';

/** The persisted "recovery required" latch (docs/design/recovery.md): set when a restore's outcome is ambiguous. */
export interface RecoveryLatch {
  generation: number;
  operationId: string | null;
  reason: string;
  lastPhase: string | null;
  createdAt: number;
}

interface RecoveryRow {
  generation: number;
  operation_id: string | null;
  reason: string;
  last_phase: string | null;
  created_at: number;
}

export function readRecovery(r: StoreReader | StoreTx): RecoveryLatch | null {
  const row = r.get<RecoveryRow>('SELECT * FROM recovery WHERE id = 1');
  return row
    ? {
        generation: row.generation,
        operationId: row.operation_id,
        reason: row.reason,
        lastPhase: row.last_phase,
        createdAt: row.created_at,
      }
    : null;
}

/** Sets (or renews) the latch; each setting gets a new generation so a stale acceptance cannot clear it. */
export function setRecovery(
  tx: StoreTx,
  operationId: string | null,
  reason: string,
  lastPhase: string | null,
  now: number,
): number {
  const previous =
    tx.get<{ g: number | null }>("SELECT CAST(value AS INTEGER) AS g FROM meta WHERE key = 'recovery_generation'")?.g ??
    0;
  const generation = previous + 1;
  tx.run(
    "INSERT INTO meta (key, value) VALUES ('recovery_generation', ?) ON CONFLICT(key) DO UPDATE SET value = " +
      'excluded.value',
    [String(generation)],
  );
  tx.run(
    `INSERT INTO recovery (id, generation, operation_id, reason, last_phase, created_at) VALUES (1, ?, ?, ?, ?, ?)
          ON CONFLICT(id) DO UPDATE SET generation = excluded.generation, operation_id = excluded.operation_id,
          reason = excluded.reason, last_phase = excluded.last_phase, created_at = excluded.created_at`,
    [generation, operationId, reason, lastPhase, now],
  );
  return generation;
}

/** Clears the latch only if it is still the generation the caller validated; returns whether it did. */
export function clearRecovery(tx: StoreTx, generation: number): boolean {
  const current = readRecovery(tx);
  if (!current || current.generation !== generation) return false;
  tx.run('DELETE FROM recovery WHERE id = 1');
  return true;
}

export { RECOVERY_REQUIRED_MESSAGE };

/** Throws the recovery-required error when the latch is set. */
export async function assertNoRecovery(store: DurableStore): Promise<void> {
  const latch = await store.read((r) => readRecovery(r));
  if (latch) throw new AvhError('recovery-required', RECOVERY_REQUIRED_MESSAGE, { operation: latch.operationId });
}
