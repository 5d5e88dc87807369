import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTENT_RULES, CONTENT_SCAN_LIMIT_BYTES, NAME_RULES } from '../../src/core/git/secretRules';
import { runGit } from '../../src/core/git/gitRunner';
import { encodeBytes, fsPath } from '../../src/core/git/pathBytes';
import { untrackedEntries } from '../../src/core/git/workingTreeSnapshot';
import { scanForSecrets } from '../../src/core/git/secretScanner';
import { FAKE } from '../support/fakeSecrets';
import { cleanupTempDirs, tempDir, testGitEnv, write } from '../support/gitFixtures';

/** The rule a real file on disk is judged by (null: none), through the scanner the commit path uses. */
function ruleOf(name: string, content: string | Buffer, mode = '100644'): string | null {
  const dir = tempDir('avh-secret-rule-');
  write(dir, name, content);
  return scanForSecrets(dir, [{ path: name, mode }])[0]?.rule ?? null;
}

interface Case {
  name: string;
  content?: string;
}

/** Per rule: files it must flag, and look-alikes it must leave alone (another rule may not flag them either). */
const NAME_CASES: Record<string, { hit: Case[]; miss: Case[] }> = {
  'dotenv-file': {
    hit: [{ name: '.env' }, { name: '.env.local' }, { name: 'config/.env.production' }],
    miss: [
      { name: '.env.example', content: 'API_KEY=your-key-here\n' },
      { name: '.env.sample' },
      { name: '.env.template' },
      { name: '.envrc' },
      { name: 'env.ts' },
    ],
  },
  'private-key-file': {
    hit: [{ name: 'tls/server.pem' }, { name: 'signing.key' }, { name: 'cert.p12' }, { name: 'cert.PFX' }],
    miss: [{ name: 'keys.ts' }, { name: 'key.json' }, { name: 'pem.md' }],
  },
  'ssh-private-key-file': {
    hit: [{ name: 'deploy/id_rsa' }, { name: 'id_ed25519' }, { name: 'id_ecdsa_deploy' }],
    miss: [{ name: 'id_rsa.pub' }, { name: 'deploy/id_ed25519.pub' }, { name: 'grid_rsa.ts' }],
  },
  'credentials-json': {
    hit: [{ name: 'credentials.json' }],
    miss: [{ name: 'credentials.ts' }, { name: 'credentials.json.md' }],
  },
  'service-account-json': {
    hit: [{ name: 'service-account.json' }, { name: 'gcp/service-account-prod.json' }],
    miss: [{ name: 'service-account.md' }, { name: 'service.json' }],
  },
  'netrc-file': { hit: [{ name: '.netrc' }, { name: '_netrc' }], miss: [{ name: 'netrc.md' }] },
  'npmrc-token': {
    hit: [
      {
        name: '.npmrc',
        content: `registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_${'x'.repeat(36)}\n`,
      },
    ],
    miss: [
      { name: '.npmrc', content: '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n' },
      { name: '.npmrc', content: 'save-exact=true\n' },
    ],
  },
  'pypirc-password': {
    hit: [{ name: '.pypirc', content: '[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc\n' }],
    miss: [
      { name: '.pypirc', content: '[pypi]\nusername = __token__\n' },
      { name: '.pypirc', content: '[pypi]\npassword = ${PYPI_TOKEN}\n' },
    ],
  },
  'kubeconfig-credentials': {
    hit: [
      { name: '.kube/config', content: kubeconfigWith('    token: 8a2f0c9e1b7d4e3f9a6c5b2d1e0f3a4b') },
      { name: 'deploy/kubeconfig.yaml', content: kubeconfigWith('    password: s3cr3t') },
      { name: 'ci-kubeconfig', content: kubeconfigWith('    token: "eyJhbGciOiJSUzI1NiIsImtpZCI6"') },
    ],
    miss: [
      {
        name: 'deploy/kubeconfig.yaml',
        content: kubeconfigWith('    exec:\n      command: aws\n      args: [eks, get-token]'),
      },
      { name: '.kube/config', content: kubeconfigWith('    token: ${KUBE_TOKEN}') },
      { name: 'app/config', content: 'token: 8a2f0c9e1b7d4e3f9a6c5b2d1e0f3a4b\n' },
    ],
  },
  'envrc-secret': {
    hit: [
      { name: '.envrc', content: 'export DATABASE_PASSWORD=hunter2-prod\n' },
      { name: 'svc/.envrc', content: 'use flake\nexport STRIPE_SECRET_KEY="sk_test_x"\n' },
      { name: '.envrc', content: 'API_TOKEN=abc123\n' },
    ],
    miss: [
      { name: '.envrc', content: 'use flake\nlayout python\n' },
      { name: '.envrc', content: 'export GITHUB_TOKEN=$(gh auth token)\nexport AWS_SECRET=$VAULT_AWS\n' },
      { name: 'envrc.md', content: 'export DATABASE_PASSWORD=hunter2-prod\n' },
    ],
  },
  'git-credentials-file': {
    hit: [
      { name: '.git-credentials', content: 'https://alice:s3cr3t-token@github.com\n' },
      { name: 'home/.git-credentials' },
    ],
    miss: [{ name: 'git-credentials.md' }, { name: '.gitconfig', content: '[credential]\n\thelper = store\n' }],
  },
  'docker-config-auths': {
    hit: [
      { name: '.docker/config.json', content: '{"auths":{"registry.example.com":{"auth":"YWxpY2U6czNjcjN0"}}}\n' },
      {
        name: 'ci/.docker/config.json',
        content: '{\n  "auths": {\n    "ghcr.io": { "identitytoken": "x1" }\n  }\n}\n',
      },
    ],
    miss: [
      { name: '.docker/config.json', content: '{"credsStore":"desktop"}\n' },
      { name: '.docker/config.json', content: '{"auths":{"ghcr.io":{}},"credsStore":"osxkeychain"}\n' },
      { name: 'app/config.json', content: '{"auths":{"registry.example.com":{"auth":"YWxpY2U6czNjcjN0"}}}\n' },
    ],
  },
  'pgpass-file': {
    hit: [{ name: '.pgpass', content: 'db.example.com:5432:prod:alice:s3cr3tpass\n' }, { name: 'pg/pgpass.conf' }],
    miss: [{ name: 'pgpass.md' }, { name: '.pgpass.example' }],
  },
  'terraform-tfvars': {
    hit: [{ name: 'infra/terraform.tfvars' }, { name: 'prod.auto.tfvars' }, { name: 'vars.tfvars.json' }],
    miss: [{ name: 'terraform.tfvars.example' }, { name: 'infra/variables.tf' }],
  },
};

