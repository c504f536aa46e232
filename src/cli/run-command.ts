import { SvcError, formatLocated } from '../svc-error.js';
import { Output, chooseOutputMode } from './output.js';

export interface CommonOptions {
  json?: boolean;
  debug?: boolean;
}

/**
 * Runs one command's action with the output conventions every command shares, and is the
 * single place where errors become a line on stderr and an exit code: 0 ok, 1 failure,
 * 2 usage. A stack trace appears only with --debug, and only for svc's own faults.
 */
export async function runCommand(
  options: CommonOptions,
  action: (output: Output) => Promise<void>,
): Promise<void> {
  const output = new Output(chooseOutputMode(options, process, process.env));
  try {
    await action(output);
  } catch (error) {
    process.exitCode = reportError(output, error);
  }
}

function reportError(output: Output, error: unknown): number {
  if (error instanceof SvcError) {
    output.error(formatLocated(error.location, error.message), {
      code: error.code,
      message: error.message,
      ...error.location,
      ...error.details,
    });
    if (error.stack) output.debug(error.stack);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  const hint = output.mode.debug ? '' : ' (run again with --debug for details)';
  output.error(`internal error: ${message}${hint}`, { code: 'internal', message });
  if (error instanceof Error && error.stack) output.debug(error.stack);
  return 1;
}
