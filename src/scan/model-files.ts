/**
 * Model weights, recognised by extension: some extensions are weights whatever their size;
 * generic ones (.bin, .pkl, ...) count only from 1 MiB, so small data files are not taken
 * for models.
 */
const WEIGHT_EXTENSIONS: ReadonlySet<string> = new Set([
  '.safetensors', '.pt', '.pth', '.ckpt', '.onnx', '.gguf', '.ggml', '.h5', '.keras', '.tflite',
  '.mlmodel', '.engine', '.plan', '.joblib', '.caffemodel', '.pdparams',
]);
const GENERIC_EXTENSIONS: ReadonlySet<string> = new Set([
  '.bin', '.pkl', '.pickle', '.npy', '.npz', '.model', '.msgpack', '.params', '.weights', '.pb',
]);
const GENERIC_MINIMUM_BYTES = 1024 * 1024;

export interface ModelFile {
  path: string;
  size: number;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

/** A name's last three characters, case-folded into one number: `model.PT` and `x.pt` share `.pt`'s. */
function tailOf(name: string): number {
  const end = name.length;
  return ((name.charCodeAt(end - 3) | 0x20) << 16) | ((name.charCodeAt(end - 2) | 0x20) << 8) | (name.charCodeAt(end - 1) | 0x20);
}

const WEIGHT_TAILS: ReadonlySet<number> = new Set([...WEIGHT_EXTENSIONS, ...GENERIC_EXTENSIONS].map(tailOf));

/**
 * Whether a file of this name could be weights, so the walk must list it with its size.
 * Called for every file of the project: the tail test turns nearly every name away (a
 * `.py` is not an `.npy`) before any string is cut, lower-cased or hashed.
 */
export function mightBeModelFile(name: string): boolean {
  if (name.length < 4 || !WEIGHT_TAILS.has(tailOf(name))) return false;
  const extension = extensionOf(name);
  return WEIGHT_EXTENSIONS.has(extension) || GENERIC_EXTENSIONS.has(extension);
}

export function isModelFile(path: string, size: number): boolean {
  const extension = extensionOf(path.slice(path.lastIndexOf('/') + 1));
  if (WEIGHT_EXTENSIONS.has(extension)) return true;
  return GENERIC_EXTENSIONS.has(extension) && size >= GENERIC_MINIMUM_BYTES;
}

/** Model files among the project's files, sorted by path for a deterministic manifest. */
export function findModelFiles(files: ReadonlyArray<ModelFile>): ModelFile[] {
  return files
    .filter((file) => isModelFile(file.path, file.size))
    .map(({ path, size }) => ({ path, size }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
