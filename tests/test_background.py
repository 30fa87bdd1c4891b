"""tests/background.py: a slow subprocess started early gives the same result as one run when asked."""
import sys

from tests import background


def _run(code: str) -> background.Run:
    return background.Run([sys.executable, "-c", code], "in", {}, ".", timeout=60)


def test_started_run_and_foreground_run_give_the_same_output():
    code = "import sys; print(sys.stdin.read().upper()); sys.exit(3)"
    background.start({"bg-test-a": _run(code)})
    early = background.result("bg-test-a", _run(code))
    late = background.result("bg-test-b", _run(code))  # never started: runs now
    assert (early.returncode, early.stdout) == (late.returncode, late.stdout) == (3, "IN\n")


def test_a_run_that_cannot_start_raises_in_the_test_that_asks():
    bad = background.Run(["/nonexistent/python"], "", {}, ".")
    background.start({"bg-test-c": bad})
    try:
        background.result("bg-test-c", bad)
    except FileNotFoundError:
        pass
    else:
        raise AssertionError("a run that cannot start must fail the test that waits for it")
