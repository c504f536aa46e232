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

/**
 * By file, then line; within a file, those without a line come last, and equal places keep
 * the order they were found in. Files compare by code unit, not locale, so every machine
 * writes the same manifest.
 */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || (a.line ?? Infinity) - (b.line ?? Infinity),
  );
}

/** Records a diagnostic; with `failure`, one that fails the import or svc start, an error too when that is `certain`. */
export type Report = (line: number | undefined, message: string, failure?: { certain: boolean }) => void;
