import { execa } from 'execa';
import { join } from 'node:path';
import { REPO_ROOT } from './svc.js';

const SCRIPT = join(REPO_ROOT, 'test/fixtures/clients/requests_call.py');

/** What test/fixtures/clients/requests_call.py sends; `data` values are Python's as JSON gives them (true is True). */
export interface RequestsCall {
  method?: string;
  url: string;
  params?: Record<string, unknown>;
  data?: Record<string, unknown>;
  json?: unknown;
  /** [field, file name, base64 content, content type or null for a part without one]. */
  files?: Array<[string, string, string, string | null]>;
}

/** Sends the request with Python's `requests` (pip install requests) and returns its status and JSON body. */
export async function callWithRequests(call: RequestsCall): Promise<{ status: number; body: any }> {
  const run = await execa('python3', [SCRIPT], { input: JSON.stringify(call), reject: false });
  if (run.exitCode !== 0) throw new Error(`requests_call.py failed (needs \`pip install requests\`):\n${run.stderr}`);
  return JSON.parse(run.stdout) as { status: number; body: any };
}