/** A kubeconfig whose user entry is `user` (indented lines). */
function kubeconfigWith(user: string): string {
  return `apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n${user}\n`;
}

const CONTENT_CASES: Record<string, { hit: string[]; miss: string[] }> = {
  'kubeconfig-client-key': {
    hit: [kubeconfigWith('    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=')],
    miss: [kubeconfigWith('    client-key-data: ""'), 'docs: set client-key-data to the base64 of your key\n'],
  },
  'private-key': {
    hit: [
      `${FAKE.privateKeyHeader()}\nb3BlbnNzaC1rZXktdjEAAAAA\n`,
      `${FAKE.privateKeyHeader('RSA ')}\nMIIEow\n`,
      FAKE.privateKeyHeader(''),
    ],
    miss: [
      '-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n',
      '-----BEGIN CERTIFICATE-----\nMIID\n',
      'const header = "BEGIN PRIVATE KEY";\n',
    ],
  },
  'aws-access-key-id': {
    hit: [`const config = { accessKeyId: '${FAKE.awsKeyId()}' };\n`, `AWS_ACCESS_KEY_ID=${FAKE.awsKeyId()}\n`],
    miss: [
      'accessKeyId: "AKIAIOSFODNN7EXAMPLE" // from the AWS docs\n',
      'id = "AKIA1234"\n',
      `lower = "${FAKE.awsKeyId().toLowerCase()}"\n`,
    ],
  },
  'github-token': {
    hit: [`token: ${FAKE.githubClassic()}\n`, `GH_TOKEN="${FAKE.githubFineGrained()}"\n`],
    miss: ['const prefix = "ghp_";\n', `x = "ghx_${'a'.repeat(36)}"\n`, 'see ghp_short in the docs\n'],
  },
  'gitlab-token': { hit: [`GITLAB_TOKEN=${FAKE.gitlab()}\n`], miss: ['prefix = "glpat-"\n', 'glpat-short\n'] },
  'slack-token': {
    hit: [`SLACK_BOT_TOKEN=${FAKE.slackBot()}\n`, `url: ${FAKE.slackWebhook()}\n`],
    miss: ['xoxb-not-a-token\n', 'https://hooks.slack.com/services/\n'],
  },
  'stripe-live-key': {
    hit: [`stripe(${JSON.stringify(FAKE.stripeLive())})\n`],
    miss: [`stripe("sk_test_${'a1'.repeat(12)}")\n`, `pk = "pk_live_${'a1'.repeat(12)}"\n`],
  },
  'anthropic-api-key': {
    hit: [`ANTHROPIC_API_KEY=${FAKE.anthropic()}\n`],
    miss: ['key = "sk-ant-"\n', 'sk-ant-api03-short\n'],
  },
  'openai-api-key': {
    hit: [
      `OPENAI_API_KEY=${FAKE.openaiProject()}\n`,
      `key = "${FAKE.openaiLegacy()}"\n`,
      `k: ${FAKE.openaiMarked()}\n`,
    ],
    miss: ['<div class="sk-loading-spinner-wrapper-for-the-main-dashboard-panel">\n', 'const prefix = "sk-";\n'],
  },
  'jwt-bearer-token': {
    hit: [
      `const token = "${FAKE.jwt()}";\n`,
      `Authorization: Bearer ${FAKE.jwt()}\n`,
      `{"access_token":"${FAKE.jwt()}"}\n`,
    ],
    miss: [`Decode a JWT such as ${FAKE.jwt()} with the debugger.\n`, 'header = "eyJhbGciOiJIUzI1NiJ9"\n'],
  },
};

