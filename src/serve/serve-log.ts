/** What a running server reports; the CLI decides how it looks (src/cli/serve-log.ts). */
export interface ServeLog {
  info(message: string): void;
  request(line: string): void;
  worker(worker: number, call: string | null, stream: string, line: string): void;
  warn(message: string): void;
  /** A machine-readable event on stdout with --json (e.g. the address once listening). */
  event(name: string, fields: Record<string, unknown>): void;
}

