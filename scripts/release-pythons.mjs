#!/usr/bin/env node
// Writes src/scan/release-pythons.json: for each package below, which CPython minor versions
// each release publishes linux x86_64 wheels for, and whether it publishes a source
// distribution, read from PyPI's simple index (PEP 691 JSON). A `cp310-cp310` wheel counts for
// 3.10; an abi3 wheel (cp39-abi3) for its version and every later one; a `py3` wheel (pure, or
// `py3-none-manylinux...`) for all. Pre-releases and yanked files are left out.
// The packages are the compiled ones ML projects pin most, whose releases each build wheels
// for a few Pythons only: a pin of an old one (numba==0.56.4, tokenizers==0.12.1) installs from
// a wheel on those Pythons alone, and elsewhere pip builds it from source or finds nothing.
// Usage: node scripts/release-pythons.mjs   (needs https://pypi.org)
import { writeFileSync } from 'node:fs';
import { compare, valid } from '@renovatebot/pep440';

const PACKAGES = [
  'torch', 'torchvision', 'torchaudio', 'xformers', 'triton',
  'tensorflow', 'tensorflow-cpu', 'tensorflow-text', 'jaxlib',
  'onnxruntime', 'onnxruntime-gpu', 'onnx',
  'numpy', 'scipy', 'pandas', 'scikit-learn', 'scikit-image', 'numba', 'llvmlite', 'numexpr', 'pywavelets',
  'h5py', 'matplotlib', 'kiwisolver', 'contourpy', 'pillow', 'pyarrow',
  'tokenizers', 'sentencepiece', 'tiktoken', 'safetensors', 'regex', 'spacy', 'thinc', 'blis',
  'grpcio', 'protobuf', 'pydantic-core', 'markupsafe', 'pyyaml', 'lxml', 'psycopg2-binary',
  'faiss-cpu', 'ctranslate2', 'av', 'pycocotools', 'mediapipe', 'praat-parselmouth', 'pyworld', 'ray',
];
const PYTHONS = ['3.8', '3.9', '3.10', '3.11', '3.12', '3.13', '3.14'];
const WHEEL = /^[^-]+-([^-]+)(?:-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$/;
const SDIST = /^(.+?)-(\d[^-]*)\.(?:tar\.gz|zip|tar\.bz2)$/;

const table = {
  $comment:
    'Per package: "wheels", the CPython minor versions each release publishes linux x86_64 wheels for; "sdist", whether its ' +
    'releases publish a source distribution, "except" the releases for which it is the other way; read from PyPI\'s simple index ' +
    `(https://pypi.org/simple/<name>/) by scripts/release-pythons.mjs on ${new Date().toISOString().slice(0, 10)}.`,
};
for (const name of PACKAGES) {
  const response = await fetch(`https://pypi.org/simple/${name}/`, { headers: { accept: 'application/vnd.pypi.simple.v1+json' } });
  if (!response.ok) throw new Error(`${name}: PyPI answered ${response.status}`);
  const { files } = await response.json();
  const wheels = new Map();
  const withSdist = new Set();
  for (const { filename, yanked } of files) {
    if (yanked) continue;
    const sdist = SDIST.exec(filename);
    if (sdist && isFinal(sdist[2])) {
      withSdist.add(sdist[2]);
      if (!wheels.has(sdist[2])) wheels.set(sdist[2], new Set());
      continue;
    }
    const wheel = WHEEL.exec(filename);
    if (!wheel || !isFinal(wheel[1])) continue;
    const [, version, pythonTags, abi, platform] = wheel;
    if (platform !== 'any' && !(/linux/.test(platform) && /x86_64/.test(platform))) continue;
    const known = wheels.get(version) ?? new Set();
    for (const tag of pythonTags.split('.')) for (const python of pythonsOf(tag, abi)) known.add(python);
    wheels.set(version, known);
  }
  const versions = [...wheels.keys()].sort(compare);
  const sdist = versions.filter((version) => withSdist.has(version)).length * 2 >= versions.length;
  table[name] = {
    sdist,
    except: versions.filter((version) => withSdist.has(version) !== sdist),
    wheels: Object.fromEntries(versions.map((version) => [version, PYTHONS.filter((python) => wheels.get(version).has(python))])),
  };
}
writeFileSync(new URL('../src/scan/release-pythons.json', import.meta.url), render(table));

function isFinal(version) {
  return valid(version) !== null && !/(a|b|rc|dev)\d*/i.test(version) && !version.includes('+');
}

function pythonsOf(tag, abi) {
  if (/^py3$|^py2$/.test(tag)) return tag === 'py3' ? PYTHONS : [];
  const minor = /^cp3(\d+)$/.exec(tag)?.[1];
  if (minor === undefined) return [];
  const first = `3.${minor}`;
  if (abi === 'abi3') return PYTHONS.filter((python) => Number(python.split('.')[1]) >= Number(minor));
  return PYTHONS.includes(first) ? [first] : [];
}

/** One release a line, so a refresh reads as a diff of releases. */
function render(data) {
  const lines = ['{', `  "$comment": ${JSON.stringify(data.$comment)},`];
  const names = Object.keys(data).filter((key) => key !== '$comment');
  names.forEach((name, index) => {
    const { sdist, except, wheels } = data[name];
    lines.push(`  ${JSON.stringify(name)}: {`, `    "sdist": ${sdist},`, `    "except": ${JSON.stringify(except)},`, '    "wheels": {');
    const entries = Object.entries(wheels);
    entries.forEach(([version, pythons], at) => lines.push(`      ${JSON.stringify(version)}: ${JSON.stringify(pythons)}${at < entries.length - 1 ? ',' : ''}`));
    lines.push('    }', `  }${index < names.length - 1 ? ',' : ''}`);
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
