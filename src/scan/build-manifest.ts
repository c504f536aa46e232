import {
  COMPUTE_VALUES,
  DEFAULT_TARGET,
  PROVIDER_VALUES,
  type Compute,
  type Provider,
} from '../deployment-target.js';
import type { BaseImageCatalog } from '../image/base-image-catalog.js';
import type { AppDeclaration } from './app-resolution.js';
import { baseImageWarnings, chooseBaseImage } from './base-image.js';
import { formatDiagnostic, sortDiagnostics, type Diagnostic } from './diagnostic.js';
import { droppedCudaWheels } from './dropped-cuda-wheels.js';
import { detectFrameworks, FRAMEWORK_NAMES } from './frameworks.js';
import { localPinsWithoutIndex } from './local-version-pins.js';
import { MANIFEST_SCHEMA_VERSION, type Manifest, type ManifestRequirement } from './manifest.js';
import { evaluateMarker, linuxImageEnvironment, type MarkerEnvironment } from './markers.js';
import { mediaSystemPackages } from './media-packages.js';
import { findModelFiles } from './model-files.js';
import { unmatchableVersions } from './pep508.js';
import type { ProjectListing } from './project-files.js';
import { projectTextReader, type ReadBytes } from './project-text.js';
import { pythonNeeds, unmetNeed, type PythonNeed } from './python-needs.js';
import { readPyproject } from './pyproject.js';
import type { PythonParser } from './python-parser.js';
import { choosePythonVersion, type PythonVersionChoice } from './python-version.js';
import { outsideProjectWarning, readRequirements, type LocatedRequirement, type RequirementSet } from './requirements.js';
import { readServiceFile, type ServiceFile } from './service-file.js';
import { simulatedTarget } from './simulate-target.js';
import { SVC_TOOLKIT, UPSTREAM_TOOLKIT } from './toolkit-distributions.js';

/** Everything a scan reads from disk, gathered at the edge so the rest is pure. */
export interface ProjectSnapshot {
  /** The project's absolute path (POSIX); the manifest never records it. */
  root: string;
  directoryName: string;
  entrypoint: string;
  /** Project-relative POSIX path to the file's bytes, or null when it is missing. */
  readBytes: ReadBytes;
  hasEnvFile: boolean;
  listing: ProjectListing;
}

const REQUIREMENTS_FILE = 'requirements.txt';
const PYPROJECT_FILE = 'pyproject.toml';

