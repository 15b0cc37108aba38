"""An offline full-text index of Stripe documentation: the installed SDK's docstrings plus our notes.

The stripe package is generated from Stripe's OpenAPI spec and carries the API
reference as docstrings: each service method says what it does and which HTTP
call it makes, each params TypedDict documents every parameter, each resource
class every field. We read them with ``ast`` (importing 1,600 modules would be
slower and run their code), store one row per method / object / nested parameter
group in SQLite FTS5, and rank with bm25. The index file is keyed by the stripe
version and a digest of our notes, so an upgrade or an edited note rebuilds it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import cast

from platformdirs import user_cache_dir

from stripebench_tui.shared_cache import lock_file, locked

SCHEMA = 2
NOTES_DIR = Path(__file__).with_name("docs_notes")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_QUOTED_NAME = re.compile(r"[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']")


@dataclass
class DocEntry:
    """One searchable entry."""

    title: str
    kind: str  # "notes" | "method" | "object" | "parameters"
    body: str
    source: str
    details: str = ""  # parameter and field lists: searched, but weighted low (they are long)


@dataclass
class DocHit:
    """A search result."""

    title: str
    kind: str
    source: str
    snippet: str
    score: float


def stripe_dir() -> Path:
    """Where the installed stripe package lives (found without importing it)."""
    spec = importlib.util.find_spec("stripe")
    if spec is None or spec.origin is None:
        raise RuntimeError("the stripe package is not installed")
    return Path(spec.origin).parent


def index_file(cache_dir: Path) -> Path:
    """The index path for this stripe version and these notes."""
    digest = hashlib.sha256()
    for note in sorted(NOTES_DIR.glob("*.md")):
        digest.update(note.name.encode() + b"\0" + note.read_bytes())
    return cache_dir / f"stripe-docs-{version('stripe')}-{digest.hexdigest()[:12]}-v{SCHEMA}.sqlite3"


def default_cache_dir() -> Path:
    """$STRIPEBENCH_CACHE_DIR, else the platform's user cache directory."""
    override = os.environ.get("STRIPEBENCH_CACHE_DIR")
    if override:
        return Path(override)
    return Path(user_cache_dir("stripebench"))


def _doc(node: ast.AST) -> str:
    text = ast.get_docstring(node, clean=True) if isinstance(node, (ast.ClassDef, ast.FunctionDef)) else None
    return (text or "").strip()


def _field_docs(cls: ast.ClassDef) -> list[tuple[str, str, str]]:
    """(name, annotation source, docstring) for each annotated attribute followed by a string."""
    fields = []
    body = cls.body
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            doc = ""
            nxt = body[i + 1] if i + 1 < len(body) else None
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
                doc = " ".join(nxt.value.value.split())
            fields.append((stmt.target.id, ast.unparse(stmt.annotation), doc))
    return fields


