#!/usr/bin/env node
// Writes src/scan/release-requirements.json: what some packages' releases require of torch
// (or of tokenizers), read from each release's own metadata (the Requires-Dist lines of the
// METADATA file in one of its wheels, fetched by HTTP range requests from PyPI's file host, so
// no wheel is downloaded whole), and which packages require torch at all, read from the
// newest release's metadata on PyPI's JSON API. Only requirements that hold on linux x86_64
// without an extra count.
// Usage: node scripts/release-requirements.mjs   (needs https://pypi.org and its file host)
import { writeFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { compare, valid } from '@renovatebot/pep440';

/** Packages whose releases pin torch, and from which release on. */
const PIN_TORCH = { torchvision: '0.15.0', torchaudio: '2.0.0', xformers: '0.0.16' };
/** transformers pins the tokenizers it needs, which publishes wheels for some Pythons only. */
const PIN_TOKENIZERS = { transformers: '4.0.0' };
const TORCH_FROM = '2.0.0';
/**
 * Packages ML projects list that may pull torch in; the ones whose newest release requires it
 * are kept. torch's own companions (torchvision, ...) are in PIN_TORCH.
 */
const MAY_REQUIRE_TORCH = [
  'accelerate', 'audiocraft', 'basicsr', 'bitsandbytes', 'clip-anytorch', 'coqui-tts', 'deepspeed', 'demucs', 'encodec',
  'f5-tts', 'facexlib', 'fastai', 'gfpgan', 'julius', 'k-diffusion', 'kokoro', 'kornia', 'lightning', 'lpips', 'monai',
  'nemo-toolkit', 'open-clip-torch', 'openai-whisper', 'peft', 'pyannote-audio', 'pytorch-lightning', 'pytorch-metric-learning',
  'realesrgan', 'sentence-transformers', 'silero-vad', 'spandrel', 'speechbrain', 'stable-baselines3', 'timm', 'torch-audiomentations',
  'torchcrepe', 'torchdiffeq', 'torchmetrics', 'torchsde', 'trl', 'tts', 'ultralytics', 'vllm', 'whisperx',
];
const LINUX = { os_name: 'posix', sys_platform: 'linux', platform_system: 'Linux', platform_machine: 'x86_64', platform_python_implementation: 'CPython', implementation_name: 'cpython' };

const torchOf = {};
for (const [name, from] of Object.entries(PIN_TORCH)) torchOf[name] = await requirementsOf(name, from, 'torch');
const torchRequires = await requirementsOf('torch', TORCH_FROM, ['triton', 'nvidia-cuda-runtime-cu11', 'nvidia-cuda-runtime-cu12', 'cuda-toolkit', 'nvidia-cuda-runtime']);
torchOf.triton = tritonToTorch(torchRequires);
const tokenizersOf = {};
for (const [name, from] of Object.entries(PIN_TOKENIZERS)) tokenizersOf[name] = await requirementsOf(name, from, 'tokenizers');
const requiresTorch = {};
for (const name of MAY_REQUIRE_TORCH) {
  const response = await fetch(`https://pypi.org/pypi/${name}/json`);
  if (!response.ok) throw new Error(`${name}: PyPI answered ${response.status}`);
  const { info } = await response.json();
  const torch = (info.requires_dist ?? []).map(parseRequirement).find((requirement) => requirement?.name === 'torch' && holdsOnLinux(requirement.marker));
  if (torch) requiresTorch[name] = { release: info.version, torch: torch.specifier };
}

const table = {
  $comment:
    'What releases require of torch and tokenizers, from the Requires-Dist of each release\'s wheel metadata on PyPI, read by ' +
    `scripts/release-requirements.mjs on ${new Date().toISOString().slice(0, 10)}. "torch": per package and release, the torch releases it ` +
    'installs with (a specifier; for triton, the torch releases that require that triton); "torchCuda": the CUDA each torch release on PyPI is ' +
    'built for (its nvidia-cuda-runtime or cuda-toolkit requirement); "tokenizers": what each transformers release requires of tokenizers; ' +
    '"requiresTorch": packages whose newest release requires torch, with that release and its torch specifier.',
  torch: torchOf,
  torchCuda: Object.fromEntries(Object.entries(torchRequires).flatMap(([release, specifier]) => {
    const cuda = /(?:^|,)(?:nvidia-cuda-runtime-cu1\d|cuda-toolkit|nvidia-cuda-runtime)==(\d+\.\d+)/.exec(specifier)?.[1];
    return cuda ? [[release, cuda]] : [];
  })),
  tokenizers: tokenizersOf,
  requiresTorch,
};
writeFileSync(new URL('../src/scan/release-requirements.json', import.meta.url), `${JSON.stringify(table, null, 2)}\n`);

/**
 * For each final release of `name` from `from` on: the specifier its metadata gives the
 * wanted package (or, with a list, `package==X` joined by commas, for each it names).
 */
async function requirementsOf(name, from, wanted) {
  const response = await fetch(`https://pypi.org/simple/${name}/`, { headers: { accept: 'application/vnd.pypi.simple.v1+json' } });
  if (!response.ok) throw new Error(`${name}: PyPI answered ${response.status}`);
  const { files } = await response.json();
  const byVersion = new Map();
  for (const file of files) {
    const wheel = /^[^-]+-([^-]+)-.*\.whl$/.exec(file.filename);
    if (!wheel || file.yanked || valid(wheel[1]) === null || /(a|b|rc|dev)\d*|\+/.test(wheel[1]) || compare(wheel[1], from) < 0) continue;
    const linux = /linux[^/]*x86_64|none-any/.test(file.filename);
    if (!byVersion.has(wheel[1]) || (linux && !byVersion.get(wheel[1]).linux)) byVersion.set(wheel[1], { url: file.url, linux });
  }
  const result = {};
  for (const version of [...byVersion.keys()].sort(compare)) {
    const requirements = (await wheelRequirements(byVersion.get(version).url)).filter((requirement) => holdsOnLinux(requirement.marker));
    if (Array.isArray(wanted)) {
      const named = requirements.filter((requirement) => wanted.includes(requirement.name)).map((requirement) => `${requirement.name}${requirement.specifier}`);
      if (named.length > 0) result[version] = named.join(',');
    } else {
      const found = requirements.find((requirement) => requirement.name === wanted);
      if (found) result[version] = found.specifier;
    }
  }
  return result;
}

/** triton is pinned by torch, not the reverse: each triton release, with the torch releases that pin it. */
function tritonToTorch(torchRequires) {
  const torchReleases = Object.keys(torchRequires).sort(compare);
  const byTriton = new Map();
  for (const release of torchReleases) {
    const triton = /(?:^|,)triton==([^,]+)/.exec(torchRequires[release])?.[1];
    if (triton) byTriton.set(triton, [...(byTriton.get(triton) ?? []), release]);
  }
  return Object.fromEntries([...byTriton].map(([triton, releases]) => {
    const [first, last] = [releases[0], releases.at(-1)];
    const between = torchReleases.filter((release) => compare(release, first) > 0 && compare(release, last) < 0 && !releases.includes(release));
    return [triton, [`>=${first}`, `<=${last}`, ...between.map((release) => `!=${release}`)].join(',')];
  }));
}

/** The Requires-Dist lines of a remote wheel, read from its METADATA through the zip's central directory. */
async function wheelRequirements(url) {
  const tail = await range(url, 'bytes=-65536');
  const end = tail.buffer.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error(`${url}: no end of central directory`);
  const directorySize = tail.buffer.readUInt32LE(end + 12);
  const directoryOffset = tail.buffer.readUInt32LE(end + 16);
  const tailStart = tail.total - tail.buffer.length;
  const directory = directoryOffset >= tailStart
    ? tail.buffer.subarray(directoryOffset - tailStart, directoryOffset - tailStart + directorySize)
    : (await range(url, `bytes=${directoryOffset}-${directoryOffset + directorySize - 1}`)).buffer;
  for (let at = 0; at + 46 <= directory.length && directory.readUInt32LE(at) === 0x02014b50;) {
    const method = directory.readUInt16LE(at + 10);
    const compressedSize = directory.readUInt32LE(at + 20);
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const localOffset = directory.readUInt32LE(at + 42);
    const name = directory.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (/^[^/]+\.dist-info\/METADATA$/.test(name)) {
      const local = (await range(url, `bytes=${localOffset}-${localOffset + 30 + nameLength + 1024 + compressedSize}`)).buffer;
      const dataStart = 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      const data = local.subarray(dataStart, dataStart + compressedSize);
      const text = (method === 8 ? inflateRawSync(data) : data).toString('utf8');
      return text.split('\n').filter((line) => line.startsWith('Requires-Dist:')).map((line) => parseRequirement(line.slice('Requires-Dist:'.length).trim())).filter(Boolean);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${url}: no METADATA`);
}

async function range(url, bytes) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, { headers: { range: bytes } });
    if (response.status === 206) {
      const total = Number(/\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1]);
      return { buffer: Buffer.from(await response.arrayBuffer()), total };
    }
    if (attempt === 3) throw new Error(`${url}: answered ${response.status} to a range request`);
  }
}

/** `torch (==2.5.1) ; extra == "x"` or `torch==2.5.1; platform_system == "Linux"`: name, specifier without spaces, marker. */
function parseRequirement(text) {
  const [requirement, marker = ''] = text.split(';');
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^)]*)\)?\s*$/.exec(requirement.trim());
  if (!match) return null;
  return { name: match[1].toLowerCase().replace(/[-_.]+/g, '-'), specifier: match[2].replace(/\s+/g, ''), marker: marker.trim() };
}

/** Whether a marker holds on linux x86_64 for some Python: no extra, and no other platform. */
function holdsOnLinux(marker) {
  if (marker === '') return true;
  if (/\bextra\b/.test(marker)) return false;
  for (const [variable, value] of Object.entries(LINUX)) {
    for (const [, operator, literal] of marker.matchAll(new RegExp(`${variable}\\s*(==|!=)\\s*["']([^"']*)["']`, 'g'))) {
      if ((operator === '==') !== (literal === value) && !/\bor\b/.test(marker)) return false;
    }
  }
  return true;
}
