"""The grid runner in new processes: a killed grid continues without redoing finished runs, an interrupted run
resumes exactly, two processes give the numbers one gives, and an interrupted run with other settings is refused."""
import json, os, signal, subprocess, sys, time
from pathlib import Path

import numpy as np
import pytest

from inverse_surprisal.grid import GRID_PRESET, QUICK, GridRun, run_grid
from inverse_surprisal.run_dir import RunDirectoryError

RUNS = [GridRun('discrete', 'plain'), GridRun('discrete', 'example', 1.0), GridRun('continuous', 'plain')]
SCRIPT = ("import sys; from inverse_surprisal.grid import *; "
          f"run_grid(sys.argv[1], {RUNS!r}, GRID_PRESET, QUICK, int(sys.argv[2]))")

def start(out, jobs):
    "The grid in a new process, in a process group of its own (a kill takes its workers too)."
    return subprocess.Popen([sys.executable, '-c', SCRIPT, str(out), str(jobs)], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

def finish(p):
    out, _ = p.communicate(timeout=600)
    assert p.returncode == 0, out[-3000:]
    return out

def wait_for(path, p, timeout=300):
    t = time.time()
    while not path.exists():
        assert p.poll() is None, p.stdout.read()[-3000:]
        assert time.time() - t < timeout, f'{path} never appeared'
        time.sleep(0.02)

def results(out):
    "Each run's per-example table (bytes) and summary without its wall time."
    res = out / 'results'
    return {r.name: ((res / f'{r.name}.csv').read_bytes(),
                     {k: v for k, v in json.loads((res / f'{r.name}.json').read_text())['summary'].items()
                      if k != 'wall_seconds'}) for r in RUNS}

@pytest.fixture(scope='module')
def killed_and_continued(tmp_path_factory):
    "A grid killed inside its second run (after a checkpoint), then started again."
    out = tmp_path_factory.mktemp('grid') / 'g'
    p = start(out, 1)
    first = out / 'results' / f'{RUNS[0].name}.json'
    wait_for(first, p)
    finished = {f.name: f.read_bytes() for f in (out / 'results').iterdir()}
    wait_for(out / 'runs' / RUNS[1].name / 'cvae.safetensors', p)
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    assert not (out / 'results' / f'{RUNS[1].name}.json').exists()   # killed inside the second run
    log = finish(start(out, 1))
    return out, finished, log

def test_killed_grid_skips_finished_runs(killed_and_continued):
    out, finished, log = killed_and_continued
    assert '1 of 3 runs finished' in log
    assert RUNS[0].name not in log and RUNS[1].name in log          # trained again: only the others
    assert {n: (out / 'results' / n).read_bytes() for n in finished} == finished
    assert all((out / 'results' / f'{r.name}.json').exists() for r in RUNS)

def test_resumed_and_two_process_grid_match_an_uninterrupted_one(killed_and_continued, tmp_path):
    out = killed_and_continued[0]
    ref = tmp_path / 'ref'
    finish(start(ref, 2))
    assert results(ref) == results(out)

def test_interrupted_run_with_other_settings_is_refused(tmp_path):
    out = tmp_path / 'g'
    p = start(out, 1)
    wait_for(out / 'runs' / RUNS[0].name / 'cvae.safetensors', p)
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    n = QUICK['steps']
    with pytest.raises(RunDirectoryError, match=rf'settings differ .* \(steps: {n} -> {n + 1}\)'):
        run_grid(out, RUNS[:1], GRID_PRESET, dict(QUICK, steps=n + 1))

def test_demo_closed_form_is_the_explorers(tmp_path):
    "make demo's closed-form KL is the explorer's mean rate for the same held-out examples, b*, eps and beta."
    from inverse_surprisal.config_files import stored_config
    from inverse_surprisal.explorer import explorer_state
    from inverse_surprisal.grid import QUICK, demo_table, weighting_demo
    recs = weighting_demo(tmp_path / 'demo', jobs=1, overrides=QUICK)
    for r, line in zip(recs, demo_table(recs).splitlines()[2:]):
        cfg, run, per = stored_config(r['config']), r['run'], r['per_example']
        t = cfg.task
        # the explorer matches beta over its own draws (the held-out set): give it the beta that lands on the run's
        beta = r['summary']['beta'] / (per['weight'].mean() if run['recon'] == 'example' else 1.0)
        state = explorer_state(run['recon'], run['eps'] or 0.1, beta, tuple(t.noise_levels), cfg.n_eval, cfg.seed + 10_000,
                               dict(vocab_size=t.vocab_size, length=t.length, n_rotations=t.n_rotations))
        np.testing.assert_allclose(state.base_surprisal, per['b_star'], rtol=1e-6)
        np.testing.assert_allclose(state.rate.mean(), per['K_star'].mean(), rtol=1e-5)
        assert float(line.split('|')[4]) == round(float(per['K_star'].mean()), 3)

PARENT = '''
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from inverse_surprisal.grid import exit_with_parent

def work():
    print(os.getpid(), flush=True)
    time.sleep(120)

if __name__ == '__main__':
    watch = sys.argv[1] == 'watch'
    ex = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'),
                             initializer=exit_with_parent if watch else None, initargs=(os.getpid(), 0.1) if watch else ())
    ex.submit(work)
    time.sleep(120)
'''

def _running(pid: int) -> bool:
    "The process exists and is not a zombie waiting for a reaper."
    try: return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError: return False

def _worker_after_parent_killed(tmp_path, mode: str, wait: float) -> tuple:
    script = tmp_path / f'grid_parent_{mode}.py'
    script.write_text(PARENT)
    # stderr off: the killed parent's resource tracker warns of its semaphores
    parent = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    worker = int(parent.stdout.readline())
    assert _running(worker)
    parent.kill(); parent.wait()          # SIGKILL: no handler, no finally, as `kill -9` or an OOM kill
    deadline = time.monotonic() + wait
    while _running(worker) and time.monotonic() < deadline: time.sleep(0.1)
    return worker, _running(worker)

@pytest.mark.skipif(not Path('/proc/self/stat').exists(), reason='reads /proc')
def test_grid_workers_end_with_the_grid(tmp_path):
    "A grid's spawned workers leave when its process is killed; without the watch one would go on."
    worker, alive = _worker_after_parent_killed(tmp_path, 'plain', wait=2.0)
    assert alive                           # the trap: an orphan still running
    os.kill(worker, signal.SIGKILL)
    worker, alive = _worker_after_parent_killed(tmp_path, 'watch', wait=30.0)
    assert not alive
