import type { Server } from 'node:http';
import type { JobBackend } from '../serve/jobs/job-backend.js';
import type { ServeLog } from '../serve-log.js';

/** The least time a stopping server gives clients to read jobs that ended while it stopped: a poll a second or two apart. */
const ENDED_JOBS_READING_MS = 5_000;

/**
 * The end of a stop, once every call has ended: clients get until the grace period's
 * `deadline` (and at least a few seconds) to read the jobs that ended unread, those still
 * waiting on a job (`Prefer: wait`) are answered with it as it is, then the server closes,
 * and the keep-alive connections clients hold open go with it.
 */
export async function closeWhenJobsRead(options: {
  jobStore: JobBackend;
  deadline: number;
  log: ServeLog;
  server: Server;
  close: () => Promise<unknown>;
}): Promise<void> {
  const { jobStore, server } = options;
  if (jobStore.unreadCount > 0) {
    const readingMs = Math.max(options.deadline - Date.now(), ENDED_JOBS_READING_MS);
    options.log.info(`waiting up to ${Math.ceil(readingMs / 1000)} s for clients to read ${jobStore.unreadCount} ended job(s)`);
    await jobStore.whenEndedJobsRead(readingMs);
  }
  jobStore.stopWaiting();
  const closing = options.close();
  server.closeIdleConnections();
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  server.closeAllConnections();
  await closing;
}
