import type { Diagnostic } from './diagnostic.js';
import type { LocatedRequirement } from './requirements.js';

/** PyPI's own index, which no more serves local versions than leaving the index out does. */
const PYPI_INDEX = /^https?:\/\/(?:pypi\.org|pypi\.python\.org)\/simple\/?$/;
/** The local labels of PyTorch's own indexes (`/whl/cpu`, `/whl/cu121`, `/whl/rocm6.1`). */
const PYTORCH_LABEL = /^(?:cpu|cu\d{2,3}|rocm[\d.]+)$/;

/**
 * `torch==1.12.0+cpu` with nowhere to find it: PyPI refuses uploads with a local version label
 * (PEP 440), so only another index or a --find-links location can serve one, and pip fails
 * the image's install when the requirements name none.
 */
export function localPinsWithoutIndex(requirements: readonly LocatedRequirement[], indexUrls: readonly string[]): Diagnostic[] {
  if (indexUrls.some((url) => !PYPI_INDEX.test(url))) return [];
  return requirements.flatMap((requirement) => {
    const local = /==\s*[^,+]+\+([A-Za-z0-9.]+)/.exec(requirement.specifier)?.[1];
    if (local === undefined || requirement.url !== null) return [];
    const pytorchIndex = PYTORCH_LABEL.test(local) ? `https://download.pytorch.org/whl/${local}` : null;
    const fix = pytorchIndex ? `add --extra-index-url ${pytorchIndex} to the requirements` : 'name the index that serves it with --extra-index-url';
    return [{
      ...requirement.source,
      message: `${requirement.name}${requirement.specifier}: PyPI serves no local versions (+${local}), and the requirements name no other index, so pip will not find it; ${fix}`,
    }];
  });
}
