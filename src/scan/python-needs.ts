import { compare } from '@renovatebot/pep440';
import { pinnedVersion } from './pep508.js';
import { SUPPORTED_PYTHON_VERSIONS } from './python-version.js';
import releasePythons from './release-pythons.json' with { type: 'json' };
import type { Diagnostic } from './diagnostic.js';
import type { LocatedRequirement } from './requirements.js';

/**
 * A wheel's file name ends `-{python tag}-{abi tag}-{platform tag}.whl` (PEP 427). One built
 * for a single CPython (`cp310-cp310`) installs only there; `abi3` and `py3` wheels are not
 * bound to one version, so they say nothing.
 */
const RELEASES = releasePythons as unknown as Record<string, { sdist: boolean; except: string[]; wheels: Record<string, string[]> } | undefined>;

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
    return release === null ? [] : [release];
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
