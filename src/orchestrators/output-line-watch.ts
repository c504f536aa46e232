import { Transform } from 'node:stream';

/**
 * A pass-through for a process's output that resolves `seen` once a line matching `pattern`
 * has gone through: svc waits for a container's own "ready" line before printing its own,
 * so that the two appear in the order things happened.
 */
export function watchOutputFor(pattern: RegExp): { stream: Transform; seen: Promise<void> } {
  let found: () => void = () => {};
  const seen = new Promise<void>((resolve) => (found = resolve));
  let tail = '';
  let matched = false;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!matched) {
        const lines = (tail + chunk.toString('utf8')).split('\n');
        // The last piece may be the start of a line the next chunk ends; it is kept short.
        tail = (lines.pop() ?? '').slice(-4096);
        if (lines.some((line) => pattern.test(line))) {
          matched = true;
          tail = '';
        }
      }
      callback(null, chunk);
      if (matched) found();
    },
  });
  return { stream, seen };
}
