// Micro-benchmark for the gateway data QR picture: what the current qrcode options cost and what
// cheaper PNG settings would. Run: node bench/micro/qr.mjs (no server).
import QRCode from 'qrcode';
const url = 'http://localhost:8080/sandbox/pay/2026112200012345';
const variants = {
  'current (default PNG options)': { errorCorrectionLevel: 'M', margin: 2, width: 256 },
  'rendererOpts filterType 0': { errorCorrectionLevel: 'M', margin: 2, width: 256, rendererOpts: { filterType: 0 } },
  'filterType 0, deflateLevel 1': {
    errorCorrectionLevel: 'M',
    margin: 2,
    width: 256,
    rendererOpts: { filterType: 0, deflateLevel: 1 },
  },
  'filterType 0, grayscale (colorType 0)': {
    errorCorrectionLevel: 'M',
    margin: 2,
    width: 256,
    rendererOpts: { filterType: 0, colorType: 0 },
  },
  'SVG string (toString svg)': 'svg',
  'matrix only (QRCode.create)': 'create',
};
for (const [name, o] of Object.entries(variants)) {
  const n = 300;
  let bytes = 0;
  for (let i = 0; i < 20; i++)
    o === 'svg'
      ? await QRCode.toString(url, { type: 'svg' })
      : o === 'create'
        ? QRCode.create(url)
        : await QRCode.toDataURL(url, o);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r =
      o === 'svg'
        ? await QRCode.toString(url + i, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, width: 256 })
        : o === 'create'
          ? QRCode.create(url + i, { errorCorrectionLevel: 'M' })
          : await QRCode.toDataURL(url + i, o);
    bytes += typeof r === 'string' ? r.length : 0;
  }
  console.log(
    `${name.padEnd(40)} ${((performance.now() - t0) / n).toFixed(2)} ms each, ${Math.round(bytes / n)} chars`,
  );
}

// What a direct 1-bit grayscale PNG of the same picture costs: QR modules scaled to whole pixels,
// rows filtered with type 0, one deflate call. (A sketch for the estimate, not gateway code.)
import { crc32, deflateSync } from 'node:zlib';
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
function qrPng1bit(text, width = 256, margin = 2) {
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const size = qr.modules.size;
  const scale = Math.max(1, Math.floor(width / (size + 2 * margin)));
  const px = (size + 2 * margin) * scale;
  const stride = 1 + Math.ceil(px / 8);
  const raw = Buffer.alloc(stride * px, 0);
  for (let y = 0; y < px; y++) {
    const row = raw.subarray(y * stride + 1, (y + 1) * stride);
    row.fill(0xff); // white
    const my = Math.floor(y / scale) - margin;
    if (my < 0 || my >= size) continue;
    for (let x = 0; x < px; x++) {
      const mx = Math.floor(x / scale) - margin;
      if (mx >= 0 && mx < size && qr.modules.get(my, mx)) row[x >> 3] &= ~(0x80 >> (x & 7));
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(px, 0);
  ihdr.writeUInt32BE(px, 4);
  ihdr[8] = 1;
  ihdr[9] = 0; // 1 bit, grayscale
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString('base64')}`;
}
{
  const n = 300;
  let bytes = 0;
  for (let i = 0; i < 20; i++) qrPng1bit(url);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) bytes += qrPng1bit(url + i).length;
  console.log(
    `${'direct 1-bit PNG (sketch)'.padEnd(40)} ${((performance.now() - t0) / n).toFixed(2)} ms each, ${Math.round(bytes / n)} chars`,
  );
}

// The gateway's own encoder (src/domain/qr-png.ts, after `npm run build`): what gateway data now uses.
{
  const { qrPngDataUri } = await import('../../dist/src/domain/qr-png.js');
  const opts = { errorCorrectionLevel: 'M', margin: 2, width: 256 };
  const n = 300;
  let bytes = 0;
  for (let i = 0; i < 20; i++) qrPngDataUri(url, opts);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) bytes += qrPngDataUri(url + i, opts).length;
  console.log(
    `${'gateway qrPngDataUri (dist)'.padEnd(40)} ${((performance.now() - t0) / n).toFixed(2)} ms each, ${Math.round(bytes / n)} chars`,
  );
}
