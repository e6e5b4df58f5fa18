"""README.md and docs/: their Python examples run, and their links lead somewhere.

Examples that talk to a running node (they import rclpy) are only compiled here: running them needs a
node, and the core suite starts none.
"""
import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"
DOCS = sorted((REPOSITORY / "docs").glob("*.md"))
DOCUMENTS = [README, *DOCS]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def _name(document: Path) -> str:
    return str(document.relative_to(REPOSITORY))


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_python_examples_run(document):
    """The blocks of one document run in order in one namespace (later blocks use earlier names)."""
    blocks = PYTHON_BLOCK.findall(document.read_text())
    namespace = {"__name__": "__doc_example__"}
    for index, block in enumerate(blocks):
        code = compile(block, f"{_name(document)} python block {index + 1}", "exec")
        if "rclpy" not in block:
            exec(code, namespace)


def _resolves(document: Path, target: str) -> bool:
    """Whether a relative link of ``document`` names an existing file (and, in Markdown, heading)."""
    path, _, anchor = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    if not linked.exists():
        return False
    return not anchor or linked.suffix != ".md" or anchor in map(_anchor, HEADING.findall(linked.read_text()))


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_relative_links_resolve(document):
    links = [target for target in LINK.findall(document.read_text()) if not re.match(r"[a-z]+://", target)]
    broken = [target for target in links if not _resolves(document, target)]
    assert not broken, f"{_name(document)}: links to nothing: {broken}"


def test_docs_are_linked_from_the_readme():
    readme = README.read_text()
    unlinked = [_name(document) for document in DOCS if f"({_name(document)})" not in readme]
    assert not unlinked, f"not linked from README.md: {unlinked}"
