import { SvcError } from '../svc-error.js';

/**
 * Quoting for the three places a value lands in a generated Dockerfile. Values from the
 * project never reach the Dockerfile raw: each goes through one of these, or through a
 * grammar check in project-values.ts that leaves nothing to quote.
 *
 * The rules follow the Dockerfile reference (https://docs.docker.com/reference/dockerfile/):
 * an instruction ends at a newline unless the line ends with the escape character `\`;
 * LABEL, ENV, ARG and COPY words are expanded like a shell word (quotes, `\` escapes, `$`
 * variables); exec-form CMD/ENTRYPOINT/HEALTHCHECK arguments are a JSON array, with no
 * variable expansion; RUN lines are /bin/sh.
 */

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** A word for LABEL/ENV values: double-quoted, with `\`, `"` and `$` escaped. No newlines. */
export function quoteWord(value: string): string {
  if (CONTROL_CHARACTERS.test(value)) {
    throw new Error(`internal: a Dockerfile word cannot hold control characters: ${JSON.stringify(value)}`);
  }
  return `"${value.replace(/[\\"$]/g, '\\$&')}"`;
}

/** Exec form (`["node", "svc.js"]`): JSON, which escapes quotes, backslashes and newlines itself. */
export function execForm(args: readonly string[]): string {
  return `[${args.map((arg) => JSON.stringify(arg)).join(', ')}]`;
}

/** One argument for /bin/sh in a RUN line: single-quoted, a `'` becomes `'\''`. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:=@+-]+$/.test(value) && !value.startsWith('-')) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Text from the project shown in a label or a comment: control characters (newlines
 * included) become spaces, so it stays one line and cannot start an instruction.
 */
export function singleLine(text: string, maxLength = 256): string {
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}

/** A `# comment` line: single-line text after the hash, so the next line is still ours. */
export function comment(text: string): string {
  return `# ${singleLine(text, 1000)}`;
}

/** ARG and build-arg names: what the Dockerfile reference allows in `${NAME}`. */
export function checkBuildArgName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new SvcError('usage', `--build-arg name '${singleLine(name, 80)}' is not a valid variable name (letters, digits, _)`);
  }
  return name;
}
