import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A file a request uploads, read from test/compat/files. */
/** A file's base64, as a text field: what a client sends for a media parameter in a form or JSON. */
export interface Base64Of {
  base64Of: string;
}

export interface FilePart {
  file: string;
  /** The part's Content-Type; without one the part is sent as `requests` sends it, with none. */
  type?: string;
}

/**
 * One request sent alike to the apipod package and to svc. Each body kind is sent as the
 * toolkit's users send it: `form` URL-encoded, `multipart` as multipart/form-data (a list
 * value is repeated fields, a FilePart an upload), `json` as JSON, `query` in the URL.
 */
export interface CompatRequest {
  name: string;
  method?: string;
  /** The path as the apipod package serves it (it turns `_` into `-`); svc serves that spelling too. */
  path: string;
  query?: Record<string, string>;
  form?: Record<string, string | string[] | Base64Of>;
  multipart?: Record<string, string | string[] | FilePart | FilePart[]>;
  json?: unknown;
  /**
   * How the answers are compared: `body` (the default) their status and JSON; `status` the
   * status only (an answer that changes per call); `shape` the status and the JSON's keys
   * and value types.
   */
  compare?: 'body' | 'status' | 'shape';
  /** Keys whose values differ per call (ids, timestamps), left out at any depth before comparing. */
  ignore?: string[];
}

export type Compute = 'dedicated' | 'serverless';

/** A service of the suite: its file and the requests each compute gets, from requests.json beside it. */
export interface CompatService {
  name: string;
  dir: string;
  /** The file both servers start, relative to dir. */
  file: string;
  computes: Compute[];
  requests: CompatRequest[];
}

export const COMPAT_DIR = import.meta.dirname;
export const SERVICES_DIR = join(COMPAT_DIR, 'services');
export const FILES_DIR = join(COMPAT_DIR, 'files');

/** Where .ci/setup puts the service files a registry serves (scripts/ci/compat-sources.sh). */
export const REGISTRY_SOURCES = join(COMPAT_DIR, '..', '.compat-sources');

/**
 * The services of the suite whose files are at hand, in name order. This repository holds
 * what was written for the suite (requests.json, SOURCE, stand-ins for ML packages); the
 * service files themselves are other projects' code, not committed here: those PyPI serves
 * come from REGISTRY_SOURCES, the others from `sources` (SVC_COMPAT_SOURCES), one directory
 * per service as its SOURCE note says. Each service runs from a directory of its own that
 * joins the two. `missing` names the services whose file is in neither; `fromRegistry` those
 * whose SOURCE names a registry's package (`package:`), which every checkout must have.
 */
export function readCompatServices(sources: readonly string[]): { services: CompatService[]; missing: string[]; fromRegistry: string[] } {
  const work = join(tmpdir(), 'svc-compat');
  rmSync(work, { recursive: true, force: true });
  const services: CompatService[] = [];
  const missing: string[] = [];
  const fromRegistry: string[] = [];
  for (const name of readdirSync(SERVICES_DIR, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    const table = JSON.parse(readFileSync(join(SERVICES_DIR, name, 'requests.json'), 'utf8')) as Omit<CompatService, 'name' | 'dir' | 'computes'> & { computes?: Compute[] };
    if (readFileSync(join(SERVICES_DIR, name, 'SOURCE'), 'utf8').startsWith('package:')) fromRegistry.push(name);
    const source = sources.map((root) => join(root, name)).find((dir) => existsSync(dir));
    if (source === undefined) {
      missing.push(name);
      continue;
    }
    const dir = join(work, name);
    cpSync(join(SERVICES_DIR, name), dir, { recursive: true });
    cpSync(source, dir, { recursive: true });
    if (!existsSync(join(dir, table.file))) throw new Error(`${name}: no ${table.file} in ${source}, nor beside its requests.json; see its SOURCE`);
    services.push({ name, dir, ...table, computes: table.computes ?? ['dedicated', 'serverless'] });
  }
  return { services, missing, fromRegistry };
}
