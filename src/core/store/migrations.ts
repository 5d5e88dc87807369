/** Bringing a database to SCHEMA_VERSION, and refusing one written by a newer version (never moved aside). */
import { randomUUID } from 'node:crypto';
import type { Database } from 'sql.js';
import { AvhError } from '../errors';
import { lineage, tableNames, userVersion } from './databaseMeta';
import type { JournalStatement } from './journal';
import type { StoreTx } from './readOnlyGuard';
import { MIGRATIONS, SCHEMA_VERSION } from './schema';

/** Tables each schema version must have: a snapshot lacking one is damaged. */
export const TABLES_BY_VERSION: readonly string[][] = MIGRATIONS.map((statements) =>
  statements.flatMap((sql) => /^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["`]?(\w+)/i.exec(sql)?.[1] ?? []),
);

export function newerSchemaError(version: number): AvhError {
  return new AvhError(
    'store-unavailable',
    `The state database was written by a newer version of Agent Version History (schema ${version}; ` +
      `this version supports ${SCHEMA_VERSION}). Update the extension and CLI.`,
    { schemaVersion: version, supportedVersion: SCHEMA_VERSION },
  );
}

/** A healthy database from a newer version is not ours to read: refuse it (never quarantine it). */
export function assertKnownSchema(db: Database): void {
  const version = userVersion(db);
  if (version > SCHEMA_VERSION) throw newerSchemaError(version);
}

/**
 * Runs each missing migration as one journaled transaction (`runTx` records it, `append` makes it durable).
 * Returns the version migrated from, or null when the database was current.
 */
export function migrate(
  db: Database,
  runTx: (fn: (tx: StoreTx) => void) => { statements: JournalStatement[] },
  append: (statements: JournalStatement[]) => void,
): number | null {
  const from = userVersion(db);
  if (from > SCHEMA_VERSION) throw newerSchemaError(from);
  if (from === SCHEMA_VERSION) return null;
  for (let version = from; version < SCHEMA_VERSION; version++) {
    const { statements } = runTx((tx) => {
      for (const sql of MIGRATIONS[version]) tx.run(sql);
      tx.run(`PRAGMA user_version = ${version + 1}`);
      // Fixed once, as a literal, so every process replays the same id.
      if (lineage(db) === '' && tableNames(db).has('meta')) {
        tx.run("INSERT INTO meta (key, value) VALUES ('lineage', ?)", [randomUUID().replace(/-/g, '')]);
      }
    });
    append(statements);
  }
  return from;
}
