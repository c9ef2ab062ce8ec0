"""Operator attribute schemas: parse MXNet's attribute strings, print them back.

MXNet stores every attribute as a string (`"128"`, `"True"`, `"(3, 3)"`,
`"None"`); only the attributes a user passed are written to JSON. An `Attrs`
keeps those original strings (for exact JSON round trips) next to the parsed
values the kernels read as plain attributes (`a.num_hidden`).
"""
from __future__ import annotations

import math
import re
from typing import Any
from collections.abc import Callable, Iterable

import numpy as np

from .errors import AttrError

REQUIRED = object()
#: the longest text a single number attribute may be (a float's repr is under 30)
MAX_NUMBER_TEXT = 400


def _strip_long(text: str) -> str:
    """Python-2-era exports write `8L`; drop the suffix."""
    return text.replace("L", "") if "L" in text and not any(c.isalpha() and c != "L" for c in text) else text


def parse_bool(v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return bool(v)
    s = str(v).strip()
    if s in ("True", "true", "1"):
        return True
    if s in ("False", "false", "0"):
        return False
    raise ValueError(f"expected a boolean (True/False/1/0), got {v!r}")


def parse_int(v: Any) -> int:
    """An integer attribute; values outside int64 (MXNet's widest) are refused."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return _int64(int(v), v)
    if isinstance(v, float) and v.is_integer():
        return _int64(int(v), v)
    s = _strip_long(str(v)[:MAX_NUMBER_TEXT + 1].strip())
    if len(s) > MAX_NUMBER_TEXT:
        raise ValueError(f"expected an integer, got {str(v)[:40]!r}... ({len(str(v))} characters)")
    try:
        return _int64(int(s), v)
    except ValueError:
        f = float(s)
        if f.is_integer():
            return _int64(int(f), v)
        raise ValueError(f"expected an integer, got {v!r}") from None


def _int64(i: int, v: Any) -> int:
    if not -(1 << 63) <= i < 1 << 63:
        raise ValueError(f"expected an integer in the int64 range, got {str(v)[:40]!r}")
    return i


def parse_float(v: Any) -> float:
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return float(v)
    s = str(v).strip()
    if len(s) > MAX_NUMBER_TEXT:
        raise ValueError(f"expected a number, got {s[:40]!r}... ({len(s)} characters)")
    low = s.lower()
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    if low == "nan":
        return math.nan
    return float(s)


#: the most elements a tuple attribute may hold, and the longest text it may be: a
#: bound on what a (hostile) file can make the parser and the ops after it do
MAX_SEQ_LEN = 1 << 16
MAX_ATTR_TEXT = 1 << 20
#: one element of a tuple attribute: None, True/False, or a decimal number
#: (Python 2's `8L` suffix allowed); at most 64 characters
_ELEMENT = re.compile(r"None|True|False|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?L?|[+-]?(?:inf|nan)",
                      re.IGNORECASE)


_CLOSE = {"(": ")", "[": "]"}


def _element(tok: str, text: str) -> Any:
    if len(tok) > 64 or not _ELEMENT.fullmatch(tok):
        raise ValueError(f"expected a tuple of numbers like (3, 3), got element {tok[:40]!r} in {text[:80]!r}")
    if tok == "None":
        return None
    if tok in ("True", "False"):
        return tok == "True"
    tok = tok.rstrip("lL") if tok[-1] in "lL" and tok[-2:-1].isdigit() else tok
    try:
        return int(tok)
    except ValueError:
        return float(tok)


def _parse_seq(v: Any) -> list:
    """A flat tuple attribute (`"(3, 3)"`, `"[1,2]"`, `"(None, 2)"`, `"3"`), parsed by a
    bounded scanner of our own: no `ast`/`eval` of file text, linear in its length."""
    if isinstance(v, np.ndarray) and v.ndim == 1:
        v = v.tolist()  # MXNet takes a 1-d numpy array of numbers as a tuple (broadcast_to shape)
    if isinstance(v, (list, tuple)):
        if len(v) > MAX_SEQ_LEN:
            raise ValueError(f"expected at most {MAX_SEQ_LEN} elements, got {len(v)}")
        return list(v)
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    s = str(v)
    if len(s) > MAX_ATTR_TEXT:
        raise ValueError(f"expected a tuple attribute of at most {MAX_ATTR_TEXT} characters, got {len(s)}")
    s = s.strip()
    if s and s[0] in "([" and s[-1] == _CLOSE[s[0]]:
        s = s[1:-1].strip()
    elif s and (s[0] in "([" or s[-1] in ")]"):
        raise ValueError(f"expected a tuple like (3, 3), got {str(v)[:80]!r}")
    if not s:
        return []
    parts = s.split(",")
    if parts[-1].strip() == "":
        parts.pop()  # "(3,)"
    if len(parts) > MAX_SEQ_LEN:
        raise ValueError(f"expected at most {MAX_SEQ_LEN} elements, got {len(parts)}")
    return [_element(p.strip(), s) for p in parts]


def parse_shape(v: Any) -> tuple:
    """A tuple of ints; `None` entries stay (slice begin/end allow them)."""
    return tuple(None if x is None else parse_int(x) for x in _parse_seq(v))


def parse_float_tuple(v: Any) -> tuple:
    return tuple(parse_float(x) for x in _parse_seq(v))


def parse_dtype(v: Any) -> Any:
    if v is None or (isinstance(v, str) and v.strip() == "None"):
        return None
    if isinstance(v, str):
        name = v.strip()
        if not _DTYPE_NAME.fullmatch(name):
            raise ValueError(f"expected a dtype name like float32, got {v[:40]!r}")
        v = name
    try:
        return np.dtype(v).name
    except (TypeError, ValueError, SyntaxError) as exc:  # numpy raises each for odd names
        raise ValueError(f"expected a dtype name like float32, got {str(v)[:40]!r} ({type(exc).__name__})") from None


_DTYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}|[<>=|]?[a-zA-Z]\d{0,2}")


def format_value(v: Any) -> str:
    """`str()` of a Python value, as MXNet's Python front end writes attributes."""
    if isinstance(v, str):
        return v
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return str(v.item())
    if isinstance(v, (tuple, list)):   # numpy 2 prints np.int64(3) inside containers; MXNet wrote 3
        v = type(v)(x.item() if isinstance(x, np.generic) else x for x in v)
    return str(v)


class Attr:
    """One attribute of an operator: how to parse it, its default, its doc."""

    __slots__ = ("parse", "default", "doc", "choices", "optional", "type_name", "fmt")

    def __init__(self, parse: Callable[[Any], Any] | str, default: Any = REQUIRED, doc: str = "",
                 choices: Iterable[str] | None = None, optional: bool | None = None,
                 fmt: Callable[[Any], str] | None = None):
        if isinstance(parse, str):
            parse = _NAMED[parse]
        self.parse = parse
        self.default = default
        self.doc = doc
        self.choices = tuple(choices) if choices is not None else None
        # an attribute whose default is None accepts the string "None"
        self.optional = (default is None) if optional is None else optional
        self.type_name = _TYPE_NAMES.get(parse, getattr(parse, "__name__", "any"))
        self.fmt = fmt or format_value

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def convert(self, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip() == "None"):
            if self.optional:
                return None
            raise ValueError("None is not allowed here")
        out = self.parse(value)
        if self.choices is not None and out not in self.choices:
            raise ValueError(f"expected one of {list(self.choices)}, got {value!r}")
        return out


_NAMED = {"int": parse_int, "float": parse_float, "bool": parse_bool, "str": str,
          "shape": parse_shape, "floats": parse_float_tuple, "dtype": parse_dtype,
          "any": lambda v: v}
_TYPE_NAMES = {parse_int: "int", parse_float: "float", parse_bool: "boolean", str: "string",
               parse_shape: "Shape(tuple)", parse_float_tuple: "tuple of float",
               parse_dtype: "dtype"}


class Attrs:
    """Parsed attribute values (read as `a.name`) plus the strings given.

    Kernels read `a.axis` on every call, so the values are also plain instance
    attributes (an instance-dict hit, ~30 ns; `__getattr__` after a failed
    lookup costs ~0.7 us). Names the class itself defines (`get`, `given`,
    `values`, ...) keep their meaning and are read with `get()`.
    """

    def __init__(self, values: dict, given: dict):
        self._values = values
        self._given = given
        self._key = None
        d = self.__dict__
        for k, v in values.items():
            if k not in _RESERVED and k.isidentifier():
                d[k] = v

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    @property
    def given(self) -> dict:
        """The attributes that were passed, as MXNet's strings, in order."""
        return self._given

    def values(self) -> dict:
        return dict(self._values)

    def key(self) -> tuple:
        """A hashable identity (for caching and common-subexpression elimination)."""
        if self._key is None:
            self._key = tuple(sorted(self._given.items()))
        return self._key

    def replace(self, schema: "AttrSchema", **changes: Any) -> "Attrs":
        given = dict(self._given)
        given.update({k: format_value(v) for k, v in changes.items()})
        return schema.parse(given)

    def __repr__(self) -> str:
        return f"Attrs({self._given})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attrs) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())


_RESERVED = frozenset(dir(Attrs)) | {"_values", "_given", "_key"}


class AttrSchema:
    """The ordered attribute declarations of one operator."""

    def __init__(self, op_name: str, attrs: dict[str, Attr], allow_extra: bool = False,
                 ignored: Iterable[str] = ()):
        self.op_name = op_name
        self.attrs = attrs
        self.allow_extra = allow_extra
        self.ignored = frozenset(ignored)  # accepted and kept, not used (e.g. workspace)
        self._default_cache: Attrs | None = None

    def parse_lenient(self, given: dict) -> Attrs:
        """Best-effort parse (no errors, missing required values are None), used only
        to learn an operator's input names before its attributes are complete."""
        values = {k: (None if d.required else d.default) for k, d in self.attrs.items()}
        for k, v in given.items():
            decl = self.attrs.get(k)
            if decl is not None:
                try:
                    values[k] = decl.convert(v)
                except (ValueError, TypeError):
                    pass
        return Attrs(values, {})

    def parse(self, given: dict) -> Attrs:
        """Parse user/JSON attributes; raise AttrError naming op, attribute and value."""
        if not given and self._default_cache is not None:
            return self._default_cache
        values = {}
        strings = {}
        for k, v in given.items():
            decl = self.attrs.get(k)
            if decl is None:
                if k.startswith("__") and k.endswith("__"):
                    strings[k] = format_value(v)  # hidden attributes (ctx_group, lr_mult) ride along
                    continue
                if k in self.ignored or self.allow_extra:
                    strings[k] = format_value(v)
                    values[k] = v
                    continue
                raise AttrError(
                    f"operator {self.op_name}: unknown attribute {k!r:.200} (value {v!r:.200}); "
                    f"expected one of {sorted(self.attrs) + sorted(self.ignored)}")
            try:
                values[k] = decl.convert(v)
            except (ValueError, TypeError) as exc:
                shown = f"{v!r:.200}" + ("..." if len(repr(v)) > 200 else "")
                raise AttrError(f"operator {self.op_name}: attribute {k!r} expected "
                                f"{decl.type_name}, got {shown}: {exc}") from None
            strings[k] = v if isinstance(v, str) else decl.fmt(v)
        for k, decl in self.attrs.items():
            if k not in values:
                if decl.required:
                    raise AttrError(f"operator {self.op_name}: required attribute {k!r} is missing "
                                    f"({decl.type_name}: {decl.doc})")
                values[k] = decl.default
        out = Attrs(values, strings)
        if not given:
            self._default_cache = out
        return out
