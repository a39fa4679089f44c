// Images, read by OCR (./image-reader.ts); one reader tells the four formats apart by their bytes.
import { lazyImport } from '../lazy.js';
import type { BinaryFormat } from './format.js';

// utif2 (and tesseract.js, on the first recognition) load with the first image, not at start-up.
const reader = lazyImport(() => import('./image-reader.js'));

export const imageFormat: BinaryFormat = {
  name: 'image',
  contentTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/tiff'],
  aliases: { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'image/tif': 'image/tiff' },
  extensions: ['.png', '.jpg', '.jpeg', '.webp', '.tif', '.tiff'],
  evidence: ['image_region'],
  reads: 'bytes',
  extract: async (bytes, ctx) => (await reader()).extractImage(bytes, ctx),
};