export function buildManifest(snapshot: ProjectSnapshot, parser: PythonParser, catalog: BaseImageCatalog): Manifest {
  const { entrypoint } = snapshot;
  const diagnostics: Diagnostic[] = [];
  const unreadableFiles = new Map<string, string>();
  const undecodable: Diagnostic[] = [];
  const readText = projectTextReader(snapshot.readBytes, { pythonSource: entrypoint, toml: PYPROJECT_FILE }, diagnostics, unreadableFiles, undecodable);

  const pyprojectText = readText(PYPROJECT_FILE);
  const pyproject = pyprojectText === null ? null : readPyproject(pyprojectText, PYPROJECT_FILE);
  const stated = choosePythonVersion({
    pythonVersionFile: readText('.python-version'),
    requiresPython: pyproject?.requiresPython,
    runtimeTxt: readText('runtime.txt'),
    poetryPython: pyproject?.poetryPython,
  });
  diagnostics.push(...stated.diagnostics);
  const { python, dependencies } = settlePython(stated, readDependencies);
  const { requirementSet, pyprojectSplit, installed, apipod, frameworks, baseImage } = dependencies;
  diagnostics.push(...dependencies.diagnostics);
  for (const need of pythonNeeds(installed)) {
    if (!need.versions.includes(python.version)) diagnostics.push(unmetNeed(need, python.version, python.source));
  }
  diagnostics.push(...droppedCudaWheels(installed, [...requirementSet.skipped, ...pyprojectSplit.skipped], python));

  const service = readServiceFile(parser, readText(entrypoint) ?? '', entrypoint, { version: python.version, source: python.source });
  diagnostics.push(...service.diagnostics);
  if (service.endpoints.length === 0 && service.unreadRegistrations > 0) {
    diagnostics.push({
      file: entrypoint,
      message: `no endpoints found statically: the ${service.unreadRegistrations === 1 ? 'registration' : `${service.unreadRegistrations} registrations`} warned about above run only when the file runs; svc start serves what they register, and the manifest lists none`,
    });
  } else if (service.endpoints.length === 0) {
    diagnostics.push({ file: entrypoint, message: 'no endpoints found: decorate functions with @app.endpoint("/path")' });
  }
  const target = readTarget(service.app, entrypoint, diagnostics);

  if (snapshot.hasEnvFile) {
    diagnostics.push({ file: '.env', message: 'never copied into the image; pass its variables to the container at run time' });
  }
  const modelFiles = findModelFiles(snapshot.listing.files);
  const endpoints = endpointsOf(service);

  return {
    entrypoint,
    title: titleOf(service.app, snapshot.directoryName),
    python_version: python.version,
    orchestrator: DEFAULT_TARGET.orchestrator,
    compute: target.compute,
    provider: target.provider,
    pytorch: frameworks.frameworks.pytorch !== undefined,
    tensorflow: frameworks.frameworks.tensorflow !== undefined,
    onnx: frameworks.frameworks.onnx !== undefined,
    transformers: frameworks.frameworks.transformers !== undefined,
    diffusers: frameworks.frameworks.diffusers !== undefined,
    cuda: frameworks.cuda,
    system_packages: [...new Set([...frameworks.systemPackages, ...mediaSystemPackages(endpoints)])].sort(),
    model_files: modelFiles.map((file) => file.path),
    has_env_file: snapshot.hasEnvFile,

    schema_version: MANIFEST_SCHEMA_VERSION,
    python_version_source: python.source,
    frameworks: Object.fromEntries(
      FRAMEWORK_NAMES.flatMap((name) => {
        const use = frameworks.frameworks[name];
        return use ? [[name, use]] : [];
      }),
    ),
    cuda_packages: frameworks.cudaPackages,
    cuda_compiler_packages: frameworks.compilerPackages,
    base_image: baseImage,
    app: service.app,
    endpoints,
    dependencies: {
      files: [...requirementSet.files, ...(pyproject ? [PYPROJECT_FILE] : [])],
      requirements: installed.map(toManifestRequirement),
      skipped: [...requirementSet.skipped, ...pyprojectSplit.skipped].map(toManifestRequirement),
      constraints: requirementSet.constraints.map(toManifestRequirement),
      index_url: requirementSet.indexUrl,
      extra_index_urls: requirementSet.extraIndexUrls,
      find_links: requirementSet.findLinks,
      pip_options: requirementSet.pipOptions,
      // A dependency file that is there but unreadable is as bad as a line pip cannot read: the image would lack what it names.
      unreadable: [
        ...[REQUIREMENTS_FILE, PYPROJECT_FILE].flatMap((file) => {
          const why = unreadableFiles.get(file);
          return why === undefined ? [] : [formatDiagnostic({ file, message: why })];
        }),
        ...requirementSet.unreadable.map(formatDiagnostic),
        ...(pyproject?.unreadable ?? []).map(formatDiagnostic),
      ],
      apipod_requirement: apipod ? `${apipod.source.file}:${apipod.source.line}` : null,
    },
    model_file_sizes: Object.fromEntries(modelFiles.map((file) => [file.path, file.size])),
    ignore_files: snapshot.listing.ignoreFiles,
    service_errors: [
      ...(unreadableFiles.has(entrypoint) ? [formatDiagnostic({ file: entrypoint, message: unreadableFiles.get(entrypoint) as string })] : []),
      ...undecodable.map(formatDiagnostic),
      ...service.serviceErrors.map(formatDiagnostic),
    ],
    warnings: sortDiagnostics(diagnostics).map(formatDiagnostic),
  };

  /**
   * What the project installs and the base image for it, read for one Python version: the
   * requirements' markers depend on it, and the base image on those.
   */
  function readDependencies({ version: pythonVersion, admits: pythonAdmits }: Pick<PythonVersionChoice, 'version' | 'admits'>) {
    const noticed: Diagnostic[] = [];
    const environment = linuxImageEnvironment(pythonVersion);

    const requirementSet = readText(REQUIREMENTS_FILE) === null
      ? emptyRequirementSet()
      : readRequirements(REQUIREMENTS_FILE, readText, environment, snapshot.root, (file) => unreadableFiles.get(file));
    noticed.push(...requirementSet.diagnostics);
    const pyprojectSplit = splitByMarker(pyproject?.requirements ?? [], environment, noticed);
    for (const requirement of pyprojectSplit.kept) {
      const outside = outsideProjectWarning(requirement);
      if (outside !== null) noticed.push({ ...requirement.source, message: outside });
    }
    noticed.push(...(pyproject?.diagnostics ?? []));

    const installed = [...requirementSet.requirements, ...pyprojectSplit.kept];
    if (pyproject?.buildsPackage && !installed.some((requirement) => requirement.url === '.' || requirement.url === './')) {
      noticed.push({
        file: PYPROJECT_FILE,
        message: 'builds a package, which the image installs only when a requirement says so: add `-e .` to requirements.txt if service.py imports it',
      });
    }
    noticed.push(...describeUnmatchablePins([...installed, ...requirementSet.constraints]));
    const indexUrls = [requirementSet.indexUrl, ...requirementSet.extraIndexUrls, ...requirementSet.findLinks].filter((url): url is string => url !== null);
    noticed.push(...localPinsWithoutIndex(installed, indexUrls));
    const apipod = installed.find((requirement) => requirement.key === UPSTREAM_TOOLKIT);
    if (apipod) {
      noticed.push({
        ...apipod.source,
        message:
          "apipod is provided by svc's runtime; the image leaves this requirement out and installs what the toolkit's " +
          "media conversions use (numpy, Pillow) unless the requirements list them; apipod's other dependencies " +
          '(opencv-python, av, fastapi, ...) are not installed: list those service.py imports',
      });
    }
    const svcToolkit = installed.find((requirement) => requirement.key === SVC_TOOLKIT);
    if (svcToolkit) {
      noticed.push({ ...svcToolkit.source, message: "svc-apipod is svc's toolkit, which svc's runtime provides: the image leaves this requirement out" });
    }
    const withoutApipod = applyConstraints(
      installed.filter((requirement) => requirement !== apipod && requirement !== svcToolkit),
      requirementSet.constraints,
    );
    const frameworks = detectFrameworks({
      requirements: withoutApipod,
      indexUrls,
      indexUrl: requirementSet.indexUrl,
    });
    const baseImage = chooseBaseImage({ frameworks, pythonVersion, pythonAdmits }, catalog);
    for (const { source, message } of baseImageWarnings(frameworks, baseImage, catalog, pythonVersion)) noticed.push({ ...locationOf(source), message });
    if (frameworks.rocm && frameworks.frameworks.pytorch) {
      noticed.push({
        ...locationOf(frameworks.frameworks.pytorch.source),
        message: 'torch for ROCm: the image reaches AMD GPUs only when run with `--device /dev/kfd --device /dev/dri`, which svc start --orchestrator docker does not pass',
      });
    }
    return { requirementSet, pyprojectSplit, installed, apipod, frameworks, baseImage, diagnostics: noticed };
  }
}

