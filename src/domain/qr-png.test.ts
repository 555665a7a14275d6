import { crc32 as zlibCrc32, inflateSync } from 'node:zlib';
import { createRequire } from 'node:module';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { crc32, matrixPng, qrMatrix, qrPngDataUri, type ModuleMatrix } from './qr-png.js';

interface Decoded {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  palette: Buffer | undefined;
  /** pixel(x, y): the sample (grayscale value or palette index) */
  pixel(x: number, y: number): number;
  chunkTypes: string[];
}

/** A minimal PNG reader for what the encoder writes: checks the signature and every CRC, inflates the IDAT data. */
function decodePng(png: Buffer): Decoded {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const chunkTypes: string[] = [];
  const idat: Buffer[] = [];
  let ihdr: Buffer | undefined;
  let palette: Buffer | undefined;
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    const data = png.subarray(at + 8, at + 8 + len);
    const crc = png.readUInt32BE(at + 8 + len);
    const expected =
      typeof zlibCrc32 === 'function'
        ? zlibCrc32(png.subarray(at + 4, at + 8 + len))
        : crc32(png, at + 4, at + 8 + len);
    expect(crc, `CRC of ${type}`).toBe(expected);
    chunkTypes.push(type);
    if (type === 'IHDR') ihdr = data;
    if (type === 'PLTE') palette = data;
    if (type === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  expect(ihdr).toBeDefined();
  const width = ihdr!.readUInt32BE(0);
  const height = ihdr!.readUInt32BE(4);
  const bitDepth = ihdr![8];
  const colorType = ihdr![9];
  expect([ihdr![10], ihdr![11], ihdr![12]]).toEqual([0, 0, 0]); // deflate, adaptive filtering, no interlace
  const raw = inflateSync(Buffer.concat(idat));
  const stride = 1 + Math.ceil((width * bitDepth) / 8);
  expect(raw.length).toBe(stride * height);
  for (let y = 0; y < height; y++) expect(raw[y * stride]).toBe(0); // filter type 0 on every row
  return {
    width,
    height,
    bitDepth,
    colorType,
    palette,
    chunkTypes,
    pixel: (x, y) => (raw[y * stride + 1 + (x >> 3)] >> (7 - (x & 7))) & 1,
  };
}

/** Expects every pixel to be the module it belongs to (or quiet zone), `dark` being the sample of a dark module. */
function expectPixels(img: Decoded, m: ModuleMatrix, scale: number, margin: number, dark: number): void {
  let mismatches = 0;
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      const my = Math.floor(y / scale) - margin;
      const mx = Math.floor(x / scale) - margin;
      const isDark = my >= 0 && my < m.size && mx >= 0 && mx < m.size && Boolean(m.get(my, mx));
      if ((img.pixel(x, y) === dark) !== isDark) mismatches++;
    }
  }
  expect(mismatches).toBe(0);
}

const URL_TEXT = 'http://localhost:8080/sandbox/pay/2026112200012345';

describe('QR PNG', () => {
  it('black on white: a 1-bit grayscale PNG whose pixels are the matrix, scaled, with the quiet zone', () => {
    const uri = qrPngDataUri(URL_TEXT, { width: 256, margin: 2, errorCorrectionLevel: 'M' });
    const m = /^data:image\/png;base64,([A-Za-z0-9+/]+=*)$/.exec(uri);
    expect(m).not.toBeNull();
    const img = decodePng(Buffer.from(m![1], 'base64'));
    const matrix = qrMatrix(URL_TEXT, 'M');
    const scale = img.width / (matrix.size + 4);
    expect(Number.isInteger(scale)).toBe(true);
    expect(Math.abs(img.width - 256)).toBeLessThanOrEqual((matrix.size + 4) / 2);
    expect(img).toMatchObject({ height: img.width, bitDepth: 1, colorType: 0, palette: undefined });
    expect(img.chunkTypes).toEqual(['IHDR', 'IDAT', 'IEND']);
    expectPixels(img, matrix, scale, 2, 0); // grayscale: 0 is black
    // The quiet zone is white all round.
    for (let i = 0; i < img.width; i++) {
      for (const [x, y] of [
        [i, 0],
        [0, i],
        [i, img.height - 1],
        [img.width - 1, i],
      ] as const)
        expect(img.pixel(x, y)).toBe(1);
    }
  });

  it('is the same symbol qrcode itself would draw', () => {
    const ours = qrMatrix(URL_TEXT, 'M');
    const theirs = QRCode.create(URL_TEXT, { errorCorrectionLevel: 'M' }).modules;
    expect(ours.size).toBe(theirs.size);
    expect(Buffer.from(theirs.data)).toEqual(Buffer.from((ours as typeof theirs).data));
  });

  it('colours other than black and white: a two-colour palette, dark at index 1', () => {
    const matrix = qrMatrix('hello', 'M');
    const png = matrixPng(matrix, { scale: 3, margin: 1, dark: '#111827', light: '#FFFFFF' });
    const img = decodePng(png);
    expect(img).toMatchObject({ width: (matrix.size + 2) * 3, bitDepth: 1, colorType: 3 });
    expect(img.chunkTypes).toEqual(['IHDR', 'PLTE', 'IDAT', 'IEND']);
    expect(img.palette).toEqual(Buffer.from([0xff, 0xff, 0xff, 0x11, 0x18, 0x27]));
    expectPixels(img, matrix, 3, 1, 1);
  });

  it('widths that are not a multiple of 8 pixels pad each row', () => {
    // 21 modules + 2 x 1 margin = 23 pixels at scale 1: 3 bytes a row, the last 1 bit unused.
    const matrix = qrMatrix('x', 'L');
    expect(matrix.size).toBe(21);
    const img = decodePng(matrixPng(matrix, { scale: 1, margin: 1, dark: '#000000', light: '#ffffff' }));
    expect(img.width).toBe(23);
    expectPixels(img, matrix, 1, 1, 0);
  });

  it("another decoder (pngjs, qrcode's own PNG library) reads both forms to the same pixels", () => {
    const { PNG } = createRequire(import.meta.url)('pngjs') as {
      PNG: { sync: { read(b: Buffer): { width: number; height: number; data: Buffer } } };
    };
    const matrix = qrMatrix(URL_TEXT, 'M');
    for (const [dark, light] of [
      ['#000000', '#ffffff'],
      ['#111827', '#ffffff'],
    ] as const) {
      const png = PNG.sync.read(matrixPng(matrix, { scale: 4, margin: 2, dark, light }));
      expect(png.width).toBe((matrix.size + 4) * 4);
      const rgbAt = (x: number, y: number) =>
        png.data.subarray((y * png.width + x) * 4, (y * png.width + x) * 4 + 3).toString('hex');
      for (let my = 0; my < matrix.size; my++) {
        for (let mx = 0; mx < matrix.size; mx++)
          expect(`#${rgbAt((mx + 2) * 4 + 1, (my + 2) * 4 + 2)}`).toBe(matrix.get(my, mx) ? dark : light);
      }
      expect(`#${rgbAt(0, 0)}`).toBe(light);
    }
  });

  it('crc32 is the PNG CRC', () => {
    expect(crc32(Buffer.from('IEND', 'latin1'))).toBe(0xae426082);
  });
});
