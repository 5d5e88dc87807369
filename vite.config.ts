// Builds the Version History webview (src/vscode/historyView/app/, Svelte 5) into dist/webview/ with fixed file
// names, which the host names directly (src/vscode/historyView/host.ts). One entry, one script, one stylesheet,
// no chunks.
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const app = (file: string) => fileURLToPath(new URL(`./src/vscode/historyView/app/${file}`, import.meta.url));

export default defineConfig({
  root: app(''),
  plugins: [svelte()],
  base: './',
  build: {
    outDir: fileURLToPath(new URL('./dist/webview', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    cssCodeSplit: false,
    modulePreload: false,
    rollupOptions: {
      input: app('main.ts'),
      output: {
        entryFileNames: 'index.js',
        chunkFileNames: 'index-[name].js',
        assetFileNames: (info) => (info.names?.some((n) => n.endsWith('.css')) ? 'index.css' : '[name][extname]'),
        inlineDynamicImports: true,
      },
    },
  },
});
