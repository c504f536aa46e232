import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runSvc } from '../support/svc.js';

const HELLO = join(REPO_ROOT, 'examples/hello');

describe('svc start on the command line', () => {
  it('rejects values outside the enums with one line and exit 2', async () => {
    const run = await runSvc(['start', HELLO, '--compute', 'gpu-cloud']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe(
      "error: option '--compute <mode>' argument 'gpu-cloud' is invalid. expected one of dedicated, serverless",
    );
  });

  it('rejects a provider svc does not implement, naming it as such', async () => {
    const run = await runSvc(['start', HELLO, '--provider', 'azure']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("'azure' is not available in this version of svc");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('rejects a port that is not a port', async () => {
    const run = await runSvc(['start', HELLO, '--port', '80000']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('expected a whole number from 0 to 65535');
  });

  it('names a missing keys file', async () => {
    const run = await runSvc(['start', HELLO, '--api-keys', '/nonexistent/keys.json', '--port', '0']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('/nonexistent/keys.json');
  });
});
