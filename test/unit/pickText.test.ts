// Text a quick pick shows (src/vscode/pickText.ts): a shell command's `$(…)` stays text instead of VS Code's icon
// syntax. The rendering rule it mirrors (VS Code's renderLabelWithIcons) is applied here to what it returns.
import * as assert from 'node:assert/strict';
import { literalPickText } from '../../src/vscode/pickText';

/** What VS Code shows for a pick's text: `$(name)` becomes an icon (here `<name>`), `\$(name)` the text `$(name)`. */
function rendered(text: string): string {
  return text.replace(/(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g, (_, escaped: string | undefined, name: string) =>
    escaped ? `$(${name})` : `<${name}>`,
  );
}

describe('literalPickText: a command shown in a quick pick exactly as written', () => {
  const cases = [
    'git reset --hard HEAD',
    'cd "$(git rev-parse --show-toplevel)" && git reset --hard',
    'rm -rf "$(pwd)/build" $(ls)',
    'echo $(sync~spin) $(a~1) $() $(x y) $(pwd',
    'echo \\$(pwd) \\\\$(pwd)',
    '',
  ];
  for (const text of cases)
    it(JSON.stringify(text), () => {
      assert.equal(rendered(literalPickText(text)), text);
    });

  it('the contrast: unescaped, `$(pwd)` would be drawn as an icon', () => {
    assert.equal(rendered('cd "$(pwd)"'), 'cd "<pwd>"');
  });

  it('no text stays no text', () => {
    assert.equal(literalPickText(undefined), undefined);
  });
});
