"""String functions: ``list_join``, ``str_replace`` (and its strict forms),
``str_split``, ``digest`` and ``make_url``.

Checks are written once and used twice: ``validate()`` runs them on the
arguments as written, skipping parts that are still functions, and
``result()`` runs them again on the resolved values.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib import parse as urlparse

from stoker.functions.base import Function, describe, has_functions, resolve, show
from stoker.functions.sizes import bounded_product, within_limit



def to_json(fn: Function, value: Any) -> str:
    """Serialise a map or list the way Heat does (sorted keys, ASCII only)."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise fn.error(f'"{fn.name}" could not serialise {show(value)} as JSON: {exc}') from None


# -- list_join ----------------------------------------------------------------------------
class Join(Function):
    """``list_join: [delimiter, [string, ...]]`` (until 2015-04-30): exactly one list,
    of strings only.  ``Fn::Join`` is the same function."""

    example = '[ " ", [ "str1", "str2"]]'
    #: may more than one list follow the delimiter?
    many_lists = False
    #: what the lists may hold (besides null), and how messages say it
    item_types: tuple[type, ...] = (str,)
    item_kinds = "strings"

    def usage(self):
        return self.error(
            f'Incorrect arguments to "{self.name}" should be: "{self.name}" : {self.example}'
        )

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) < 2:
            raise self.usage()
        if len(self.args) > 2 and not self.many_lists:
            raise self.usage()
        self.check_delimiter(self.args[0])
        for items in self.args[1:]:
            self.check_list(items)

    def check_delimiter(self, delimiter: Any) -> None:
        if not isinstance(delimiter, (str, Function)):
            raise self.error(f'"{self.name}" delimiter must be a string, not {describe(delimiter)}')

    def check_list(self, items: Any) -> None:
        if items is None or isinstance(items, Function):
            return
        if not isinstance(items, list):
            raise self.error(f'"{self.name}" must operate on a list, not {describe(items)}')
        for item in items:
            if item is not None and not isinstance(item, (*self.item_types, Function)):
                raise self.error(
                    f'Items to join must be {self.item_kinds} not {show(item)} (in "{self.name}")'
                )

    def text(self, item: Any) -> str:
        """One (checked) item as text: null is empty, maps and lists are JSON."""
        if item is None:
            return ""
        return item if isinstance(item, str) else to_json(self, item)

    def resolved_lists(self) -> list:
        return [resolve(self.args[1])]

    def _joined_as_written(self) -> str | None:
        """The result when the delimiter and every item are literal strings (nothing to resolve,
        every check passes) and the result is within the size limit; else None, and ``result``
        resolves and checks the arguments (stopping where the size goes over, and saying so)."""
        if len(self.args) < 2 or type(self.args[0]) is not str:
            return None
        delimiter, texts = self.args[0], []
        for items in self.args[1:] if self.many_lists else self.args[1:2]:
            if type(items) is not list:
                return None
            for item in items:
                if type(item) is not str:
                    return None
                texts.append(item)
        if within_limit(sum(map(len, texts)) + len(texts) * len(delimiter)):
            return delimiter.join(texts)
        return None

    def result(self) -> str:
        joined = self._joined_as_written() if type(self.args) is list else None
        if joined is not None:
            return joined
        delimiter = resolve(self.args[0])
        self.check_delimiter(delimiter)
        parts: list[str] = []
        length = 0
        for items in self.resolved_lists():
            self.check_list(items)
            for item in items or ():
                parts.append(self.text(item))
                length += len(parts[-1]) + len(delimiter)
                bounded_product(self, 1, length)  # as it grows: a big item joined many times stops early
        return delimiter.join(parts)


class JoinMultiple(Join):
    """``list_join: [delimiter, list, list, ...]`` (2015-10-15): several lists; maps
    and lists among the items are joined as JSON."""

    example = '[ " ", [ "str1", "str2"] ...]'
    many_lists = True
    item_types = (str, dict, list)
    item_kinds = "string, map or list"

    def check_list(self, items: Any) -> None:
        if not items or isinstance(items, Function):  # Heat skips empty values of any kind
            return
        super().check_list(items)

    def resolved_lists(self) -> list:
        # resolved as one list, so an omitted ``if`` drops out instead of joining as null
        return resolve(self.args[1:])


