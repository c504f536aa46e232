/**
 * The one error type svc raises on purpose. The CLI turns it into one line and an exit
 * code in one place (src/cli/run-command.ts); anything else that escapes is svc's own bug.
 */
export type ErrorCode =
  | 'usage' // bad command line: exit 2
  | 'not-found' // a file or directory the user named is missing
  | 'invalid-project' // the project cannot be scanned or built as it stands
  | 'io' // the file system refused
  | 'exists' // a file svc would write is there already (svc init)
  | 'address' // the address or port to listen on cannot be used
  | 'engine' // the Docker engine cannot be reached or refused a request
  | 'build-failed' // a step of an image build failed
  | 'request-failed' // a service refused a request or could not be reached (svc call)
  | 'job-failed' // a job ended FAILED, TIMEOUT or CANCELLED (svc call, a test input)
  | 'wait-expired' // no answer or no end within --wait: the job keeps running (svc call)
  | 'provider'; // the provider's library stopped on its own (svc start --provider runpod)

export interface SourceLocation {
  file?: string;
  line?: number;
  field?: string;
}

export class SvcError extends Error {
  override readonly name = 'SvcError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly location: SourceLocation = {},
    /** Extra fields for the --json error object (an HTTP status, a job envelope). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get exitCode(): number {
    return this.code === 'usage' ? 2 : 1;
  }
}

/** `file:line: field: message`, leaving out the parts that are not known. */
export function formatLocated(location: SourceLocation, message: string): string {
  const where = [location.file, location.line?.toString()].filter(Boolean).join(':');
  const field = location.field ? `${location.field}: ` : '';
  return where ? `${where}: ${field}${message}` : `${field}${message}`;
}
