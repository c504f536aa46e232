import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { findCompileErrors, isTypeParameterDefault } from '../../src/scan/python-compile-errors.js';
import { loadPythonParser, type PythonParser } from '../../src/scan/python-parser.js';

let parser: PythonParser;

beforeAll(async () => {
  parser = await loadPythonParser();
});

function compileErrors(source: string, version = '3.10'): string[] {
  const tree = parser.parse(source);
  try {
    // The grammar accepts every snippet (a PEP 696 default aside): these are the compiler's refusals, not the parser's.
    expect(tree.rootNode.descendantsOfType('ERROR').every((node) => node !== null && isTypeParameterDefault(node))).toBe(true);
    expect(tree.rootNode.descendantsOfType('MISSING')).toEqual([]);
    return findCompileErrors(tree.rootNode, source, { version, source: 'default' }).map(({ line, message }) => `${line}: ${message}`);
  } finally {
    tree.delete();
  }
}

interface Rule {
  rule: string;
  /** Refused by the Python of `version`, with this error on its first line that has one. */
  refused: string;
  error: string;
  /** The nearest code that Python reads. */
  valid: string;
  version?: string;
}

const newer = (what: string, since: string, pep: string, version = '3.10') =>
  `SyntaxError: ${what} before Python ${since} (${pep}); the image runs Python ${version} (from default)`;

