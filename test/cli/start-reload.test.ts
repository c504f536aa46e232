import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { copyProject, REPO_ROOT, runSvc } from '../support/svc.js';

const SERVICE = (body: string) => `from apipod import APIPod
import time

app = APIPod(title="Reloaded")


@app.endpoint("/answer")
def answer() -> dict:
    return {"value": ${body}}


@app.endpoint("/slow")
def slow(seconds: float) -> dict:
    time.sleep(seconds)
    return {"slept": seconds}
`;

/** Waits until the log has grown past `from` with a line matching `pattern`. */
async function logLine(server: RunningSvc, pattern: RegExp, from: number): Promise<string> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const match = server.logs().slice(from).match(pattern);
    if (match) return match[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no line matching ${pattern} in:\n${server.logs().slice(from)}`);
}

/** Writes the file and waits for the reload it causes to be ready (or to fail). */
async function edit(server: RunningSvc, file: string, text: string, outcome: RegExp = /is ready on/): Promise<string> {
  const from = server.logs().length;
  writeFileSync(file, text);
  await logLine(server, /changed: starting workers of the new code/, from);
  return logLine(server, outcome, from);
}

describe('svc start --reload', () => {
  let server: RunningSvc | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('serves the new code after an edit, keeps the last good workers through a broken one, and follows added endpoints in the routes and /openapi.json', async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    const file = join(project, 'service.py');
    writeFileSync(file, SERVICE('1'));
    server = await startSvc([project, '--reload']);
    expect((await postJson(`${server.url}/answer`, {})).body).toEqual({ value: 1 });

    await edit(server, file, SERVICE('2'));
    expect((await postJson(`${server.url}/answer`, {})).body).toEqual({ value: 2 });

    // A change in a tool's directory or a virtualenv reloads nothing.
    mkdirSync(join(project, '__pycache__'));
    writeFileSync(join(project, '__pycache__', 'x.py'), '');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(server.logs()).not.toContain('x.py changed');

    const broken = await edit(server, file, SERVICE('2 +'), /warning: .*/);
    expect(broken).toMatch(/^warning: \S*service\.py:9: importing the service failed: SyntaxError: .*; the last good workers keep serving until a change fixes it$/);
    expect((await postJson(`${server.url}/answer`, {})).body).toEqual({ value: 2 });

    await edit(server, file, `${SERVICE('3')}\n\n@app.endpoint("/added")\ndef added() -> str:\n    return "new"\n`);
    expect((await postJson(`${server.url}/answer`, {})).body).toEqual({ value: 3 });
    expect((await postJson(`${server.url}/added`, {})).body).toBe('new');
    const paths = Object.keys(((await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: object }).paths);
    expect(paths).toContain('/added');

    await edit(server, file, SERVICE('4'));
    expect((await postJson(`${server.url}/added`, {})).status).toBe(404);
    const after = Object.keys(((await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: object }).paths);
    expect(after).not.toContain('/added');
  }, 120_000);

  it('lets a call running during a reload finish on the old code, and runs a queued job there too', async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    const file = join(project, 'service.py');
    writeFileSync(file, SERVICE('1'));
    server = await startSvc([project, '--reload', '--compute', 'serverless']);
    const running = await postJson(`${server.url}/slow`, { seconds: 3 });
    const queued = await postJson(`${server.url}/slow`, { seconds: 0.5 });
    expect([running.body.status, queued.body.status]).toEqual(['PROCESSING', 'QUEUED']);
    await edit(server, file, SERVICE('2'));
    const answer = await postJson(`${server.url}/answer`, {}, { prefer: 'wait=10' });
    expect([answer.body.status, answer.body.result]).toEqual(['FINISHED', { value: 2 }]);
    for (const [job, seconds] of [[running, 3], [queued, 0.5]] as const) {
      const ended = await fetch(`${server.url}/v1/jobs/${job.body.id}`, { headers: { prefer: 'wait=10' } }).then((response) => response.json() as Promise<any>);
      expect([ended.status, ended.result]).toEqual(['FINISHED', { slept: seconds }]);
    }
  }, 120_000);

  it('says no workers serve when the first start fails, and serves once a change fixes it', async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    const file = join(project, 'service.py');
    writeFileSync(file, SERVICE('1').replace('import time', 'import not_a_module'));
    server = await startSvc([project, '--reload'], {}, { until: 'starting' });
    await logLine(server, /no workers serve until a change fixes it/, 0);
    const refused = await postJson(`${server.url}/answer`, {});
    expect([refused.status, refused.body.error.code]).toEqual([503, 'no_workers']);
    expect(refused.body.error.message).toContain("ModuleNotFoundError: No module named 'not_a_module'");
    await edit(server, file, SERVICE('5'));
    expect((await postJson(`${server.url}/answer`, {})).body).toEqual({ value: 5 });
  }, 120_000);

  it('refuses --reload with the docker orchestrator', async () => {
    const run = await runSvc(['start', 'examples/hello', '--reload', '--orchestrator', 'docker']);
    expect([run.exitCode, run.stderr.trim()]).toEqual([
      2,
      'error: --reload restarts local workers and cannot change a built image: leave out --orchestrator docker, or svc build --image after each change',
    ]);
  });
});
