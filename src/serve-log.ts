/** What a running server reports; the CLI decides how it looks (src/cli/serve-log.ts). */
export interface ServeLog {
  info(message: string): void;
  request(line: string): void;
  worker(worker: number, call: string | null, stream: string, line: string): void;
  /** A line from the provider's library (runpod), which takes the jobs. */
  provider(name: string, stream: string, line: string): void;
  warn(message: string): void;
  /** A machine-readable event on stdout with --json (e.g. the address once listening). */
  event(name: string, fields: Record<string, unknown>): void;
  /** What the command produced (a test job's result) on stdout: JSON, an event with --json. */
  result(value: Record<string, unknown>): void;
  /** Writes what the log holds back (request lines) now: before a line written elsewhere, such as the command's last error. */
  flush(): void;
}

