import { compare, satisfies } from '@renovatebot/pep440';
import { pinnedVersion } from './pep508.js';
import { SUPPORTED_PYTHON_VERSIONS } from './python-version.js';
import releasePythons from './release-pythons.json' with { type: 'json' };
import releaseRequirements from './release-requirements.json' with { type: 'json' };
import type { Diagnostic } from './diagnostic.js';
import type { LocatedRequirement } from './requirements.js';

/**
 * A wheel's file name ends `-{python tag}-{abi tag}-{platform tag}.whl` (PEP 427). One built
 * for a single CPython (`cp310-cp310`) installs only there; `abi3` and `py3` wheels are not
 * bound to one version, so they say nothing.
 */
const RELEASES = releasePythons as unknown as Record<string, { sdist: boolean; except: string[]; wheels: Record<string, string[]> } | undefined>;

/** What releases of some packages pin of a package with wheels for some Pythons only: tokenizers, for transformers. */
const DEPENDENCY_PINS: Record<string, Record<string, Record<string, string>>> = { tokenizers: releaseRequirements.tokenizers };
/** The Pythons release-pythons.json records, from 3.8 on. */
const SUPPORTED_AND_OLDER = ['3.8', '3.9', '3.10', '3.11', '3.12', '3.13', '3.14'];

const VERSION_BOUND_WHEEL = /-cp3(\d+)-cp3\1[a-z]*-[^-/]+\.whl$/i;

/** The CPython versions a requirement can be installed into, where that is narrower than any. */
export interface PythonNeed {
  requirement: LocatedRequirement;
  /** CPython minor versions, oldest first. */
  versions: string[];
  /** Why, as the Python version's source says it: "a wheel for Python 3.10". */
  reason: string;
  /** What pip does on another Python, and what to change. */
  mismatch(python: string): string;
}

/**
 * What the requirements ask of the image's Python: a wheel URL built for one CPython, or a
 * pinned release of a package whose releases publish wheels for some Pythons only
 * (src/scan/release-pythons.json, read off PyPI). On another Python pip finds nothing to
 * install, or builds the release from source, which svc cannot tell will work: wheels decide.
 */
export function pythonNeeds(requirements: readonly LocatedRequirement[]): PythonNeed[] {
  return requirements.flatMap((requirement) => {
    const wheel = boundWheelPython(requirement);
    if (wheel !== null) return [wheelNeed(requirement, wheel)];
    const release = releaseNeed(requirement);
    if (release !== null) return [release];
    const dependency = dependencyNeed(requirement);
    return dependency === null ? [] : [dependency];
  });
}

/** Where a need that the image's Python does not meet is written, and what pip will do. */
export function unmetNeed(need: PythonNeed, python: string, pythonSource: string): Diagnostic {
  return { ...need.requirement.source, message: `${need.mismatch(python)} (Python ${python} from ${pythonSource})` };
}

function boundWheelPython(requirement: LocatedRequirement): string | null {
  const fileName = decodeURIComponent(requirement.url?.split(/[#?]/)[0] ?? '');
  const match = VERSION_BOUND_WHEEL.exec(fileName);
  return match ? `3.${match[1]}` : null;
}

function wheelNeed(requirement: LocatedRequirement, version: string): PythonNeed {
  const name = requirement.name || 'this wheel';
  return {
    requirement,
    versions: [version],
    reason: `a wheel for Python ${version}`,
    mismatch: (python) => `${name}'s wheel is built for Python ${version}, not ${python}: pip will refuse it; use the wheel for ${python}, or ask for Python ${version}`,
  };
}

function releaseNeed(requirement: LocatedRequirement): PythonNeed | null {
  const version = pinnedVersion(requirement.specifier);
  const release = version === null ? null : releaseFiles(requirement.key, version);
  if (release === null || release.pythons.length === 0) return null;
  const { pythons: versions, sdist } = release;
  const name = `${requirement.key} ${release.version}`;
  const range = versions.length === 1 ? versions[0] : `${versions[0]} to ${versions.at(-1)}`;
  return {
    requirement,
    versions,
    reason: `${name} has wheels for Python ${range}`,
    mismatch: (python) => {
      const usable = versions.filter((candidate) => (SUPPORTED_PYTHON_VERSIONS as readonly string[]).includes(candidate)).at(-1);
      const instead = usable === undefined ? '' : `, or ask for Python ${usable}`;
      const outcome = sdist
        ? 'pip will build it from its source distribution, which may need a compiler or Rust, or refuse that Python'
        : 'pip will find none to install';
      return `${name} publishes wheels for Python ${range}, not ${python}: ${outcome}; pin a release with wheels for ${python}${instead}`;
    },
  };
}

/**
 * A pinned release that pins a compiled dependency in turn (transformers 4.20.0 requires
 * tokenizers<0.13, whose releases have wheels up to Python 3.10): the Pythons some release of
 * that dependency the pin allows has wheels for (src/scan/release-requirements.json).
 */
function dependencyNeed(requirement: LocatedRequirement): PythonNeed | null {
  const version = pinnedVersion(requirement.specifier);
  if (version === null) return null;
  for (const [dependency, byPackage] of Object.entries(DEPENDENCY_PINS)) {
    const pins = byPackage[requirement.key];
    const release = pins === undefined ? undefined : Object.keys(pins).find((candidate) => compare(candidate, version) === 0);
    if (pins === undefined || release === undefined) continue;
    const specifier = pins[release] as string;
    const allowed = listedReleases(dependency).flatMap((candidate) => {
      const files = satisfies(candidate, specifier) ? releaseFiles(dependency, candidate) : null;
      return files === null ? [] : [files];
    });
    const versions = SUPPORTED_AND_OLDER.filter((python) => allowed.some((files) => files.pythons.includes(python)));
    if (allowed.length === 0 || versions.length === 0 || versions.length === SUPPORTED_AND_OLDER.length) continue;
    const sdist = allowed.some((files) => files.sdist);
    const range = versions.length === 1 ? versions[0] : `${versions[0]} to ${versions.at(-1)}`;
    const name = `${requirement.key} ${release}`;
    const pinned = `${dependency}${specifier}`;
    return {
      requirement,
      versions,
      reason: `${name} needs ${pinned}, with wheels for Python ${range}`,
      mismatch: (python) => {
        const outcome = sdist ? 'pip will build it from source, which may need a compiler or Rust, or refuse that Python' : 'pip will find none to install';
        return `${name} needs ${pinned}, which publishes wheels for Python ${range}, not ${python}: ${outcome}; pin a release for ${python}, or ask for Python ${versions.at(-1)}`;
      },
    };
  }
  return null;
}

/** What one release publishes (src/scan/release-pythons.json): its wheels' Pythons and whether it has a source distribution. */
export function releaseFiles(key: string, version: string): { version: string; pythons: string[]; sdist: boolean } | null {
  const entry = RELEASES[key];
  if (entry === undefined) return null;
  const listed = Object.keys(entry.wheels).find((candidate) => compare(candidate, version) === 0);
  if (listed === undefined) return null;
  return { version: listed, pythons: entry.wheels[listed] as string[], sdist: entry.sdist !== entry.except.includes(listed) };
}

/** The releases of a package the table lists, oldest first, for pip's choice among them. */
export function listedReleases(key: string): string[] {
  return Object.keys(RELEASES[key]?.wheels ?? {});
}
