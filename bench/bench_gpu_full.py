"""The full preset on a GPU (the speed issue's goal: <= 60 s): `inverse-surprisal train --preset full --device cuda` in a
new process, the wall seconds to 0.95 (and 0.9) of the oracle information at its evaluations and the best fraction. On the
CPU the full preset's times are experiments/probe_speed.py's (minutes each), so this script reports nothing there. Prints one
JSON object."""
import argparse, json, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def time_to(run: Path, frac: float) -> tuple:
    "(first evaluation's wall seconds with gain >= frac * the oracle information, or None; the best fraction)"
    evals = [e for e in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines()) if e['phase'] == 'eval']
    hit = next((e['wall_seconds'] for e in evals if e['information_gain'] >= frac * e['oracle_information']), None)
    return hit, max(e['information_gain'] / e['oracle_information'] for e in evals)

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu')
    device = p.parse_args().device
    if device == 'cpu':
        print(json.dumps(dict(full_gpu_note='cpu: see experiments/probe_speed.py'))); return
    run = ROOT / 'runs' / 'bench-gpu-full'
    if run.exists(): shutil.rmtree(run)
    subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--preset', 'full', '--device', device,
                    '--out', str(run), '--no-progress', '--no-tensorboard'], check=True, capture_output=True)
    res = dict(zip(('full_gpu_seconds_to_0.95', 'full_gpu_best_fraction'), time_to(run, 0.95)))
    res['full_gpu_seconds_to_0.9'] = time_to(run, 0.9)[0]
    res['full_gpu_wall_seconds'] = json.loads((run / 'metrics.json').read_text())['wall_seconds']
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
