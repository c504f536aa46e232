import type { HttpReply } from './http/http-reply.js';
import { CallCancel } from '../worker/cancel-signal.js';

/**
 * A client that disconnects before its answer is written (or during its stream) cancels the
 * call; the route may cancel it too (a time-out) with `abort()`.
 */
export function cancelledWhenClientLeaves(reply: HttpReply): CallCancel {
  const signal = new CallCancel();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) signal.abort();
  });
  return signal;
}
