// The Version History view's message protocol, declared once and imported by the extension host
// (src/vscode/historyView.ts) and the webview (webview/). No vscode, no DOM: plain data and valibot schemas.
//
// - Commands (webview → host, no reply): `ready` (the handshake), `openReadme`.
// - Requests (webview → host, carry an `id`, get exactly one `reply` or `error` with that id).
// - Notifications (host → webview): the whole view model on every change, and the busy state.
// The host validates every inbound message with WEBVIEW_MESSAGE and ignores anything else; the webview
// validates host messages with HOST_MESSAGE the same way (a stray postMessage must not break the page).
import * as v from 'valibot';
import type { VersionRow, VersionsView } from './viewModels';

/** A full SHA-1 or SHA-256 commit id. */
export const FULL_OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const OID = v.pipe(v.string(), v.regex(FULL_OID, 'a full commit id'));
const TURN_ID = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const CHAT_ID = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const REQUEST_ID = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));

export const README_SECTIONS = ['extension-api', 'claude-code-hooks'] as const;
export type ReadmeSection = (typeof README_SECTIONS)[number];

/** Everything the webview may send; strict objects, so unknown keys make a message malformed. */
export const WEBVIEW_MESSAGE = v.variant('type', [
  v.strictObject({ type: v.literal('ready'), protocol: v.literal(1) }),
  v.strictObject({ type: v.literal('openReadme'), section: v.picklist(README_SECTIONS) }),
  v.strictObject({ type: v.literal('showChanges'), id: REQUEST_ID, oid: OID }),
  v.strictObject({ type: v.literal('undo'), id: REQUEST_ID, turnId: TURN_ID }),
  v.strictObject({ type: v.literal('redo'), id: REQUEST_ID }),
  v.strictObject({ type: v.literal('restore'), id: REQUEST_ID, oid: OID }),
  v.strictObject({ type: v.literal('loadMore'), id: REQUEST_ID }),
  // Branch loss (SPEC §7): each acts on one chat the view showed; the core re-checks before anything changes.
  v.strictObject({ type: v.literal('continueOnNewBranch'), id: REQUEST_ID, chatId: CHAT_ID }),
  v.strictObject({ type: v.literal('restoreChatBranch'), id: REQUEST_ID, chatId: CHAT_ID }),
  v.strictObject({ type: v.literal('checkBranchesAgain'), id: REQUEST_ID }),
]);
export type WebviewMessage = v.InferOutput<typeof WEBVIEW_MESSAGE>;
export type WebviewRequest = Extract<WebviewMessage, { id: number }>;
export type WebviewCommand = Exclude<WebviewMessage, { id: number }>;
/** A request as the webview builds it (the client adds the id). */
export type WebviewRequestBody = WebviewRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

/**
 * Messages are plain objects (postMessage's structured clone makes them so); one with another prototype is
 * refused before validation, since a schema would also read keys it inherits.
 */
function isPlainObject(raw: unknown): raw is Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null) return false;
  const proto = Object.getPrototypeOf(raw) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Parses one inbound webview message; undefined for anything malformed or unknown. */
export function parseWebviewMessage(raw: unknown): WebviewMessage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const result = v.safeParse(WEBVIEW_MESSAGE, raw);
  return result.success ? result.output : undefined;
}

const KIND = v.picklist(['agent', 'interrupted', 'recovery', 'restore', 'user']);
const OUTCOME = v.picklist(['completed', 'cancelled', 'errored']);
const NULLABLE_STRING = v.nullable(v.string());
const BRANCH_STATE = v.picklist(['lost', 'on-remote', 'unknown']);

/** One row; the webview validates rows lazily as they scroll into view, so a notification costs the same at 100 or 10,000 rows. */
export const VERSION_ROW = v.object({
  oid: v.string(),
  label: v.string(),
  kind: KIND,
  time: v.number(),
  filesChanged: v.number(),
  insertions: v.number(),
  deletions: v.number(),
  turn: v.nullable(
    v.object({
      id: v.string(),
      chatId: v.string(),
      chatTitle: NULLABLE_STRING,
      agent: NULLABLE_STRING,
      outcome: v.nullable(OUTCOME),
      undone: v.boolean(),
      canUndo: v.boolean(),
      chatIndex: v.number(),
      chatBranch: v.optional(BRANCH_STATE),
    }),
  ),
  isHead: v.boolean(),
});

const BRANCH_NOTICES = v.object({
  warnings: v.array(
    v.object({
      chatId: v.string(),
      chatTitle: NULLABLE_STRING,
      oldBranch: v.string(),
      newBranch: v.string(),
      baseBranch: v.string(),
      repository: v.string(),
      at: v.number(),
    }),
  ),
  chats: v.array(
    v.object({
      chatId: v.string(),
      chatTitle: NULLABLE_STRING,
      branch: v.string(),
      state: BRANCH_STATE,
      message: v.string(),
      canContinue: v.boolean(),
    }),
  ),
});

const VERSIONS_VIEW = v.variant('kind', [
  v.object({ kind: v.literal('loading') }),
  v.object({ kind: v.literal('no-repository') }),
  v.object({ kind: v.literal('blocked'), message: v.string() }),
  v.object({ kind: v.literal('empty'), branch: NULLABLE_STRING, notices: v.optional(BRANCH_NOTICES) }),
  v.object({
    kind: v.literal('versions'),
    branch: NULLABLE_STRING,
    // Checked as an array only: each row is validated when it first renders (parseVersionRow), so no pass over all rows.
    rows: v.custom<unknown[]>((input) => Array.isArray(input), 'rows must be an array'),
    hasMore: v.boolean(),
    canRedo: v.boolean(),
    hasTurns: v.boolean(),
    notices: v.optional(BRANCH_NOTICES),
  }),
]);

export const HOST_MESSAGE = v.variant('type', [
  v.object({ type: v.literal('didChangeVersions'), view: VERSIONS_VIEW }),
  v.object({ type: v.literal('didChangeBusy'), busy: v.nullable(v.string()) }),
  v.object({ type: v.literal('reply'), id: REQUEST_ID }),
  v.object({ type: v.literal('error'), id: REQUEST_ID, message: v.string() }),
]);
export type HostMessage =
  | { type: 'didChangeVersions'; view: VersionsView }
  | { type: 'didChangeBusy'; busy: string | null }
  | { type: 'reply'; id: number }
  | { type: 'error'; id: number; message: string };

/** Parses one host message in the webview; undefined for anything malformed. */
export function parseHostMessage(raw: unknown): HostMessage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const result = v.safeParse(HOST_MESSAGE, raw);
  return result.success ? (result.output as HostMessage) : undefined;
}

/** Parses one row of a `versions` view; undefined for a malformed one (the list skips it). */
export function parseVersionRow(raw: unknown): VersionRow | undefined {
  const result = v.safeParse(VERSION_ROW, raw);
  return result.success ? result.output : undefined;
}

/** The text the pane shows while recovery is required (SPEC §6), with no buttons of its own. */
export const BLOCKED_MESSAGE =
  'Version History is temporarily unavailable — Resolve the version recovery notice to continue.';

/** The branch-loss warning entry's sentence (SPEC §7), the same in Version History and the CLI. */
export function continuationWarningText(newBranch: string, oldBranch: string): string {
  return `Conversation continues on \`${newBranch}\`; code changes from \`${oldBranch}\` were not recovered.`;
}
