import type { Readable } from 'node:stream';
import { SvcError } from '../svc-error.js';
import { BuildStreamParser, type BuildEvent } from './build-events.js';
import { describeError, type Engine } from './docker-engine.js';
import { IMAGE_PLATFORM } from './runtime-images.js';

export interface ImageBuildRequest {
  context: Readable;
  /** The Dockerfile, relative to the context root. */
  dockerfile: string;
  tag: string;
  buildArgs: Record<string, string>;
  noCache: boolean;
  onEvent: (event: BuildEvent) => void;
}

export interface ImageBuildResult {
  imageId: string;
  tag: string;
  steps: StepRecord[];
}

export interface StepRecord {
  step: number;
  total: number;
  instruction: string;
  cached: boolean;
  layer: string | null;
}

/**
 * Builds through the engine's /build endpoint with the classic builder (the one every
 * engine API version serves, and whose step stream says which steps came from the cache),
 * for linux/amd64. Resolves with the image and each step's fate; a failed step rejects
 * with that step, its instruction and the engine's message.
 */
export async function buildImage(engine: Engine, request: ImageBuildRequest): Promise<ImageBuildResult> {
  let response: NodeJS.ReadableStream;
  try {
    response = await engine.docker.buildImage(request.context, {
      t: request.tag,
      dockerfile: request.dockerfile,
      buildargs: request.buildArgs,
      nocache: request.noCache,
      platform: IMAGE_PLATFORM,
      rm: true,
      forcerm: true,
      version: '1',
    } as Parameters<Engine['docker']['buildImage']>[1]);
  } catch (error) {
    throw new SvcError('engine', `the Docker engine at ${engine.address} refused the build: ${describeError(error)}`);
  }

  const parser = new BuildStreamParser();
  const steps: StepRecord[] = [];
  let imageId: string | null = null;
  let failure: { step: number; message: string } | null = null;
  const handle = (event: BuildEvent) => {
    switch (event.type) {
      case 'step':
        steps.push({ step: event.step, total: event.total, instruction: event.instruction, cached: false, layer: null });
        break;
      case 'cached':
        markStep(steps, event.step, (record) => (record.cached = true));
        break;
      case 'layer':
        markStep(steps, event.step, (record) => (record.layer = event.id));
        break;
      case 'stage-built':
        imageId = event.id;
        break;
      case 'error':
        failure ??= { step: event.step, message: event.message };
        break;
    }
    request.onEvent(event);
  };

  await new Promise<void>((resolve, reject) => {
    response.on('data', (chunk: Buffer) => parser.push(chunk.toString('utf8')).forEach(handle));
    response.on('end', () => {
      parser.end().forEach(handle);
      resolve();
    });
    response.on('error', reject);
  }).catch((error: unknown) => {
    throw new SvcError('engine', `lost the Docker engine during the build: ${describeError(error)}`);
  });

  const failed = failure as { step: number; message: string } | null;
  if (failed) {
    const record = steps.find((candidate) => candidate.step === failed.step);
    const where = record ? `step ${record.step}/${record.total} (${truncate(record.instruction, 120)})` : 'the build';
    throw new SvcError('build-failed', `${where} failed: ${failed.message}`);
  }
  if (imageId === null) {
    throw new SvcError('build-failed', 'the engine ended the build without reporting an image');
  }
  return { imageId, tag: request.tag, steps };
}

function markStep(steps: StepRecord[], step: number, change: (record: StepRecord) => void): void {
  const record = steps.find((candidate) => candidate.step === step);
  if (record) change(record);
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
