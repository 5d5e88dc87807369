import { mount } from 'svelte';
import App from './App.svelte';
import type { WebviewApi } from './hostClient';
import './theme.css';

declare function acquireVsCodeApi(): WebviewApi;

mount(App, { target: document.getElementById('app')!, props: { api: acquireVsCodeApi() } });
