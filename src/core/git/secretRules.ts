/**
 * The secret rules, in one data file (issue 15). Names are reported to the user and in results; the matched
 * text never is. Our own list rather than a rule-set package: secretlint's recommended preset runs through
 * @secretlint/core's async linter, whose reports quote the matched text, pulls several packages into the
 * .vsix, and has no file-name rules. Every rule has a true- and a false-positive test (test/unit/secretRules.test.ts).
 */

/**
 * A rule matched on the file's base name (and, when `path` is set, on its whole relative path, `/`-separated);
 * `content`, when set, must also match the text (`.npmrc` holding a token).
 */
export interface NameRule {
  readonly name: string;
  readonly fileName: RegExp;
  readonly path?: RegExp;
  readonly content?: RegExp;
}

/** A rule matched on the text of files under the content-scan size limit that are not binary. */
export interface ContentRule {
  readonly name: string;
  readonly pattern: RegExp;
  /**
   * Literals of which at least one occurs in every match: a substring search decides most files before the regex runs.
   */
  readonly hints: readonly string[];
}

/** Text files at or above this size (and binary files) are judged by name only. */
export const CONTENT_SCAN_LIMIT_BYTES = 1024 * 1024;

export const NAME_RULES: readonly NameRule[] = [
  // .env and .env.* except the templates projects commit on purpose.
  { name: 'dotenv-file', fileName: /^\.env(?:\.(?!(?:example|sample|template)$).+)?$/ },
  { name: 'private-key-file', fileName: /\.(?:pem|key|p12|pfx)$/i },
  { name: 'ssh-private-key-file', fileName: /^id_(?:rsa|ed25519|ecdsa)(?!.*\.pub$)/ },
  { name: 'credentials-json', fileName: /^credentials\.json$/ },
  { name: 'service-account-json', fileName: /^service-account.*\.json$/ },
  { name: 'netrc-file', fileName: /^[._]netrc$/ },
  // A token written out, not an environment reference such as `_authToken=${NPM_TOKEN}`.
  { name: 'npmrc-token', fileName: /^\.npmrc$/, content: /(?:^|:)_(?:authToken|auth|password)\s*=\s*(?!["']?\$\{)\S/m },
  { name: 'pypirc-password', fileName: /^\.pypirc$/, content: /^\s*password\s*[=:]\s*(?!["']?\$\{)\S/m },
  // Issue 25. A kubeconfig (`~/.kube/config`, `*kubeconfig*`) with a static credential; one that runs an `exec:`
  // helper holds none. `client-key-data` anywhere is a content rule below.
  {
    name: 'kubeconfig-credentials',
    fileName: /^config$|kubeconfig/i,
    path: /(?:^|\/)\.kube\/config$|kubeconfig[^/]*$/i,
    content: /^\s*(?:client-key-data|token|password)\s*:\s*(?!["']?\$\{)["']?[^\s"'{]/m,
  },
  // direnv's file: an exported credential-named variable set to a value (not `use flake`, not `$OTHER_VAR`).
  {
    name: 'envrc-secret',
    fileName: /^\.envrc$/,
    content: /^\s*(?:export\s+)?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASS(?:WORD)?)[A-Za-z0-9_]*\s*=\s*(?!["']?\$)\S/im,
  },
  // git's credential store: a credential file by definition.
  { name: 'git-credentials-file', fileName: /^\.git-credentials$/ },
  // docker's client config with registry logins in it; one that names a credential helper only holds none.
  {
    name: 'docker-config-auths',
    fileName: /^config\.json$/,
    path: /(?:^|\/)\.docker\/config\.json$/,
    content: /"auths"\s*:\s*\{[\s\S]*"(?:auth|identitytoken|registrytoken)"\s*:\s*"[^"]/,
  },
  { name: 'pgpass-file', fileName: /^(?:\.pgpass|pgpass\.conf)$/ },
  // Terraform variable values (passwords, tokens) by design: left out like `.env`; `*.tfvars.example` stays.
  { name: 'terraform-tfvars', fileName: /\.tfvars(?:\.json)?$/ },
];

export const CONTENT_RULES: readonly ContentRule[] = [
  // A kubeconfig's base64 client key, whatever the file is called (`admin.conf`, `cluster.yaml`).
  {
    name: 'kubeconfig-client-key',
    hints: ['client-key-data'],
    pattern: /^\s*client-key-data\s*:\s*["']?[A-Za-z0-9+/]{16,}/m,
  },
  {
    name: 'private-key',
    hints: ['PRIVATE KEY'],
    pattern: /-----BEGIN (?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/,
  },
  // AWS documentation's example key ids end in EXAMPLE: those are not secrets.
  {
    name: 'aws-access-key-id',
    hints: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)(?![A-Z2-7]{9}EXAMPLE\b)[A-Z2-7]{16}\b/,
  },
  {
    name: 'github-token',
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36}\b|github_pat_[A-Za-z0-9_]{82}\b)/,
  },
  {
    name: 'gitlab-token',
    hints: ['glpat-', 'gldt-', 'glrt-', 'glptt-'],
    pattern: /\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}/,
  },
  {
    name: 'slack-token',
    hints: ['xox', 'hooks.slack.com'],
    pattern: new RegExp(
      `${/\bxox[abposr]-\d{6,}-[A-Za-z0-9-]{8,}/.source}|` +
        /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{20,}/.source,
    ),
  },
  { name: 'stripe-live-key', hints: ['k_live_'], pattern: /\b[sr]k_live_[A-Za-z0-9]{20,}/ },
  { name: 'anthropic-api-key', hints: ['sk-ant-'], pattern: /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{32,}/ },
  {
    name: 'openai-api-key',
    hints: ['sk-'],
    pattern:
      /\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b|[A-Za-z0-9]{48}\b)/,
  },
  // A JWT only when it is assigned or sent as a bearer token; JWT-shaped text in prose or fixtures is left alone.
  {
    name: 'jwt-bearer-token',
    hints: ['eyJ'],
    pattern: /(?:[:=]|\bBearer)\s*["'`]?(?:Bearer\s+)?eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/,
  },
];
