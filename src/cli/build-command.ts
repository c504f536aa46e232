import { join, relative } from 'node:path';
import { Option, type Command } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { writeBuildRecord } from '../image/build-record.js';
import type { BuildPlan } from '../image/build-plan.js';
import type { PreparedBuild } from '../image/prepare-build.js';
import { runCommand, type CommonOptions } from './run-command.js';
import { fileName } from './option-parsers.js';
import { createBuildProgressView, type BuildProgressView } from './build-progress.js';
import type { Output, Summary } from './output.js';
import { SvcError } from '../svc-error.js';

interface BuildOptions extends CommonOptions {
  entrypoint?: string;
  image?: string | boolean;
  baseImage?: string;
  buildArg: string[];
  cache: boolean;
  skipDiskCheck?: boolean;
  ffmpeg?: boolean;
  compilers?: boolean;
}

export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .summary('write apipod-deploy/Dockerfile and, with --image, build the image')
    .description(
      'Render apipod-deploy/Dockerfile from the manifest (scanning first when it is missing or older than ' +
        'the project), stage svc\'s runtime under apipod-deploy/ and write a .dockerignore when there is none. ' +
        'With --image, build it through the Docker engine (DOCKER_HOST or the default socket) for linux/amd64. ' +
        'A Dockerfile at the project root replaces the generated one.',
    )
    .argument('[dir]', 'project directory, or the service file itself', '.')
    .option('--entrypoint <file>', 'service file, relative to the project directory (default: service.py)', fileName)
    .option('--image [tag]', 'build the image, tagged TAG (default: from the title, e.g. hello:latest)')
    .option('--base-image <ref>', 'build FROM this image instead of the one the manifest chose')
    .option('--ffmpeg', 'put ffmpeg in the image even when no endpoint takes audio or video and no requirement runs it')
    .option('--compilers', 'keep gcc and g++ in the image even when nothing compiles while the service runs')
    .addOption(new Option('--build-arg <name=value>', 'a build argument for the Dockerfile (repeatable)').argParser(collect).default([], 'none'))
    .option('--no-cache', 'build every step again instead of reusing cached layers')
    .option('--skip-disk-check', 'build a GPU image even with less than 30 GB free')
    .action(async (dir: string, _options: BuildOptions, command: Command) => {
      const options = command.optsWithGlobals<BuildOptions>();
      await runCommand(options, async (output) => {
        if (options.image === undefined) {
          const imageOnly = { '--build-arg': options.buildArg.length > 0, '--no-cache': options.cache === false, '--skip-disk-check': options.skipDiskCheck === true };
          const given = Object.entries(imageOnly).filter(([, isGiven]) => isGiven).map(([flag]) => flag);
          if (given.length > 0) throw new SvcError('usage', `${given.join(', ')} ${given.length === 1 ? 'applies' : 'apply'} to an image build: add --image`);
          const prepared = await prepare(dir, options);
          // With --json the result holds the same notes; only a streaming build sends them as events.
          if (!output.mode.json) reportPreparation(prepared, createBuildProgressView(output.mode));
          output.result(summariseFiles(prepared), machineResult(prepared, null));
          return;
        }
        await buildWithEngine(dir, options, output);
      });
    });
}

