"""Reproducibility and the test suite's cost: whether a second demo run in a new process ends bit-identical to the
first (wall times aside), and the wall time of `make test`. What the presets reach is bench_presets.py's (five seeds).
Prints one JSON object."""
import argparse, json, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu', help='where the demo runs train')
    device, res = p.parse_args().device, {}
    demo, again = ROOT / 'runs' / 'bench-demo', ROOT / 'runs' / 'bench-demo-again'
    for run in (demo, again):
        if run.exists(): shutil.rmtree(run)
        subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--preset', 'demo', '--out', str(run), '--no-progress',
                        '--device', device],
                       check=True, capture_output=True)
    strip = lambda run: [{k: v for k, v in json.loads(l).items() if k != 'wall_seconds'} for l in (run / 'metrics.jsonl').read_text().splitlines()]
    res['demo_identical_in_new_process'] = strip(demo) == strip(again)
    t = time.perf_counter()
    subprocess.run(['make', 'test'], cwd=ROOT, check=True, capture_output=True)
    res['test_suite_seconds'] = round(time.perf_counter() - t, 1)
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
