import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../core/errors';
import { leftOutMessage } from '../core/secrets/secretChoices';
import type { SecretFinding } from '../core/secrets/secretScanner';
import type { RestoreResult } from '../core/restore/restoreService';
import type { VersionHistory } from '../core/versionHistory';
import type { CommandName, OptionValues } from './commandLine';
import { restoreJson, restoreText, statusText, versionsTable } from './output';
import { runChatCommand } from './chatCommands';
import { runRecoverCommand } from './recoverCommand';

/** The commands that act on one repository's history. Arguments arrive validated by commandLine.ts. */

export interface CommandOutput {
  json: unknown;
  /** What a person sees; undefined prints nothing (a hook's stdout reaches the agent). */
  text?: string;
  exitCode?: number;
}

export interface CommandContext {
  history: VersionHistory;
  args: readonly string[];
  values: OptionValues;
  readStdin: () => Promise<string>;
  cwd: string;
  stderr: (text: string) => void;
}

export async function runRepositoryCommand(command: CommandName, c: CommandContext): Promise<CommandOutput> {
  const { history, values } = c;
  switch (command) {
    case 'turn begin': {
      const prompt =
        values['prompt-file'] !== undefined ? await readPromptFile(values['prompt-file'], c) : (values.prompt ?? '');
      const { turnId, excluded, notice } = await history.beginTurn({
        chatId: values.chat,
        prompt,
        ...(values.agent ? { agent: values.agent } : {}),
        ...(values.title ? { chatTitle: values.title } : {}),
        ...(values['base-branch'] ? { baseBranch: values['base-branch'] } : {}),
      });
      tellLeftOut(c, excluded, notice);
      return { json: { turnId }, text: turnId };
    }
    case 'turn end': {
      const r = await history.endTurn(c.args[0], values.outcome);
      if (r.message) c.stderr(`agent-versions: ${r.message}\n`);
      tellLeftOut(c, r.excluded, r.notice);
      return {
        json: {
          turnId: r.turnId,
          outcome: r.outcome,
          version: r.version,
          excluded: r.excluded.map((f) => ({ path: f.path, reason: f.rule })),
        },
        text: r.version
          ? `${r.outcome}: version ${r.version.slice(0, 12)}`
          : `${r.outcome}: no version${r.reason ? ` (${r.reason})` : ''}`,
      };
    }
    case 'versions': {
      const versions = await history.getVersions(values.limit === undefined ? 50 : Number(values.limit));
      return { json: versions, text: versionsTable(versions) };
    }
    case 'status': {
      const s = await history.status();
      return { json: s, text: statusText(s) };
    }
    case 'undo':
    case 'undo-file':
    case 'redo':
    case 'restore': {
      // --only everything is the choice itself: it confirms taking later work away, as --yes does.
      const options = { confirmUserCommits: values.yes === true || values.only === 'everything' };
      try {
        const r =
          command === 'undo'
            ? await history.undo(values.turn, { ...options, ...(values.only ? { only: values.only } : {}) })
            : command === 'undo-file'
              ? await history.undoFile(values.turn, c.args[0], options)
              : command === 'redo'
                ? await history.redo(options)
                : await history.restore(c.args[0], options);
        if (r.notice) c.stderr(`agent-versions: ${r.notice}\n`);
        return { json: { ...restoreJson(r), ...(r.scope ? { scope: r.scope } : {}) }, text: undoText(r) };
      } catch (error) {
        if (error instanceof AvhError && error.reason === 'confirmation-required') {
          const how =
            error.details.choice === true
              ? ' Run again with --only turn or --only everything;'
              : ' Run again with --yes to continue;';
          throw new AvhError(
            'confirmation-required',
            error.message
              .replace(/ Choose (.*?)\. Nothing was changed\.$/, ' Choose $1.' + how + ' nothing was changed.')
              .replace(/ Confirm to continue;/, how),
            error.details,
          );
        }
        throw error;
      }
    }
    case 'recover': {
      const r = await runRecoverCommand(history, c.args[0], values.json === true);
      return { json: r.json, text: r.text, exitCode: r.exitCode };
    }
    case 'chat status':
    case 'chat continue-on-new-branch':
    case 'chat restore-branch':
      return runChatCommand(command, c);
    default:
      throw new Error(`not a repository command: ${command}`);
  }
}

/** restoreText, naming what an Undo that keeps later work took back. */
function undoText(r: RestoreResult): string {
  if (r.result !== 'restored' || !r.scope || r.scope === 'everything') return restoreText(r);
  const what =
    r.scope === 'file'
      ? 'Put the file back to its pre-turn content'
      : 'Undid only this turn’s changes (later work kept)';
  return `${what} as ${r.restoreCommit?.slice(0, 10)}.${r.preserved ? ` Your uncommitted changes were saved first (${r.preserved.slice(0, 10)}).` : ''}`;
}

/** One stderr line per file left out of a version (a likely secret: its name and rule, never its content; nested repositories once). */
function tellLeftOut(c: CommandContext, excluded: readonly SecretFinding[], notice: string | undefined): void {
  for (const f of excluded) c.stderr(`agent-versions: ${leftOutMessage(f.path)} (rule: ${f.rule})\n`);
  if (notice) c.stderr(`agent-versions: ${notice}\n`);
}

async function readPromptFile(file: string, c: CommandContext): Promise<string> {
  if (file === '-') return c.readStdin();
  try {
    return fs.readFileSync(path.resolve(c.cwd, file), 'utf8');
  } catch {
    throw new AvhError('invalid-input', 'The --prompt-file could not be read.');
  }
}
