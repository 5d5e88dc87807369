// The webview's side of the protocol (../protocol.ts): sends the ready handshake, matches replies to
// requests by id (exactly one reply or error each), and hands validated notifications to the app. Anything
// the host (or a stray postMessage) sends that does not validate is ignored.
import { parseHostMessage, type ReceivedHostMessage, type WebviewCommand, type WebviewRequestBody } from '../protocol';

export interface WebviewApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

export type HostNotification = Extract<
  ReceivedHostMessage,
  { type: 'didChangeVersions' | 'didChangeBusy' | 'didChangeAgents' }
>;

export class HostClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  /** Messages dropped because they did not validate (the tests read it). */
  ignored = 0;

  constructor(
    private readonly api: WebviewApi,
    private readonly onNotification: (message: HostNotification) => void,
  ) {}

  start(target: Window): void {
    target.addEventListener('message', (event: MessageEvent) => this.receive(event.data));
    this.command({ type: 'ready', protocol: 1 });
  }

  receive(raw: unknown): void {
    const message = parseHostMessage(raw);
    if (!message) {
      this.ignored++;
      return;
    }
    if (message.type === 'reply' || message.type === 'error') {
      const waiting = this.pending.get(message.id);
      if (!waiting) return; // not ours, or answered already: one reply per request
      this.pending.delete(message.id);
      if (message.type === 'reply') waiting.resolve();
      else waiting.reject(new Error(message.message));
      return;
    }
    this.onNotification(message);
  }

  command(message: WebviewCommand): void {
    this.api.postMessage(message);
  }

  request(body: WebviewRequestBody): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.api.postMessage({ ...body, id });
    });
  }
}