async function buildWithEngine(dir: string, options: BuildOptions, output: Output): Promise<void> {
  const [{ connectEngine }, { gatherPreflightFacts, judgePreflight }, context, { buildImage }, args, tags] = await Promise.all([
    import('../image/docker-engine.js'),
    import('../image/build-preflight.js'),
    import('../image/build-context.js'),
    import('../image/image-build.js'),
    import('../image/build-args.js'),
    import('../image/image-reference.js'),
  ]);
  // Usage errors first, then the engine must answer before any work.
  if (typeof options.image === 'string') tags.checkImageReference(options.image, '--image');
  for (const arg of options.buildArg) args.parseBuildArg(arg);
  const engine = await connectEngine();

  const prepared = await prepare(dir, options);
  const view = createBuildProgressView(output.mode);
  reportPreparation(prepared, view);
  const verdict = judgePreflight(await gatherPreflightFacts(engine, prepared.plan.base.gpu, options.skipDiskCheck === true));
  for (const warning of verdict.warnings) view.note(`warning: ${warning}`);
  if (verdict.refusal) throw new SvcError('io', verdict.refusal);

  const tag = typeof options.image === 'string' ? tags.withDefaultTag(options.image) : tags.imageTagFromTitle(prepared.manifest.title);
  const files = context.listBuildContext(prepared.root, prepared.dockerfile);
  if (!prepared.usesProjectDockerfile) {
    context.checkStagedFilesIncluded(files, prepared.stagedFiles);
  }
  for (const secret of files.secretsLeftOut) {
    view.note(`warning: ${secret} left out of the build context (add it to .dockerignore, or a plain \`docker build\` sends it)`);
  }
  for (const warning of unlistedWeights(files.weights, prepared.manifest.model_files)) view.note(`warning: ${warning}`);
  for (const link of files.linksOut) {
    view.note(`warning: ${link} is a symbolic link out of the project: the image gets the link, which will point at nothing; copy the file in instead`);
  }
  view.note(
    `building ${tag} for linux/amd64 on ${engine.address} (Docker ${engine.version}), ${files.files.length} files (${formatSize(files.bytes)}) in the context`,
  );
  const started = Date.now();
  try {
    const result = await buildImage(engine, {
      context: context.packBuildContext(prepared.root, files),
      dockerfile: prepared.dockerfile,
      tag,
      buildArgs: args.buildArguments({
        created: new Date(),
        source: await args.readSourceUrl(prepared.root),
        tag,
        userArgs: options.buildArg,
      }),
      noCache: options.cache === false,
      onEvent: (event) => view.event(event),
    });
    view.close();
    writeBuildRecord(prepared.root, { image: tag, image_id: result.imageId, built_at: new Date().toISOString() });
    const seconds = (Date.now() - started) / 1000;
    const cached = result.steps.filter((step) => step.cached).length;
    const build = { image: tag, image_id: result.imageId, seconds, steps: result.steps.length, cached_steps: cached, step_records: result.steps };
    if (output.mode.json) {
      process.stdout.write(`${JSON.stringify({ event: 'build.result', ...machineResult(prepared, build) })}\n`);
      return;
    }
    const summary = summariseFiles(prepared);
    summary.headline = `Built ${tag} in ${seconds.toFixed(1)} s (${cached} of ${result.steps.length} steps from the cache)`;
    summary.rows.unshift(['image id', result.imageId], ['run it', `svc start --orchestrator docker ${shellWord(relativeDir(prepared.root))}`]);
    output.result(summary, null);
  } finally {
    view.close();
  }
}

async function prepare(dir: string, options: BuildOptions): Promise<PreparedBuild> {
  const { prepareBuild } = await import('../image/prepare-build.js');
  return prepareBuild(dir, {
    entrypoint: options.entrypoint,
    baseImage: options.baseImage,
    ffmpeg: options.ffmpeg,
    compilers: options.compilers,
    svcVersion: packageJson.version,
  });
}

function reportPreparation(prepared: PreparedBuild, view: BuildProgressView): void {
  if (prepared.scannedBecause) view.note(`scanned the project first (${prepared.scannedBecause})`);
  for (const warning of prepared.warnings) view.note(`warning: ${warning}`);
  if (prepared.wroteDockerignore) view.note('wrote .dockerignore (the project had none)');
  if (prepared.usesProjectDockerfile) {
    view.note('the project has its own Dockerfile: building that one instead of apipod-deploy/Dockerfile');
  }
  for (const note of prepared.plan.notes) view.note(note);
}

/**
 * Weights the build context carries although svc scan did not list them: .gitignore keeps
 * them out of the scan, but Docker reads only .dockerignore, so they go into the image.
 */
