// The large payloads bench/serve sends: the same bodies for run.js's suites and full-collections.js.
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/** A 2 MB JSON string parameter: {"text": 2,000,000 characters}. */
export function largeTextBody() {
  return JSON.stringify({ text: 'x'.repeat(2_000_000) });
}

/** 200,000 numbers in a JSON list (1.6 MB), as an embedding or feature vector comes; a few are whole (0, 1). */
export function numbersBody() {
  return JSON.stringify({ values: Array.from({ length: 200_000 }, (_, index) => ((index * 7919) % 100_000) / 100_000) });
}

/** A 700x700 PNG of random pixels (1.47 MB) as base64 in JSON: {"image": ...}. */
export function imageBody(png = randomPng(700, 700)) {
  return JSON.stringify({ image: png.toString('base64') });
}

/** A PNG as a multipart form's one file part, `image`, as `curl -F image=@photo.png` sends it. */
export function multipartImageBody(png, boundary) {
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="photo.png"\r\nContent-Type: image/png\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), png, Buffer.from(`\r\n--${boundary}--\r\n`)]);
}

/** An RGB PNG of random pixels: the size a photo has, which compression cannot shrink. */
export function randomPng(width, height) {
  const chunk = (type, data) => {
    const typed = Buffer.concat([Buffer.from(type), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = [];
  for (let y = 0; y < height; y += 1) rows.push(Buffer.from([0]), randomBytes(width * 3));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 1 })), chunk('IEND', Buffer.alloc(0))]);
}
