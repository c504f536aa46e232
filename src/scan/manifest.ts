import type { Compute, Orchestrator, Provider } from '../deployment-target.js';
import type { BaseImageChoice } from './base-image.js';
import type { FrameworkName, FrameworkUse } from './frameworks.js';
import type { StaticValue } from './python-literals.js';
import type { ParameterDeclaration } from './function-signature.js';

/**
 * apipod-deploy/apipod.json, documented field by field in docs/manifest.md. The first block
 * keeps the existing toolkit's fields with their names and meanings; the rest is svc's.
 * Bump the schema version when a field changes meaning or goes away.
 */
export const MANIFEST_SCHEMA_VERSION = 6;

export interface Manifest {
  entrypoint: string;
  title: string;
  python_version: string;
  orchestrator: Orchestrator;
  compute: Compute;
  provider: Provider;
  pytorch: boolean;
  tensorflow: boolean;
  onnx: boolean;
  transformers: boolean;
  diffusers: boolean;
  cuda: boolean;
  system_packages: string[];
  model_files: string[];
  has_env_file: boolean;

  schema_version: typeof MANIFEST_SCHEMA_VERSION;
  python_version_source: string;
  frameworks: Partial<Record<FrameworkName, ManifestFramework>>;
  cuda_packages: string[];
  cuda_compiler_packages: string[];
  base_image: BaseImageChoice;
  app: ManifestApp | null;
  endpoints: ManifestEndpoint[];
  dependencies: ManifestDependencies;
  model_file_sizes: Record<string, number>;
  ignore_files: string[];
  /** What stops the service file from running at all (a syntax error; the file cannot be read), as `file:line: why`. */
  service_errors: string[];
  warnings: string[];
}

export type ManifestFramework = FrameworkUse;

export interface ManifestApp {
  variable: string;
  line: number;
  arguments: Record<string, StaticValue>;
  /** Arguments that depend on which arm of an `if` makes the app, with each arm's value. */
  branch_arguments: Record<string, StaticValue[]>;
}

export interface ManifestEndpoint {
  path: string | null;
  methods: string[];
  function: string;
  line: number;
  async: boolean;
  streaming: boolean;
  parameters: ManifestParameter[];
  returns: string | null;
}

/** A parameter exactly as src/scan/function-signature.ts reads it. */
export type ManifestParameter = ParameterDeclaration;

export interface ManifestRequirement {
  name: string;
  specifier: string;
  extras: string[];
  marker: string | null;
  url: string | null;
  editable: boolean;
  /** `--hash` values (`sha256:...`) pip checks the download against. */
  hashes: string[];
  source: string;
}

export interface ManifestDependencies {
  files: string[];
  requirements: ManifestRequirement[];
  skipped: ManifestRequirement[];
  constraints: ManifestRequirement[];
  index_url: string | null;
  extra_index_urls: string[];
  find_links: string[];
  /** pip's other whole-install options from the requirements files, one line each: `--pre`, `--trusted-host HOST`. */
  pip_options: string[];
  /** Requirement lines that could not be read, as `file:line: why`: `svc build` refuses to build without them. */
  unreadable: string[];
  /** Where the project requires `apipod` (file:line): svc's runtime provides it, so the image leaves it out. */
  apipod_requirement: string | null;
}

/** The manifest as written to disk: fixed key order, two-space indent, trailing newline. */
export function renderManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
