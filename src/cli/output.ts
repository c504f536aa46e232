import { Chalk, type ChalkInstance } from 'chalk';
import type { Writable } from 'node:stream';

/**
 * How a command talks to its caller, decided once per run: JSON for machines (`--json`),
 * a coloured summary for a person at a terminal, plain `label: value` lines otherwise.
 * Colour only on a TTY, never with NO_COLOR (https://no-color.org), FORCE_COLOR to insist.
 */
export interface OutputMode {
  json: boolean;
  tty: boolean;
  color: boolean;
  debug: boolean;
}

export interface Summary {
  headline: string;
  rows: Array<[label: string, value: string]>;
  warnings: string[];
}

export function chooseOutputMode(
  options: { json?: boolean; debug?: boolean },
  stream: { isTTY?: boolean },
  env: NodeJS.ProcessEnv,
): OutputMode {
  const tty = stream.isTTY === true;
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const forceColor = env.FORCE_COLOR !== undefined && !['', '0', 'false'].includes(env.FORCE_COLOR);
  return {
    json: options.json === true,
    tty,
    color: !noColor && (tty || forceColor),
    debug: options.debug === true,
  };
}

export class Output {
  private readonly paint: ChalkInstance;

  constructor(
    readonly mode: OutputMode,
    private readonly stdout: Writable = process.stdout,
    private readonly stderr: Writable = process.stderr,
  ) {
    this.paint = new Chalk({ level: mode.color ? 1 : 0 });
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
    this.stderr.write(`${this.paint.yellow('warning:')} ${message}\n`);
  }

  /**
   * One line on stderr; with --json also an error object on stdout, on one line so that
   * the JSON-lines output of `svc start` and `svc build --image` stays parseable.
   */
  error(message: string, machine: Record<string, unknown>): void {
    this.stderr.write(`${this.paint.red('error:')} ${message}\n`);
    if (this.mode.json) this.stdout.write(`${JSON.stringify({ error: machine })}\n`);
  }

  debug(text: string): void {
    if (this.mode.debug) this.stderr.write(`${this.paint.dim(text)}\n`);
  }
}

export function renderSummary(summary: Summary, tty: boolean, paint: ChalkInstance): string {
  if (!tty) {
    return [summary.headline, ...summary.rows.map(([label, value]) => `${label}: ${value}`)]
      .map((line) => `${line}\n`)
      .join('');
  }
  const width = Math.max(0, ...summary.rows.map(([label]) => label.length));
  const rows = summary.rows.map(([label, value]) => `  ${paint.dim(label.padEnd(width))}  ${value}`);
  return [paint.green('✔ ') + paint.bold(summary.headline), ...rows].map((line) => `${line}\n`).join('');
}
