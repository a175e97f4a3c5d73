// Typed values between the wire and a LangGraph JS saver (docs/bridge-protocol.md,
// "Values (JavaScript child)").
//
// A saver gets what LangGraph JS's runtime hands it:
// - a `json` value: the JS value (objects, arrays, strings, numbers, booleans, null), when
//   a JS program can hold it exactly: its canonical text written back from the JS value is
//   the same text (so not `1.0`, `1e16` or an integer beyond 2^53, which a JS number
//   cannot tell apart or hold);
// - a `bytes` value: a Uint8Array;
// - anything else (another tag, a json value JS cannot hold exactly, non-canonical json
//   text, a json value shaped like the carrier): a carrier, a plain object
//   `{"__checkpoint_bridge_typed__": tag, "base64": data}` that the saver's serializer
//   stores like any state object and gives back on read.
//
// Back from the saver: a carrier gives its tag and bytes, a Uint8Array the `bytes` tag,
// plain JSON data the `json` value (its canonical text), anything else what the saver's
// own `serde.dumpsTyped` makes of it, so a value the saver changed shows as a different
// value.

import { Num, RawJson, canonical, isJsonData, parse, plain } from "./json.mjs";

export const TYPE_KEY = "$type";
export const BASE64_KEY = "$base64";
export const CARRIER_KEY = "__checkpoint_bridge_typed__";

// A plain object, tested before counting its keys: `Object.keys` of a 16 MiB Uint8Array
// makes 16 M index strings (over a minute of CPU), so typed arrays and other views are
// ruled out first.
function isRecord(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function isEnvelope(v) {
  return (
    isRecord(v) &&
    Object.keys(v).length === 2 &&
    TYPE_KEY in v &&
    BASE64_KEY in v
  );
}

function isCarrier(v) {
  return (
    isRecord(v) &&
    Object.keys(v).length === 2 &&
    typeof v[CARRIER_KEY] === "string" &&
    typeof v.base64 === "string"
  );
}

function hasCarrierShape(v) {
  if (v === null || typeof v !== "object" || v instanceof Num || ArrayBuffer.isView(v)) return false;
  if (Array.isArray(v)) return v.some(hasCarrierShape);
  return (Object.keys(v).length === 2 && CARRIER_KEY in v && "base64" in v) || Object.values(v).some(hasCarrierShape);
}

// A plain character-class loop: a grouped repetition overflows V8's regex stack on a
// 22 MiB string.
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

function fromBase64(text) {
  if (typeof text !== "string" || text.length % 4 !== 0 || !B64.test(text)) {
    throw new TypeError("a typed value envelope needs standard base64 with padding");
  }
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) throw new TypeError("a typed value envelope needs canonical base64");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toBase64(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function envelope(tag, bytes) {
  return { [TYPE_KEY]: tag, [BASE64_KEY]: toBase64(bytes) };
}

function carrier(tag, base64) {
  return { [CARRIER_KEY]: tag, base64 };
}

/** The JS value for `parsed` (as `parse` gives it) when a JS program holds it exactly:
 * `plain(parsed)` written canonically is `text`. */
function exactly(parsed, text) {
  if (hasCarrierShape(parsed)) return undefined;
  const value = plain(parsed);
  return canonical(value) === text ? { value } : undefined;
}

/** The object a saver gets for a typed value in its wire form (a `parse` tree). */
export function decodeValue(wire) {
  if (!isEnvelope(wire)) {
    // An inline json value: the kit sends its canonical text.
    const text = canonical(wire);
    const got = exactly(wire, text);
    return got ? got.value : carrier("json", Buffer.from(text, "utf8").toString("base64"));
  }
  const tag = wire[TYPE_KEY];
  const b64 = wire[BASE64_KEY];
  if (typeof tag !== "string" || typeof b64 !== "string") {
    throw new TypeError(`a typed value envelope needs string ${TYPE_KEY} and ${BASE64_KEY}`);
  }
  const bytes = fromBase64(b64);
  if (tag === "bytes") return bytes;
  if (tag === "json") {
    const text = Buffer.from(bytes).toString("utf8");
    if (Buffer.from(text, "utf8").equals(Buffer.from(bytes))) {
      try {
        const got = exactly(parse(text), text);
        if (got) return got.value;
      } catch {
        // not JSON text: carried as it is
      }
    }
  }
  return carrier(tag, b64);
}

/** The wire form of a value a saver returned (see the module docs). */
export async function encodeValue(obj, serde) {
  if (isCarrier(obj)) return { [TYPE_KEY]: obj[CARRIER_KEY], [BASE64_KEY]: obj.base64 };
  if (obj instanceof Uint8Array) return envelope("bytes", obj);
  if (isJsonData(obj)) {
    const text = canonical(obj);
    // null and envelope look-alikes travel enveloped (never read as "no value").
    if (obj === null || isEnvelope(obj)) return envelope("json", Buffer.from(text, "utf8"));
    return new RawJson(text);
  }
  const [tag, data] = await serde.dumpsTyped(obj);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  return envelope(String(tag), bytes);
}
