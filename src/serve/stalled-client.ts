import type { ServerResponse } from 'node:http';

/** Responses whose client was let go for taking nothing, which the request's log line says. */
const stalled = new WeakSet<ServerResponse>();

/** Closes the connection of a client that took nothing for `--send-timeout`, and frees what waited for it. */
export function disconnectStalled(response: ServerResponse): void {
  stalled.add(response);
  response.destroy();
}

export function wasDisconnectedStalled(response: ServerResponse): boolean {
  return stalled.has(response);
}

/**
 * Disconnects a client that takes none of what waits to be sent to it for `timeoutMs`
 * (`--send-timeout`): an event stream's writes pile up in memory otherwise, for as long as
 * the client stays connected without reading. Call the returned function with what each
 * `write` returned: false starts the clock, the socket draining stops it.
 */
export function disconnectWhenStalled(response: ServerResponse, timeoutMs: number): (accepted: boolean) => void {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  response.on('drain', stop);
  response.once('close', stop);
  return (accepted) => {
    if (accepted || timer !== undefined) return;
    timer = setTimeout(() => disconnectStalled(response), timeoutMs);
    timer.unref();
  };
}
