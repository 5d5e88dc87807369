// The only state the webview keeps across reloads (vscode setState): what the user was looking at. Versioned,
// so a page built later ignores an older shape instead of misreading it. Data always comes from the host.
import type { WebviewApi } from './hostClient';

export interface UiState {
  v: 1;
  selected: string | null;
  scrollTop: number;
}

export function loadUiState(api: WebviewApi): UiState {
  const saved = api.getState() as Partial<UiState> | undefined;
  if (
    saved &&
    saved.v === 1 &&
    (typeof saved.selected === 'string' || saved.selected === null) &&
    typeof saved.scrollTop === 'number'
  ) {
    return { v: 1, selected: saved.selected, scrollTop: saved.scrollTop };
  }
  return { v: 1, selected: null, scrollTop: 0 };
}
