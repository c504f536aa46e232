import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWrittenAtOnce } from '../../worker/transit-files.js';
import type { EndpointReport, LongString } from '../../worker/protocol.js';
import { base64ParametersOf } from '../endpoint-inputs.js';
import type { Arguments } from '../input-validation.js';
import { LONG_STRING_BYTES } from '../long-strings.js';
import { decodePlainBase64 } from '../plain-base64.js';

/*
 * A job keeps a media parameter's base64 as the text the client sent (job-arguments.ts): any
 * replica may run it, and a file staged by the one that took it would be on that machine's
 * disk. The server whose worker runs the job decodes it as the call is made, as a dedicated
 * call's is decoded (plain-base64.ts), into a file its worker reads as an upload: Node
 * decodes 2 MB of base64 in ~1 ms, the worker's binascii in ~7 ms (bench/RESULTS.md run 14).
 */

/** A job's call as it goes to the worker: the long strings still sent beside it, and the files staged for it. */
export interface StagedJobCall {
  longStrings: LongString[] | undefined;
  /** For the caller to delete once the call ends (transit-files.ts). */
  stagedFiles: string[];
}

const NO_PARAMETERS: ReadonlySet<string> = new Set();

export class JobMediaFiles {
  private readonly base64Parameters = new WeakMap<EndpointReport, ReadonlySet<string>>();

  /**
   * @param dir the worker's file directory (APIPOD_FILE_DIR)
   * @param endpointAt the endpoint at a path in the pool that serves now (the service may have been reloaded since the job came)
   */
  constructor(
    private readonly dir: string,
    private readonly endpointAt: (path: string) => EndpointReport | undefined,
  ) {}

  /**
   * Stages the base64 of each media parameter as the file it stands for, and puts the file's
   * reference in `callArguments` in its place: one of `longStrings`, or a long string in
   * `callArguments` itself (a job read back as JSON, after a restart or from Redis). Base64
   * the worker would read otherwise (plain-base64.ts), a file larger than what is written at
   * once, or one that cannot be written is left as it was: the worker decodes it, as before.
   */
  stage(endpointPath: string, callArguments: Arguments, longStrings: LongString[] | undefined): StagedJobCall {
    const endpoint = this.endpointAt(endpointPath);
    const base64Parameters = endpoint === undefined ? NO_PARAMETERS : this.base64ParametersOf(endpoint);
    const stagedFiles: string[] = [];
    const stagedAs = (parameter: string, base64: Buffer): boolean => {
      const path = this.stageDecoded(base64);
      if (path === null) return false;
      stagedFiles.push(path);
      callArguments[parameter] = { $file: { path, file_name: null, content_type: null } };
      return true;
    };
    const texts = longStrings?.filter((string) => !(base64Parameters.has(string.parameter) && stagedAs(string.parameter, string.bytes)));
    for (const parameter of base64Parameters) {
      const value = callArguments[parameter];
      // Base64 is ASCII, whose latin1 bytes are the string's; other text is no file's base64.
      if (typeof value === 'string' && value.length >= LONG_STRING_BYTES && Buffer.byteLength(value) === value.length) stagedAs(parameter, Buffer.from(value, 'latin1'));
    }
    return { longStrings: texts !== undefined && texts.length > 0 ? texts : undefined, stagedFiles };
  }

  private stageDecoded(base64: Buffer): string | null {
    // Made as the call is made, which cannot wait: a larger file is left to the worker.
    if (!isWrittenAtOnce(Math.floor((base64.length * 3) / 4))) return null;
    const file = decodePlainBase64(base64);
    if (file === null) return null;
    const path = join(this.dir, randomUUID());
    try {
      writeFileSync(path, file);
      return path;
    } catch {
      rmSync(path, { force: true }); // a full disk: the worker decodes the base64 itself
      return null;
    }
  }

  private base64ParametersOf(endpoint: EndpointReport): ReadonlySet<string> {
    let parameters = this.base64Parameters.get(endpoint);
    if (parameters === undefined) {
      parameters = base64ParametersOf(endpoint);
      this.base64Parameters.set(endpoint, parameters);
    }
    return parameters;
  }
}
