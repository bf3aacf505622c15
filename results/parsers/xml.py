"""Safe, streaming XML reading for untrusted reports: the only place the parsers touch expat.

Reports come from CI jobs we do not control, so the XML layer must refuse entity declarations
(billion laughs, XXE) and external references, tolerate a DOCTYPE (every JaCoCo and Java
Cobertura report has one) without ever fetching it, bound the nesting depth and the element
count, and never hold the document in memory.

The hardening is defusedxml's: we build a ``defusedxml.ElementTree.DefusedXMLParser`` with
``forbid_dtd=False, forbid_entities=True, forbid_external=True`` and keep the guards it installs
on its expat parser. We then replace only its element and text callbacks with ours and feed the
input in chunks. That is iterparse without the Element objects: nothing is built, so nothing has
to be cleared, and a full parse stays within 2x of a bare ``iterparse`` of the same file (see
``scripts/bench/results_parse.py``). Element text is kept only when the handler asks for it, and
only up to the number of characters it asks for.

This module must not know any report format: formats are ``XmlHandler`` implementations.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, Protocol
from xml.parsers.expat import ErrorString, ExpatError

from defusedxml import DefusedXmlException, EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.ElementTree import DefusedXMLParser

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport, ReportTooLarge
from results.parsers.model import ParseLimits
from results.parsers.source import ReportSource, open_report


class XmlHandler(Protocol):
    #: Tags whose end the handler needs (None: every tag). Ends of elements whose text was kept
    #: are always delivered. Skipping the rest saves a call per element on large reports.
    end_tags: frozenset[str] | None

    def start(self, tag: str, attrs: dict[str, str]) -> int:
        """An element opened; return how many characters of its text to keep (0 for none).

        Text is the element's whole subtree text. While one element's text is being kept, the
        return values of its descendants are ignored.
        """

    def end(self, tag: str, text: str | None) -> None:
        """An element closed; ``text`` is None unless ``start`` asked for it."""


#: Called with the root element's tag and attributes; returns the handler for the document.
ChooseHandler = Callable[[str, dict[str, str]], XmlHandler]


def stream_xml(
    source: ReportSource, choose: ChooseHandler, *, limits: ParseLimits, log: DiagnosticLog
) -> None:
    """Parse ``source`` into the chosen handler's callbacks; raise InvalidReport/ReportTooLarge."""
    with open_report(source, limits) as stream:
        feed_xml(stream, choose, limits=limits, log=log)


def feed_xml(
    stream: io.BufferedIOBase, choose: ChooseHandler, *, limits: ParseLimits, log: DiagnosticLog
) -> None:
    """Like ``stream_xml`` for a stream already opened with ``source.open_report``."""
    parser = _hardened_parser()
    _install(parser, choose, limits, log)
    first = True
    fed = 0
    try:
        while chunk := stream.read(limits.chunk_bytes):
            if first:
                chunk, first = _declaration_first(chunk, log), False
            fed += len(chunk)
            parser.Parse(chunk, False)
            # Between calls, expat's byte index is just past its last parse event, callback or
            # not: what lies beyond it is one unfinished token (expat holds a whole start tag,
            # every attribute, until it ends). Refuse it before expat turns it into a huge dict.
            if fed - parser.CurrentByteIndex > limits.max_token_bytes:
                raise _token_too_large(limits.max_token_bytes)
        parser.Parse(b"", True)
    except ExpatError as exc:
        raise _malformed(exc) from exc
    except DefusedXmlException as exc:
        raise _forbidden(exc, parser.CurrentLineNumber) from exc
    except (LookupError, UnicodeError) as exc:  # an encoding expat cannot read
        raise InvalidReport(f"unreadable XML encoding: {exc}", reason="bad-encoding") from exc
    except InvalidReport as exc:
        if exc.line is not None:
            raise
        line = parser.CurrentLineNumber
        raise InvalidReport(f"{exc.detail} (line {line})", reason=exc.reason, line=line) from exc


class _NoTarget:
    """An ElementTree target with no callbacks: we install our own on the expat parser."""


def _hardened_parser() -> Any:
    """defusedxml's expat parser, guards included, with ElementTree's tree-building removed.

    ElementTree's default handler is dropped: it would be called for all text we do not keep.
    Its one safety duty, refusing entity references that cannot be expanded (possible when a
    DOCTYPE names an external DTD, which is never read), moves to ``SkippedEntityHandler``.
    """
    facade = DefusedXMLParser(
        target=_NoTarget(),
        forbid_dtd=False,
        forbid_entities=True,
        forbid_external=True,
    )
    parser = facade.parser
    parser.buffer_text = True
    parser.ordered_attributes = False
    parser.DefaultHandlerExpand = None
    parser.SkippedEntityHandler = _undefined_entity
    return parser


def _undefined_entity(name: str, is_parameter_entity: bool) -> None:
    raise InvalidReport(
        f"undefined entity &{name}; (DTDs are never read, so only the XML built-ins work)",
        reason="undefined-entity",
    )


