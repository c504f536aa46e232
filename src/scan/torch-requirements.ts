import { compare, satisfies } from '@renovatebot/pep440';
import { pinnedVersion } from './pep508.js';
import { listedReleases, releaseFiles } from './python-needs.js';
import releaseRequirements from './release-requirements.json' with { type: 'json' };
import type { LocatedRequirement } from './requirements.js';

/**
 * What the project's requirements ask of torch besides its own line, from what their releases
 * require (src/scan/release-requirements.json, read off PyPI's metadata): a pinned torchaudio,
 * torchvision, xformers or triton goes with one torch release, and lightning, ultralytics,
 * sentence-transformers and the like install torch though the project never names it.
 */
export interface TorchDemand {
  /** Each a torch release set pip must pick from (the image's torch among them, or pip replaces it). */
  constraints: TorchConstraint[];
}

export interface TorchConstraint {
  /** The torch releases allowed: any one of these PEP 440 specifiers. */
  anyOf: string[];
  /** What asks for it, as the user reads it: `torchaudio==2.5.1 needs torch==2.5.1`. */
  because: string;
  source: LocatedRequirement['source'];
}

interface TorchTables {
  torch: Record<string, Record<string, string>>;
  torchCuda: Record<string, string>;
  requiresTorch: Record<string, { release: string; torch: string }>;
}

const TABLES = releaseRequirements as unknown as TorchTables;
/** Packages the pytorch/pytorch images install beside torch (pytorch/pytorch's Dockerfile): pip keeps their copies when they satisfy the line. */
const SHIPPED_WITH_TORCH = new Set(['torchvision', 'torchaudio', 'triton']);

/** Whether a requirement installs torch, though it is not torch. */
export function bringsTorch(key: string): boolean {
  return key in TABLES.torch || key in TABLES.requiresTorch;
}

/**
 * The torch each requirement goes with. A companion pip keeps from a PyTorch image (torchvision,
 * torchaudio, triton) allows every torch one of the releases its line allows goes with; another
 * package is taken at its newest release the line allows, as pip takes it, unless that release
 * conflicts with the pins, from which pip backs off.
 */
export function torchDemand(requirements: readonly LocatedRequirement[], torchSpecifier: string): TorchDemand {
  const users = requirements.filter((requirement) => requirement.key !== 'torch' && bringsTorch(requirement.key));
  const pinned: TorchConstraint[] = [];
  const loose: Array<{ requirement: LocatedRequirement; releases: Array<[string, string]> }> = [];
  for (const requirement of users) {
    const table = TABLES.torch[requirement.key];
    if (table !== undefined) {
      const releases = Object.entries(table).filter(([release]) => requirement.specifier === '' || satisfies(release, requirement.specifier));
      if (releases.length === 0) continue;
      const exact = pinnedVersion(requirement.specifier) !== null;
      if (exact || SHIPPED_WITH_TORCH.has(requirement.key)) {
        if (requirement.specifier === '') continue;
        const anyOf = [...new Set(releases.map(([, torch]) => torch))];
        pinned.push({ anyOf, because: `${requirement.name}${requirement.specifier} needs torch${describeAnyOf(anyOf)}`, source: requirement.source });
      } else {
        loose.push({ requirement, releases: releases.sort(([a], [b]) => compare(b, a)) });
      }
      continue;
    }
    const newest = TABLES.requiresTorch[requirement.key];
    if (newest === undefined || newest.torch === '') continue;
    if (requirement.specifier === '' || satisfies(newest.release, requirement.specifier)) {
      loose.push({ requirement, releases: [[newest.release, newest.torch]] });
    }
  }
  const hard = [...(torchSpecifier === '' ? [] : [torchSpecifier]), ...pinned.flatMap((constraint) => (constraint.anyOf.length === 1 ? constraint.anyOf : []))];
  const constraints = [...pinned];
  for (const { requirement, releases } of loose) {
    const taken = releases.find(([, torch]) => someTorchRelease([...hard, torch]));
    if (taken === undefined) continue;
    const [release, torch] = taken;
    constraints.push({ anyOf: [torch], because: `${requirement.name} ${release}, the newest release pip takes, needs torch${torch}`, source: requirement.source });
  }
  return { constraints };
}

/** Whether a torch release satisfies every constraint. */
export function meetsConstraints(torch: string, constraints: readonly TorchConstraint[]): boolean {
  return constraints.every((constraint) => constraint.anyOf.some((specifier) => specifier === '' || satisfies(torch, specifier)));
}

/**
 * The torch pip installs from PyPI: its newest release with a wheel for the Python that
 * satisfies the torch line and the constraints, as of the table; null when none does.
 */
export function newestPypiTorch(torchSpecifier: string, constraints: readonly TorchConstraint[], python: string): string | null {
  const fitting = listedReleases('torch').filter(
    (release) =>
      (torchSpecifier === '' || satisfies(release, torchSpecifier)) &&
      meetsConstraints(release, constraints) &&
      (releaseFiles('torch', release)?.pythons.includes(python) ?? false),
  );
  return fitting.sort(compare).at(-1) ?? null;
}

/** The CUDA a torch release on PyPI is built for ("12.8", "13.0"), from its nvidia-* requirements; null when unknown. */
export function pypiTorchCuda(release: string): string | null {
  return TABLES.torchCuda[release] ?? null;
}

function someTorchRelease(specifiers: readonly string[]): boolean {
  return listedReleases('torch').some((release) => specifiers.every((specifier) => specifier === '' || satisfies(release, specifier)));
}

/** `==2.5.1`, or for the many torch releases a range of torchvision goes with, `2.0.0 to 2.14.0`. */
function describeAnyOf(anyOf: readonly string[]): string {
  if (anyOf.length === 1) return anyOf[0] as string;
  const versions = anyOf.map((specifier) => specifier.replace(/^[<>=!~]+/, '').split(',')[0] as string).sort(compare);
  return ` ${versions[0]} to ${versions.at(-1)}`;
}
