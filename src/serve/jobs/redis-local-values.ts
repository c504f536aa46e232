import type { JobArguments } from './job-journal.js';

/** How long a result this replica wrote stays here for a read of the job: the client waiting on it reads at once. */
const RESULT_KEPT_MS = 2_000;

/**
 * The large values of jobs this replica has in hand, which it would otherwise read back from
 * Redis: the arguments of a job it accepted, until a worker of its own takes the job (or the
 * job ends elsewhere), and a result it wrote, until the next read of that job (or for
 * RESULT_KEPT_MS). With one replica, or when the one that took a submit also runs the job
 * and answers its client, a 2 MB job then crosses to Redis twice rather than four times.
 * Both are what Redis holds: arguments never change, and a result is kept only once Redis
 * has taken this replica's end of the job, after which nothing changes it.
 */
export class RedisLocalValues {
  private readonly args = new Map<string, JobArguments>();
  private readonly results = new Map<string, { stored: string | Buffer; timer: NodeJS.Timeout }>();

  keepArguments(id: string, args: JobArguments): void {
    this.args.set(id, args);
  }

  /** The job's arguments, if this replica accepted it and still keeps them; each is taken once (also to drop them as the job ends). */
  takeArguments(id: string): JobArguments | undefined {
    const args = this.args.get(id);
    this.args.delete(id);
    return args;
  }

  keepResult(id: string, stored: string | Buffer): void {
    this.dropResult(id);
    const timer = setTimeout(() => this.results.delete(id), RESULT_KEPT_MS);
    timer.unref();
    this.results.set(id, { stored, timer });
  }

  /** The stored result this replica wrote, once. */
  takeResult(id: string): string | Buffer | undefined {
    const kept = this.results.get(id);
    this.dropResult(id);
    return kept?.stored;
  }

  private dropResult(id: string): void {
    const kept = this.results.get(id);
    if (kept === undefined) return;
    clearTimeout(kept.timer);
    this.results.delete(id);
  }
}
