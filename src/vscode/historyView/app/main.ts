import { mount } from 'svelte';
// The icons of the rows' buttons, as VS Code draws its own: Vite puts the stylesheet into index.css and the font
// beside it as codicon.ttf (vite.config.ts names both; the page's CSP allows fonts from the extension's assets).
import '@vscode/codicons/dist/codicon.css';
import App from './App.svelte';
import type { WebviewApi } from './hostClient';
import './theme.css';
import './rows.css';

declare function acquireVsCodeApi(): WebviewApi;

mount(App, { target: document.getElementById('app')!, props: { api: acquireVsCodeApi() } });
