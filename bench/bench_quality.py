"""Time to quality: wall seconds until the demo preset reaches 50% of the oracle information (from the run's own held-out
evaluations), with the best fraction reached and the final figures the training issue sets goals on (wall time, KL
against the oracle information, base gap, joint NMI); whether a second demo run in a new process ends bit-identical
(wall time aside); and the wall time of `make test`. The full preset's runs take
longer than `make bench` may: bench_full_runs.py reads them. Prints one JSON object."""
import argparse, json, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def time_to(run: Path, frac: float) -> tuple:
    "(first eval wall seconds with gain >= frac * oracle information or None, best fraction reached)"
    evals = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines() if json.loads(l)['phase'] == 'eval']
    hit = next((e['wall_seconds'] for e in evals if e['information_gain'] >= frac * e['oracle_information']), None)
    return hit, max(e['information_gain'] / e['oracle_information'] for e in evals)

def final_figures(run: Path, prefix: str) -> dict:
    "The goal-bearing figures of a finished run's metrics.json, keys prefixed with the preset's name."
    m = json.loads((run / 'metrics.json').read_text())
    return {f'{prefix}_wall_seconds': m['wall_seconds'], f'{prefix}_final_fraction': m['information_gain'] / m['oracle_information'],
            f'{prefix}_kl_over_oracle_information': m['kl'] / m['oracle_information'],
            f'{prefix}_base_gap_per_token': m['base_gap_per_token'], f'{prefix}_nmi_joint': m['nmi_joint'],
            f'{prefix}_nmi_over_ceiling': m['nmi_joint'] / m['nmi_joint_ceiling'] if m.get('nmi_joint') and m.get('nmi_joint_ceiling') else None,
            f'{prefix}_classes_with_own_code': f"{m['classes_with_own_code']}/{m['n_classes']}" if m.get('classes_with_own_code') is not None else None}

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
    res['demo_time_to_quality_seconds'], res['demo_best_fraction'] = time_to(demo, 0.5)
    res.update(final_figures(demo, 'demo'))
    t = time.perf_counter()
    subprocess.run(['make', 'test'], cwd=ROOT, check=True, capture_output=True)
    res['test_suite_seconds'] = round(time.perf_counter() - t, 1)
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
