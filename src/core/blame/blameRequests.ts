import { AvhError } from '../errors';
import type { GitRepository } from '../git/repository';
import type { DurableStore } from '../store/durableStore';
import { treeChanges } from '../git/worktreeUpdate';
import { getTurn } from '../turns/turnRecords';
import { lineAt, linesOwnedBy } from './attributionCache';
import { storeFacts } from './attributionFacts';
import { attributeFile, type FileAttribution, repositoryPath } from './lineAttribution';

/**
 * What the façade (VersionHistory) takes from outside for attribution and Undo This Change, checked before it reaches
 * the core, and the pane's "lines it still owns". No vscode: the CLI and the extension share it.
 */

/** What a caller may ask attribution for besides the path. */
export interface AttributeOptions {
  /** A commit (any name git resolves); absent: the working tree copy. */
  rev?: unknown;
  /** An editor's unsaved text of the file (working tree mode only). */
  contents?: unknown;
  signal?: AbortSignal;
}

const MAX_PATH = 4096;

function validPath(path: unknown, what: string): string {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_PATH || path.includes('\0'))
    throw new AvhError('invalid-input', `${what} needs the path of a file in this repository.`);
  return path;
}

/** The attribution request the core runs, from a caller's path and options (refused clearly when malformed). */
export function attributionRequest(
  path: unknown,
  options: AttributeOptions,
): { path: string; rev?: string; contents?: string | Buffer; signal?: AbortSignal } {
  const file = validPath(path, 'Attribution');
  const { rev, contents, signal } = options;
  if (rev !== undefined && (typeof rev !== 'string' || rev.length === 0))
    throw new AvhError('invalid-input', '--rev needs a commit id or name.');
  if (contents !== undefined && typeof contents !== 'string' && !Buffer.isBuffer(contents))
    throw new AvhError('invalid-input', 'The text to attribute must be a string.');
  if (rev !== undefined && contents !== undefined)
    throw new AvhError('invalid-input', 'The text of an editor is attributed on the working tree, not on a commit.');
  return {
    path: file,
    ...(rev !== undefined ? { rev: rev as string } : {}),
    ...(contents !== undefined ? { contents: contents as string | Buffer } : {}),
    ...(signal ? { signal } : {}),
  };
}

/** Undo This Change's line: a repository-relative path (refused outside the repository) and a 1-based line. */
export function changeRequest(repo: GitRepository, path: unknown, line: unknown): { path: string; line: number } {
  const file = repositoryPath(repo, validPath(path, 'Undo This Change'));
  const n = typeof line === 'string' && /^\d{1,9}$/.test(line) ? Number(line) : line;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
    throw new AvhError('invalid-input', 'Undo This Change needs a line number (1 or more).');
  return { path: file, line: n };
}

/**
 * The turn whose lines include `line` of the working tree copy of `path`, for Undo This Change without a turn named
 * (the CLI): refused ('not-a-turn-change') for a line no turn wrote. Read-only.
 */
export async function turnAtLine(repo: GitRepository, store: DurableStore, path: string, line: number) {
  const attribution = await attributeFile({ repo, path, facts: storeFacts(store) });
  const range = lineAt(attribution, line);
  if (!range?.turn)
    throw new AvhError(
      'not-a-turn-change',
      line > attribution.lineCount
        ? `${attribution.path} has ${attribution.lineCount} line${attribution.lineCount === 1 ? '' : 's'}.`
        : 'No agent turn wrote this line, so there is no change of a turn to undo.',
    );
  return range.turn.id;
}

/** The pane's "lines it still owns": how many lines of the working tree each file holds that the turn wrote. */
export interface OwnedLines {
  turnId: string;
  lines: number;
  /** Each file with lines of the turn: how many, and the first of them (1-based). */
  files: { path: string; lines: number; first: number }[];
  /** Files the turn changed that are not in the working tree any more (deleted, or renamed later). */
  gone: number;
}

/**
 * The lines `turnId` still owns in the working tree: each file its version changed (against its base snapshot, so
 * the user's pre-turn edits are not counted) attributed as it is now. One blame per file. Read-only.
 */
export async function ownedLines(repo: GitRepository, store: DurableStore, turnId: string): Promise<OwnedLines> {
  const turn = await store.read((r) => getTurn(r, turnId), { history: true });
  if (!turn) throw new AvhError('turn-unknown', 'No turn with this id exists in this repository.');
  if (!turn.version_commit || !turn.base_commit) return { turnId, lines: 0, files: [], gone: 0 };
  const changed = (await treeChanges(repo, turn.base_commit, turn.version_commit)).filter((c) => c.oid !== null);
  const facts = storeFacts(store);
  const attributions: FileAttribution[] = [];
  let gone = 0;
  for (const change of changed) {
    try {
      attributions.push(await attributeFile({ repo, path: change.path, facts }));
    } catch (error) {
      if (!(error instanceof AvhError) || (error.reason !== 'no-such-file' && error.reason !== 'binary-file'))
        throw error;
      if (error.reason === 'no-such-file') gone++;
    }
  }
  return { turnId, ...linesOwnedBy(turnId, attributions), gone };
}
