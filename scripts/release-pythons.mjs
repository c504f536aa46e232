#!/usr/bin/env node
// Writes src/scan/release-pythons.json: for each package below, which CPython minor versions
// each release line (major.minor) publishes linux x86_64 wheels for, read from PyPI's simple
// index (PEP 691 JSON). A line counts a Python when any of its releases has a wheel for it;
// an abi3 wheel (cp39-abi3) counts for its version and every later one svc supports.
// Usage: node scripts/release-pythons.mjs   (needs https://pypi.org)
import { writeFileSync } from 'node:fs';

const PACKAGES = ['torch', 'tensorflow', 'onnxruntime-gpu'];
const PYTHONS = ['3.8', '3.9', '3.10', '3.11', '3.12', '3.13', '3.14'];

const table = {
  $comment:
    'Which CPython minor versions each release line publishes linux x86_64 wheels for, read from ' +
    `PyPI's simple index (https://pypi.org/simple/<name>/) by scripts/release-pythons.mjs on ${new Date().toISOString().slice(0, 10)}.`,
};
for (const name of PACKAGES) {
  const response = await fetch(`https://pypi.org/simple/${name}/`, { headers: { accept: 'application/vnd.pypi.simple.v1+json' } });
  if (!response.ok) throw new Error(`${name}: PyPI answered ${response.status}`);
  const { files } = await response.json();
  const lines = new Map();
  for (const { filename } of files) {
    const wheel = /^[^-]+-([0-9][^-]*)-(cp3(\d+))-([^-]+)-([^-]+)\.whl$/.exec(filename);
    if (!wheel || !/linux/.test(wheel[5]) || !/x86_64/.test(wheel[5])) continue;
    const [, version, , minor, abi] = wheel;
    if (!/^\d+\.\d+/.test(version) || /(a|b|rc|dev)\d*/.test(version)) continue;
    const line = version.split('.').slice(0, 2).join('.');
    const first = `3.${minor}`;
    const pythons = abi === 'abi3' ? PYTHONS.slice(PYTHONS.indexOf(first)) : [first];
    const known = lines.get(line) ?? new Set();
    for (const python of pythons) if (PYTHONS.includes(python)) known.add(python);
    lines.set(line, known);
  }
  const byVersion = (a, b) => a.split('.').map(Number).reduce((order, part, index) => order || part - Number(b.split('.')[index]), 0);
  table[name] = Object.fromEntries(
    [...lines.keys()].sort(byVersion).map((line) => [line, [...lines.get(line)].sort(byVersion)]),
  );
}
writeFileSync(new URL('../src/scan/release-pythons.json', import.meta.url), `${JSON.stringify(table, null, 2)}\n`);
