import type { Diagnostic } from './diagnostic.js';
import type { LocatedRequirement } from './requirements.js';

/**
 * A wheel's file name ends `-{python tag}-{abi tag}-{platform tag}.whl` (PEP 427). One built
 * for a single CPython (`cp310-cp310`) installs only there; `abi3` and `py3` wheels are not
 * bound to one version, so they say nothing.
 */
const VERSION_BOUND_WHEEL = /-cp3(\d+)-cp3\1[a-z]*-[^-/]+\.whl$/i;

export interface WheelPython {
  /** "3.10" */
  version: string;
  requirement: LocatedRequirement;
}

/** The CPython version each requirement given as a version-bound wheel URL can install into. */
export function wheelPythons(requirements: readonly LocatedRequirement[]): WheelPython[] {
  return requirements.flatMap((requirement) => {
    const fileName = decodeURIComponent(requirement.url?.split(/[#?]/)[0] ?? '');
    const match = VERSION_BOUND_WHEEL.exec(fileName);
    return match ? [{ version: `3.${match[1]}`, requirement }] : [];
  });
}

/** A wheel pip will refuse, because the image's Python is not the one it was built for. */
export function wheelMismatch(wheel: WheelPython, pythonVersion: string, pythonSource: string): Diagnostic {
  const name = wheel.requirement.name || 'this wheel';
  return {
    ...wheel.requirement.source,
    message: `${name}'s wheel is built for Python ${wheel.version}, but the image gets Python ${pythonVersion} (${pythonSource}): pip will refuse it; use the wheel for ${pythonVersion}, or ask for Python ${wheel.version}`,
  };
}
