import { Chalk } from 'chalk';
import type { BuildEvent } from '../image/build-events.js';
import type { OutputMode } from './output.js';

/** Lines of a failed step's output shown with the failure. */
export const FAILED_STEP_TAIL = 25;

export interface BuildProgressView {
  event(event: BuildEvent): void;
  /** A note before or after the build (scan, .dockerignore, preflight warnings). */
  note(message: string): void;
  /** Ends the live line, if any. */
  close(): void;
}

interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { columns?: number };
}

/**
 * How `svc build --image` shows progress: with --json one JSON event per line on stdout; on
 * a terminal a line per finished step and a live line under it with the running step's
 * latest output; otherwise one plain line per finished step. A failed step is shown with
 * the tail of its output, whatever the mode.
 */
export function createBuildProgressView(mode: OutputMode, streams: Streams = { stdout: process.stdout, stderr: process.stderr }): BuildProgressView {
  const paint = new Chalk({ level: mode.stderrColor ? 1 : 0 });
  const err = (line: string) => streams.stderr.write(`${line}\n`);
  let current: { step: number; total: number; instruction: string; started: number; cached: boolean } | null = null;
  let tail: string[] = [];
  let liveShown = false;

  const clearLive = () => {
    if (liveShown) streams.stderr.write('\r\u001b[2K');
    liveShown = false;
  };
  const showLive = (text: string) => {
    if (!mode.tty || mode.json || current === null) return;
    const width = Math.max(20, (streams.stderr.columns ?? 100) - 1);
    const line = `  ${paint.dim(`${current.step}/${current.total}`)} ${text}`.slice(0, width + 20);
    streams.stderr.write(`\r\u001b[2K${line.length > width ? line.slice(0, width) : line}`);
    liveShown = true;
  };
  const finishStep = () => {
    if (current === null) return;
    const seconds = ((Date.now() - current.started) / 1000).toFixed(1);
    const fate = current.cached ? paint.dim('cached') : `${seconds}s`;
    clearLive();
    if (mode.json) return;
    const room = Math.max(20, (streams.stderr.columns ?? 100) - 20);
    const instruction = current.instruction.length > room ? `${current.instruction.slice(0, room - 1)}…` : current.instruction;
    err(mode.tty
      ? `${paint.green('✔')} ${paint.dim(`${current.step}/${current.total}`)} ${instruction} ${paint.dim(`(${fate})`)}`
      : `step ${current.step}/${current.total} ${current.cached ? 'cached' : `done in ${seconds}s`}: ${current.instruction}`);
  };

  return {
    event(event) {
      if (mode.json) streams.stdout.write(`${JSON.stringify({ event: `build.${event.type}`, ...withoutType(event) })}\n`);
      switch (event.type) {
        case 'step':
          finishStep();
          current = { step: event.step, total: event.total, instruction: oneLine(event.instruction), started: Date.now(), cached: false };
          tail = [];
          showLive(current.instruction);
          break;
        case 'cached':
          if (current) current.cached = true;
          break;
        case 'log':
          tail.push(event.line);
          if (tail.length > FAILED_STEP_TAIL) tail.shift();
          showLive(paint.dim(oneLine(event.line)));
          break;
        case 'pull':
          showLive(paint.dim(event.message));
          break;
        case 'warning':
          clearLive();
          if (!mode.json) err(`${paint.yellow('warning:')} ${event.message}`);
          break;
        case 'stage-built':
          finishStep();
          current = null;
          break;
        case 'error': {
          clearLive();
          const header = current ? `step ${current.step}/${current.total} failed: ${current.instruction}` : 'the build failed';
          err(paint.red(header));
          if (tail.length) {
            err(paint.dim(`last ${tail.length} line${tail.length === 1 ? '' : 's'} of its output:`));
            for (const line of tail) err(`  ${line}`);
          }
          current = null;
          break;
        }
        case 'layer':
          break;
      }
    },
    note(message) {
      clearLive();
      if (mode.json) streams.stdout.write(`${JSON.stringify({ event: 'build.note', message })}\n`);
      else err(`${paint.bold('svc')} ${message}`);
    },
    close() {
      clearLive();
    },
  };
}

function withoutType(event: BuildEvent): Record<string, unknown> {
  const { type: _type, ...rest } = event;
  return rest;
}

/** Instructions can be long (the LABEL holds the manifest): one line, cut at 160 characters. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}
