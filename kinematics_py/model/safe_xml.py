"""Parsing of untrusted XML without DTDs or entity expansion (no billion-laughs, no XXE)."""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections import Counter
from xml.parsers import expat

from ..errors import KinematicsError


class XmlSafetyError(KinematicsError, ValueError):
    """The document is not well-formed XML or declares a DTD/entities."""


def _refuse_doctype(*_args) -> None:
    raise XmlSafetyError("DOCTYPE and entity declarations are not allowed in robot descriptions")


def check_xml(text: str) -> Counter[str]:
    """Raise XmlSafetyError unless ``text`` is well-formed XML without DTD or entity declarations; return how
    many children of each tag the root element has (``<link>`` and ``<joint>`` of a URDF), counted in the same
    pass, so limits can be checked before anything builds on the document."""
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_doctype
    parser.UnparsedEntityDeclHandler = _refuse_doctype
    parser.ExternalEntityRefHandler = _refuse_doctype
    children: Counter[str] = Counter()
    depth = 0

    def start(tag, _attributes):
        nonlocal depth
        if depth == 1:
            children[tag] += 1
        depth += 1

    def end(_tag):
        nonlocal depth
        depth -= 1

    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        raise XmlSafetyError(f"malformed XML: {error}") from None
    return children


def parse_xml(text: str) -> ElementTree.Element:
    """Check ``text`` with :func:`check_xml`, then return its root element."""
    check_xml(text)
    return ElementTree.fromstring(text)
