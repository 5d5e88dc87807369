// Text from the user's or an agent's hands (a shell command, a prompt) as a quick pick must show it. No vscode import:
// the unit tests run it in plain Node.

/** VS Code's icon syntax in quick pick labels, descriptions and details: `$(name)` or `$(name~modifier)`. */
const ICON = /\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g;

/**
 * `text` as a quick pick shows it literally: the pick draws `$(name)` as the icon `name` (a shell's `$(pwd)` would
 * vanish), and draws `\$(name)` as the text `$(name)`, so each one it would take for an icon gets a backslash.
 */
export function literalPickText(text: string): string;
export function literalPickText(text: string | undefined): string | undefined;
export function literalPickText(text: string | undefined): string | undefined {
  return text?.replace(ICON, (icon) => `\\${icon}`);
}
