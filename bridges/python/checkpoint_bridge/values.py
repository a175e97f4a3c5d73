"""Typed values between the wire and a LangGraph saver (docs/bridge-protocol.md, "Values").

On the wire a typed value is the kit's JSON form: a canonical ``json`` value is the JSON
itself (but ``null``), anything else ``{"$type": tag, "$base64": bytes}``. A saver gets what LangGraph's
runtime would hand it:

- a ``json`` value: the Python object (dict, list, str, int, float, bool, None);
- a ``bytes`` value: ``bytes``;
- any other tag (and a ``json`` value whose bytes are not the canonical text of a value):
  a :class:`Typed` carrier, a NamedTuple that the saver's own serializer stores like any
  other state object and gives back on read.

On the way back the object the saver returns is turned into the wire form the same way,
and an object of any other type is written with the saver's own ``serde.dumps_typed``, so
a value the saver changed shows up as a different value instead of being hidden.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, NamedTuple

TYPE_KEY = "$type"
BASE64_KEY = "$base64"


class Typed(NamedTuple):
    """A value with a type tag the runtime has no Python object for: the tag and bytes of
    the kit's typed value, carried through the saver's serializer unchanged."""

    type_tag: str
    data: bytes


def _envelope(tag: str, data: bytes) -> dict[str, str]:
    return {TYPE_KEY: tag, BASE64_KEY: base64.b64encode(data).decode("ascii")}


def _looks_like_envelope(obj: Any) -> bool:
    return type(obj) is dict and len(obj) == 2 and TYPE_KEY in obj and BASE64_KEY in obj


def is_json_data(obj: Any) -> bool:
    """True for plain JSON data: dicts with str keys, lists, str, int, finite float, bool,
    None, nested. Tuples, subclasses (IntEnum, OrderedDict, ...) and NaN are not."""
    t = type(obj)
    if obj is None or t is bool or t is int or t is str:
        return True
    if t is float:
        return math.isfinite(obj)
    if t is list:
        return all(is_json_data(x) for x in obj)
    if t is dict:
        return all(type(k) is str and is_json_data(v) for k, v in obj.items())
    return False


def _ryu_float(x: float) -> str:
    """A finite float spelled as serde_json (ryu) spells it: the shortest digits that read
    back to ``x``, as Python's ``repr`` finds them, laid out by ryu's rules."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    int_part, _, frac = mantissa.partition(".")
    # The value is 0.DIGITS * 10**point, DIGITS without leading or trailing zeros.
    if int_part == "0":
        point = -(len(frac) - len(frac.lstrip("0")))
    else:
        point = len(int_part)
    point += int(exp) if exp else 0
    digits = (int_part + frac).strip("0")
    length = len(digits)
    if 0 <= point - length and point <= 16:
        return sign + digits + "0" * (point - length) + ".0"
    if 0 < point <= 16:
        return sign + digits[:point] + "." + digits[point:]
    if -5 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    e = point - 1
    head = digits[0] + ("." + digits[1:] if length > 1 else "")
    return f"{sign}{head}e{e}"


def canonical_json(obj: Any) -> str:
    """The text serde_json writes for a JSON value: compact, keys sorted, floats in ryu's
    form. This is the canonical ``json`` text of the kit's typed values (the kit compares
    values byte for byte)."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    t = type(obj)
    if t is int:
        return str(obj)
    if t is float:
        return _ryu_float(obj)
    if t is str:
        return json.dumps(obj, ensure_ascii=False)
    if t is list:
        return "[" + ",".join(canonical_json(x) for x in obj) + "]"
    if t is dict:
        items = sorted(obj.items(), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(v) for k, v in items) + "}"
    raise TypeError(f"not JSON data: {t.__name__}")


def decode_value(wire: Any) -> Any:
    """The object the saver gets for a typed value in its wire form.

    Raises ValueError for an envelope whose tag is not a string or whose bytes are not
    base64 (a protocol error)."""
    if not _looks_like_envelope(wire):
        return wire
    tag, b64 = wire[TYPE_KEY], wire[BASE64_KEY]
    if type(tag) is not str or type(b64) is not str:
        raise ValueError(f"a typed value envelope needs string {TYPE_KEY} and {BASE64_KEY}")
    data = base64.b64decode(b64, validate=True)
    if tag == "bytes":
        return data
    if tag == "json":
        # The kit envelopes a canonical JSON value only when it looks like an envelope
        # itself; such a value is plain JSON data for the saver.
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        else:
            if is_json_data(obj) and canonical_json(obj).encode("utf-8") == data:
                return obj
    return Typed(tag, data)


def encode_value(obj: Any, serde: Any) -> Any:
    """The wire form of an object a saver returned (see the module docs)."""
    t = type(obj)
    if t is Typed:
        if type(obj.type_tag) is str and type(obj.data) is bytes:
            return _envelope(obj.type_tag, obj.data)
    elif t is bytes:
        return _envelope("bytes", obj)
    elif is_json_data(obj):
        # null is enveloped too, so it cannot be read as "no value" in an optional field.
        if obj is None or _looks_like_envelope(obj):
            return _envelope("json", canonical_json(obj).encode("utf-8"))
        return obj
    tag, data = serde.dumps_typed(obj)
    return _envelope(str(tag), bytes(data))
