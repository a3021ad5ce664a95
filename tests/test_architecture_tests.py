"""The shape of the tests: shared helpers live in tests/support or rigs, never in a test module,
and no test leans on a bench (issue 33)."""

from __future__ import annotations

from pathlib import Path

from tests.support.source_tree import ROOT, imported_names

TESTS = ROOT / "tests"
# The smoke test of the benches is the one place that imports them: it tests them.
BENCH_TESTS = TESTS / "bench"


def imports_of(path: Path, root: Path) -> set[str]:
    """Dotted names a module of the package at `root` imports (relative ones resolved)."""
    return imported_names(path, ".".join(path.relative_to(root.parent).parent.parts))


def imports_of_test_modules(root: Path) -> list[str]:
    """`file imports module` for each import, by any file under `root`, of a test module."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        for name in sorted(imports_of(path, root)):
            parts = name.split(".")
            if parts[0] == root.name and any(p.startswith("test_") for p in parts):
                found.append(f"{path.relative_to(root).as_posix()} imports {name}")
    return found


def bench_imports(root: Path) -> list[str]:
    """`file imports module` for each import of bench.* outside the benches' own tests."""
    return [f"{path.relative_to(root).as_posix()} imports {name}"
            for path in sorted(root.rglob("*.py")) if BENCH_TESTS not in path.parents
            for name in sorted(imports_of(path, root)) if name.split(".")[0] == "bench"]


def test_no_test_module_imports_another_test_module():
    assert imports_of_test_modules(TESTS) == []


def test_nothing_in_tests_imports_a_bench():
    assert bench_imports(TESTS) == []


def test_the_test_import_check_finds_a_helper_taken_from_a_test_module(tmp_path: Path):
    tests = tmp_path / "tests"
    (tests / "adapters").mkdir(parents=True)
    (tests / "adapters" / "test_b.py").write_text("from .test_a import fake\n")
    (tests / "conftest.py").write_text("def f():\n    import tests.web.test_web as web\n")
    (tests / "test_c.py").write_text("from tests.support.telegram import fake\n"
                                     "from aiohttp.test_utils import TestClient\n")
    assert imports_of_test_modules(tests) == [
        "adapters/test_b.py imports tests.adapters.test_a",
        "adapters/test_b.py imports tests.adapters.test_a.fake",
        "conftest.py imports tests.web.test_web",
    ]


def test_the_bench_check_finds_a_conftest_that_imports_a_bench(tmp_path: Path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text("from bench.voice_corpus import corpus\n")
    assert bench_imports(tests) == ["conftest.py imports bench.voice_corpus",
                                       "conftest.py imports bench.voice_corpus.corpus"]
