import packages from './packages.json' with { type: 'json' };
import type { ManifestEndpoint } from './manifest.js';

const { types, packages: mediaPackages } = packages.systemPackages.forMediaParameters;
// A type's name anywhere in the annotation: `AudioFile`, `Optional[VideoFile]`, `apipod.MediaFile | None`.
const MEDIA_TYPE = new RegExp(`\\b(?:${types.join('|')})\\b`);

/**
 * The Debian packages (ffmpeg) an image needs because the service takes or returns audio or
 * video, read from the endpoints' annotations as written; none when no endpoint does.
 */
export function mediaSystemPackages(endpoints: readonly ManifestEndpoint[]): string[] {
  const annotations = endpoints.flatMap((endpoint) => [endpoint.returns, ...endpoint.parameters.map((parameter) => parameter.annotation)]);
  return annotations.some((annotation) => annotation !== null && MEDIA_TYPE.test(annotation)) ? [...mediaPackages] : [];
}
