import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { refusal } from './mechanism';

/**
 * The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`), found in the user's own installation when a Claude Code
 * fork is asked for. It is not ours to ship: its license ("All rights reserved") does not allow redistribution in our
 * dist/ or .vsix, and it pulls a platform binary of ~235 MB. So it is looked for (docs/design/conversation-rollback.md)
 *  (a) in the node_modules folder that holds the `claude` on PATH (its real path, upward: an npm install of
 *      `@anthropic-ai/claude-code`, with the SDK installed beside it), then
 *  (b) in `npm root -g` (where `npm install -g @anthropic-ai/claude-agent-sdk` puts it),
 * and loaded, an ES module, at runtime from its file (importEsm). Only the 0.3.x line is accepted (verified: 0.3.197).
 */
export const CLAUDE_AGENT_SDK = '@anthropic-ai/claude-agent-sdk';
export const CLAUDE_AGENT_SDK_VERIFIED = '0.3.197';
const SUPPORTED_LINE = '0.3.';
export const CLAUDE_AGENT_SDK_INSTALL = `npm install -g ${CLAUDE_AGENT_SDK}@${CLAUDE_AGENT_SDK_VERIFIED}`;
const NOT_BUNDLED = 'not bundled because its license does not allow redistribution';

/** The few SDK functions a fork uses (declared here: the SDK's own types are not a dependency of ours). */
export interface SessionMessage {
  type: 'user' | 'assistant' | 'system';
  uuid: string;
  message: unknown;
}
export interface ClaudeAgentSdk {
  forkSession(sessionId: string, options: { dir?: string; upToMessageId?: string }): Promise<{ sessionId: string }>;
  getSessionMessages(sessionId: string, options: { dir?: string }): Promise<SessionMessage[]>;
  deleteSession(sessionId: string, options: { dir?: string }): Promise<void>;
}

export type SdkLookup =
  | { found: true; dir: string; version: string; entry: string }
  | {
      found: false;
      /** The refusal's text (chat fork) and doctor's summary. */
      message: string;
      /** What to do (doctor's fix). */
      fix: string;
      /** The SDK found in another version, if any. */
      dir: string | null;
      version: string | null;
    };

