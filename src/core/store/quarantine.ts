/**
 * Moving damaged state aside (never deleting it) so a fresh database can take its place, and removing temps a
 * crashed compaction left. Only proven damage (StoreDamage) gets here; a file that merely could not be read
 * is reported instead (storeFiles.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../errors';
import { fsyncDirectory } from './atomicWrite';
import { errnoCode, type StoreDamage } from './storeFiles';

/** Temps belong to compactions; the caller holds the lock, so any that exist were left by a crash. */
export function removeLeftoverTemps(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (/^state\.(sqlite|journal|archive\.sqlite)\.tmp-\d+$/.test(name))
      fs.rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * Renames each existing file to `<file>.corrupt-<time>` under one timestamp; returns the last one moved (the snapshot
 * if it existed).
 */
export function moveAside(dir: string, files: readonly string[], damage: StoreDamage): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  let suffix = `corrupt-${stamp}`;
  for (let n = 1; files.some((file) => fs.existsSync(`${file}.${suffix}`)); n++) suffix = `corrupt-${stamp}-${n}`;
  let movedTo = '';
  for (const file of files) {
    if (!fs.existsSync(file)) continue;
    try {
      fs.renameSync(file, `${file}.${suffix}`);
    } catch (error) {
      throw new AvhError(
        'store-unavailable',
        `The state database is damaged and could not be moved aside (${errnoCode(error)})`,
        {
          reason: damage.reason,
        },
      );
    }
    movedTo = `${file}.${suffix}`;
  }
  fsyncDirectory(dir);
  return movedTo;
}