/**
 * The image's Python, from what the project states: narrowed, within what it allows, to the
 * Pythons its version-bound requirements install into (a wheel URL for cp310, a pinned release
 * with wheels for some Pythons only), and moved to one of those when the stated one is not;
 * then to the base image's own Python, which the base image is chosen among those allowed to
 * have, so that the image carries no second interpreter and no second copy of its packages
 * (torch among them). The dependencies are read again for each change: markers depend on the
 * version, and the base image on those and on the Pythons allowed.
 */
function settlePython<D extends { installed: LocatedRequirement[]; baseImage: { python: string | null } }>(
  stated: PythonVersionChoice,
  readDependencies: (python: Pick<PythonVersionChoice, 'version' | 'admits'>) => D,
): { python: PythonVersionChoice; dependencies: D } {
  let python = stated;
  let dependencies = readDependencies(python);
  const needs = pythonNeeds(dependencies.installed);
  const fitting = python.admits.filter((version) => needs.every((need) => need.versions.includes(version)));
  if (fitting.length > 0 && fitting.length < python.admits.length) {
    // Named in the source when it moved the version or kept out the base image's Python.
    const passedOver = [python.version, dependencies.baseImage.python].find((version) => version !== null && !fitting.includes(version));
    const narrowing = needs.find((need) => passedOver !== undefined && passedOver !== null && !need.versions.includes(passedOver));
    const version = fitting.includes(python.version) ? python.version : (fitting[0] as string);
    python = { ...python, version, source: narrowing === undefined ? python.source : withReason(python.source, narrowing), admits: fitting };
    dependencies = readDependencies(python);
  }
  const basePython = dependencies.baseImage.python;
  if (basePython !== null && basePython !== python.version && python.admits.includes(basePython)) {
    const source = python.source === 'default' ? 'base image' : `${python.source}; the base image's Python`;
    python = { ...python, version: basePython, source };
    dependencies = readDependencies(python);
  }
  return { python, dependencies };
}

/** `requirements.txt:1, a wheel for Python 3.10`, after the stated source, if any. */
function withReason(source: string, need: PythonNeed): string {
  const { file, line } = need.requirement.source;
  const reason = `${file}:${line}, ${need.reason}`;
  return source === 'default' ? reason : `${source}; ${reason}`;
}

function emptyRequirementSet(): RequirementSet {
  return {
    requirements: [], skipped: [], constraints: [], indexUrl: null, extraIndexUrls: [], findLinks: [], pipOptions: [], files: [], diagnostics: [], unreadable: [],
  };
}

