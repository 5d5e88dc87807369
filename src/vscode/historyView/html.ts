// The Version History view's HTML, kept free of the vscode module so a plain-Node test can check its CSP.

export interface HistoryViewAssets {
  /** `webview.cspSource`: the origin VS Code serves local resources from. */
  cspSource: string;
  /** `asWebviewUri` of dist/webview/index.js and index.css. */
  scriptUri: string;
  styleUri: string;
}

/**
 * The page: CSP `default-src 'none'`, the script allowed only by a nonce made fresh for this load, styles and
 * fonts only from the extension's own assets. No inline handlers and no remote resources.
 */
export function historyViewHtml(assets: HistoryViewAssets, nonce: string = crypto.randomUUID()): string {
  const csp = [
    "default-src 'none'",
    `style-src ${assets.cspSource}`,
    `font-src ${assets.cspSource}`,
    `img-src ${assets.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttribute(assets.styleUri)}">
<title>Agent Version History</title>
</head>
<body>
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${escapeAttribute(assets.scriptUri)}"></script>
</body>
</html>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
