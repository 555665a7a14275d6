import { deflateSync } from 'node:zlib';
import QRCode from 'qrcode';

// QR pictures as small PNG data URIs. The qrcode package computes the symbol (the module matrix);
// the PNG is written here: one bit per pixel, no filters, one deflate call. qrcode's own PNG
// renderer draws a full RGBA image and tries every PNG filter on it, all of it on the event loop;
// this is many times cheaper and gives a smaller file (docs/design/qr-png.md).

export interface QrPictureOptions {
  /** Wanted width and height in pixels: each module becomes a whole number of pixels, so the picture is as close to it as that allows. */
  width: number;
  /** Quiet zone around the symbol, in modules. */
  margin: number;
  errorCorrectionLevel?: 'L' | 'M' | 'Q' | 'H';
  /** Colours as #rrggbb; black on white by default (then the PNG is 1-bit grayscale, else 1-bit with a two-colour palette). */
  dark?: string;
  light?: string;
}

/** The square matrix of a QR symbol: true for a dark module. */
export interface ModuleMatrix {
  size: number;
  get(row: number, col: number): number | boolean;
}

export function qrMatrix(
  text: string,
  errorCorrectionLevel: QrPictureOptions['errorCorrectionLevel'] = 'M',
): ModuleMatrix {
  return QRCode.create(text, { errorCorrectionLevel }).modules;
}

/** A QR picture of `text` as a `data:image/png;base64,` URI. */
export function qrPngDataUri(text: string, options: QrPictureOptions): string {
  return `data:image/png;base64,${qrPng(text, options).toString('base64')}`;
}

export function qrPng(text: string, options: QrPictureOptions): Buffer {
  const matrix = qrMatrix(text, options.errorCorrectionLevel ?? 'M');
  const modules = matrix.size + 2 * options.margin;
  return matrixPng(matrix, {
    scale: Math.max(1, Math.round(options.width / modules)),
    margin: options.margin,
    dark: options.dark ?? '#000000',
    light: options.light ?? '#ffffff',
  });
}

/**
 * Draws a module matrix as a PNG: `scale` pixels per module, `margin` light modules around it.
 * 1 bit per pixel (a set bit is dark in both forms: grayscale 0 is black, so those rows are inverted).
 */
export function matrixPng(
  matrix: ModuleMatrix,
  o: { scale: number; margin: number; dark: string; light: string },
): Buffer {
  const size = matrix.size;
  const px = (size + 2 * o.margin) * o.scale;
  const stride = 1 + ((px + 7) >> 3); // filter byte + packed pixels
  const raw = Buffer.alloc(stride * px); // filter 0 (none) on every row; all bits 0
  const grayscale = o.dark.toLowerCase() === '#000000' && o.light.toLowerCase() === '#ffffff';
  // Bit value of a dark pixel: grayscale 1-bit has 0 = black; the palette puts dark at index 1.
  const darkBit = grayscale ? 0 : 1;
  const row = new Uint8Array(stride - 1);
  for (let my = -o.margin; my < size + o.margin; my++) {
    row.fill(darkBit ? 0x00 : 0xff);
    if (my >= 0 && my < size) {
      for (let mx = 0; mx < size; mx++) {
        if (!matrix.get(my, mx)) continue;
        const x0 = (mx + o.margin) * o.scale;
        for (let x = x0; x < x0 + o.scale; x++) {
          if (darkBit) row[x >> 3] |= 0x80 >> (x & 7);
          else row[x >> 3] &= ~(0x80 >> (x & 7));
        }
      }
    }
    const y0 = (my + o.margin) * o.scale;
    for (let y = y0; y < y0 + o.scale; y++) raw.set(row, y * stride + 1);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(px, 0);
  ihdr.writeUInt32BE(px, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = grayscale ? 0 : 3; // colour type: grayscale, or indexed
  // compression 0, filter method 0, no interlace: bytes 10-12 stay 0
  const chunks = [PNG_SIGNATURE, chunk('IHDR', ihdr)];
  if (!grayscale) chunks.push(chunk('PLTE', Buffer.concat([rgb(o.light), rgb(o.dark)])));
  chunks.push(chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(chunks);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function rgb(hex: string): Buffer {
  const m = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!m) throw new Error(`a colour must be #rrggbb, not ${hex}`);
  return Buffer.from(m[1], 'hex');
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + data.length), 8 + data.length);
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of buf[from, to) as PNG chunks use it (zlib.crc32 is not in every Node 20). */
export function crc32(buf: Uint8Array, from = 0, to = buf.length): number {
  let c = 0xffffffff;
  for (let i = from; i < to; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
