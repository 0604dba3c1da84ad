"The generated package is a real package: a wheel that installs into a clean venv, imports, and runs its console script."
import configparser, subprocess, sys, venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def _run(*cmd, **kw):
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout

def test_wheel_installs_into_clean_venv(tmp_path):
    cfg = configparser.ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini')
    version, lib = cfg['DEFAULT']['version'], cfg['DEFAULT']['lib_name']
    _run(sys.executable, '-m', 'build', '--wheel', '--outdir', tmp_path / 'dist', ROOT)
    wheel, = (tmp_path / 'dist').glob(f'{lib}-{version}-*.whl')
    venv.create(tmp_path / 'venv', with_pip=True)
    py = tmp_path / 'venv' / 'bin' / 'python'
    # the pinned CPU torch first: the requirement range admits it, so the wheel pulls nothing bigger. No byte-compiling
    # of the installed files (torch's took 13 of the test's 30 s): a module compiles when it is imported
    _run(py, '-m', 'pip', 'install', '-q', '--no-compile', 'torch==2.13.0')
    _run(py, '-m', 'pip', 'install', '-q', '--no-compile', wheel)
    out = _run(py, '-c', f'import {lib}, {lib}.losses as m; print({lib}.__version__, {lib}.__file__)', cwd=tmp_path)
    got_version, location = out.split()
    assert got_version == version
    assert str(tmp_path / 'venv') in location, f"imported from {location}, not the clean venv"
    out = _run(tmp_path / 'venv' / 'bin' / 'inverse-surprisal-demo', '--n', '200', '--eps', '0.1', '1')
    assert 'E[l/(b+eps)]' in out and len(out.strip().splitlines()) == 4
