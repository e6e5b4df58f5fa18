"""Parsing of untrusted XML without DTDs or entity expansion (no billion-laughs, no XXE)."""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from xml.parsers import expat

from ..errors import KinematicsError


class XmlSafetyError(KinematicsError, ValueError):
    """The document is not well-formed XML or declares a DTD/entities."""


def _refuse_doctype(*_args) -> None:
    raise XmlSafetyError("DOCTYPE and entity declarations are not allowed in robot descriptions")


def check_xml(text: str) -> None:
    """Raise XmlSafetyError unless ``text`` is well-formed XML without DTD or entity declarations."""
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_doctype
    parser.UnparsedEntityDeclHandler = _refuse_doctype
    parser.ExternalEntityRefHandler = _refuse_doctype
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        raise XmlSafetyError(f"malformed XML: {error}") from None


def parse_xml(text: str) -> ElementTree.Element:
    """Check ``text`` with :func:`check_xml`, then return its root element."""
    check_xml(text)
    return ElementTree.fromstring(text)
