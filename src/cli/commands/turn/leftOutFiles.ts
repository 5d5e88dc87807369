import type { CommandContext } from '../../command';
import { leftOutMessage, type SecretFinding } from '../../../core/versionHistory';

/**
 * One stderr line per file left out of a version (a likely secret: its name and rule, never its content; nested
 * repositories once).
 */
export function tellLeftOut(c: CommandContext, excluded: readonly SecretFinding[], notice: string | undefined): void {
  for (const f of excluded) c.stderr(`agent-versions: ${leftOutMessage(f.path)} (rule: ${f.rule})\n`);
  if (notice) c.stderr(`agent-versions: ${notice}\n`);
}
