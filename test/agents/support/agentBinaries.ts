import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The real agent binaries the agent tests drive, installed by scripts/agents/setup.sh at the pinned versions into
 * `${AVH_AGENTS_DIR:-<project>/.vscode-test/agents}`: each in its own folder with its own package.json, npm's
 * platform package holding the native binary (the wrapper packages' launchers are not used: Claude Code's
 * postinstall that would copy its binary is skipped, Codex's Node launcher adds a Node start per run).
 */

export const CLAUDE_CODE_VERSION = '2.1.197';
export const CODEX_VERSION = '0.171.0';

export type AgentKind = 'claude-code' | 'codex';

export interface AgentBinary {
  agent: AgentKind;
  path: string;
  version: string;
}

const PROJECT_ROOT = path.resolve(__dirname, '../../../..');

export function agentsDir(): string {
  return process.env.AVH_AGENTS_DIR ?? path.join(PROJECT_ROOT, '.vscode-test', 'agents');
}

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

export function claudeCodeBinary(): AgentBinary {
  const file = path.join(
    agentsDir(),
    'claude-code',
    'node_modules',
    '@anthropic-ai',
    `claude-code-${platformKey()}`,
    process.platform === 'win32' ? 'claude.exe' : 'claude',
  );
  return checked('claude-code', file, CLAUDE_CODE_VERSION, /^(\S+) \(Claude Code\)/);
}

export function codexBinary(): AgentBinary {
  const triple = CODEX_TRIPLES[platformKey()];
  if (!triple) throw new MissingAgentError(`Codex: no platform package for ${platformKey()}`);
  const file = path.join(
    agentsDir(),
    'codex',
    'node_modules',
    '@openai',
    `codex-${platformKey()}`,
    'vendor',
    triple,
    'bin',
    'codex',
  );
  return checked('codex', file, CODEX_VERSION, /^codex-cli (\S+)/);
}

const versions = new Map<string, string>();

function checked(agent: AgentKind, file: string, version: string, pattern: RegExp): AgentBinary {
  if (!fs.existsSync(file)) {
    throw new MissingAgentError(`${agent} ${version} is not installed at ${file}: run bash scripts/agents/setup.sh`);
  }
  let found = versions.get(file);
  if (found === undefined) {
    const r = spawnSync(file, ['--version'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, HOME: '/nonexistent' },
    });
    found = pattern.exec(r.stdout.trim())?.[1] ?? `unknown (${r.stdout.trim() || r.stderr.trim()})`;
    versions.set(file, found);
  }
  if (found !== version) throw new MissingAgentError(`${agent}: ${file} is version ${found}, the tests pin ${version}`);
  return { agent, path: file, version };
}
