import packages from './packages.json' with { type: 'json' };
import type { Diagnostic } from './diagnostic.js';
import { evaluateMarker, linuxImageEnvironment } from './markers.js';
import { SUPPORTED_PYTHON_VERSIONS } from './python-version.js';
import type { LocatedRequirement } from './requirements.js';

/** A wheel built for CUDA: `+cu124` or `+cu12torch2.6` in its version. */
const CUDA_WHEEL = /[-_.][^-/]*\+cu\d[^/]*\.whl$/i;

/**
 * Prebuilt CUDA wheels (URL requirement lines) whose markers all hold on
 * linux x86_64 only with another Python than the image's: pip skips every one of them, and the
 * image has no GPU backend, though the project meant it to (oobabooga's wheels are all
 * `python_version == "3.11"`). Says so at the first of them, with the Pythons they are for.
 */
export function droppedCudaWheels(
  installed: readonly LocatedRequirement[],
  skipped: readonly LocatedRequirement[],
  python: { version: string; source: string },
): Diagnostic[] {
  if (installed.some(isCudaLine)) return [];
  const dropped = skipped.flatMap((requirement) => {
    const pythons = SUPPORTED_PYTHON_VERSIONS.filter((version) => holdsOn(requirement, version));
    return isCudaLine(requirement) && pythons.length > 0 ? [{ requirement, pythons }] : [];
  });
  const [first] = dropped;
  if (first === undefined) return [];
  const names = [...new Set(dropped.map(({ requirement }) => requirement.name || requirement.url))].join(', ');
  const pythons = SUPPORTED_PYTHON_VERSIONS.filter((version) => dropped.some((line) => line.pythons.includes(version)));
  return [{
    ...first.requirement.source,
    message:
      `the markers leave out every CUDA wheel (${names}) on Python ${python.version} (${python.source}): they are for Python ` +
      `${pythons.join(' or ')}, so the image gets none of them; ask for Python ${pythons.at(-1)} in .python-version to install them`,
  }];
}

/** A prebuilt wheel for CUDA: one whose version says `+cu...`, or one of a package that needs CUDA. */
function isCudaLine(requirement: LocatedRequirement): boolean {
  const file = decodeURIComponent(requirement.url?.split(/[#?]/)[0] ?? '');
  if (!/\.whl$/i.test(file)) return false;
  return CUDA_WHEEL.test(file) || packages.cuda.packages.includes(requirement.key) || packages.cudaCompiler.packages.includes(requirement.key);
}

function holdsOn(requirement: LocatedRequirement, python: string): boolean {
  if (requirement.marker === null) return true;
  const verdict = evaluateMarker(requirement.marker, linuxImageEnvironment(python));
  return 'value' in verdict && verdict.value;
}
