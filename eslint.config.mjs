import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'out/**', '.vscode-test/**', 'test-artifacts/**', 'bench/.work/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  // The vscode-free code: the core and the CLI run under plain Node, and so do the Version History view's protocol
  // and page (the webview and plain-Node tests load them), and the copy the end-to-end tests import.
  {
    files: [
      'src/core/**/*.ts',
      'src/cli/**/*.ts',
      'src/vscode/historyView/{protocol,html}.ts',
      'src/vscode/enableCopy.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'The core, the CLI and the vscode-free view files stay free of vscode.' }],
          patterns: [
            { regex: '^svelte(/|$)|\\.svelte$|/app(/|$)', message: 'The Svelte app is the webview only.' },
            { regex: '(^|/)vscode/(?!enableCopy$)[^/]+$', message: 'src/vscode imports vscode.' },
            { regex: '(^|/)historyView/(host|messageHandlers|turnChanges)$', message: 'The view host imports vscode.' },
          ],
        },
      ],
    },
  },
  // The shape of src/ (docs/design.md, "Code shape"): no line over 120 characters, strings and comments included
  // (prettier wraps code, not strings or comments).
  { files: ['src/**/*.ts'], rules: { 'max-len': ['error', { code: 120, tabWidth: 2 }] } },
  // The product acts on a repository through the façade (VersionHistory); its context is for the core's tests.
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportDeclaration[source.value=/repoContextOf$/]',
          message: 'Act through VersionHistory: the repository context stays behind the façade.',
        },
      ],
    },
  },
  // The webview's app reaches the host only by messages: it imports the view's protocol and the core's wording,
  // nothing else.
  {
    files: ['src/vscode/historyView/app/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'The webview has no vscode module (acquireVsCodeApi only).' }],
          patterns: [
            {
              regex: '^\\.\\./(?!(protocol|\\.\\./\\.\\./core/history/wording)$)',
              message: "The webview imports only its feature folder's ../protocol and the core's history/wording.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
      },
    },
  },
);
