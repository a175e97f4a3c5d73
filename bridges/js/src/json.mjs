// JSON for the bridge protocol (docs/bridge-protocol.md) without the losses of
// JSON.parse / JSON.stringify:
//
// - `parse` keeps every number's source text (a `Num`), so an integer beyond 2^53 or a
//   float spelled `1.0` is still known exactly when it is a typed value's content;
// - `write` writes numbers the way the kit's canonical JSON (serde_json, ryu) spells them,
//   and `canonical` writes a value as the kit's canonical `json` text (compact, object keys
//   sorted by code point).

/** A number literal as written, with its value as a JS number. */
export class Num {
  constructor(raw) {
    this.raw = raw;
    this.value = Number(raw);
  }
}

/** A piece of JSON text written as is by `write` (a typed value's exact bytes). */
export class RawJson {
  constructor(text) {
    this.text = text;
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Parses JSON text; numbers become `Num`. Throws SyntaxError with the offset. */
export function parse(text) {
  let i = 0;
  // The next backslash at or after some offset (-1: none left), so that strings without
  // escapes before a long one cost no rescans of the rest of the text.
  let bs = -2;
  const nextBackslash = (from) => {
    if (bs !== -1 && bs < from) bs = text.indexOf("\\", from);
    return bs;
  };
  const fail = (what) => {
    throw new SyntaxError(`JSON: ${what} at offset ${i}`);
  };
  const ws = () => {
    while (i < text.length && WS.has(text.charCodeAt(i))) i += 1;
  };
  const str = () => {
    i += 1; // opening quote
    let out = "";
    let start = i;
    for (;;) {
      const q = text.indexOf('"', i);
      const b = nextBackslash(i);
      if (q < 0) fail("unterminated string");
      if (b < 0 || q < b) {
        out += text.slice(start, q);
        i = q + 1;
        return out;
      }
      out += text.slice(start, b);
      const c = text[b + 1];
      i = b + 2;
      switch (c) {
        case '"': out += '"'; break;
        case "\\": out += "\\"; break;
        case "/": out += "/"; break;
        case "b": out += "\b"; break;
        case "f": out += "\f"; break;
        case "n": out += "\n"; break;
        case "r": out += "\r"; break;
        case "t": out += "\t"; break;
        case "u": {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          fail("bad escape");
      }
      start = i;
    }
  };
  const NUM = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = () => {
    ws();
    const c = text[i];
    if (c === "{") {
      i += 1;
      const obj = {};
      ws();
      if (text[i] === "}") {
        i += 1;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const k = str();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i += 1;
        Object.defineProperty(obj, k, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] === "}") {
          i += 1;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i += 1;
      const arr = [];
      ws();
      if (text[i] === "]") {
        i += 1;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ",") {
          i += 1;
          continue;
        }
        if (text[i] === "]") {
          i += 1;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (!m) fail("unexpected character");
    i += m[0].length;
    return new Num(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail("trailing characters");
  return v;
}

/** `Num`s replaced by JS numbers (what JSON.parse would have given). */
export function plain(v) {
  if (v instanceof Num) return v.value;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v)) {
      Object.defineProperty(out, k, { value: plain(v[k]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

/** A finite number as serde_json writes it: an integer as digits when it is a safe integer
 * (not -0), any other number as an f64 in ryu's layout (`1.0`, `1e16`, `5e-324`). */
export function numberText(x) {
  if (!Number.isFinite(x)) throw new TypeError(`not a JSON number: ${x}`);
  if (Number.isSafeInteger(x) && !Object.is(x, -0)) return String(x);
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // The shortest digits that read back to x, and the decimal point's position:
  // x = 0.DIGITS * 10**point.
  const [mant, exp] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "").replace(/0+$/, "") || "0";
  const point = Number(exp) + 1;
  const len = digits.length;
  if (point - len >= 0 && point <= 16) return `${sign}${digits}${"0".repeat(point - len)}.0`;
  if (point > 0 && point <= 16) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  if (point > -5 && point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  const head = digits[0] + (len > 1 ? `.${digits.slice(1)}` : "");
  return `${sign}${head}e${point - 1}`;
}

function byCodePoint(a, b) {
  let ai = 0;
  let bi = 0;
  while (ai < a.length && bi < b.length) {
    const ac = a.codePointAt(ai);
    const bc = b.codePointAt(bi);
    if (ac !== bc) return ac < bc ? -1 : 1;
    ai += ac > 0xffff ? 2 : 1;
    bi += bc > 0xffff ? 2 : 1;
  }
  return a.length - ai - (b.length - bi);
}

function isPlainObject(v) {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Whether `v` is plain JSON data as a JS program holds it: null, booleans, finite
 * numbers, strings, arrays and plain objects of them (no undefined, Map, Date, class
 * instances, typed arrays). `Num`s count as numbers. */
export function isJsonData(v) {
  if (v === null || typeof v === "boolean" || typeof v === "string") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (v instanceof Num) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i += 1) if (!(i in v) || !isJsonData(v[i])) return false;
    return true;
  }
  if (isPlainObject(v)) return Object.keys(v).every((k) => isJsonData(v[k]));
  return false;
}

/** The text of a value for the protocol. `sorted`: object keys by code point (the kit's
 * canonical json text); otherwise in insertion order. `Num`s are written as they were
 * read, `RawJson` as its text. Throws TypeError for something that is not JSON data. */
export function write(v, sorted = false) {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") return numberText(v);
  if (v instanceof Num) return v.raw;
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => write(x, sorted)).join(",")}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    if (sorted) keys.sort(byCodePoint);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${write(v[k], sorted)}`).join(",")}}`;
  }
  throw new TypeError(`not JSON data: ${Object.prototype.toString.call(v)}`);
}

/** The kit's canonical `json` text of a value. */
export function canonical(v) {
  return write(v, true);
}
