import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { SvcError } from '../svc-error.js';

export interface DotenvFile {
  variables: Record<string, string>;
  /** Lines that set nothing (no `NAME=`), which the parser skips: a typo would otherwise go unseen. */
  ignoredLines: number[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][\w.-]*\s*=/;

/** The variables of a .env-format file (`NAME=value`, comments, quotes), parsed as Node's own --env-file parses them. */
export function readDotenvFile(file: string): DotenvFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new SvcError('usage', `--dotenv: cannot read it (${reason})`, { file });
  }
  const variables = Object.fromEntries(Object.entries(parseEnv(text)).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { variables, ignoredLines: ignoredLines(text) };
}

/** Lines neither blank, a comment, an assignment, nor inside a value quoted over several lines. */
function ignoredLines(text: string): number[] {
  const ignored: number[] = [];
  let openQuote: string | null = null;
  text.split(/\r?\n/).forEach((line, index) => {
    if (openQuote !== null) {
      if (line.includes(openQuote)) openQuote = null;
      return;
    }
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    if (!ASSIGNMENT.test(line)) {
      ignored.push(index + 1);
      return;
    }
    const value = line.slice(line.indexOf('=') + 1).trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && !value.slice(1).includes(quote)) openQuote = quote;
  });
  return ignored;
}

/** Sets the file's variables the environment lacks: what the shell exports wins, as with docker run -e. */
export function addMissing(env: NodeJS.ProcessEnv, variables: Record<string, string>): void {
  for (const [name, value] of Object.entries(variables)) env[name] ??= value;
}
