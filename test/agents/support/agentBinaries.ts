import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The real agent binaries the agent tests drive, installed by scripts/agents/setup.sh (npm test's real-agent step
 * runs it) at the pinned versions into `${AVH_AGENTS_DIR:-<project>/.vscode-test/agents}`: each in its own folder
 * with its own package.json. Only each package's own program is run: the platform package's native binary (Claude
 * Code, Codex, Copilot CLI — a Node single-executable that unpacks its JS into $XDG_CACHE_HOME/copilot/pkg on its
 * first start —, opencode, Bun-compiled), or Gemini CLI's bundle under this Node. The wrapper packages' launchers are
 * not used (their postinstalls are skipped; Codex's adds a Node start per run).
 */

export const CLAUDE_CODE_VERSION = '2.1.197';
/** The Claude Agent SDK setup.sh installs beside Claude Code (chat fork loads it from there: not a dependency). */
export const CLAUDE_AGENT_SDK_VERSION = '0.3.197';
export const CODEX_VERSION = '0.171.0';
export const COPILOT_CLI_VERSION = '1.0.102';
export const GEMINI_CLI_VERSION = '0.61.0';
export const OPENCODE_VERSION = '1.18.33';

export type AgentKind = 'claude-code' | 'codex' | 'copilot-cli' | 'gemini' | 'opencode';

export interface AgentBinary {
  agent: AgentKind;
  /** The executable to spawn. */
  path: string;
  /** Arguments that come before the agent's own (Gemini: its bundle, run by this Node). */
  prefix: string[];
  version: string;
}

const PROJECT_ROOT = path.resolve(__dirname, '../../../..');

export function agentsDir(): string {
  return process.env.AVH_AGENTS_DIR ?? path.join(PROJECT_ROOT, '.vscode-test', 'agents');
}

/** A binary that is not installed at its pinned version: the setup script was not run (npm test runs it). */
export class MissingAgentError extends Error {}

function platformKey(): string {
  return `${process.platform}-${process.arch}`;
}

/** Rust target triples of the @openai/codex-* platform packages. */
const CODEX_TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

const packages = (...parts: string[]) => path.join(agentsDir(), ...parts);

export function claudeCodeBinary(): AgentBinary {
  const file = packages('claude-code', 'node_modules', '@anthropic-ai', `claude-code-${platformKey()}`, 'claude');
  return checked({ agent: 'claude-code', path: file, prefix: [], version: CLAUDE_CODE_VERSION }, /^(\S+) \(Claude/);
}

/** The Claude Agent SDK's folder beside Claude Code, checked to be the pinned version. */
export function claudeAgentSdkDir(): string {
  const dir = packages('claude-code', 'node_modules', '@anthropic-ai', 'claude-agent-sdk');
  let version: unknown;
  try {
    version = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version;
  } catch {
    version = 'none';
  }
  if (version !== CLAUDE_AGENT_SDK_VERSION)
    throw new MissingAgentError(
      `the Claude Agent SDK ${CLAUDE_AGENT_SDK_VERSION} is not installed at ${dir} (found: ${String(version)}): ` +
        'run bash scripts/agents/setup.sh',
    );
  return dir;
}

export function codexBinary(): AgentBinary {
  const triple = CODEX_TRIPLES[platformKey()];
  if (!triple) throw new MissingAgentError(`Codex: no platform package for ${platformKey()}`);
  const file = packages('codex', 'node_modules', '@openai', `codex-${platformKey()}`, 'vendor', triple, 'bin', 'codex');
  return checked({ agent: 'codex', path: file, prefix: [], version: CODEX_VERSION }, /^codex-cli (\S+)/);
}

export function copilotCliBinary(): AgentBinary {
  const file = packages('copilot-cli', 'node_modules', '@github', `copilot-${platformKey()}`, 'copilot');
  return checked(
    { agent: 'copilot-cli', path: file, prefix: [], version: COPILOT_CLI_VERSION },
    /^GitHub Copilot CLI (\S+?)\.?$/m,
  );
}

export function geminiBinary(): AgentBinary {
  const bundle = packages('gemini', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
  return checked(
    { agent: 'gemini', path: process.execPath, prefix: [bundle], version: GEMINI_CLI_VERSION },
    /^(\S+)$/m,
  );
}

export function opencodeBinary(): AgentBinary {
  // The AVX2 build, as opencode's postinstall picks on most CPUs (opencode-<platform>-baseline is the fallback).
  const file = packages('opencode', 'node_modules', `opencode-${platformKey()}`, 'bin', 'opencode');
  return checked({ agent: 'opencode', path: file, prefix: [], version: OPENCODE_VERSION }, /^(\S+)$/m);
}

const versions = new Map<string, string>();

function checked(binary: AgentBinary, pattern: RegExp): AgentBinary {
  const target = binary.prefix[0] ?? binary.path;
  if (!fs.existsSync(target)) {
    throw new MissingAgentError(
      `${binary.agent} ${binary.version} is not installed at ${target}: run bash scripts/agents/setup.sh`,
    );
  }
  let found = versions.get(target);
  if (found === undefined) {
    const home = fs.mkdtempSync(path.join(agentsDir(), '.version-check-'));
    const r = spawnSync(binary.path, [...binary.prefix, '--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      // Nothing of the user's: the version check must not create ~/.claude, ~/.copilot, ~/.gemini, ….
      env: {
        PATH: process.env.PATH,
        HOME: home,
        CODEX_HOME: path.join(home, '.codex'),
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_DATA_HOME: path.join(home, '.local/share'),
        XDG_STATE_HOME: path.join(home, '.local/state'),
        XDG_CACHE_HOME: path.join(agentsDir(), 'cache'),
        COPILOT_AUTO_UPDATE: 'false',
      },
    });
    fs.rmSync(home, { recursive: true, force: true });
    const how = r.error ? `${r.error.message}` : r.signal ? `killed by ${r.signal}` : `exit ${r.status}`;
    found = pattern.exec(r.stdout.trim())?.[1] ?? `unknown (${how}: ${r.stdout.trim() || r.stderr.trim()})`;
    versions.set(target, found);
  }
  if (found !== binary.version) {
    throw new MissingAgentError(`${binary.agent}: ${target} is version ${found}, the tests pin ${binary.version}`);
  }
  return binary;
}
