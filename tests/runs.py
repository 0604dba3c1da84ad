"Helpers of the tests that run the command line, in new processes or in this one."
import contextlib, io, json, os, subprocess, sys, traceback
from pathlib import Path

BIN = Path(sys.executable).parent
KILL_AFTER = str(Path(__file__).with_name('kill_after.py'))   # `python KILL_AFTER OUT NAME ARGS...`: killed after checkpoint NAME

def run(*args, env=None, check=True, cwd=None):
    "Run a command (arguments as strings or paths, in `cwd`); with `check`, fail the test showing its output unless it exits 0."
    res = subprocess.run([*map(str, args)], capture_output=True, text=True, env=env, timeout=600, cwd=cwd)
    if check: assert res.returncode == 0, f"{args} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res

def cli(*args, check=True, cwd=None):
    """`inverse-surprisal ARGS` run in this process as `run` runs it in a new one (in `cwd`): a CompletedProcess of its
    exit status, stdout and stderr; an exception it lets out is a traceback on stderr and status 1, as in a process of
    its own. A new process spends 2-3 s of CPU importing torch before the command reads its first argument; what the
    command says and writes needs none. The tests of processes (a lock held by another, two runs at once, a kill) start
    them with `run`."""
    from inverse_surprisal.cli import main
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if cwd is not None: os.chdir(cwd)
            main([*map(str, args)]); code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            if isinstance(e.code, str): print(e.code, file=sys.stderr)
        except BaseException: traceback.print_exc(); code = 1
        finally: os.chdir(here)
    res = subprocess.CompletedProcess(['inverse-surprisal', *map(str, args)], code, out.getvalue(), err.getvalue())
    if check: assert code == 0, f"{args} failed ({code}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res

def records(run_dir): return [json.loads(l) for l in (run_dir / 'metrics.jsonl').read_text().splitlines()]

def without_wall(r): return {k: v for k, v in r.items() if k != 'wall_seconds'}