# -- str_replace --------------------------------------------------------------------------
class Replace(Function):
    """``str_replace: {template: ..., params: {placeholder: value}}`` (until 2015-04-30).

    Longer placeholders are replaced first (equal lengths in sorted order), in
    a single pass: text that a replacement inserted is never searched again.
    Values must be strings or numbers (null is the empty string).
    """

    #: non-string values (maps, lists) are serialised as JSON (2015-10-15)
    json_values = False
    #: every param must occur in the template (str_replace_strict)
    strict = False
    #: null and empty values are allowed (not in str_replace_vstrict)
    allow_empty = True

    def parts(self) -> tuple[Any, Any]:
        """(template, params) from arguments already validated."""
        return self.args["template"], self.args["params"]

    def check_shape(self) -> None:
        if not isinstance(self.args, dict):
            raise self.error(f'Arguments to "{self.name}" must be a map')
        if "template" not in self.args or "params" not in self.args:
            raise self.error(
                f'"{self.name}" syntax should be {self.name}: '
                "{template: 'This is var1 template var2', params: {var1: a, var2: string}}"
            )
        extra = sorted(str(k) for k in self.args if k not in ("template", "params"))
        if extra:
            self.parser.problems.warn(
                self.path, "ignored-argument",
                f'"{self.name}" ignores the key(s) {", ".join(extra)}; it takes only template and params',
            )

    def validate(self) -> None:
        self.check_shape()
        template, params = self.parts()
        if not isinstance(params, (dict, Function)):
            raise self.error(f'"{self.name}" parameters must be a mapping')
        self.check_template(template)
        if isinstance(params, dict):
            for key, value in params.items():
                self.check_placeholder(key)
                if not has_functions(value):
                    self.replacement(key, value)
        if self.strict and not has_functions([template, params]):
            self.result()  # everything is known: report missing placeholders now

    def check_template(self, template: Any) -> None:
        if not isinstance(template, (str, Function)):
            raise self.error(f'"{self.name}" template must be a string, not {describe(template)}')

    def check_placeholder(self, key: Any) -> None:
        if not isinstance(key, str):
            raise self.error(f'"{self.name}" param placeholders must be strings, not {show(key)}')
        if not key:
            raise self.error(f'"{self.name}" param placeholders must not be empty')

    def replacement(self, key: str, value: Any) -> str:
        """The text that replaces ``key``."""
        if not self.allow_empty and (value is None or value in ("", [], {})):
            raise self.error(
                f"{self.name} has an undefined or empty value for param {key}, "
                "must be a defined non-empty value",
                code="empty-param",
            )
        if value is None:
            return ""
        if isinstance(value, (str, int, float)):  # bool is an int: "True"/"False", as Heat
            return str(value)
        if self.json_values and isinstance(value, (dict, list)):
            return to_json(self, value)
        kinds = "strings, numbers, lists or maps" if self.json_values else "strings or numbers"
        raise self.error(f'"{self.name}" params must be {kinds}, param {key} is not valid')

    def result(self) -> str:
        template, params = self.parts()
        if not _as_written(template, params):
            template, params = (resolve(part) for part in (template, params))
            if not isinstance(template, str):
                raise self.error(f'"{self.name}" template must be a string, not {describe(template)}')
            if not isinstance(params, dict):
                raise self.error(f'"{self.name}" params must be a map, not {describe(params)}')
            for key in params:
                self.check_placeholder(key)
        keys = sorted(sorted(params), key=len, reverse=True)
        pairs = [(key, self.replacement(key, params[key])) for key in keys]
        text, found = self.substitute(template, pairs)
        missing = [key for key in keys if key not in found]
        if self.strict and missing:
            raise self.error(
                f"The following params were not found in the template: {','.join(missing)} "
                f'(in "{self.name}")',
                code="unused-param",
            )
        return text

    def substitute(self, template: str, pairs: list[tuple[str, str]]) -> tuple[str, set]:
        """Replace in one pass; also return the placeholders that occurred.

        The text is kept as pieces, each either still searchable (template
        text) or final (an inserted value); each placeholder in turn splits
        the searchable pieces.
        """
        pieces: list[tuple[str, bool]] = [(template, True)]
        found = set()
        for key, value in pairs:
            split: list[tuple[str, bool]] = []
            for text, searchable in pieces:
                if not searchable or key not in text:
                    split.append((text, searchable))
                    continue
                found.add(key)
                for i, part in enumerate(text.split(key)):
                    if i:
                        split.append((value, False))
                    if part:
                        split.append((part, True))
            pieces = split
        texts = [text for text, _ in pieces]
        bounded_product(self, 1, sum(map(len, texts)))
        return "".join(texts), found