describe('secret rules: one true- and false-positive test per rule (real files through the scanner)', () => {
  afterEach(cleanupTempDirs);

  it('every rule in the data file has cases here, and names are unique', () => {
    const names = [...NAME_RULES, ...CONTENT_RULES].map((r) => r.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(names.sort(), [...Object.keys(NAME_CASES), ...Object.keys(CONTENT_CASES)].sort());
  });

  for (const [rule, cases] of Object.entries(NAME_CASES)) {
    it(`by name: ${rule}`, () => {
      for (const c of cases.hit) assert.equal(ruleOf(c.name, c.content ?? 'x\n'), rule, c.name);
      for (const c of cases.miss) assert.equal(ruleOf(c.name, c.content ?? 'PLACEHOLDER=changeme\n'), null, c.name);
    });
  }

  for (const [rule, cases] of Object.entries(CONTENT_CASES)) {
    it(`by content: ${rule}`, () => {
      for (const text of cases.hit) assert.equal(ruleOf('src/settings.js', text), rule, text.slice(0, 30));
      for (const text of cases.miss) assert.equal(ruleOf('src/settings.js', text), null, text.slice(0, 30));
    });
  }

  it('binary files and files of 1 MB or more are judged by name only', () => {
    const binary = Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.from(`\n${FAKE.privateKeyHeader()}\n`)]);
    assert.equal(ruleOf('assets/blob.bin', binary), null, 'a key header inside a binary is not scanned');
    assert.equal(ruleOf('keys/blob.p12', binary), 'private-key-file', 'a binary key file is caught by its name');
    const big = `${'// filler line\n'.repeat(Math.ceil(CONTENT_SCAN_LIMIT_BYTES / 15))}const id = '${FAKE.awsKeyId()}';\n`;
    assert.ok(Buffer.byteLength(big) >= CONTENT_SCAN_LIMIT_BYTES);
    assert.equal(ruleOf('src/generated.js', big), null, 'over the limit: not read');
    assert.equal(ruleOf('src/.env', big), 'dotenv-file', 'over the limit: still caught by name');
    const justUnder = `const id = '${FAKE.awsKeyId()}';\n`.padEnd(CONTENT_SCAN_LIMIT_BYTES - 1, ' ');
    assert.equal(ruleOf('src/almost.js', justUnder), 'aws-access-key-id', 'just under the limit: scanned');
  });

  it('symlinks are judged by name and never followed; submodules are skipped; missing files are not an error', () => {
    const dir = tempDir('avh-secret-link-');
    write(dir, 'outside/key.txt', `${FAKE.privateKeyHeader()}\n`);
    fs.symlinkSync('outside/key.txt', path.join(dir, 'notes.txt'));
    fs.symlinkSync('outside/key.txt', path.join(dir, 'id_rsa'));
    const found = scanForSecrets(dir, [
      { path: 'notes.txt', mode: '120000' },
      { path: 'id_rsa', mode: '120000' },
      { path: '.env', mode: '160000' },
      { path: 'gone.js', mode: '100644' },
    ]);
    assert.deepEqual(found, [{ path: 'id_rsa', rule: 'ssh-private-key-file' }]);
    // Mode unknown (paths read from `git add --verbose`): taken from disk the same way.
    fs.mkdirSync(path.join(dir, 'vendor.key'));
    fs.symlinkSync('outside/key.txt', path.join(dir, 'readme.md'));
    assert.deepEqual(
      scanForSecrets(dir, [{ path: 'readme.md' }, { path: 'id_rsa' }, { path: 'vendor.key' }, { path: 'gone.pem' }]),
      [{ path: 'id_rsa', rule: 'ssh-private-key-file' }],
    );
  });

  it('the new files real `git ls-files --others -z` lists are read back exactly, odd names included', async () => {
    const dir = tempDir('avh-ls-others-');
    execFileSync('git', ['init', '-q'], { cwd: dir, env: testGitEnv() });
    const names = ["it's.txt", 'new\nline.txt', 'ünïcødé/日本.txt', 'sp ace.txt', 'back\\slash.txt', "add 'x'.txt"];
    for (const name of names) write(dir, name, 'x\n');
    const raw = Buffer.concat([Buffer.from('not-utf8-'), Buffer.from([0xff, 0xe9]), Buffer.from('.txt')]);
    fs.writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), raw]), 'x\n');
    execFileSync('git', ['init', '-q', 'nested'], { cwd: dir, env: testGitEnv() });
    write(dir, 'nested/inside.txt', 'x\n');
    const { stdout } = await runGit(dir, ['ls-files', '-z', '--others', '--exclude-standard']);
    const { files, nested } = untrackedEntries(stdout);
    const odd = files.find((f) => f.startsWith('not-utf8-'));
    assert.ok(odd, 'the name that is not UTF-8 is listed');
    assert.ok(encodeBytes(odd).equals(raw), 'and keeps its bytes');
    assert.equal(fs.readFileSync(fsPath(path.join(dir, odd)), 'utf8'), 'x\n', 'and opens by them');
    assert.deepEqual(files.filter((f) => f !== odd).sort(), [...names].sort());
    assert.deepEqual(nested, ['nested'], 'a folder with its own .git is one entry, never its files');
    assert.deepEqual(untrackedEntries(''), { files: [], nested: [] });
  });

  it('a finding carries the path and the rule name only, never the matched text', () => {
    const finding = scanForSecrets(tempDirWith('config.js', `module.exports = { key: '${FAKE.awsKeyId()}' };\n`), [
      { path: 'config.js', mode: '100644' },
    ]);
    assert.deepEqual(finding, [{ path: 'config.js', rule: 'aws-access-key-id' }]);
    assert.ok(!JSON.stringify(finding).includes(FAKE.awsKeyId()));
  });
});

function tempDirWith(name: string, content: string): string {
  const dir = tempDir('avh-secret-');
  write(dir, name, content);
  return dir;
}
