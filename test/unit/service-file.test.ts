import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scan/diagnostic.js';
import { loadPythonParser, type PythonParser } from '../../src/scan/python-parser.js';
import { readServiceFile } from '../../src/scan/service-file.js';
import { expectGolden } from '../support/golden.js';

const fixtures = new URL('../fixtures/service-files/', import.meta.url);
const goldens = fileURLToPath(new URL('../golden/service-files/', import.meta.url));
let parser: PythonParser;

beforeAll(async () => {
  parser = await loadPythonParser();
});

function read(source: string, file = 'service.py', version = '3.13') {
  return readServiceFile(parser, source, file, { version, source: '.python-version' });
}

describe('reading service.py statically', () => {
  for (const name of readdirSync(fixtures).filter((file) => file.endsWith('.py'))) {
    it(`reads ${name} as its reviewed golden file says`, () => {
      const result = read(readFileSync(new URL(name, fixtures), 'utf8'), name);
      expectGolden(`${JSON.stringify(result, null, 2)}\n`, `${goldens}${name.replace(/\.py$/, '.json')}`);
    });
  }

  it("reads syntax newer than Python 3.10 on the Python that brought it, and refuses it on an older image's", () => {
    const source = readFileSync(new URL('newer-syntax.py', fixtures), 'utf8');
    const onImage = (version: string) => read(source, 'service.py', version).syntaxErrors.map(formatDiagnostic);
    expect(onImage('3.13')).toEqual([]);
    expect(onImage('3.12')).toEqual([
      'service.py:9: SyntaxError: type parameter defaults (`[T = int]`) are invalid syntax before Python 3.13 (PEP 696); the image runs Python 3.12 (from .python-version)',
    ]);
    expect(onImage('3.10')).toEqual([
      'service.py:6: SyntaxError: the `type` statement is invalid syntax before Python 3.12 (PEP 695); the image runs Python 3.10 (from .python-version)',
      'service.py:9: SyntaxError: type parameters (`def f[T]`, `class C[T]`) are invalid syntax before Python 3.12 (PEP 695); the image runs Python 3.10 (from .python-version)',
      'service.py:14: SyntaxError: type parameters (`def f[T]`, `class C[T]`) are invalid syntax before Python 3.12 (PEP 695); the image runs Python 3.10 (from .python-version)' +
        ' (and 2 more syntax errors)',
    ]);
    expect(read(source, 'service.py', '3.10').endpoints.map((endpoint) => endpoint.path)).toEqual(['/label']);
  });

  it('says which character Python cannot read, and reads a file with classic Mac line ends as Python does', () => {
    const pasted = read('from apipod import APIPod\napp = APIPod()\nx\u00a0= 1\ny = \u201cquoted\u201d\n');
    expect(pasted.syntaxErrors.map(formatDiagnostic).slice(0, 2)).toEqual([
      'service.py:3: syntax error: invalid non-printable character U+00A0',
      "service.py:4: syntax error: invalid character '\u201c' (U+201C)",
    ]);
    const classicMac = read('from apipod import APIPod\rapp = APIPod()\r@app.endpoint("/a")\rdef a(text: str):\r    return text\r');
    expect([classicMac.app?.line, classicMac.endpoints.map((endpoint) => [endpoint.path, endpoint.line]), classicMac.diagnostics]).toEqual([2, [['/a', 4]], []]);
    expect(read('x = 1\0\n').syntaxErrors.map(formatDiagnostic)).toEqual(['service.py:1: source code string cannot contain null bytes']);
  });

  it('finds the app, its endpoints and their parameters, with POST by default', () => {
    const result = read(
      'from apipod import APIPod, JobProgress\n' +
        'app = APIPod(title="demo")\n\n' +
        '@app.endpoint("/hello")\n' +
        'def hello(name: str, times: int = 2, job_progress: JobProgress = None) -> str:\n' +
        '    return name * times\n',
    );
    expect(result.app).toEqual({ variable: 'app', line: 2, arguments: { title: 'demo' } });
    expect(result.endpoints).toHaveLength(1);
    expect(result.endpoints[0]).toMatchObject({ path: '/hello', methods: ['POST'], function: 'hello', line: 5, returns: 'str' });
    expect(result.endpoints[0]?.parameters).toMatchObject([
      { name: 'name', annotation: 'str', required: true, injected: false },
      { name: 'times', annotation: 'int', default: '2', required: false, injected: false },
      { name: 'job_progress', injected: true },
    ]);
  });

  it('serves an endpoint whose path is empty or None at /<function name>, as the toolkit does (`path or name`)', () => {
    const result = read(
      'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("")\ndef blank():\n    pass\n\n' +
        '@app.get(None)\ndef nothing():\n    pass\n\n@app.endpoint\ndef bare():\n    pass\n',
    );
    expect(result.endpoints.map((endpoint) => [endpoint.path, endpoint.methods])).toEqual([
      ['/blank', ['POST']],
      ['/nothing', ['GET']],
      ['/bare', ['POST']],
    ]);
    expect(result.diagnostics).toEqual([]);
  });

  it('says where an endpoint is registered out of its reach, which svc start serves but the manifest cannot list', () => {
    const result = read(
      [
        'from apipod import APIPod',
        'app = APIPod()',
        'class Handlers:',
        '    @app.endpoint("/in-class")',
        '    def method(self): ...',
        'for name in ["a", "b"]:',
        '    @app.get(f"/{name}")',
        '    def each(): ...',
        'app.endpoint("/lambda")(lambda x: x)',
        '@app.endpoint("/read")',
        'def read_me(): ...',
        'if __name__ == "__main__":',
        '    app.endpoint("/never")(print)',
      ].join('\n'),
    );
    expect(result.endpoints.map((endpoint) => endpoint.path)).toEqual(['/read']);
    expect(result.diagnostics.map((diagnostic) => diagnostic.line)).toEqual([4, 7, 9]);
    expect(result.diagnostics.map((diagnostic) => diagnostic.message.split(' registers')[0])).toEqual(['`app.endpoint`', '`app.get`', '`app.endpoint`']);
    expect(result.diagnostics[0]?.message).toMatch(/svc start serves it, but the manifest leaves it out/);
  });

  it('warns about a path parameter, which the toolkit refuses on import', () => {
    const result = read('from apipod import APIPod\napp = APIPod()\n@app.get("/items/{item_id}")\ndef item(item_id: int): ...\n');
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      'service.py:3: /items/{item_id}: path parameters are not supported, and the service fails on import; take them as parameters of the function',
    ]);
  });

  it('reports a syntax error with its line and still reads the endpoints around it', () => {
    const result = read(
      'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/a")\ndef a(x: int):\n    return x\n\n' +
        'def broken(:\n    pass\n\n@app.endpoint("/b")\ndef b(y: str):\n    return y\n',
    );
    expect(result.endpoints.map((endpoint) => endpoint.path)).toEqual(['/a', '/b']);
    expect(result.diagnostics.map(formatDiagnostic).some((message) => message.startsWith('service.py:8:'))).toBe(true);
  });

  it('takes APIPod("My Title") as the title, as the toolkit does', () => {
    const result = read('from apipod import APIPod\napp = APIPod("My Title", "serverless", lifespan=None)\n@app.endpoint\ndef f():\n    pass\n');
    expect(result.app?.arguments).toEqual({ title: 'My Title', compute: 'serverless', lifespan: null });
    expect(result.diagnostics).toEqual([]);
  });

  it("maps positional APIPod arguments to the parameters of python/apipod's constructor", () => {
    const runtime = parser.parse(readFileSync(new URL('../../python/apipod/app.py', import.meta.url), 'utf8'));
    const constructor = runtime.rootNode
      .descendantsOfType('function_definition')
      .find((definition) => definition?.childForFieldName('name')?.text === '__init__');
    const positional = (constructor?.childForFieldName('parameters')?.namedChildren ?? [])
      .filter((parameter) => parameter?.type !== 'dictionary_splat_pattern')
      .map((parameter) => (parameter?.childForFieldName('name') ?? parameter)?.text)
      .filter((name) => name !== 'self');
    runtime.delete();
    const values = positional.map((_, index) => `v${index}`);
    const call = `APIPod(${[...values, 'extra'].map((value) => JSON.stringify(value)).join(', ')})`;
    const result = read(`from apipod import APIPod\napp = ${call}\n@app.endpoint\ndef f():\n    pass\n`);
    expect(result.app?.arguments).toEqual(Object.fromEntries(positional.map((name, index) => [name, values[index]])));
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `service.py:2: APIPod(...) takes at most ${positional.length} positional arguments (${positional.join(', ')}); ` +
        '`"extra"` makes the service fail on import',
    ]);
  });

  it('warns where a positional APIPod argument cannot be placed', () => {
    const messages = (call: string) =>
      read(`from apipod import APIPod\napp = ${call}\n@app.endpoint\ndef f():\n    pass\n`).diagnostics.map(formatDiagnostic);
    expect(messages('APIPod("A", title="B")')).toEqual([
      'service.py:2: APIPod(...) is given `title` by position and by keyword; the service fails on import',
    ]);
    expect(messages('APIPod(*names, "A")')).toEqual([
      'service.py:2: cannot tell which APIPod(...) parameter `"A"` fills: it follows `*names`',
      'service.py:2: cannot read APIPod(...) argument `*names` statically',
    ]);
  });

  it('warns at the second function on a path whatever its method, as the toolkit refuses it on import', () => {
    const messages = (source: string) => read(`from apipod import APIPod\napp = APIPod()\n${source}`).diagnostics.map(formatDiagnostic);
    const failure = 'the service fails on import, since APIPod serves each path with one endpoint';
    expect(messages('@app.get("/item")\ndef read_item():\n    pass\n@app.post("/item")\ndef write_item():\n    pass\n')).toEqual([
      `service.py:7: duplicate route /item: already declared by \`read_item\` (line 4); ${failure}: ` +
        'give `write_item` another path, or one endpoint several methods',
    ]);
    expect(
      messages(
        '@app.endpoint("/item", methods=["GET"])\ndef read_item():\n    pass\n' +
          '@app.endpoint("item", methods=["POST"])\ndef write_item():\n    pass\n',
      ),
    ).toEqual([expect.stringMatching(/^service\.py:7: duplicate route \/item: already declared by `read_item` \(line 4\)/)]);
    expect(messages('@app.get("/item")\n@app.post("/item")\ndef item():\n    pass\n')).toEqual([
      `service.py:5: duplicate route /item: \`item\` declares it twice; ${failure}: give one decorator several methods`,
    ]);
    expect(messages('@app.endpoint("/item", methods=["GET", "POST"])\ndef item():\n    pass\n')).toEqual([]);
  });

  it('never runs the __main__ block and ignores endpoints declared inside it', () => {
    const result = read(readFileSync(new URL('main-guard.py', fixtures), 'utf8'), 'main-guard.py');
    expect(result.endpoints.map((endpoint) => endpoint.path)).toEqual(['/conditional']);
    expect(result.app?.arguments.title).toBe('guarded import');
  });
});
