import * as fs from 'node:fs';
import * as path from 'node:path';
import { MOCK_MODEL } from './openaiChatMock';

/**
 * What an opencode test needs around the real binary: the user's opencode.json naming a custom OpenAI-compatible
 * provider (the mock), and a plugin that logs every hook opencode calls (opencode has no shell hooks, so the
 * capture is a plugin too) and, when AVH_OPENCODE_NOTE is set, adds it to the prompt as a synthetic text part —
 * the context channel a `hook opencode` note would use.
 */

export function opencodeUserConfig(mockUrl: string): string {
  return `${JSON.stringify(
    {
      $schema: 'https://opencode.ai/config.json',
      provider: {
        mock: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Mock',
          options: { baseURL: `${mockUrl}/v1`, apiKey: 'mock-key' },
          models: { [MOCK_MODEL]: { name: 'Mock model', tool_call: true } },
        },
      },
      model: `mock/${MOCK_MODEL}`,
      small_model: `mock/${MOCK_MODEL}`,
      autoupdate: false,
      // opencode's own undo (a git snapshot of the project on every step): not what these tests look at, and slow.
      snapshot: false,
      share: 'disabled',
    },
    null,
    2,
  )}\n`;
}

export const CAPTURE_PLUGIN = `// test capture: every hook call opencode makes, one JSON line each, in $AVH_OPENCODE_CAPTURE
import { appendFileSync } from "node:fs";
const log = (hook, data) => {
  if (process.env.AVH_OPENCODE_CAPTURE) appendFileSync(process.env.AVH_OPENCODE_CAPTURE, JSON.stringify({ at: Date.now(), hook, data }) + "\\n");
};
export const Capture = async ({ directory, worktree }) => {
  log("init", { directory, worktree });
  return {
    event: async ({ event }) => log("event:" + event.type, event.properties),
    "chat.message": async (input, output) => {
      log("chat.message", { input, output });
      const note = process.env.AVH_OPENCODE_NOTE;
      if (note) output.parts.push({ id: "prt_note" + Date.now(), sessionID: input.sessionID, messageID: output.message.id, type: "text", text: note, synthetic: true });
    },
    "tool.execute.after": async (input, output) => log("tool.execute.after", { input, output: { title: output.title } }),
    "tool.execute.before": async (input, output) => log("tool.execute.before", { input, output }),
  };
};
`;

/**
 * Makes opencode's dependency check pass for a config folder without an npm install: opencode 1.18 installs
 * `@opencode-ai/plugin` into every config folder it loads (`.opencode/`, `~/.config/opencode/`) unless the folder
 * has a node_modules folder and a package-lock.json whose root lists the package (verified: no npm request, no
 * node_modules written). Our plugin imports nothing, so the
 * package itself is not needed; a user's first start does that install (from the npm registry) once per folder.
 */
export function seedPluginDependencies(configDir: string): void {
  fs.mkdirSync(path.join(configDir, 'node_modules'), { recursive: true });
  const dependencies = { '@opencode-ai/plugin': '1.18.33' };
  fs.writeFileSync(path.join(configDir, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  const lock = { name: 'opencode-config', lockfileVersion: 3, requires: true, packages: { '': { dependencies } } };
  fs.writeFileSync(path.join(configDir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  // What opencode writes there on its first start (it ignores its own files), written first so trees compare.
  fs.writeFileSync(
    path.join(configDir, '.gitignore'),
    'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore',
  );
}

export interface OpencodeCall {
  at: number;
  hook: string;
  data: Record<string, unknown>;
}

/** The logged calls, without the noisy ones (plugin registration, streaming deltas, catalog refreshes). */
export function opencodeCalls(file: string): OpencodeCall[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OpencodeCall)
    .filter(
      (c) =>
        !/^event:(plugin\.added|message\.part\.delta|catalog\.updated|reference\.updated|integration\.updated)$/.test(
          c.hook,
        ),
    );
}

/** The calls that matter for turns: the prompt, idle, errors (with the error's name). */
export function turnEvents(file: string): string[] {
  return opencodeCalls(file).flatMap((c) => {
    if (c.hook === 'chat.message' || c.hook === 'event:session.idle') return [c.hook];
    if (c.hook === 'event:session.error') return [`${c.hook}:${(c.data.error as { name?: string } | undefined)?.name}`];
    return [];
  });
}

/** Saves the calls as a sample (AVH_AGENT_SAMPLES_DIR), temp root replaced by `<sandbox>`. */
export function saveOpencodeSample(root: string, scenario: string, file: string): void {
  const dir = process.env.AVH_AGENT_SAMPLES_DIR;
  if (!dir) return;
  fs.mkdirSync(path.join(dir, 'opencode'), { recursive: true });
  const text = JSON.stringify({ agent: 'opencode', scenario, calls: opencodeCalls(file) }, null, 2)
    .split(root)
    .join('<sandbox>');
  fs.writeFileSync(path.join(dir, 'opencode', `${scenario}.json`), `${text}\n`);
}
