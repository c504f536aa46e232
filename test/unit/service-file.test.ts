import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { HTTP_METHODS } from '../../src/http-methods.js';
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
    const onImage = (version: string) => read(source, 'service.py', version).serviceErrors.map(formatDiagnostic);
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
    expect(pasted.serviceErrors.map(formatDiagnostic).slice(0, 2)).toEqual([
      'service.py:3: syntax error: invalid non-printable character U+00A0',
      "service.py:4: syntax error: invalid character '\u201c' (U+201C)",
    ]);
    const classicMac = read('from apipod import APIPod\rapp = APIPod()\r@app.endpoint("/a")\rdef a(text: str):\r    return text\r');
    expect([classicMac.app?.line, classicMac.endpoints.map((endpoint) => [endpoint.path, endpoint.line]), classicMac.diagnostics]).toEqual([2, [['/a', 4]], []]);
    expect(read('x = 1\0\n').serviceErrors.map(formatDiagnostic)).toEqual(['service.py:1: source code string cannot contain null bytes']);
  });

  it('finds the app, its endpoints and their parameters, with POST by default', () => {
    const result = read(
      'from apipod import APIPod, JobProgress\n' +
        'app = APIPod(title="demo")\n\n' +
        '@app.endpoint("/hello")\n' +
        'def hello(name: str, times: int = 2, job_progress: JobProgress = None) -> str:\n' +
        '    return name * times\n',
    );
    expect(result.app).toEqual({ variable: 'app', line: 2, arguments: { title: 'demo' }, branch_arguments: {} });
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
      'service.py:3: /items/{item_id}: path parameters are not supported, and the import fails (ValueError); take them as parameters of the function',
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

  it('reads a line inside brackets indented less than its block, as Python does (tree-sitter-python#256)', () => {
    const result = read(
      'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/sum")\ndef total(a: int, b: int):\n    s = (a +\nb)\n    return s\n\n' +
        '@app.endpoint("/max")\ndef largest(a: int, b: int):\n    return max(a,  # first\n  b, key=abs)[\n0]\nreturn 1\n',
    );
    expect(result.endpoints.map((endpoint) => [endpoint.path, endpoint.line])).toEqual([['/sum', 5], ['/max', 11]]);
    // The compile checks read the same tree: only the last `return` is outside a function.
    expect(result.serviceErrors.map(formatDiagnostic)).toEqual(["service.py:15: SyntaxError: 'return' outside function"]);
  });

  it('reads a slice in the subscript of a bare name in an annotation, as Python does', () => {
    const result = read(
      'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/mean")\ndef mean(values: float32[:], rows: Matrix[:, ::1] = None) -> Vector[1:]:\n    return values\n\n' +
        'shape: Shapes[int][0] = (1,)\nreturn 1\n',
    );
    // tree-sitter reads them parenthesised, which Python reads alike.
    expect(result.endpoints.map((endpoint) => [...endpoint.parameters.map((parameter) => parameter.annotation), endpoint.returns])).toEqual([
      ['(float32)[:]', '(Matrix)[:, ::1]', '(Vector)[1:]'],
    ]);
    expect(result.serviceErrors.map(formatDiagnostic)).toEqual(["service.py:9: SyntaxError: 'return' outside function"]);
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
    const parameters = constructor?.childForFieldName('parameters')?.namedChildren ?? [];
    // Those before `*` (keyword-only after it) or `**options`.
    const end = parameters.findIndex((parameter) => parameter?.type === 'keyword_separator' || parameter?.type === 'dictionary_splat_pattern');
    const positional = parameters
      .slice(0, end === -1 ? parameters.length : end)
      .map((parameter) => (parameter?.childForFieldName('name') ?? parameter)?.text)
      .filter((name) => name !== 'self');
    runtime.delete();
    const values = ['My title', 'serverless', 'runpod', ...positional.slice(3).map((_, index) => `v${index}`)];
    const call = `APIPod(${[...values, 'extra'].map((value) => JSON.stringify(value)).join(', ')})`;
    const result = read(`from apipod import APIPod\napp = ${call}\n@app.endpoint\ndef f():\n    pass\n`);
    expect(result.app?.arguments).toEqual(Object.fromEntries(positional.map((name, index) => [name, values[index]])));
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `service.py:2: APIPod(...) takes at most ${positional.length} positional arguments (${positional.join(', ')}); ` +
        '`"extra"` makes the import fail (TypeError)',
    ]);
  });

  it('warns where a positional APIPod argument cannot be placed', () => {
    const messages = (call: string) =>
      read(`from apipod import APIPod\napp = ${call}\n@app.endpoint\ndef f():\n    pass\n`).diagnostics.map(formatDiagnostic);
    expect(messages('APIPod("A", title="B")')).toEqual([
      'service.py:2: APIPod(...) is given `title` by position and by keyword, and the import fails (TypeError)',
    ]);
    expect(messages('APIPod(*names, "A")')).toEqual([
      'service.py:2: cannot tell which APIPod(...) parameter `"A"` fills: it follows `*names`',
      'service.py:2: cannot read APIPod(...) argument `*names` statically',
    ]);
  });

  it('refuses a second function on a path whatever its method, as the toolkit refuses it on import', () => {
    const errors = (source: string) => read(`from apipod import APIPod\napp = APIPod()\n${source}`).serviceErrors.map(formatDiagnostic);
    expect(errors('@app.get("/item")\ndef read_item():\n    pass\n@app.post("/item")\ndef write_item():\n    pass\n')).toEqual([
      'service.py:7: /item is already served by read_item() (line 4), and importing the service fails: give write_item() another path, or one function several methods',
    ]);
    expect(
      errors(
        '@app.endpoint("/item", methods=["GET"])\ndef read_item():\n    pass\n' +
          '@app.endpoint("item", methods=["POST"])\ndef write_item():\n    pass\n',
      ),
    ).toEqual([expect.stringMatching(/^service\.py:7: \/item is already served by read_item\(\) \(line 4\)/)]);
    expect(errors('@app.get("/item")\n@app.post("/item")\ndef item():\n    pass\n')).toEqual([
      'service.py:5: item() is declared twice on /item, and importing the service fails: give one decorator several methods',
    ]);
    expect(errors('@app.endpoint("/item", methods=["GET", "POST"])\ndef item():\n    pass\n')).toEqual([]);
  });

  it('describes the app svc start serves: of several the one named `app` when the import ends, through aliases and branches', () => {
    const serve = (body: string) => {
      const result = read(`import os\nfrom apipod import APIPod\n${body}`);
      return {
        app: result.app === null ? null : [result.app.variable, result.app.line, result.app.arguments, result.app.branch_arguments],
        paths: result.endpoints.map((endpoint) => endpoint.path),
        messages: result.diagnostics.map(formatDiagnostic),
        errors: result.serviceErrors.map(formatDiagnostic),
      };
    };
    const endpoint = (variable: string, path: string) => `@${variable}.endpoint("${path}")\ndef ${path.slice(1)}() -> dict:\n    return {}\n`;
    expect(serve(`admin = APIPod(title="Admin")\napp = APIPod(title="QA")\n${endpoint('admin', '/reload')}${endpoint('app', '/predict')}`)).toEqual({
      app: ['app', 4, { title: 'QA' }, {}],
      paths: ['/predict'],
      messages: [
        'service.py:3: `admin` is another APIPod app: svc start serves only `app` (line 4), as of several it serves the one named `app`',
        'service.py:5: `@admin.endpoint` registers on the APIPod of line 3, which svc start does not serve (it serves `app` (line 4)): the manifest leaves it out',
      ],
      errors: [],
    });
    expect(serve(`app = APIPod(title="First")\n${endpoint('app', '/old')}app = APIPod(title="Second")\n${endpoint('app', '/predict')}`)).toMatchObject({
      app: ['app', 7, { title: 'Second' }, {}],
      paths: ['/predict'],
      messages: [
        'service.py:3: the APIPod made here as `app` is replaced before the import ends: svc start serves `app` (line 7)',
        'service.py:4: `@app.endpoint` registers on the APIPod of line 3, which svc start does not serve (it serves `app` (line 7)): the manifest leaves it out',
      ],
    });
    expect(serve(`if os.environ.get("SERVERLESS"):\n    app = APIPod(title="QA", compute="serverless")\nelse:\n    app = APIPod(title="QA")\n${endpoint('app', '/predict')}`)).toEqual({
      app: ['app', 4, { title: 'QA' }, { compute: ['serverless', 'dedicated'] }],
      paths: ['/predict'],
      messages: [
        "service.py:4: `app` is the APIPod of line 4 or 6, whichever branch runs, and its compute ('serverless' or 'dedicated') differs between them: the image leaves it to the app rather than fix one",
      ],
      errors: [],
    });
    for (const [binding, variable] of [['app = service = APIPod(title="QA")', 'service'], ['(app := APIPod(title="QA"))', 'app'], ['app = APIPod(title="QA")\napi = app', 'api']]) {
      expect(serve(`${binding}\n${endpoint(variable as string, '/predict')}`)).toEqual({ app: ['app', 3, { title: 'QA' }, {}], paths: ['/predict'], messages: [], errors: [] });
    }
    expect(serve(`first = APIPod()\nsecond = APIPod()\n${endpoint('first', '/a')}`).errors).toEqual([
      'service.py:4: the module makes several APIPod apps (first, second) and none is named `app`, so svc start cannot choose and the import fails: name the one to serve `app`',
    ]);
  });

  it('refuses what certainly fails the import, and only warns where a branch, a try or an import might change that', () => {
    const errors = (source: string) => read(source).serviceErrors.map(formatDiagnostic);
    const warnings = (source: string) => read(source).diagnostics.map(formatDiagnostic);
    expect(errors('app = APIPod(title="QA")\n')).toEqual([
      "service.py:1: `APIPod` is not imported, so the import fails (NameError: name 'APIPod' is not defined): add `from apipod import APIPod`",
    ]);
    expect(errors('from lib import *\napp = APIPod(title="QA")\n')).toEqual([]);
    expect(errors('from apipod import APIPod\n@app.endpoint("/a")\ndef a():\n    pass\napp = APIPod()\n')).toEqual([
      "service.py:2: `app` is not defined yet here, so the import fails (NameError: name 'app' is not defined): make the app above its endpoints",
    ]);
    expect(errors('from apipod import APIPod\nfor app in []:\n    pass\n@app.endpoint("/a")\ndef a():\n    pass\napp = APIPod()\n')).toEqual([]);
    expect(errors('from apipod import APIPod\napp = APIPod(title="QA", compute="gpu")\n')).toEqual([
      "service.py:2: APIPod(compute='gpu'): compute must be one of dedicated, serverless, and the import fails (ValueError)",
    ]);
    expect(errors('import os\nfrom apipod import APIPod\nif os.environ.get("X"):\n    app = APIPod(compute="gpu")\n')).toEqual([]);
    expect(errors('')).toEqual(['service.py: service.py creates no APIPod app, so the import fails: add `app = APIPod()` and decorate endpoints with @app.endpoint("/path")']);
    expect(errors('from apipod import APIPod\nif __name__ == "__main__":\n    app = APIPod()\n')).toHaveLength(1);
    expect(warnings('from lib import app\n')).toEqual([]);
    expect(errors('from lib import make\nmake()\n')).toEqual([]);
    expect(warnings('from lib import make\nmake()\n')).toEqual([
      'service.py: service.py creates no APIPod app, so the import fails unless it gets one in a way svc cannot read: add `app = APIPod()` and decorate endpoints with @app.endpoint("/path")',
    ]);
  });

  it('refuses the routes and methods svc start refuses, in its words, but not alternatives in the arms of an `if`', () => {
    const errors = (body: string) => read(`import os\nfrom apipod import APIPod\napp = APIPod()\n${body}`).serviceErrors.map(formatDiagnostic);
    expect(errors('@app.get("/health")\ndef health() -> dict:\n    return {}\n')).toEqual([
      'service.py:5: endpoint health (GET /health): svc serves GET /health itself; choose another path',
    ]);
    expect(errors('@app.post("/health")\ndef health() -> dict:\n    return {}\n')).toEqual([]);
    expect(errors('@app.endpoint("/x")\ndef one():\n    pass\n@app.endpoint("/x/")\ndef two():\n    pass\n')).toEqual([
      'service.py:8: endpoint two (POST /x/): endpoint one (/x) answers POST /x already; a trailing slash makes no difference',
    ]);
    expect(errors('@app.endpoint("/x")\ndef one():\n    pass\n@app.endpoint("/v1/x")\ndef two():\n    pass\n')).toEqual([
      'service.py:8: endpoint two (POST /v1/x): endpoint one (/x) answers POST /v1/x already; svc serves every endpoint under /v1 too',
    ]);
    const branches = 'if os.environ.get("GPU"):\n    @app.endpoint("/predict")\n    def predict(text, batch=8):\n        pass\nelse:\n    @app.endpoint("/predict")\n    def predict(text):\n        pass\n';
    expect(errors(branches)).toEqual([]);
    expect(read(`from apipod import APIPod\napp = APIPod()\n${branches}`).diagnostics.map((diagnostic) => diagnostic.message).filter((message) => message.includes('already'))).toEqual([]);
    const oneConditional = 'try:\n    import tensorrt\n    @app.endpoint("/x")\n    def fast():\n        pass\nexcept ImportError:\n    pass\n@app.endpoint("/x")\ndef slow():\n    pass\n';
    expect(errors(oneConditional)).toEqual([]);
    expect(read(`import os\nfrom apipod import APIPod\napp = APIPod()\n${oneConditional}`).diagnostics.map(formatDiagnostic)).toContain(
      'service.py:12: /x is already served by fast() (line 7), and importing the service fails: give slow() another path, or one function several methods (if both are registered)',
    );
    expect(errors('@app.get("/x", methods=["POST"])\ndef x():\n    pass\n')).toEqual([
      "service.py:4: `@app.get` sets its own method (GET), so its `methods=` fails the import (TypeError: got multiple values for keyword argument 'methods'): use `@app.endpoint(..., methods=[...])`",
    ]);
    expect(errors('@app.endpoint("/a", path="/b")\ndef x():\n    pass\n')).toEqual([
      "service.py:4: `@app.endpoint` is given `path` by position and by keyword, and the import fails (TypeError: got multiple values for argument 'path')",
    ]);
    expect(errors('@app.endpoint("/a", methods=[])\ndef x():\n    pass\n')).toEqual([
      'service.py:4: methods: the list is empty, and the import fails (ValueError): name at least one HTTP method, or leave methods out for POST',
    ]);
    expect(errors('@app.endpoint("/a", methods="GET,POST")\ndef x():\n    pass\n')).toEqual([
      'service.py:4: methods: \'GET,POST\' is not an HTTP method svc serves (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, TRACE) (several are a list: methods=["GET", "POST"]), and the import fails (ValueError)',
    ]);
    const twice = read('from apipod import APIPod\napp = APIPod()\n@app.endpoint("/a", methods=["GET", "get"])\ndef x():\n    pass\n');
    expect([twice.endpoints[0]?.methods, twice.diagnostics]).toEqual([['GET'], []]);
  });

  it("takes the HTTP methods svc serves from python/apipod's list", () => {
    const runtime = readFileSync(new URL('../../python/apipod/app.py', import.meta.url), 'utf8');
    const listed = /^HTTP_METHODS = \(([^)]*)\)/mu.exec(runtime)?.[1] ?? '';
    expect(listed.split(',').map((method) => method.trim().replace(/"/gu, '')).filter(Boolean)).toEqual([...HTTP_METHODS]);
  });

  it('never runs the __main__ block and ignores endpoints declared inside it', () => {
    const result = read(readFileSync(new URL('main-guard.py', fixtures), 'utf8'), 'main-guard.py');
    expect(result.endpoints.map((endpoint) => endpoint.path)).toEqual(['/conditional']);
    expect(result.app?.arguments.title).toBe('guarded import');
  });
});