def _as_written(template: Any, params: Any) -> bool:
    """Are ``str_replace``'s template and params literal, a string and a map of strings or numbers
    by non-empty strings?  (Nothing to resolve, and the checks of their shape all pass.)"""
    if type(template) is not str or type(params) is not dict:
        return False
    for key, value in params.items():
        if type(key) is not str or not key or type(value) not in _LITERAL_PARAMS:
            return False
    return True


#: the types of a param's value taken as written (a call is none of them; maps and lists may hold one)
_LITERAL_PARAMS = frozenset((str, int, float, bool, type(None)))


class ReplaceJson(Replace):
    """``str_replace`` from 2015-10-15: maps and lists are substituted as JSON."""

    json_values = True


class ReplaceJsonStrict(ReplaceJson):
    """``str_replace_strict``: every param must occur in the template."""

    strict = True


class ReplaceJsonVeryStrict(ReplaceJsonStrict):
    """``str_replace_vstrict``: also, no param may be null or empty."""

    allow_empty = False


# -- str_split ----------------------------------------------------------------------------
class StrSplit(Function):
    """``str_split: [delimiter, string]`` or ``[delimiter, string, index]``.

    A null string gives null; a null delimiter splits on whitespace; an index
    may be negative (counting from the end), as in Heat.
    """

    def usage(self):
        return self.error(
            f'Incorrect arguments to "{self.name}" should be: '
            f'"{self.name}" : [ ",", "apples,pears", <index>]'
        )

    def validate(self) -> None:
        if isinstance(self.args, Function):
            return
        if not isinstance(self.args, list) or len(self.args) < 2:
            raise self.usage()
        if len(self.args) > 3:
            self.parser.problems.warn(
                self.path, "ignored-argument",
                f'"{self.name}" ignores arguments after the third (the index)',
            )
        self.check(self.args)

    def check(self, args: list) -> None:
        delimiter, text = args[0], args[1]
        if not isinstance(text, (str, Function, type(None))):
            raise self.error(f'The string to split in "{self.name}" must be a string, not {describe(text)}')
        if not isinstance(delimiter, (str, Function, type(None))):
            raise self.error(f'The delimiter of "{self.name}" must be a string, not {describe(delimiter)}')
        if delimiter == "":
            raise self.error(f'The delimiter of "{self.name}" must not be empty')
        if len(args) > 2 and not isinstance(args[2], Function):
            self.index(args[2])

    def index(self, value: Any) -> int:
        try:
            if isinstance(value, (list, dict)) or value is None:
                raise TypeError
            return int(value)
        except (TypeError, ValueError, OverflowError):
            raise self.error(
                f'Incorrect index to "{self.name}" should be: '
                f'"{self.name}" : [ ",", "apples,pears", <index>]'
            ) from None

    def result(self) -> Any:
        args = resolve(self.args)
        if not isinstance(args, list) or len(args) < 2:
            raise self.usage()
        if args[1] is None:
            return None
        self.check(args)
        items = args[1].split(args[0])
        if len(args) < 3:
            return items
        index = self.index(args[2])
        if not -len(items) <= index < len(items):
            raise self.error(
                f'Incorrect index to "{self.name}" should be between 0 and {len(items) - 1}'
            )
        return items[index]


