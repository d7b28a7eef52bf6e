// A minimal safetensors reader and writer for the tests (the format: 8-byte little-endian header
// length, JSON header, raw little-endian data).

/** name -> {dtype, shape, data (a copy, typed by dtype)}; __metadata__ is skipped. */
export function readSafetensors(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const types = { F32: Float32Array, I32: Int32Array, I64: BigInt64Array };
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const raw = bytes.slice(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    out[name] = { dtype: t.dtype, shape: t.shape, data: new types[t.dtype](raw.buffer) };
  }
  return out;
}

/** tensors: name -> {dtype: 'F32' | 'I32', shape, data (typed array)} -> file bytes. */
export function writeSafetensors(tensors) {
  const header = {};
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const t of Object.values(tensors)) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}
