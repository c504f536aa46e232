import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSvc } from '../support/server.js';
import { runSvc } from '../support/svc.js';

/**
 * What `svc scan` calls a service error is what stops `svc start` with real workers, and the
 * nearest service it passes starts: each pair differs by one line.
 */
const HEAD = 'import os\nfrom apipod import APIPod\n\napp = APIPod(title="QA")\n\n';
const predict = (decorator: string, name = 'predict') => `${decorator}\ndef ${name}(text: str) -> dict:\n    return {"text": text}\n\n`;

const PAIRS: Array<{ rule: string; refused: string; started: string }> = [
  { rule: 'a route svc serves itself', refused: HEAD + predict('@app.get("/health")'), started: HEAD + predict('@app.post("/health")') },
  { rule: 'a trailing slash', refused: HEAD + predict('@app.endpoint("/x")', 'one') + predict('@app.endpoint("/x/")', 'two'), started: HEAD + predict('@app.endpoint("/x")', 'one') + predict('@app.endpoint("/y/")', 'two') },
  { rule: 'the /v1 copy', refused: HEAD + predict('@app.endpoint("/x")', 'one') + predict('@app.endpoint("/v1/x")', 'two'), started: HEAD + predict('@app.endpoint("/x")', 'one') + predict('@app.endpoint("/v2/x")', 'two') },
  { rule: 'a method svc cannot serve', refused: HEAD + predict('@app.endpoint("/x", methods=["FETCH"])'), started: HEAD + predict('@app.endpoint("/x", methods=["GET", "get"])') },
  { rule: 'no method', refused: HEAD + predict('@app.endpoint("/x", methods=[])'), started: HEAD + predict('@app.endpoint("/x", methods=["PUT"])') },
  { rule: '@app.get with methods=', refused: HEAD + predict('@app.get("/x", methods=["POST"])'), started: HEAD + predict('@app.get("/x")') },
  { rule: 'a path given twice', refused: HEAD + predict('@app.endpoint("/a", path="/b")'), started: HEAD + predict('@app.endpoint(path="/b")') },
  { rule: 'a path parameter', refused: HEAD + predict('@app.endpoint("/items/{item_id}")'), started: HEAD + predict('@app.endpoint("/items")') },
  { rule: 'one path, two functions', refused: HEAD + predict('@app.get("/x")', 'one') + predict('@app.post("/x")', 'two'), started: HEAD + predict('@app.endpoint("/x", methods=["GET", "POST"])') },
  {
    rule: 'one path in both arms of an if',
    refused: HEAD + predict('@app.endpoint("/x")', 'one') + predict('@app.endpoint("/x")', 'two'),
    started: HEAD + `if os.environ.get("NEVER_SET_HERE"):\n    @app.endpoint("/x")\n    def one(text: str) -> dict:\n        return {}\nelse:\n    @app.endpoint("/x")\n    def two(text: str) -> dict:\n        return {}\n`,
  },
  { rule: 'a compute the toolkit does not know', refused: HEAD.replace('title="QA"', 'title="QA", compute="gpu"') + predict('@app.endpoint("/x")'), started: HEAD.replace('title="QA"', 'title="QA", compute="serverless"') + predict('@app.endpoint("/x")') },
  { rule: 'APIPod not imported', refused: HEAD.replace('from apipod import APIPod\n', '') + predict('@app.endpoint("/x")'), started: HEAD + predict('@app.endpoint("/x")') },
  { rule: 'two apps, none named app', refused: HEAD.replace('app = ', 'first = APIPod()\nsecond = ') + predict('@second.endpoint("/x")'), started: HEAD.replace('app = ', 'first = APIPod()\napp = ') + predict('@app.endpoint("/x")') },
  { rule: 'an app made below its endpoints', refused: 'from apipod import APIPod\n\n' + predict('@app.endpoint("/x")') + 'app = APIPod()\n', started: HEAD + predict('@app.endpoint("/x")') },
  { rule: 'no app at all', refused: 'from apipod import APIPod\n\nif __name__ == "__main__":\n    app = APIPod()\n', started: 'from apipod import APIPod\n\nif __name__ != "__main__":\n    app = APIPod()\n\n' + predict('@app.endpoint("/x")') },
];

function project(source: string): string {
  const directory = mkdtempSync(join(tmpdir(), 'svc-agree-'));
  writeFileSync(join(directory, 'service.py'), source);
  return directory;
}

async function serviceErrors(directory: string): Promise<string[]> {
  const scan = await runSvc(['scan', directory, '--json']);
  expect(scan.exitCode, scan.stderr).toBe(0);
  return (JSON.parse(scan.stdout) as { manifest: { service_errors: string[] } }).manifest.service_errors;
}

describe('svc scan refuses what svc start refuses, and passes what it starts', () => {
  for (const { rule, refused, started } of PAIRS) {
    it(rule, async () => {
      const refusedProject = project(refused);
      expect(await serviceErrors(refusedProject)).not.toEqual([]);
      const start = await runSvc(['start', refusedProject, '--port', '0', '--host', '127.0.0.1']);
      expect(start.exitCode, start.stderr).toBe(1);

      const startedProject = project(started);
      expect(await serviceErrors(startedProject)).toEqual([]);
      const server = await startSvc([startedProject]);
      expect(await server.stop()).toBe(0);
    }, 60_000);
  }
});

describe('svc scan lists the endpoints and title of the app svc start serves', () => {
  const shapes: Record<string, string> = {
    'two apps, app the second': 'from apipod import APIPod\n\nadmin = APIPod(title="Admin")\napp = APIPod(title="QA")\n\n' + predict('@admin.endpoint("/reload")', 'reload') + predict('@app.endpoint("/predict")'),
    'app made again': 'from apipod import APIPod\n\napp = APIPod(title="First")\n\n' + predict('@app.endpoint("/old")', 'old') + 'app = APIPod(title="QA")\n\n' + predict('@app.endpoint("/predict")'),
    'one app, three names': 'from apipod import APIPod\n\napp = service = APIPod(title="QA")\napi = app\n\n' + predict('@service.endpoint("/a")', 'a') + predict('@api.endpoint("/b")', 'b'),
    'made in a walrus': 'from apipod import APIPod\n\n(app := APIPod(title="QA"))\n\n' + predict('@app.endpoint("/predict")'),
  };
  for (const [shape, source] of Object.entries(shapes)) {
    it(shape, async () => {
      const directory = project(source);
      const scan = await runSvc(['scan', directory, '--json']);
      const manifest = (JSON.parse(scan.stdout) as { manifest: { title: string; endpoints: Array<{ path: string }> } }).manifest;
      const server = await startSvc([directory]);
      try {
        const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { info: { title: string }; paths: Record<string, unknown> };
        const served = Object.keys(document.paths).filter((path) => !path.startsWith('/v1/'));
        expect([manifest.title, manifest.endpoints.map((endpoint) => endpoint.path)]).toEqual([document.info.title, served]);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }, 60_000);
  }
});