def _words(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", camel)


def _request_line(fn: ast.FunctionDef) -> str:
    """'POST /v1/checkout/sessions/{session}' from the method's ``self._request(...)`` call."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("_request", "_request_stream"):
            args = node.args
            if len(args) >= 2 and isinstance(args[0], ast.Constant):
                path = args[1]
                if isinstance(path, ast.Call) and getattr(path.func, "attr", "") == "format":
                    path = cast(ast.Attribute, path.func).value  # "/v1/customers/{customer}".format(...)
                if isinstance(path, ast.Constant):
                    text = str(path.value)
                elif isinstance(path, ast.JoinedStr):
                    text = "".join(
                        str(v.value) if isinstance(v, ast.Constant) else "{" + _placeholder(v) + "}" for v in path.values
                    )
                else:
                    continue
                return f"{str(args[0].value).upper()} {text}"
    return ""


def _placeholder(value: ast.AST) -> str:
    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id not in ("sanitize_id", "str")]
    return names[0] if names else "id"


def _imports(tree: ast.Module) -> dict[str, str]:
    """Imported name → module, including imports under ``if TYPE_CHECKING``."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module
    return found


class _Extractor:
    """Turns the stripe package's source files into Docs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._params_cache: dict[str, dict[str, ast.ClassDef]] = {}

    def _params_module(self, module: str) -> dict[str, ast.ClassDef]:
        if module not in self._params_cache:
            path = self.root.parent / (module.replace(".", "/") + ".py")
            classes = {}
            if path.exists():
                tree = ast.parse(path.read_text(encoding="utf-8"))
                classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
            self._params_cache[module] = classes
        return self._params_cache[module]

    def file_docs(self, path: Path) -> Iterator[DocEntry]:
        """Docs from one source file."""
        relative = path.relative_to(self.root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        namespace = " ".join(p.capitalize() for p in Path(relative).parts[:-1] if p not in ("v2",))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            if cls.name.endswith("Service"):
                yield from self._service_docs(cls, tree, namespace, relative)
            else:
                yield from self._object_docs(cls, relative)

    def _service_docs(self, cls: ast.ClassDef, tree: ast.Module, namespace: str, source: str) -> Iterator[DocEntry]:
        resource = (namespace + " " + _words(cls.name.removesuffix("Service"))).strip()
        imports = _imports(tree)
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_") or fn.name.endswith("_async"):
                continue
            request = _request_line(fn)
            if not request:
                continue
            description = _doc(fn)
            title = f"{resource}: {fn.name.replace('_', ' ')} ({request})"
            params_name = ""
            for arg in fn.args.args:
                if arg.arg == "params" and arg.annotation is not None:
                    quoted = _QUOTED_NAME.findall(ast.unparse(arg.annotation))
                    params_name = quoted[0] if quoted else ""
            lines, nested = [], []
            if params_name and params_name in imports:
                classes = self._params_module(imports[params_name])
                top = classes.get(params_name)
                if top is not None:
                    for name, _annotation, doc in _field_docs(top):
                        lines.append(f"- {name}: {doc}")
                    nested = list(self._nested_params(classes, top, "", 0))
            details = "Parameters:\n" + "\n".join(lines) if lines else ""
            yield DocEntry(title, "method", f"{description}\n{request}", f"stripe/{source}:{cls.name}.{fn.name}", details)
            for field_path, fields in nested:
                yield DocEntry(
                    f"{resource}: {fn.name.replace('_', ' ')} parameter {field_path}",
                    "parameters",
                    f"{field_path}, a parameter of {request}",
                    f"stripe/{source}:{cls.name}.{fn.name}",
                    "\n".join(f"- {field_path}.{n}: {d}" for n, d in fields),
                )

    def _nested_params(self, classes: dict[str, ast.ClassDef], cls: ast.ClassDef, prefix: str, depth: int):
        """(field path, [(name, doc)]) for each nested parameter group, e.g. 'line_items[].price_data'."""
        if depth >= 3:
            return
        for name, annotation, _doc_text in _field_docs(cls):
            for target in _QUOTED_NAME.findall(annotation):
                child = classes.get(target)
                if child is None or child is cls:
                    continue
                path = f"{prefix}{name}{'[]' if 'List[' in annotation else ''}"
                fields = [(n, d) for n, _a, d in _field_docs(child)]
                if fields:
                    yield path, fields
                yield from self._nested_params(classes, child, path + ".", depth + 1)

    def _object_docs(self, cls: ast.ClassDef, source: str) -> Iterator[DocEntry]:
        object_name = ""
        for stmt in cls.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(getattr(t, "id", "") == "OBJECT_NAME" for t in targets) and isinstance(stmt.value, ast.Constant):
                    object_name = str(stmt.value.value)
        if not object_name:
            return
        fields = [f"- {name}: {doc}" for name, _a, doc in _field_docs(cls) if doc]
        details = "Fields:\n" + "\n".join(fields) if fields else ""
        title = f"The {object_name} object ({_words(cls.name)})"
        yield DocEntry(title, "object", _doc(cls), f"stripe/{source}:{cls.name}", details)


def note_docs() -> Iterator[DocEntry]:
    """Our markdown notes, one Doc per '## ' section."""
    for note in sorted(NOTES_DIR.glob("*.md")):
        text = note.read_text(encoding="utf-8")
        heading = text.splitlines()[0].lstrip("# ").strip() if text else note.stem
        for section in re.split(r"^## ", text, flags=re.M)[1:]:
            title, _, body = section.partition("\n")
            yield DocEntry(f"{heading}: {title.strip()}", "notes", body.strip(), f"notes/{note.name}")


def _row(doc: DocEntry) -> tuple[str, str, str, str, str]:
    return (doc.title, doc.kind, doc.body, doc.details, doc.source)


def build(path: Path, log=sys.stderr) -> int:
    """Build the index at ``path`` (atomically, one process at a time), reporting progress on ``log``; returns the
    row count."""
    with locked(lock_file(path)):
        return _build(path, log)


def _build(path: Path, log) -> int:
    """Build the index; the caller holds its lock, so any partial file beside it is a killed build's."""
    for stale in path.parent.glob(f"{path.stem}.partial-*"):
        stale.unlink(missing_ok=True)
    started = time.monotonic()
    root = stripe_dir()
    files = sorted(p for p in root.rglob("*.py") if "params" not in p.relative_to(root).parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".partial-{os.getpid()}")
    partial.unlink(missing_ok=True)
    conn = sqlite3.connect(partial)
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(title, kind UNINDEXED, body, details, source UNINDEXED,"
            " tokenize='porter unicode61')"
        )
        print(f"stripe_docs: indexing stripe {version('stripe')} docstrings ({len(files)} files) …", file=log)
        extractor = _Extractor(root)
        rows = [_row(d) for d in note_docs()]
        for number, file in enumerate(files, 1):
            rows.extend(_row(d) for d in extractor.file_docs(file))
            if number % 200 == 0 or number == len(files):
                print(f"stripe_docs:   {number}/{len(files)} files, {len(rows)} entries, "
                      f"{time.monotonic() - started:.1f} s", file=log)  # fmt: skip
        conn.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?)", rows)
        conn.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        conn.commit()
    finally:
        conn.close()
    os.replace(partial, path)
    print(f"stripe_docs: index of {len(rows)} entries built in {time.monotonic() - started:.1f} s → {path}", file=log)
    return len(rows)


