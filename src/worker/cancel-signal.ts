/**
 * How a caller cancels a call, queued or running: the part of AbortSignal the pool and the
 * workers use. An AbortSignal is one; the gateway gives each request and job a CallCancel,
 * since an AbortController and EventTarget listeners per call cost more than the rest of the
 * request's own work (~7 µs a job).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A CancelSignal its owner aborts: it fires its listeners once, on the first abort; every listener is a one-shot. */
export class CallCancel implements CancelSignal {
  aborted = false;
  private listeners: Array<() => void> = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners.indexOf(listener);
    if (index !== -1) this.listeners.splice(index, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
}
