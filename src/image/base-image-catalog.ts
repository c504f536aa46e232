import catalog from './base-images.json' with { type: 'json' };

/**
 * The base-image catalog: the data (base-images.json, every tag checked against public
 * data), its shape, and the one place it is loaded. `svc scan` chooses from it, `svc build`
 * plans from it.
 */
export interface BaseImageCatalog {
  pytorch: { images: FrameworkImage[]; cudaByRelease: Record<string, string[] | string> };
  tensorflow: { images: FrameworkImage[]; cudaByRelease: Record<string, { cuda: string; cudnn: string } | string> };
  /** defaultMajor: the CUDA major taken when nothing asks for one (a newer one needs a newer driver). */
  cuda: { images: CudaImage[]; defaultMajor: string };
  onnxruntime: { cudaByVersion: Array<{ versions: string; cuda: string; cudnn: string }> };
  python: { images: Array<{ image: string; python: string }> };
}

export interface CatalogImage {
  image: string;
  cuda: string;
  cudnn: string;
  variant: ImageVariant;
  python: string | null;
}
export type FrameworkImage = CatalogImage & { torch?: string; tensorflow?: string };
export type CudaImage = CatalogImage & { os: string };
export type ImageVariant = 'runtime' | 'devel';

export const BASE_IMAGE_CATALOG = catalog as BaseImageCatalog;
