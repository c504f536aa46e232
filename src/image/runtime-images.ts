/**
 * What svc itself puts into every image, beside the project's base image: where its
 * runtime lives, the images its files are copied from, the user and the port. One place,
 * so the Dockerfile template, the runtime staging and `svc start --orchestrator docker`
 * agree. scripts/ci/base-image-standins.sh builds local stand-ins with these names.
 */

/** The official Node image the `node` binary is copied from (Node 22 LTS; svc needs >= 20.19). */
export const NODE_IMAGE = 'node:22-bookworm-slim';

/**
 * uv's official image, for installing a Python the base image lacks
 * (https://docs.astral.sh/uv/guides/integration/docker/). Pinned, so builds repeat.
 */
export const UV_IMAGE = 'ghcr.io/astral-sh/uv:0.8.14';

/** Every image is built for this platform; an arm64 engine emulates it. */
export const IMAGE_PLATFORM = 'linux/amd64';

/** svc's runtime inside the image: package.json, the bundle (dist/svc.js, dist/chunks/), python/apipod. */
export const RUNTIME_DIR_IN_IMAGE = '/opt/svc';
/** The project's files inside the image. */
export const APP_DIR_IN_IMAGE = '/app';
/** Where `uv` puts the Python it installs, and the virtualenv made from it. */
export const INSTALLED_PYTHON_DIR = '/opt/python';
export const INSTALLED_VENV_DIR = '/opt/venv';

export const IMAGE_USER = { name: 'svc', uid: 10001 } as const;
export const IMAGE_PORT = 8000;

/**
 * Debian packages svc's runtime needs in every image, beside the manifest's own (what the
 * requirements need, ffmpeg for audio and video): tini runs as PID 1 so that SIGTERM
 * reaches the gateway and orphaned processes are reaped; ca-certificates for pip.
 */
export const RUNTIME_SYSTEM_PACKAGES = ['ca-certificates', 'tini'] as const;

/** The C and C++ compilers: pip builds source distributions with them, and some frameworks compile at run time. */
export const COMPILER_PACKAGES = ['g++', 'gcc'] as const;

/**
 * Requirements that run the C compiler while the service runs, not only when pip installs
 * them: triton builds its kernel launchers with gcc at first use. torch counts through the
 * manifest's `pytorch` (torch.compile's CPU backend writes C++ and builds it with g++).
 * PEP 503 names.
 */
export const RUN_TIME_COMPILER_REQUIREMENTS: readonly string[] = ['triton'];

/** ffmpeg, for `svc build --ffmpeg`: the Debian package the scan adds for audio and video. */
export const FFMPEG_PACKAGE = 'ffmpeg';

/** The oldest release of the provider's library with what svc uses (concurrency, streaming, test server). */
export const RUNPOD_MINIMUM_VERSION = '1.7.7';
export const RUNPOD_REQUIREMENT = `runpod>=${RUNPOD_MINIMUM_VERSION}`;

/** The provider's client library, only for providers that need one; pip specifiers. */
export const PROVIDER_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  runpod: [RUNPOD_REQUIREMENT],
};

/**
 * What svc's toolkit converts media with (ImageFile's and AudioFile's to_np_array and
 * from_np_array), installed in place of an `apipod` requirement, which the image leaves out:
 * `pip install apipod` brings numpy (with OpenCV, which svc's toolkit does without), so
 * services written for it use numpy without listing it. pip specifiers.
 */
export const TOOLKIT_MEDIA_PACKAGES: readonly string[] = ['numpy', 'Pillow'];

/** Environment variables `svc start` reads its defaults from, set in the image from the manifest. */
export const COMPUTE_ENV = 'APIPOD_COMPUTE';
export const PROVIDER_ENV = 'APIPOD_PROVIDER';

/** Variables passed to the container from the caller's environment and never baked into an image. */
export const SECRET_ENV_NAMES = ['SERVICE_API_KEY', 'SVC_API_KEYS', 'SVC_WEBHOOK_SECRETS', 'HUB_TOKEN'] as const;
