"Helpers of the tests that run the command line in new processes."
import json, subprocess, sys
from pathlib import Path

BIN = Path(sys.executable).parent
KILL_AFTER = str(Path(__file__).with_name('kill_after.py'))   # `python KILL_AFTER OUT NAME ARGS...`: killed after checkpoint NAME

def run(*args, env=None, check=True, cwd=None):
    "Run a command (arguments as strings or paths, in `cwd`); with `check`, fail the test showing its output unless it exits 0."
    res = subprocess.run([*map(str, args)], capture_output=True, text=True, env=env, timeout=600, cwd=cwd)
    if check: assert res.returncode == 0, f"{args} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res

def records(run_dir): return [json.loads(l) for l in (run_dir / 'metrics.jsonl').read_text().splitlines()]

def without_wall(r): return {k: v for k, v in r.items() if k != 'wall_seconds'}