function unlistedWeights(weights: ReadonlyArray<{ path: string; size: number }>, listed: readonly string[]): string[] {
  const unlisted = weights.filter((weight) => !listed.includes(weight.path));
  const shown = unlisted.slice(0, 5).map((weight) => `${weight.path} (${formatSize(weight.size)})`);
  if (shown.length === 0) return [];
  const more = unlisted.length > shown.length ? ` and ${unlisted.length - shown.length} more` : '';
  const [they, go] = unlisted.length === 1 ? ['it', 'goes'] : ['them', 'go'];
  return [
    `${shown.join(', ')}${more} ${go} into the image although svc scan, following .gitignore, left ${they} out of its model files; add ${they} to .dockerignore to keep ${they} out`,
  ];
}

function formatSize(bytes: number): string {
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} kB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

function summariseFiles(prepared: PreparedBuild): Summary {
  const { plan } = prepared;
  // docker reads -f from the current directory, not the context's.
  const dockerfilePath = shellWord(join(relativeDir(prepared.root), prepared.dockerfile));
  const build: [string, string] = ['build', `svc build --image, or docker build -f ${dockerfilePath} ${shellWord(relativeDir(prepared.root))}`];
  if (prepared.usesProjectDockerfile) {
    // The generated file's base image, Python and packages say nothing about the project's own.
    return {
      headline: `Using ${relativeDir(prepared.root)}/${prepared.dockerfile}, the project's own (apipod-deploy/Dockerfile is written beside it, unused)`,
      rows: [['dockerfile', `${prepared.dockerfile} (the project's own)`], build],
      warnings: [],
    };
  }
  const python = plan.python.strategy === 'base' ? `${plan.python.version} (the base image's)` : `${plan.python.version} (installed with uv)`;
  return {
    headline: `Wrote ${relativeDir(prepared.root)}/apipod-deploy/Dockerfile`,
    rows: [
      ['dockerfile', prepared.dockerfile],
      ['base image', plan.base.image],
      ['python', python],
      ['system packages', plan.systemPackages.join(' ')],
      ['ffmpeg', `${plan.ffmpeg.included ? 'yes' : 'no'}: ${plan.ffmpeg.reason}`],
      ['gcc, g++', `${COMPILER_PLACES[plan.compilers.where]}: ${plan.compilers.reason}`],
      ['requirements', requirementsRow(plan)],
      ['provider', `${plan.provider ?? 'chosen by the app'}${plan.providerPackages.length ? ` (${plan.providerPackages.join(', ')})` : ''}`],
      build,
    ],
    warnings: [],
  };
}

function machineResult(prepared: PreparedBuild, build: Record<string, unknown> | null): Record<string, unknown> {
  return {
    root: prepared.root,
    dockerfile: prepared.dockerfile,
    uses_project_dockerfile: prepared.usesProjectDockerfile,
    wrote_dockerignore: prepared.wroteDockerignore,
    scanned_because: prepared.scannedBecause,
    warnings: prepared.warnings,
    plan: {
      base_image: prepared.plan.base.image,
      python: prepared.plan.python,
      system_packages: prepared.plan.systemPackages,
      ffmpeg: prepared.plan.ffmpeg,
      compilers: prepared.plan.compilers,
      provider_packages: prepared.plan.providerPackages,
      toolkit_packages: prepared.plan.toolkitPackages,
      notes: prepared.plan.notes,
    },
    build,
  };
}

const COMPILER_PLACES: Record<BuildPlan['compilers']['where'], string> = {
  image: 'in the image',
  'build-stage': 'in the build stage only',
  none: 'none',
};

function requirementsRow(plan: BuildPlan): string {
  const file = plan.requirementFiles.requirements ? 'apipod-deploy/requirements.txt' : 'none';
  return plan.toolkitPackages.length ? `${file}; ${plan.toolkitPackages.join(', ')} for the toolkit, in place of apipod` : file;
}

function relativeDir(root: string): string {
  return relative(process.cwd(), root) || '.';
}

/** A path as one word of a shell command line, quoted when it needs to be. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
