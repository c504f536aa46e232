import type { FastifyReply } from 'fastify';
import type { CancelSignal } from '../worker/cancel-signal.js';

/**
 * A client that disconnects before its answer is written (or during its stream) cancels the
 * call; the route may cancel it too (a time-out) with `abort()`.
 */
export function cancelledWhenClientLeaves(reply: FastifyReply): RequestCancel {
  const signal = new RequestCancel();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) signal.abort();
  });
  return signal;
}

/** Fires its listeners once, on the first abort; every listener is a one-shot. */
export class RequestCancel implements CancelSignal {
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
