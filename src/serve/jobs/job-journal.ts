import type { PlainStringText } from '../../worker/json-text.js';
import type { Value } from '../../worker/protocol.js';
import type { Job } from './job.js';

/**
 * A job's arguments as its call takes them: kept until it ends, so that it can be run again.
 * A long string the client sent stays its bytes (PlainStringText); JSON.stringify writes it as
 * the string, so a store that serialises arguments needs nothing of its own for it.
 */
export type JobArguments = { [parameter: string]: Value | PlainStringText };

/** A job as a journal kept it: what the store shows, and what a restart needs to go on. */
export interface JournaledJob {
  job: Job;
  /** Null once the job has ended. */
  args: JobArguments | null;
  /** How many times a worker started it. */
  runs: number;
  /** Whether a client has seen how it ended (the store's unread accounting). */
  read: boolean;
}

/**
 * The durable side of a job store: every job, with its arguments, from the moment it is
 * accepted until its retention ends, and the claim of one server on them. The store keeps its
 * jobs in memory as well and tells watchers of changes itself; the journal is what is left
 * when the process is killed. A job's submit is answered once `record` is `persisted` (the
 * jobs of one turn of the event loop share a commit); the other writes are grouped over a
 * few milliseconds, as losing the last of them to a crash only runs a job again. A job whose
 * submit waits for its end (`Prefer: wait`) may be recorded only as it is answered: until
 * then no client holds its id, so a crash loses only a call no client was told was accepted.
 */
export interface JobJournal {
  /** Where the jobs are, as --job-store names it (sqlite:PATH). */
  readonly location: string;
  /** A job just accepted, with its arguments: on disk once `persisted` resolves. */
  record(job: Job, args: JobArguments): void;
  /** A job just accepted whose submit waits for it: written with what it has become by `answering`. */
  recordWhenAnswered(job: Job, args: JobArguments): void;
  /** The submit of a job recorded when answered is about to be: resolves once it is on disk. */
  answering(id: string): Promise<void>;
  /** Resolves when every job recorded so far is on disk; its submit may then be answered. */
  persisted(): Promise<void>;
  /** A worker took the job: counts a run. */
  started(job: Job): void;
  /** The job ended: its outcome, and its arguments dropped. */
  ended(job: Job): void;
  /** A client has seen how the job ended. */
  read(id: string): void;
  /** The job's retention ended. */
  forget(id: string): void;
  /** Every job kept, read once as the server starts, oldest first. */
  load(): JournaledJob[];
  /** Writes what is pending and lets the file go to the next server. */
  close(): void;
}
