// The Version History view's message protocol, declared once as valibot schemas; every type here is inferred
// from its schema. The data it carries (the versions, turns and notices) is the core's
// (src/core/domain/versionsModel.ts), re-exported here so the host and the webview (app/) import one module.
// No vscode, no DOM: plain data and schemas.
//
// - Commands (webview → host, no reply): `ready` (the handshake), `openReadme`, `connectAgent`,
//   `checkAgentConnections` (the empty state's buttons: they start the palette's commands).
// - Requests (webview → host, carry an `id`, get exactly one `reply` or `error` with that id).
// - Notifications (host → webview): the whole view model on every change, and the busy state.
// The host validates every inbound message with WEBVIEW_MESSAGE and ignores anything else; the webview
// validates host messages with RECEIVED_HOST_MESSAGE the same way (a stray postMessage must not break the page).
import * as v from 'valibot';
import { FULL_OID } from '../../core/domain/objectId';
import {
  CHECKPOINT_ID,
  VERSION_ROW,
  VERSIONS_VIEW,
  versionsViewOf,
  type VersionRow,
} from '../../core/domain/versionsModel';

export {
  STEP_FILES_LISTED,
  type BranchNotices,
  type BranchWarning,
  type ChatBranchNotice,
  type CheckpointedTurn,
  type CommandStep,
  type OpenTurn,
  type OpenTurnState,
  type TurnOfRow,
  type VersionKindName,
  type VersionRow,
  type VersionsView,
} from '../../core/domain/versionsModel';

const OID = v.pipe(v.string(), v.regex(FULL_OID, 'a full commit id'));
const TURN_ID = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const CHAT_ID = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const REQUEST_ID = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER));

export const README_SECTIONS = ['extension-api'] as const;
export type ReadmeSection = (typeof README_SECTIONS)[number];
/** An agent's name as the CLI's registry spells them (`claude-code`); the host also checks it is one it lists. */
const AGENT_NAME = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,39}$/, 'an agent name'));

/** Everything the webview may send; strict objects, so unknown keys make a message malformed. */
export const WEBVIEW_MESSAGE = v.variant('type', [
  v.strictObject({ type: v.literal('ready'), protocol: v.literal(1) }),
  v.strictObject({ type: v.literal('openReadme'), section: v.picklist(README_SECTIONS) }),
  v.strictObject({ type: v.literal('connectAgent'), agent: v.optional(AGENT_NAME) }),
  v.strictObject({ type: v.literal('checkAgentConnections') }),
  v.strictObject({ type: v.literal('showChanges'), id: REQUEST_ID, oid: OID }),
  // A turn listed above the versions: its base snapshot against the working tree (what its Undo takes back).
  v.strictObject({ type: v.literal('showTurnChanges'), id: REQUEST_ID, turnId: TURN_ID }),
  v.strictObject({ type: v.literal('undo'), id: REQUEST_ID, turnId: TURN_ID }),
  // Issue 26: the lines of the working tree a turn still owns (count and files), shown by the host.
  v.strictObject({ type: v.literal('showOwnedLines'), id: REQUEST_ID, turnId: TURN_ID }),
  v.strictObject({ type: v.literal('continueChat'), id: REQUEST_ID, turnId: TURN_ID }),
  v.strictObject({ type: v.literal('undoWithConversation'), id: REQUEST_ID, turnId: TURN_ID }),
  v.strictObject({ type: v.literal('redo'), id: REQUEST_ID }),
  v.strictObject({ type: v.literal('restore'), id: REQUEST_ID, oid: OID }),
  // Issue 34: Restore to Before This Command, of a step the view showed (the host checks it is one it listed).
  v.strictObject({ type: v.literal('restoreBeforeCommand'), id: REQUEST_ID, checkpointId: CHECKPOINT_ID }),
  v.strictObject({ type: v.literal('loadMore'), id: REQUEST_ID }),
  // Branch loss (docs/product-contract.md §7): each acts on one chat the view showed; the core re-checks before
  // anything changes.
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

/** How an agent is connected here (src/vscode/agentStates.ts reads doctor's check). */
export const CONNECTION_STATES = ['connected', 'not-connected', 'older-form', 'needs-review', 'problem'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

/** One agent the CLI can connect, with its state, for the empty state's buttons. */
const AGENT_CONNECTION = v.object({
  name: AGENT_NAME,
  displayName: v.string(),
  state: v.picklist(CONNECTION_STATES),
  /** Doctor's one-line summary (file paths, never file content). */
  summary: v.string(),
});
export type AgentConnectionView = v.InferOutput<typeof AGENT_CONNECTION>;

/** Everything the host may send, for a given view model schema. */
function hostMessageOf<TView extends v.GenericSchema>(view: TView) {
  return v.variant('type', [
    v.object({ type: v.literal('didChangeVersions'), view }),
    v.object({ type: v.literal('didChangeAgents'), agents: v.array(AGENT_CONNECTION) }),
    v.object({ type: v.literal('didChangeBusy'), busy: v.nullable(v.string()) }),
    v.object({ type: v.literal('reply'), id: REQUEST_ID }),
    v.object({ type: v.literal('error'), id: REQUEST_ID, message: v.string() }),
  ]);
}

/** What the host sends, rows checked in full (the webview parses with RECEIVED_HOST_MESSAGE instead). */
export const HOST_MESSAGE = hostMessageOf(VERSIONS_VIEW);
export type HostMessage = v.InferOutput<typeof HOST_MESSAGE>;

const LAZY_ROWS = v.custom<unknown[]>((input) => Array.isArray(input), 'rows must be an array');
const RECEIVED_VERSIONS_VIEW = versionsViewOf(LAZY_ROWS);
/** The model as the webview holds it: rows not yet validated (rowAt validates each as it renders). */
export type ReceivedVersionsView = v.InferOutput<typeof RECEIVED_VERSIONS_VIEW>;
export const RECEIVED_HOST_MESSAGE = hostMessageOf(RECEIVED_VERSIONS_VIEW);
/** What the webview accepts from the host. */
export type ReceivedHostMessage = v.InferOutput<typeof RECEIVED_HOST_MESSAGE>;

/** Parses one host message in the webview; undefined for anything malformed. */
export function parseHostMessage(raw: unknown): ReceivedHostMessage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const result = v.safeParse(RECEIVED_HOST_MESSAGE, raw);
  return result.success ? result.output : undefined;
}

/** Parses one row of a `versions` view; undefined for a malformed one (the list skips it). */
export function parseVersionRow(raw: unknown): VersionRow | undefined {
  const result = v.safeParse(VERSION_ROW, raw);
  return result.success ? result.output : undefined;
}
