import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readPyproject } from '../../src/scan/pyproject.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/pyproject/${name}`, import.meta.url), 'utf8');

describe('reading pyproject.toml', () => {
  it('reads [project] dependencies with their lines, and requires-python', () => {
    const pyproject = readPyproject(fixture('pep621.toml'));
    expect(pyproject.requiresPython).toBe('>=3.10,<3.13');
    expect(pyproject.requirements.map((r) => [r.key, r.specifier, r.extras, r.marker, r.source.line])).toEqual([
      ['torch', '==2.4.1', [], null, 10],
      ['diffusers', '>=0.30', ['torch'], null, 11],
      ['transformers', '~=4.44', [], null, 12],
      ['pywin32', '>=306', [], "sys_platform == 'win32'", 13],
      ['apipod', '', [], null, 14],
    ]);
    expect(pyproject.diagnostics).toHaveLength(1);
    expect(pyproject.diagnostics[0]).toMatchObject({ file: 'pyproject.toml', line: 15, field: 'project.dependencies' });
  });

  it("reads Poetry dependencies, converting caret constraints and leaving optional ones out", () => {
    const pyproject = readPyproject(fixture('poetry.toml'));
    expect(pyproject.poetryPython).toBe('^3.11');
    const byKey = Object.fromEntries(pyproject.requirements.map((r) => [r.key, r]));
    expect(pyproject.requirements.map((r) => r.key)).toEqual(['torch', 'openai-whisper', 'faster-whisper', 'tomli', 'mlx', 'mylib', 'scipy', 'scipy', 'vision']);
    expect(byKey.torch).toMatchObject({ specifier: '>=2.3.0,<3', source: { file: 'pyproject.toml', line: 7 } });
    expect(byKey['openai-whisper']?.specifier).toBe('==20231117');
    expect(byKey['faster-whisper']).toMatchObject({ specifier: '>=1.0', extras: ['cuda'] });
    expect(byKey.tomli?.marker).toBe('((python_full_version < "3.11"))');
    expect(byKey.mlx?.marker).toBe("(sys_platform == 'darwin')");
    expect(byKey.mylib?.url).toBe('git+https://github.com/example/mylib.git@v1.2');
    expect(byKey.vision?.url).toBe('git+https://github.com/example/mono.git@main#subdirectory=packages/vision');
    expect(pyproject.requirements.filter((r) => r.key === 'scipy').map((r) => [r.specifier, r.marker, r.source.line])).toEqual([
      ['<1.12', '((python_full_version < "3.10"))', 15],
      ['>=1.12,<2', '((python_full_version >= "3.10"))', 15],
    ]);
    expect(pyproject.diagnostics).toEqual([
      {
        file: 'pyproject.toml',
        line: 7,
        field: 'tool.poetry.dependencies.torch',
        message: "source 'pytorch' is not read by svc; the image installs torch from PyPI or the index options in requirements.txt",
      },
      { file: 'pyproject.toml', line: 14, field: 'tool.poetry.dependencies.broken', message: 'expected a version string, a table, or a list of tables' },
    ]);
  });

  it("says which of uv's sources and which malformed requires-python it does not follow", () => {
    const pyproject = readPyproject(
      '[project]\nname = "x"\nrequires-python = 3.11\ndependencies = ["torch==2.4.1", "mylib"]\n\n[tool.uv.sources]\ntorch = { index = "pytorch-cpu" }\nmylib = { git = "https://github.com/org/mylib", tag = "v2" }\n',
    );
    expect(pyproject.requiresPython).toBeNull();
    expect(pyproject.diagnostics.map((d) => [d.line, d.field, d.message.split(';')[0]])).toEqual([
      [3, 'project.requires-python', 'must be a string, such as ">=3.10"'],
      [7, 'tool.uv.sources.torch', "uv's sources are not read by svc"],
      [8, 'tool.uv.sources.mylib', "uv's sources are not read by svc"],
    ]);
  });

  it('reports a TOML syntax error with its line and goes on with nothing', () => {
    const pyproject = readPyproject('[project]\nname = "x"\ndependencies = [\n  "torch",\n  oops\n]\n');
    expect(pyproject.requirements).toEqual([]);
    expect(pyproject.diagnostics).toHaveLength(1);
    expect(pyproject.diagnostics[0]?.line).toBe(5);
    expect(pyproject.diagnostics[0]?.message).toMatch(/^not valid TOML: /);
    expect(pyproject.unreadable).toEqual(pyproject.diagnostics);
  });

  it('counts as unreadable what declares dependencies svc cannot read, and nothing else', () => {
    const pyproject = readPyproject(
      '[project]\nrequires-python = 3.10\ndependencies = ["numpy", "torch >>> 2", 7]\n\n[tool.poetry.dependencies]\nrich = { version = "^^1" }\n',
    );
    expect(pyproject.requirements.map((requirement) => requirement.name)).toEqual(['numpy']);
    expect(pyproject.unreadable.map(({ line, field }) => [line, field])).toEqual([
      [3, 'project.dependencies'],
      [3, 'project.dependencies'],
      [6, 'tool.poetry.dependencies.rich'],
    ]);
    expect(pyproject.diagnostics.map(({ field }) => field)).toContain('project.requires-python');
  });
});