/** Each checked against CPython 3.10 to 3.13's own `compile()`. */
const RULES: Rule[] = [
  // Syntax newer than the image's Python
  { rule: 'type statement', refused: 'type Vector = list[float]\n', valid: 'Vector = list[float]\n', error: newer('the `type` statement is invalid syntax', '3.12', 'PEP 695') },
  { rule: 'type parameters', refused: 'def first[T](items: list[T]) -> T:\n    return items[0]\n', valid: 'def first(items):\n    return items[0]\n', error: newer('type parameters (`def f[T]`, `class C[T]`) are invalid syntax', '3.12', 'PEP 695') },
  { rule: 'type parameter defaults', refused: 'class Batch[T = int]:\n    pass\n', valid: 'class Batch[T]:\n    pass\n', version: '3.12', error: newer('type parameter defaults (`[T = int]`) are invalid syntax', '3.13', 'PEP 696', '3.12') },
  { rule: 'except*', refused: 'try:\n    pass\nexcept* ValueError:\n    pass\n', valid: 'try:\n    pass\nexcept ValueError:\n    pass\n', error: newer('`except*` is invalid syntax', '3.11', 'PEP 654') },
  { rule: 'starred annotation', refused: 'def f(*args: *Ts):\n    pass\n', valid: 'def f(*args: Ts):\n    pass\n', error: newer('a starred expression in a subscript or an annotation (`tuple[*Ts]`, `*args: *Ts`) is invalid syntax', '3.11', 'PEP 646') },
  { rule: 'starred subscript', refused: 'class A(Generic[*Ts]):\n    pass\n', valid: 'class A(Generic[Ts]):\n    pass\n', error: newer('a starred expression in a subscript or an annotation (`tuple[*Ts]`, `*args: *Ts`) is invalid syntax', '3.11', 'PEP 646') },
  { rule: 'starred subscript in a subscript', refused: 'x = tuple[int, *tuple[str, ...]]\n', valid: 'x = tuple[int, tuple[str, ...]]\n', error: newer('a starred expression in a subscript or an annotation (`tuple[*Ts]`, `*args: *Ts`) is invalid syntax', '3.11', 'PEP 646') },
  { rule: "f-string's own quote", refused: 'item = {}\nx = f"got {item["label"]}"\n', valid: 'item = {}\nx = f"got {item[\'label\']}"\n', error: newer("an f-string's own quote cannot appear inside its replacement fields", '3.12', 'PEP 701') },
  { rule: 'f-string backslash', refused: "x = f'{\"\\n\".join(a)}'\n", valid: "nl = '\\n'\nx = f'{nl.join(a)}'\n", error: newer('f-string expression part cannot include a backslash', '3.12', 'PEP 701') },
  { rule: 'f-string comment', refused: "x = f'''{a # the answer\n}'''\n", valid: "x = f'''{a\n}'''\n", error: newer("f-string expression part cannot include '#'", '3.12', 'PEP 701') },
  { rule: 'f-string line break', refused: "x = f'{a +\n b}'\n", valid: "x = f'''{a +\n b}'''\n", error: newer('a replacement field of a single-quoted f-string cannot span lines', '3.12', 'PEP 701') },
  { rule: 'f-string nesting', refused: "x = f'{a:{b:{c}}}'\n", valid: "x = f'{a:{b}}'\n", error: newer('f-string: expressions nested too deeply', '3.12', 'PEP 701') },
  { rule: 'f-string nesting, any Python', refused: "x = f'{a:{b:{c:{d}}}}'\n", valid: "x = f'{a:{b:{c}}}'\n", version: '3.13', error: 'SyntaxError: f-string: expressions nested too deeply' },
  { rule: 'except A, B', refused: 'try:\n    pass\nexcept ImportError, ValueError:\n    pass\n', valid: 'try:\n    pass\nexcept (ImportError, ValueError):\n    pass\n', version: '3.13', error: newer('multiple exception types must be parenthesized', '3.14', 'PEP 758', '3.13') },
  { rule: 'template string', refused: 'x = t"{a}"\n', valid: 'x = f"{a}"\n', version: '3.13', error: newer('template strings (`t"..."`) are invalid syntax', '3.14', 'PEP 750', '3.13') },
  // Python 2
  { rule: 'print statement', refused: 'print "loading"\n', valid: 'print ("loading"), 2\n', error: "SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?" },
  { rule: 'print chevron', refused: 'print not x\n', valid: 'import sys\nprint >>sys.stderr, "x"\n', error: "SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?" },
  { rule: 'exec statement', refused: 'exec "x = 1"\n', valid: 'exec("x = 1")\n', error: "SyntaxError: Missing parentheses in call to 'exec'. Did you mean exec(...)?" },
  { rule: 'except E, e', refused: 'try:\n    pass\nexcept ImportError, e:\n    pass\n', valid: 'try:\n    pass\nexcept ImportError as e:\n    pass\n', error: newer('multiple exception types must be parenthesized', '3.14', 'PEP 758') },
  { rule: 'except A, B as e', refused: 'try:\n    pass\nexcept A, B as e:\n    pass\n', valid: 'try:\n    pass\nexcept (A, B) as e:\n    pass\n', version: '3.13', error: 'SyntaxError: multiple exception types must be parenthesized' },
  { rule: 'backquotes', refused: 'x = `42`\n', valid: 'x = repr(42)\n', error: "SyntaxError: invalid syntax (Python 2's backquotes: write `repr(...)`)" },
  { rule: 'octal literal', refused: 'x = 0777\n', valid: 'x = 0o777 + 00 + 0777j\n', error: 'SyntaxError: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers' },
  { rule: 'long literal', refused: 'x = 0x1fL\n', valid: 'x = 0x1f\n', error: "SyntaxError: invalid hexadecimal literal (Python 2's long suffix `L`: drop it)" },
  { rule: 'trailing underscore', refused: 'x = 1_\n', valid: 'x = 1_0\n', error: 'SyntaxError: invalid decimal literal' },
  { rule: 'raise E, message', refused: 'raise ValueError, "empty"\n', valid: 'raise ValueError("empty")\n', error: 'SyntaxError: invalid syntax (Python 2\'s `raise E, "message"`: write `raise E("message")`)' },
  { rule: '<>', refused: 'x = 1 <> 2\n', valid: 'x = 1 != 2\n', error: "SyntaxError: invalid syntax (Python 2's `<>`: write `!=`)" },
  { rule: 'ur prefix', refused: 'x = ur"a"\n', valid: 'x = u"a" + rb"b"\n', error: 'SyntaxError: invalid syntax (`ur` is no string prefix in Python 3)' },
  // Where statements may be
  { rule: 'return at module level', refused: 'return\n', valid: 'def f():\n    return\n', error: "SyntaxError: 'return' outside function" },
  { rule: 'return in a class body', refused: 'class A:\n    return 1\n', valid: 'class A:\n    def f(self):\n        return 1\n', error: "SyntaxError: 'return' outside function" },
  { rule: 'yield at module level', refused: 'yield 1\n', valid: 'f = lambda: (yield 1)\n', error: "SyntaxError: 'yield' outside function" },
  { rule: 'yield in a comprehension', refused: 'def f(x):\n    return [(yield t) for t in x]\n', valid: 'def f(x):\n    return [t for t in (yield x)]\n', error: "SyntaxError: 'yield' inside list comprehension" },
  { rule: 'yield from in async def', refused: 'async def f():\n    yield from g\n', valid: 'def f():\n    yield from g\n', error: "SyntaxError: 'yield from' inside async function" },
  { rule: 'await at module level', refused: 'x = await y\n', valid: 'x = (await y for y in z)\n', error: "SyntaxError: 'await' outside function" },
  { rule: 'await in a sync def', refused: 'def f():\n    await y\n', valid: 'async def f():\n    await y\n', error: "SyntaxError: 'await' outside async function" },
  { rule: 'await in a lambda', refused: 'async def f():\n    g = lambda: await y\n', valid: 'async def f():\n    g = lambda a=await y: a\n', error: "SyntaxError: 'await' outside async function" },
  { rule: 'await in a class body', refused: 'async def f():\n    class A:\n        x = await y\n', valid: 'async def f():\n    class A(await y):\n        pass\n', error: "SyntaxError: 'await' outside function" },
  { rule: 'async comprehension', refused: 'def f():\n    return [await x for x in y]\n', valid: 'async def f():\n    return [await x for x in y]\n', error: 'SyntaxError: asynchronous comprehension outside of an asynchronous function' },
  { rule: 'async for in a comprehension', refused: 'items = [x async for x in y]\n', valid: 'items = (x async for x in y)\n', error: 'SyntaxError: asynchronous comprehension outside of an asynchronous function' },
  { rule: 'async for', refused: 'def f():\n    async for x in y:\n        pass\n', valid: 'async def f():\n    async for x in y:\n        pass\n', error: "SyntaxError: 'async for' outside async function" },
  { rule: 'async with', refused: 'async with x:\n    pass\n', valid: 'async def f():\n    async with x:\n        pass\n', error: "SyntaxError: 'async with' outside async function" },
  { rule: 'break', refused: 'for a in b:\n    pass\nelse:\n    break\n', valid: 'while x:\n    for a in b:\n        pass\n    else:\n        break\n', error: "SyntaxError: 'break' outside loop" },
  { rule: 'continue', refused: 'for a in b:\n    def f():\n        continue\n', valid: 'for a in b:\n    try:\n        pass\n    finally:\n        continue\n', error: "SyntaxError: 'continue' not properly in loop" },
  { rule: 'return value in an async generator', refused: 'async def f():\n    yield 1\n    return None\n', valid: 'async def f():\n    def g():\n        return 2\n    yield 1\n    return\n', error: "SyntaxError: 'return' with value in async generator" },
  { rule: 'late __future__ import', refused: 'import os\nfrom __future__ import annotations\n', valid: '"""Doc."""\nfrom __future__ import annotations\nfrom __future__ import division\nimport os\n', error: 'SyntaxError: from __future__ imports must occur at the beginning of the file' },
  { rule: 'unknown __future__ feature', refused: 'from __future__ import braces\n', valid: 'from __future__ import generator_stop\n', error: 'SyntaxError: not a chance' },
  { rule: 'import * in a function', refused: 'def f():\n    from math import *\n', valid: 'from math import *\n', error: 'SyntaxError: import * only allowed at module level' },
  { rule: 'nonlocal at module level', refused: 'nonlocal x\n', valid: 'global x\n', error: 'SyntaxError: nonlocal declaration not allowed at module level' },
  { rule: 'global parameter', refused: 'def f(text):\n    global text\n', valid: 'def f(text):\n    global other\n', error: "SyntaxError: name 'text' is parameter and global" },
  { rule: 'empty block', refused: 'def f():\nreturn 1\n', valid: 'def f():\n\tif x:\n\t\treturn 1\n', error: 'IndentationError: expected an indented block after function definition on line 1' },
  { rule: 'try without except', refused: 'try:\n    import torch\nx = 1\n', valid: 'try:\n    import torch\nfinally:\n    x = 1\n', error: "SyntaxError: expected 'except' or 'finally' block" },
  { rule: 'bare except first', refused: 'try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass\n', valid: 'try:\n    pass\nexcept E:\n    pass\nexcept:\n    pass\n', error: "SyntaxError: default 'except:' must be last" },
  // Parameters and arguments
  { rule: 'non-default after default', refused: 'def f(top_k: int = 5, text: str):\n    pass\n', valid: 'def f(top_k: int = 5, *, text: str):\n    pass\n', error: 'SyntaxError: non-default argument follows default argument' },
  { rule: 'non-default after default, 3.12 words', refused: 'f = lambda a=1, /, b: a\n', valid: 'f = lambda a=1, /, b=2: a\n', version: '3.12', error: 'SyntaxError: parameter without a default follows parameter with a default' },
  { rule: 'duplicate parameter', refused: 'def f(text, top_k=5, *text):\n    pass\n', valid: 'def f(text, top_k=5, *texts):\n    pass\n', error: "SyntaxError: duplicate argument 'text' in function definition" },
  { rule: 'bare * alone', refused: 'def f(text, *):\n    pass\n', valid: 'def f(text, *, top_k):\n    pass\n', error: 'SyntaxError: named arguments must follow bare *' },
  { rule: 'bare * before **', refused: 'def f(*, **options):\n    pass\n', valid: 'def f(*args, **options):\n    pass\n', error: 'SyntaxError: named arguments must follow bare *' },
  { rule: 'parameter after **', refused: 'def f(**options, text):\n    pass\n', valid: 'def f(text, **options):\n    pass\n', version: '3.11', error: 'SyntaxError: arguments cannot follow var-keyword argument' },
  { rule: 'two stars', refused: 'def f(*, *args):\n    pass\n', valid: 'def f(*args, text):\n    pass\n', version: '3.11', error: 'SyntaxError: * argument may appear only once' },
  { rule: 'slash after star', refused: 'def f(*, a, /):\n    pass\n', valid: 'def f(a, /, *, b):\n    pass\n', version: '3.11', error: 'SyntaxError: / must be ahead of *' },
  { rule: 'repeated keyword argument', refused: 'app = dict(title="QA", title="Other")\n', valid: 'app = dict(title="QA", **{"title": "Other"})\n', error: 'SyntaxError: keyword argument repeated: title' },
  { rule: 'positional after keyword', refused: 'f(methods=["POST"], "/predict")\n', valid: 'f(methods=["POST"], *paths)\n', error: 'SyntaxError: positional argument follows keyword argument' },
  { rule: 'positional after **', refused: 'f(**options, "/predict")\n', valid: 'f("/predict", **options)\n', error: 'SyntaxError: positional argument follows keyword argument unpacking' },
  { rule: '* after **', refused: 'f(**options, *paths)\n', valid: 'f(*paths, **options)\n', error: 'SyntaxError: iterable argument unpacking follows keyword argument unpacking' },
  { rule: 'unparenthesised generator argument', refused: 'f(x for x in y, 1)\n', valid: 'f((x for x in y), 1)\n', error: 'SyntaxError: Generator expression must be parenthesized' },
  { rule: 'del f()', refused: 'del a, f()\n', valid: 'del a, f().b\n', error: 'SyntaxError: cannot delete function call' },
  { rule: 'two starred targets', refused: 'a, *b, *c = x\n', valid: 'a, *b = x\n', error: 'SyntaxError: multiple starred expressions in assignment' },
  // Literals
  { rule: 'Windows path \\U', refused: 'MODEL_DIR = "C:\\Users\\ml\\models"\n', valid: 'MODEL_DIR = r"C:\\Users\\ml\\models"\n', error: "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position 2-3: truncated \\UXXXXXXXX escape" },
  { rule: 'Windows path \\N', refused: 'DATA = "D:\\New\\data"\n', valid: 'DATA = "D:\\\\New\\\\data" + "\\N{BULLET}"\n', error: "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position 2-3: malformed \\N character escape" },
  { rule: 'Windows path \\x', refused: 'DATA = f"C:\\xfiles\\{name}"\n', valid: 'DATA = f"C:\\x66iles\\\\{name}"\n', error: "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position 2-4: truncated \\xXX escape" },
  { rule: 'escape after non-ASCII text', refused: 'x = "\u00e9t\u00e9\\u12"\n', valid: 'x = b"\\u12"\n', error: "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position 21-24: truncated \\uXXXX escape" },
  { rule: 'bytes \\x', refused: 'x = b"\\xg"\n', valid: 'x = br"\\xg"\n', error: 'SyntaxError: (value error) invalid \\x escape at position 0' },
  { rule: 'non-ASCII bytes', refused: 'x = b"caf\u00e9"\n', valid: 'x = "caf\u00e9".encode()\n', error: 'SyntaxError: bytes can only contain ASCII literal characters' },
  { rule: 'bytes beside str', refused: 'x = b"a" "b"\n', valid: 'x = b"a" b"b"\n', error: 'SyntaxError: cannot mix bytes and nonbytes literals' },
  { rule: 'f-string conversion', refused: "x = f'{a!z}'\n", valid: "x = f'{a!r}'\n", error: "SyntaxError: f-string: invalid conversion character: expected 's', 'r', or 'a'" },
  { rule: 'too many brackets', refused: `x = ${'('.repeat(201)}1${')'.repeat(201)}\n`, valid: `x = ${'('.repeat(200)}1${')'.repeat(200)}\n`, error: 'SyntaxError: too many nested parentheses' },
  { rule: 'zero-width space', refused: 'x\u200b= 1\n', valid: 'x = "\u200b"  # \u200b\n', error: 'SyntaxError: invalid non-printable character U+200B' },
];

