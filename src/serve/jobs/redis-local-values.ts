import type { JobArguments } from './job-journal.js';

/** How long a result this replica wrote stays here for a read of the job: the client waiting on it reads at once. */
const RESULT_KEPT_MS = 2_000;
/** The most this replica keeps at once (JSON bytes): past it, values are read back from Redis as before. */
const MOST_KEPT_BYTES = 64 * 2 ** 20;

/**
 * The large values of jobs this replica has in hand, which it would otherwise read back from
 * Redis: the arguments of a job it accepted, until a worker of its own takes the job (or the
 * job ends elsewhere), and a result it wrote, until the next read of that job (or for
 * RESULT_KEPT_MS). With one replica, or when the one that took a submit also runs the job
 * and answers its client, a 2 MB job then crosses to Redis twice rather than four times.
 * Both are what Redis holds: arguments never change, and a result is kept only once Redis
 * has taken this replica's end of the job, after which nothing changes it. Up to
 * MOST_KEPT_BYTES: many jobs queued here for other replicas to run hold no more than that.
 */
export class RedisLocalValues {
  private readonly args = new Map<string, { args: JobArguments; bytes: number }>();
  private readonly results = new Map<string, { stored: string | Buffer; bytes: number; timer: NodeJS.Timeout }>();
  private keptBytes = 0;

  /** `bytes`: the size of their stored JSON. */
  keepArguments(id: string, args: JobArguments, bytes: number): void {
    if (!this.hasRoomFor(bytes)) return;
    this.args.set(id, { args, bytes });
    this.keptBytes += bytes;
  }

  /** The job's arguments, if this replica accepted it and still keeps them; each is taken once (also to drop them as the job ends). */
  takeArguments(id: string): JobArguments | undefined {
    const kept = this.args.get(id);
    if (kept === undefined) return undefined;
    this.args.delete(id);
    this.keptBytes -= kept.bytes;
    return kept.args;
  }

  keepResult(id: string, stored: string | Buffer): void {
    this.takeResult(id);
    const bytes = Buffer.byteLength(stored);
    if (!this.hasRoomFor(bytes)) return;
    const timer = setTimeout(() => this.takeResult(id), RESULT_KEPT_MS);
    timer.unref();
    this.results.set(id, { stored, bytes, timer });
    this.keptBytes += bytes;
  }

  /** The stored result this replica wrote, once. */
  takeResult(id: string): string | Buffer | undefined {
    const kept = this.results.get(id);
    if (kept === undefined) return undefined;
    clearTimeout(kept.timer);
    this.results.delete(id);
    this.keptBytes -= kept.bytes;
    return kept.stored;
  }

  private hasRoomFor(bytes: number): boolean {
    return this.keptBytes + bytes <= MOST_KEPT_BYTES;
  }
}