/** The nearest folder named node_modules that holds `file` (its real path), or null. */
function enclosingNodeModules(file: string): string | null {
  let dir: string;
  try {
    dir = path.dirname(fs.realpathSync(file));
  } catch {
    return null;
  }
  for (;;) {
    if (path.basename(dir) === 'node_modules') return dir;
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** `npm root -g` (10 s at most), or null when npm is not on PATH or does not answer. */
function npmGlobalRoot(env: NodeJS.ProcessEnv): string | null {
  const r = spawnSync('npm', ['root', '-g'], { env, encoding: 'utf8', timeout: 10_000 });
  const root = r.status === 0 ? (r.stdout ?? '').trim().split('\n')[0] : '';
  return root && path.isAbsolute(root) ? root : null;
}

interface Candidate {
  dir: string;
  version: string | null;
  entry: string | null;
}

/** The SDK's package in `nodeModules`, if any: its version and the file its "." export names. */
function candidateIn(nodeModules: string): Candidate | null {
  const dir = path.join(nodeModules, ...CLAUDE_AGENT_SDK.split('/'));
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const version = typeof pkg.version === 'string' ? pkg.version : null;
  const exports = pkg.exports as Record<string, unknown> | string | undefined;
  const dot = typeof exports === 'string' ? exports : exports?.['.'];
  const target =
    typeof dot === 'string'
      ? dot
      : dot && typeof dot === 'object'
        ? ((dot as Record<string, unknown>).import ?? (dot as Record<string, unknown>).default)
        : pkg.main;
  const entry = typeof target === 'string' ? path.resolve(dir, target) : null;
  return { dir, version, entry: entry && entry.startsWith(dir + path.sep) ? entry : null };
}

/**
 * Where the SDK is for the `claude` at `claudeFile` (on PATH): beside it, else in `npm root -g`; the first one found
 * in the verified line is the one used.
 */
export function locateClaudeSdk(claudeFile: string, env: NodeJS.ProcessEnv): SdkLookup {
  const looked: string[] = [];
  let other: Candidate | null = null;
  for (const place of [() => enclosingNodeModules(claudeFile), () => npmGlobalRoot(env)]) {
    const nodeModules = place();
    if (!nodeModules || looked.includes(nodeModules)) continue;
    looked.push(nodeModules);
    const c = candidateIn(nodeModules);
    if (!c) continue;
    if (c.version?.startsWith(SUPPORTED_LINE) && c.entry && fs.existsSync(c.entry))
      return { found: true, dir: c.dir, version: c.version, entry: c.entry };
    other ??= c;
  }
  const fix = `${CLAUDE_AGENT_SDK_INSTALL} (${NOT_BUNDLED}).`;
  if (other) {
    const what = other.version === null ? 'of no version' : other.version;
    return {
      found: false,
      message:
        `Claude Code chat fork needs the Claude Agent SDK ${CLAUDE_AGENT_SDK_VERIFIED} (the 0.3.x line), but the ` +
        `one at ${other.dir} is ${what}${other.entry ? '' : ' with no entry file'}: \`${CLAUDE_AGENT_SDK_INSTALL}\`; ` +
        `${NOT_BUNDLED}.`,
      fix,
      dir: other.dir,
      version: other.version,
    };
  }
  const where =
    looked.length > 0 ? `looked in ${looked.join(' and ')}` : 'no node_modules holds `claude`; npm gave none';
  return {
    found: false,
    message:
      `Claude Code chat fork needs the Claude Agent SDK ${CLAUDE_AGENT_SDK_VERIFIED} installed beside Claude Code ` +
      `(${where}): \`${CLAUDE_AGENT_SDK_INSTALL}\`; ${NOT_BUNDLED}.`,
    fix,
    dir: null,
    version: null,
  };
}

/**
 * A runtime `import()`, written as a Function so that neither compiler rewrites it (tsc's CommonJS output, out/,
 * turns `import()` into `require()`).
 */
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>;

/**
 * Loads the SDK's ES module. A Node that can `require()` an ES module (20.19 and later, 22.12 and later) does so:
 * that works however this bundle was loaded, also from its code cache (codeCache.ts runs it as a vm.Script, and V8
 * drops the import callback of a script read from a cache, so an `import()` in it fails). An older Node imports it
 * at runtime, which works when the bundle was loaded by `require` (the .vsix ships no code cache).
 */
function importEsm(entry: string): Promise<Record<string, unknown>> {
  if ((process.features as { require_module?: boolean }).require_module)
    return Promise.resolve(createRequire(entry)(entry) as Record<string, unknown>);
  return importModule(pathToFileURL(entry).href);
}

/** The SDK located, loaded; a refusal (nothing created) when it is not there or lacks a function a fork uses. */
export async function loadClaudeSdk(claudeFile: string, env: NodeJS.ProcessEnv): Promise<ClaudeAgentSdk> {
  const sdk = locateClaudeSdk(claudeFile, env);
  if (!sdk.found) throw refusal(sdk.message);
  let loaded: Record<string, unknown>;
  try {
    loaded = await importEsm(sdk.entry);
  } catch {
    throw refusal(
      `The Claude Agent SDK ${sdk.version} at ${sdk.dir} could not be loaded by Node ${process.version}: ` +
        `\`${CLAUDE_AGENT_SDK_INSTALL}\`.`,
    );
  }
  const missing = ['forkSession', 'getSessionMessages', 'deleteSession'].filter((f) => typeof loaded[f] !== 'function');
  if (missing.length > 0)
    throw refusal(
      `The Claude Agent SDK ${sdk.version} at ${sdk.dir} has no ${missing.join(', ')} (verified with ` +
        `${CLAUDE_AGENT_SDK_VERIFIED}): \`${CLAUDE_AGENT_SDK_INSTALL}\`.`,
    );
  return loaded as unknown as ClaudeAgentSdk;
}
