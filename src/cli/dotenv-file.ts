import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { SvcError } from '../svc-error.js';

/** The variables of a .env-format file (`NAME=value`, comments, quotes), parsed as Node's own --env-file parses them. */
export function readDotenvFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new SvcError('usage', `--dotenv: cannot read it (${reason})`, { file });
  }
  return Object.fromEntries(Object.entries(parseEnv(text)).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Sets the file's variables the environment lacks: what the shell exports wins, as with docker run -e. */
export function addMissing(env: NodeJS.ProcessEnv, variables: Record<string, string>): void {
  for (const [name, value] of Object.entries(variables)) env[name] ??= value;
}