def _install(parser: Any, choose: ChooseHandler, limits: ParseLimits, log: DiagnosticLog) -> None:
    """Attach the element/text callbacks; all per-element state lives in these closures.

    Text is delivered only while an element's text is being kept: otherwise there is no text
    handler at all, and expat skips text without calling into Python.
    """

    handler_start: Callable[[str, dict[str, str]], int] = _unchosen_start
    handler_end: Callable[[str, str | None], None] = _unchosen_end
    end_tags: frozenset[str] = frozenset()
    all_ends = False

    def first_start(tag: str, attrs: dict[str, str]) -> int:
        nonlocal handler_start, handler_end, end_tags, all_ends
        handler = choose(tag, attrs)
        handler_start = handler.start
        handler_end = handler.end
        all_ends = handler.end_tags is None
        end_tags = handler.end_tags or frozenset()
        return handler_start(tag, attrs)

    handler_start = first_start
    max_depth = limits.max_depth
    max_elements = limits.max_elements
    depth = 0
    elements = 0
    capture_depth = -1
    keep_left = 0
    seen_chars = 0
    parts: list[str] = []

    def collect(data: str) -> None:
        nonlocal keep_left, seen_chars
        seen_chars += len(data)
        if keep_left > 0:
            piece = data[:keep_left]
            parts.append(piece)
            keep_left -= len(piece)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal depth, elements, capture_depth, keep_left, seen_chars
        depth += 1
        elements += 1
        if depth > max_depth or elements > max_elements:
            _over_limit(depth, elements, limits, parser.CurrentLineNumber)
        if "}" in tag:
            tag = tag.rpartition("}")[2]
        keep = handler_start(tag, attrs)
        if keep and capture_depth < 0:
            capture_depth = depth
            keep_left = keep
            seen_chars = 0
            parts.clear()
            parser.CharacterDataHandler = collect

    def end(tag: str) -> None:
        nonlocal depth, capture_depth
        if "}" in tag:
            tag = tag.rpartition("}")[2]
        if depth == capture_depth:
            parser.CharacterDataHandler = None
            capture_depth = -1
            handler_end(tag, _joined(parts, seen_chars))
        elif all_ends or tag in end_tags:
            handler_end(tag, None)
        depth -= 1

    def doctype(name: str, sysid: str | None, pubid: str | None, internal: bool) -> None:
        ident = pubid or sysid or "no identifier"
        log.note("doctype-seen", f"DOCTYPE {name} ({ident}) seen; it was not fetched")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = doctype


def _unchosen_start(tag: str, attrs: dict[str, str]) -> int:
    raise AssertionError("replaced before the first element")


def _unchosen_end(tag: str, text: str | None) -> None:
    """Only reached when choosing the root's handler failed."""


def _joined(parts: list[str], seen_chars: int) -> str:
    text = "".join(parts)
    if seen_chars > len(text):
        text += f"\n[… truncated: {seen_chars} characters in total]"
    return text


def _over_limit(depth: int, elements: int, limits: ParseLimits, line: int) -> None:
    if depth > limits.max_depth:
        raise InvalidReport(
            f"XML nested deeper than {limits.max_depth} levels at line {line}",
            reason="too-deep",
            line=line,
        )
    raise ReportTooLarge(
        f"report has more than {limits.max_elements} XML elements", limit=limits.max_elements
    )


_UTF8_BOM = b"\xef\xbb\xbf"


def _declaration_first(chunk: bytes, log: DiagnosticLog) -> bytes:
    """Drop blank lines some generators print before ``<?xml``, which expat would refuse."""
    bom = _UTF8_BOM if chunk.startswith(_UTF8_BOM) else b""
    body = chunk[len(bom) :]
    stripped = body.lstrip(b" \t\r\n")
    if len(stripped) == len(body) or not stripped.startswith(b"<?xml"):
        return chunk
    log.note("leading-whitespace", "whitespace before the XML declaration was ignored")
    return bom + stripped


def _token_too_large(limit: int) -> ReportTooLarge:
    return ReportTooLarge(
        f"an XML token (a tag with its attributes, a comment, a declaration) is larger than "
        f"{limit} bytes",
        limit=limit,
    )


def _malformed(exc: ExpatError) -> InvalidReport:
    line = getattr(exc, "lineno", None)
    column = getattr(exc, "offset", None)
    code = getattr(exc, "code", None)
    what = ErrorString(code) if isinstance(code, int) else str(exc)
    where = f" at line {line}, column {column}" if line is not None else ""
    return InvalidReport(f"malformed XML{where}: {what}", reason="malformed-xml", line=line)


def _forbidden(exc: DefusedXmlException, line: int) -> InvalidReport:
    if isinstance(exc, EntitiesForbidden):
        return InvalidReport(
            f"entity declarations are not allowed in reports (entity {exc.name!r}, line {line})",
            reason="entities-forbidden",
            line=line,
        )
    if isinstance(exc, ExternalReferenceForbidden):
        return InvalidReport(
            f"external references are not allowed in reports ({exc.sysid!r}, line {line})",
            reason="external-reference-forbidden",
            line=line,
        )
    return InvalidReport(f"forbidden XML construct at line {line}: {exc}", reason="forbidden-xml")