def open_index(cache_dir: Path, log=sys.stderr) -> sqlite3.Connection:
    """A connection to the index, building it first when it is missing."""
    path = index_file(cache_dir)
    if not path.exists():
        with locked(lock_file(path)):  # another process may be building it: wait, then use its build
            if not path.exists():
                _build(path, log)
    return sqlite3.connect(path)


def _match_expression(query: str, joiner: str) -> str:
    words = [w for w in _WORD.findall(query.lower()) if len(w) > 1 or w.isdigit()]
    return f" {joiner} ".join(f'"{w}"' for w in words)


# A method's own entry should beat the parameter groups that repeat its title words.
KIND_WEIGHT = {"method": 1.0, "notes": 1.0, "object": 0.85, "parameters": 0.6}
RANK = "bm25(docs, 10.0, 0.0, 2.0, 0.5, 0.0)"  # title, kind, body, details, source


def _same_word(a: str, b: str) -> bool:
    # A crude stem match ("customers" ~ "customer", "refunds" ~ "refund") for re-ranking only.
    return a == b or (min(len(a), len(b)) >= 4 and a[:5] == b[:5])


def _title_bonus(query_words: list[str], title: str) -> float:
    """Reward titles that are about the query: most query words in the title, few other words."""
    name = _WORD.findall(title.split("(")[0].lower())
    if not query_words or not name:
        return 0.0
    covered = sum(any(_same_word(q, t) for t in name) for q in query_words) / len(query_words)
    precise = sum(any(_same_word(q, t) for q in query_words) for t in name) / len(name)
    return 4.0 * covered + 4.0 * precise


def search(conn: sqlite3.Connection, query: str, limit: int = 5) -> list[DocHit]:
    """Ranked hits for ``query``: entries with every word first, then entries with any of them."""
    hits: list[DocHit] = []
    seen: set[str] = set()
    for joiner in ("AND", "OR"):
        expression = _match_expression(query, joiner)
        if not expression or len(hits) >= limit:
            break
        rows = conn.execute(
            f"SELECT title, kind, source, snippet(docs, -1, '«', '»', ' … ', 40), {RANK}"
            f" FROM docs WHERE docs MATCH ? ORDER BY {RANK} LIMIT ?",
            (expression, max(limit * 10, 300)),  # room for the re-weighting below
        ).fetchall()
        words = _WORD.findall(query.lower())
        ranked = sorted(
            (DocHit(title, kind, source, snippet, -score * KIND_WEIGHT.get(kind, 1.0) + _title_bonus(words, title))
             for title, kind, source, snippet, score in rows),
            key=lambda hit: -hit.score,
        )  # fmt: skip
        for hit in ranked:
            if hit.title in seen:
                continue
            seen.add(hit.title)
            hits.append(hit)
            if len(hits) >= limit:
                break
    return hits