/** pyproject dependencies whose environment marker holds on the linux x86_64 image. */
function splitByMarker(
  requirements: readonly LocatedRequirement[],
  environment: MarkerEnvironment,
  diagnostics: Diagnostic[],
): { kept: LocatedRequirement[]; skipped: LocatedRequirement[] } {
  const kept: LocatedRequirement[] = [];
  const skipped: LocatedRequirement[] = [];
  for (const requirement of requirements) {
    if (requirement.marker === null) {
      kept.push(requirement);
      continue;
    }
    const verdict = evaluateMarker(requirement.marker, environment);
    if ('error' in verdict) {
      diagnostics.push({ ...requirement.source, message: `${requirement.name}: ${verdict.error}` });
      continue;
    }
    (verdict.value ? kept : skipped).push(requirement);
  }
  return { kept, skipped };
}

/** Exact pins that no release can match: pip parses them, then fails the image's install. */
function describeUnmatchablePins(requirements: readonly LocatedRequirement[]): Diagnostic[] {
  return requirements.flatMap((requirement) =>
    unmatchableVersions(requirement.specifier).map((version) => ({
      ...requirement.source,
      message:
        `${requirement.name}${requirement.specifier}: '${version}' is not a PEP 440 version, ` +
        `so no release of ${requirement.name} matches it and pip will fail to install it`,
    })),
  );
}

/** A `-c` constraint pins an unpinned requirement of the same package (pip's semantics). */
function applyConstraints(
  requirements: LocatedRequirement[],
  constraints: readonly LocatedRequirement[],
): LocatedRequirement[] {
  return requirements.map((requirement) => {
    const constraint = constraints.find((candidate) => candidate.key === requirement.key && candidate.specifier !== '');
    if (requirement.specifier !== '' || !constraint) return requirement;
    return { ...requirement, specifier: constraint.specifier };
  });
}

/**
 * The manifest's compute and provider, from APIPod's arguments. Where each arm of an `if`
 * gives its own, or a value the toolkit refuses, the service file's reading has said so: the
 * manifest keeps the default, and the image leaves a branch's choice to the app.
 */
function readTarget(
  app: AppDeclaration | null,
  file: string,
  diagnostics: Diagnostic[],
): { compute: Compute; provider: Provider } {
  const pick = <T extends string>(field: 'compute' | 'provider', allowed: readonly T[], fallback: T): T => {
    const value = app?.arguments[field];
    if (value === undefined || typeof value === 'string') {
      return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
    }
    diagnostics.push({
      file,
      line: app?.line,
      field,
      message: `a value that cannot be read statically is not one of ${allowed.join(', ')}; the manifest uses ${fallback}`,
    });
    return fallback;
  };
  const simulate = app?.arguments.simulate;
  if (simulate !== undefined && app?.arguments.compute === undefined && app?.arguments.provider === undefined) {
    const simulated = typeof simulate === 'string' ? simulatedTarget(simulate, app?.arguments.direct === true) : null;
    if (simulated !== null) return simulated;
    const shown = typeof simulate === 'string' ? `'${simulate}' is not a target the toolkit takes` : 'cannot be read statically';
    diagnostics.push({ file, line: app?.line, field: 'simulate', message: `${shown}; the manifest uses ${DEFAULT_TARGET.compute} compute` });
    return { compute: DEFAULT_TARGET.compute, provider: DEFAULT_TARGET.provider };
  }
  return {
    compute: pick('compute', COMPUTE_VALUES, DEFAULT_TARGET.compute),
    provider: pick('provider', PROVIDER_VALUES, DEFAULT_TARGET.provider),
  };
}

function titleOf(app: AppDeclaration | null, directoryName: string): string {
  const title = app?.arguments.title;
  return typeof title === 'string' && title.trim() !== '' ? title : directoryName;
}

function endpointsOf(service: ServiceFile): Manifest['endpoints'] {
  return service.endpoints.map((endpoint) => ({
    path: endpoint.path,
    methods: endpoint.methods,
    function: endpoint.function,
    line: endpoint.line,
    async: endpoint.isAsync,
    streaming: endpoint.isGenerator,
    parameters: endpoint.parameters.map((parameter) => ({ ...parameter })),
    returns: endpoint.returns,
  }));
}

function toManifestRequirement(requirement: LocatedRequirement): ManifestRequirement {
  return {
    name: requirement.name,
    specifier: requirement.specifier,
    extras: requirement.extras,
    marker: requirement.marker,
    url: requirement.url,
    editable: requirement.editable,
    hashes: requirement.hashes,
    source: `${requirement.source.file}:${requirement.source.line}`,
  };
}

/** `requirements.txt:3` as a diagnostic's file and line. */
function locationOf(source: string): { file: string; line?: number } {
  const match = /^(.*):(\d+)$/.exec(source);
  return match ? { file: match[1] as string, line: Number(match[2]) } : { file: source };
}
