import { changeRequest, turnAtLine } from '../blame/blameRequests';
import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import type { RestoreOptions, RestoreResult } from '../restore/restoreRequest';
import { runRestore } from '../restore/restoreService';
import { validateTurnId } from '../turns/validation';

/** Undo of a turn (validated; default the latest not yet undone), `only` one of turn/everything, through the saga. */
export async function undoTurn(
  ctx: RepoContext,
  turnId: unknown,
  options: RestoreOptions & { only?: unknown },
): Promise<RestoreResult> {
  const { only, ...rest } = options;
  if (only !== undefined && only !== 'turn' && only !== 'everything')
    throw new AvhError('invalid-input', "only must be 'turn' or 'everything'.");
  return runRestore(
    ctx,
    { kind: 'undo', ...(turnId === undefined ? {} : { turnId: validateTurnId(turnId) }), ...(only ? { only } : {}) },
    rest,
  );
}

/** Undo This File of a turn (both validated), through the saga. */
export async function undoFile(
  ctx: RepoContext,
  turnId: unknown,
  path: unknown,
  options: RestoreOptions,
): Promise<RestoreResult> {
  if (typeof path !== 'string' || path.length === 0)
    throw new AvhError('invalid-input', 'Undo This File needs the path of a file the turn changed.');
  return runRestore(ctx, { kind: 'undo', turnId: validateTurnId(turnId), path }, options);
}

/** Undo This Change at a line (validated; the turn given, else the line's turn now), through the saga. */
export async function undoChange(
  ctx: RepoContext,
  path: unknown,
  line: unknown,
  options: RestoreOptions & { turnId?: unknown },
): Promise<RestoreResult> {
  const { turnId, ...rest } = options;
  const change = changeRequest(ctx.repo, path, line);
  const turn =
    turnId === undefined ? await turnAtLine(ctx.repo, ctx.store, change.path, change.line) : validateTurnId(turnId);
  return runRestore(ctx, { kind: 'undo', turnId: turn, change }, rest);
}

/** Restore of the working tree to a commit (a non-empty string), through the saga. */
export async function restoreTo(ctx: RepoContext, target: unknown, options: RestoreOptions): Promise<RestoreResult> {
  if (typeof target !== 'string' || target.length === 0)
    throw new AvhError('invalid-input', 'restore needs a commit id.');
  return runRestore(ctx, { kind: 'restore', target }, options);
}
