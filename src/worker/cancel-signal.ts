/**
 * How a caller cancels a call, queued or running: the part of AbortSignal the pool and the
 * workers use. An AbortSignal is one (jobs use them); the gateway gives each request a
 * lighter one (src/serve/client-disconnect.ts), since an AbortController and EventTarget
 * listeners per request cost more than the rest of the request's own work.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
