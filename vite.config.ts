// Builds the Version History webview (webview/, Svelte 5) into dist/webview/ with fixed file names, which the
// host's HTML names directly (src/vscode/historyView.ts). One entry, one script, one stylesheet, no chunks.
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./webview', import.meta.url)),
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
      input: fileURLToPath(new URL('./webview/src/main.ts', import.meta.url)),
      output: {
        entryFileNames: 'index.js',
        chunkFileNames: 'index-[name].js',
        assetFileNames: (info) => (info.names?.some((n) => n.endsWith('.css')) ? 'index.css' : '[name][extname]'),
        inlineDynamicImports: true,
      },
    },
  },
});
