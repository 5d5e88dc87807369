import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvhError } from '../../../core/errors';
import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../../command';
import { tellLeftOut } from './leftOutFiles';

export const spec: CommandSpec = {
  name: 'turn begin',
  args: [],
  options: ['chat', 'agent', 'title', 'prompt', 'prompt-file', 'base-branch'],
  required: ['chat'],
  exclusive: [['prompt', 'prompt-file']],
  summary: 'record the start of an agent turn (captures the pre-turn state)',
  description:
    'Records a turn of a conversation and captures the exact pre-turn state (your own uncommitted edits included), ' +
    'which Undo restores. Prints the turn id.',
  example: 'agent-versions turn begin --chat my-session --agent my-agent --prompt-file prompt.txt',
  json: '{"turnId": string}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  const { values } = c;
  return withHistory(c, async (history) => {
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
  });
}

async function readPromptFile(file: string, c: CommandContext): Promise<string> {
  if (file === '-') return c.readStdin();
  try {
    return fs.readFileSync(path.resolve(c.cwd, file), 'utf8');
  } catch {
    throw new AvhError('invalid-input', 'The --prompt-file could not be read.');
  }
}
