import { Chalk, type ChalkInstance } from 'chalk';
import type { Writable } from 'node:stream';

/**
 * How a command talks to its caller, decided once per run: JSON for machines (`--json`),
 * a coloured summary for a person at a terminal, plain `label: value` lines otherwise.
 * Colour only on a TTY, never with NO_COLOR (https://no-color.org), FORCE_COLOR to insist.
 */
export interface OutputMode {
  json: boolean;
  /** stdout is a terminal. */
  tty: boolean;
  /** Colour on stdout, and on stderr: each is decided by its own stream (`svc start 2>log` writes no escapes). */
  color: boolean;
  stderrColor: boolean;
  debug: boolean;
}

export interface Summary {
  headline: string;
  rows: Array<[label: string, value: string]>;
  warnings: string[];
}

export function chooseOutputMode(
  options: { json?: boolean; debug?: boolean },
  streams: { stdout: { isTTY?: boolean }; stderr: { isTTY?: boolean } },
  env: NodeJS.ProcessEnv,
): OutputMode {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const forceColor = env.FORCE_COLOR !== undefined && !['', '0', 'false'].includes(env.FORCE_COLOR);
  const colorOn = (stream: { isTTY?: boolean }) => !noColor && (stream.isTTY === true || forceColor);
  return {
    json: options.json === true,
    tty: streams.stdout.isTTY === true,
    color: colorOn(streams.stdout),
    stderrColor: colorOn(streams.stderr),
    debug: options.debug === true,
  };
}

export class Output {
  private readonly paint: ChalkInstance;
  private readonly paintStderr: ChalkInstance;

  constructor(
    readonly mode: OutputMode,
    private readonly stdout: Writable = process.stdout,
    private readonly stderr: Writable = process.stderr,
  ) {
    this.paint = new Chalk({ level: mode.color ? 1 : 0 });
    this.paintStderr = new Chalk({ level: mode.stderrColor ? 1 : 0 });
  }

  /** The command's result: `machine` as JSON with --json, else `summary` for people. */
  result(summary: Summary, machine: unknown): void {
    if (this.mode.json) {
      this.stdout.write(`${JSON.stringify(machine, null, 2)}\n`);
      return;
    }
    this.stdout.write(renderSummary(summary, this.mode.tty, this.paint));
    for (const warning of summary.warnings) this.warn(warning);
  }

  warn(message: string): void {
    this.stderr.write(`${this.paintStderr.yellow('warning:')} ${printable(message)}\n`);
  }

  /**
   * One line on stderr; with --json also an error object on stdout, on one line so that
   * the JSON-lines output of `svc start` and `svc build --image` stays parseable.
   */
  error(message: string, machine: Record<string, unknown>): void {
    this.stderr.write(`${this.paintStderr.red('error:')} ${printable(message)}\n`);
    if (this.mode.json) this.stdout.write(`${JSON.stringify({ error: machine })}\n`);
  }

  debug(text: string): void {
    if (this.mode.debug) this.stderr.write(`${this.paintStderr.dim(text)}\n`);
  }
}

export function renderSummary(summary: Summary, tty: boolean, paint: ChalkInstance): string {
  const headline = printable(summary.headline);
  if (!tty) {
    return [headline, ...summary.rows.map(([label, value]) => `${label}: ${printable(value)}`)]
      .map((line) => `${line}\n`)
      .join('');
  }
  const width = Math.max(0, ...summary.rows.map(([label]) => label.length));
  const rows = summary.rows.map(([label, value]) => `  ${paint.dim(label.padEnd(width))}  ${printable(value)}`);
  return [paint.green('✔ ') + paint.bold(headline), ...rows].map((line) => `${line}\n`).join('');
}

/**
 * Text from the project (a requirement line, a title, a path) shown with its control
 * characters escaped: a cloned repository must not clear the screen, retitle the terminal
 * or hide a warning with escape sequences.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (character) => `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
