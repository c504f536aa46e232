import { Chalk, type ChalkInstance } from 'chalk';
import { hasEnded, type ProgressUpdate, type RetryNotice } from '../client/index.js';
import type { OutputMode } from './output.js';

/** How `svc call` shows a job while it runs, on stderr, so stdout carries only the result. */
export interface CallProgress {
  update(update: ProgressUpdate): void;
  /** One line that must be seen whatever the mode (a retry the client waits for), above the bar. */
  notice(line: string): void;
  /** Clears the bar before anything else is written. */
  end(): void;
}

const BAR_WIDTH = 24;

/**
 * A bar redrawn in place when stderr is a terminal; one plain line per change otherwise
 * (CI logs); nothing with --json.
 */
export function createCallProgress(mode: OutputMode, stderr: NodeJS.WriteStream = process.stderr): CallProgress {
  const notice = (line: string) => stderr.write(`${line}\n`);
  if (mode.json) return { update: () => {}, notice, end: () => {} };
  const paint = new Chalk({ level: mode.stderrColor ? 1 : 0 });
  if (!stderr.isTTY) {
    return {
      notice,
      // The end has its own line (or error) once the call returns.
      update: (update) => {
        if (!hasEnded(update.status)) stderr.write(`${describeProgress(update)}\n`);
      },
      end: () => {},
    };
  }
  let drawn = false;
  return {
    notice: (line) => {
      stderr.write(`${drawn ? '\r\x1b[2K' : ''}${line}\n`);
      drawn = false;
    },
    update: (update) => {
      stderr.write(`\r\x1b[2K${renderProgressBar(update, paint)}`);
      drawn = true;
    },
    end: () => {
      if (drawn) stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

/**
 * `waiting 5 s to retry (1 of 5): POST http://host/x answered 503: the queue of /x is full;
 * retry later (Retry-After: 5)`: why a call seems to hang.
 */
export function describeRetry(notice: RetryNotice): string {
  const seconds = notice.delayMs / 1000;
  const after = notice.retryAfter === null ? '' : ` (Retry-After: ${notice.retryAfter})`;
  return `waiting ${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s to retry (${notice.attempt} of ${notice.maxAttempts}): ${notice.method} ${notice.url} answered ${notice.status}: ${notice.reason}${after}`;
}

/** `PROCESSING 50% step 2 of 4`: the status, the progress when known, the message when any. */
export function describeProgress(update: ProgressUpdate): string {
  return [update.status, percent(update.progress), update.message].filter(Boolean).join(' ');
}

export function renderProgressBar(update: ProgressUpdate, paint: ChalkInstance, width = BAR_WIDTH): string {
  const share = update.progress === null || Number.isNaN(update.progress) ? null : Math.min(1, Math.max(0, update.progress));
  const filled = share === null ? 0 : Math.round(share * width);
  const bar = paint.cyan('█'.repeat(filled)) + paint.dim('░'.repeat(width - filled));
  const parts = [bar, (percent(share) ?? '').padStart(4), paint.bold(update.status), update.message ? paint.dim(update.message) : ''];
  return parts.filter(Boolean).join(' ');
}

function percent(progress: number | null): string | null {
  return progress === null || Number.isNaN(progress) ? null : `${Math.round(progress * 100)}%`;
}