# -- digest -------------------------------------------------------------------------------
#: algorithms whose digest needs a length, which ``digest`` cannot pass
_VARIABLE_LENGTH = {"shake_128", "shake_256"}


class Digest(Function):
    """``digest: [algorithm, value]``: the hex digest of a string, hashed as Latin-1."""

    def validate(self) -> None:
        if not isinstance(self.args, Function):
            self.check(self.args)

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or not all(isinstance(a, (str, Function)) for a in args):
            raise self.error(f'Argument to function "{self.name}" must be a list of strings')
        if len(args) != 2:
            raise self.error(f'Function "{self.name}" usage: ["<algorithm>", "<value>"]')
        algorithm = args[0]
        if isinstance(algorithm, str):
            name = algorithm.lower()
            if name in _VARIABLE_LENGTH:
                raise self.error(f'Algorithm "{algorithm}" of "{self.name}" needs a digest length; '
                                 "choose a fixed-length algorithm", code="unknown-algorithm")
            if name not in hashlib.algorithms_available:
                known = ", ".join(sorted(hashlib.algorithms_available - _VARIABLE_LENGTH))
                raise self.error(f'Algorithm "{algorithm}" of "{self.name}" is unknown; '
                                 f"it must be one of: {known}", code="unknown-algorithm")

    def result(self) -> str:
        args = resolve(self.args)
        self.check(args)
        algorithm, value = args
        try:
            data = value.encode("latin-1")
        except UnicodeEncodeError:
            raise self.error(f'The value of "{self.name}" must contain only Latin-1 characters') from None
        try:
            digest = hashlib.new(algorithm.lower())
        except ValueError as exc:
            raise self.error(f'Algorithm "{algorithm}" of "{self.name}" is not usable here: {exc}') from None
        digest.update(data)
        return digest.hexdigest()


# -- make_url -----------------------------------------------------------------------------
class MakeURL(Function):
    """``make_url: {scheme, username, password, host, port, path, query, fragment}``:
    a correctly escaped URL; every part is optional."""

    parts = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")

    def validate(self) -> None:
        self.check(self.args)

    def check(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise self.error(f'The arguments to "{self.name}" must be a map')
        unknown = sorted(str(k) for k in args if k not in self.parts)
        if unknown:
            raise self.error(f'Invalid arguments to "{self.name}": {", ".join(unknown)} '
                             f'(valid: {", ".join(self.parts)})')
        for key, value in args.items():
            if isinstance(value, Function):
                continue
            if key == "query":
                if not isinstance(value, dict):
                    raise self.error(f'The "query" argument to "{self.name}" must be a map')
            elif key == "port":
                self.port(value)
            elif not isinstance(value, str):
                raise self.error(f'The "{key}" argument to "{self.name}" must be a string')
        scheme = args.get("scheme")
        if isinstance(scheme, str) and ":" in scheme:
            raise self.error(f'The "scheme" argument to "{self.name}" must not contain ":"')

    def port(self, value: Any) -> int:
        try:
            if isinstance(value, bool):
                raise TypeError
            port = value if isinstance(value, int) else int(value)
        except (TypeError, ValueError, OverflowError):
            raise self.error(f'Invalid URL port "{value}" for "{self.name}": it must be an integer') from None
        if not 0 < port <= 65535:
            raise self.error(f'Invalid URL port {port} for "{self.name}", must be in range 1-65535')
        return port

    def result(self) -> str:
        args = resolve(self.args)
        self.check(args)
        quote = urlparse.quote
        netloc = ""
        username = quote(args.get("username", ""), safe="")
        password = quote(args.get("password", ""), safe="")
        if username or password:
            netloc = username + (f":{password}" if password else "") + "@"
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = quote(host, safe=":")
        netloc += f"[{host}]" if ":" in host else host
        if args.get("port", ""):
            netloc += f":{args['port']}"
        query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
        return urlparse.urlunsplit((
            args.get("scheme", ""),
            netloc,
            quote(args.get("path", "")),
            query,
            quote(args.get("fragment", "")),
        ))
