import { formatLocated } from '../svc-error.js';

/**
 * Something a scan noticed but could go on past: an unparsable requirement line, a
 * syntax error in service.py, an `.env` file. It names the file (relative to the project
 * root, with forward slashes) and, where known, the line or field.
 */
export interface Diagnostic {
  file: string;
  line?: number;
  field?: string;
  message: string;
}

export function formatDiagnostic(diagnostic: Diagnostic): string {
  return formatLocated(diagnostic, diagnostic.message);
}