describe('what Python refuses to compile although the grammar accepts it', () => {
  for (const { rule, refused, error, valid, version } of RULES) {
    it(`${rule}: refused on Python ${version ?? '3.10'} with Python's words; the nearest valid code passes`, () => {
      expect(compileErrors(refused, version)[0]).toMatch(new RegExp(`^\\d+: ${escapeRegExp(error)}$`));
      expect(compileErrors(valid, version)).toEqual([]);
    });
  }

  it('leaves a block indented with tabs and spaces to Python, which may refuse the tabs first', () => {
    expect(compileErrors('def hello(name):\n\tif name:\n        return name\n')).toEqual([]);
  });

  it('reports the line of the offending statement, once a line', () => {
    expect(compileErrors('import os\n\n\ndef f():\n    print "a", "b"\n    print "c"\n')).toEqual([
      "5: SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
      "6: SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
    ]);
  });

  it('reads newer syntax as valid on the Python that brought it', () => {
    const newest = [
      'type Vector[T = float] = list[T]',
      'def first[T](items: list[T]) -> T:\n    return items[0]',
      'def f[**P = [int, str]](): pass',
      'def f[*Ts = *tuple[int, ...]](): pass',
      'class Batch[T: int = bool, U = str]: pass',
      'try:\n    pass\nexcept* ValueError:\n    pass',
      'x = f"{d["t"]} {"\\n".join(a)} {a:{b:{c}}}"',
      "x = f'{a # comment\n}'",
    ].join('\n');
    expect(compileErrors(newest, '3.13')).toEqual([]);
    const pep696 = newer('type parameter defaults (`[T = int]`) are invalid syntax', '3.13', 'PEP 696', '3.12');
    expect(compileErrors(newest, '3.12')).toEqual([1, 4, 5, 6].map((line) => `${line}: ${pep696}`));
  });

  it("agrees with this machine's python3 on every rule, both ways, in Python's own words", () => {
    const version = execFileSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
    const snippets = RULES.flatMap(({ refused, valid }) => [refused, valid]);
    const verdicts = compileWithPython(snippets);
    snippets.forEach((snippet, index) => {
      const ours = compileErrors(snippet, version)[0] ?? 'ok';
      const python = verdicts[index] as string;
      expect({ snippet, refused: ours !== 'ok' }).toEqual({ snippet, refused: python !== 'ok' });
      // Where svc claims Python's words (no explanation of its own in parentheses, no version rule), they are Python's.
      if (ours !== 'ok' && !/ \(Python 2|is no string prefix| before Python /.test(ours)) {
        expect(ours.replace(/^\d+: /, '')).toBe(python);
      }
    });
  });
});

/** Python's verdict on each source: `ok`, or `SyntaxError: message` as compile() raises it. */
function compileWithPython(sources: string[]): string[] {
  const script = [
    'import json, sys',
    'for source in json.load(sys.stdin):',
    '    try:',
    '        compile(source.encode("utf-8", "surrogatepass"), "service.py", "exec")',
    '        print("ok")',
    '    except SyntaxError as error:',
    '        print("%s: %s" % (type(error).__name__, error.msg))',
  ].join('\n');
  return execFileSync('python3', ['-W', 'ignore', '-c', script], { input: JSON.stringify(sources), encoding: 'utf8' }).trimEnd().split('\n');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
