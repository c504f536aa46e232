import type { BaseImageCatalog } from './base-image-catalog.js';
import { parseImageReference } from './image-reference.js';

/**
 * Which Python the image runs: the base image's own interpreter when it is the version the
 * manifest asks for, otherwise that version installed with uv into a virtualenv. Either
 * way `python`, `python3` and `pip` resolve to it.
 */
export type PythonPlan =
  | { strategy: 'base'; version: string }
  | { strategy: 'install'; version: string; baseVersion: string | null };

export function choosePython(wanted: string, basePython: string | null): PythonPlan {
  return basePython === wanted ? { strategy: 'base', version: wanted } : { strategy: 'install', version: wanted, baseVersion: basePython };
}

/**
 * The Python a base image ships, for an image named with --base-image: the catalog's word
 * when it lists the image, the tag's when it is the official `python:X.Y...` image, else
 * unknown (null).
 */
export function knownBasePython(reference: string, catalog: BaseImageCatalog): string | null {
  const listed = [
    ...catalog.pytorch.images,
    ...catalog.tensorflow.images,
    ...catalog.cuda.images,
    ...catalog.python.images,
  ].find((image) => image.image === reference);
  if (listed) return listed.python;
  const parsed = parseImageReference(reference);
  if (!parsed || !/^(?:docker\.io\/)?(?:library\/)?python$/.test(parsed.name)) return null;
  return /^(\d+\.\d+)(?:[.-]|$)/.exec(parsed.tag ?? '')?.[1] ?? null;
}
