"""The continuous family's figures (issue 31), judged on several seeds:
- the probe's table of remedies, read from experiments/probe_continuous/results (made by `python experiments/probe_continuous.py`,
  about 40 minutes on 2 cores; this script does not train them);
- the demo preset, `inverse-surprisal train --preset demo --family continuous --seed S` for seeds 0, 1, 2, trained here
  (one torch thread each, two at a time): the fraction of the oracle information at the end and at best, and wall time;
- the full preset, read from runs/full-continuous-seed{0,1,2} when they exist (`inverse-surprisal train --preset full
  --family continuous --seed S --out runs/full-continuous-seedS`, longer than `make bench` may take).
Median and worst seed of each. Prints one JSON object."""
import argparse, json, os, shutil, statistics, subprocess, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))   # the probe and its records
from probe_continuous import load, table

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (0, 1, 2)

def run_figures(run: Path) -> dict:
    "Fraction of the oracle information at the end and at best, KL over it, the probe over the oracle's MAP, wall time."
    m = json.loads((run / 'metrics.json').read_text())
    evals = [e for e in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines()) if e['phase'] == 'eval']
    info = m['oracle_information']
    return dict(final=m['information_gain'] / info, best=max(e['information_gain'] / e['oracle_information'] for e in evals),
                kl=m['kl'] / info, probe=m['probe_joint'] / m['oracle_map_accuracy'],
                wall=m['wall_seconds'])

def summary(prefix: str, runs: list) -> dict:
    "Median and worst (lowest; highest for KL and wall time) over the runs, and each seed's figures."
    figs = [run_figures(r) for r in runs]
    out = {f'{prefix}_seeds': [dict(run=r.name, **{k: round(v, 4) for k, v in f.items()}) for r, f in zip(runs, figs)]}
    for k in ('final', 'best', 'kl', 'probe', 'wall'):
        vals = [f[k] for f in figs]
        out[f'{prefix}_{k}_median'] = statistics.median(vals)
        out[f'{prefix}_{k}_worst'] = max(vals) if k in ('kl', 'wall') else min(vals)
    return out

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu', help='where the demo runs train')
    device, res = p.parse_args().device, {}
    res['continuous_probe_table'] = table(load())
    demos = [ROOT / 'runs' / f'bench-demo-continuous-seed{s}' for s in SEEDS]
    procs = []
    for s, run in zip(SEEDS, demos):
        if run.exists(): shutil.rmtree(run)
        cmd = [str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--preset', 'demo', '--family', 'continuous',
               '--seed', str(s), '--out', str(run), '--no-progress', '--device', device]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, OMP_NUM_THREADS='1')))
        if len(procs) == 2 or s == SEEDS[-1]:
            for pr in procs:
                if pr.wait(): sys.exit(f'the continuous demo failed:\n{pr.stderr.read().decode()[-3000:]}')
            procs = []
    res.update(summary('demo_continuous', demos))
    fulls = [ROOT / 'runs' / f'full-continuous-seed{s}' for s in SEEDS]
    if all((r / 'metrics.json').exists() for r in fulls): res.update(summary('full_continuous', fulls))
    else: res['full_continuous_note'] = 'runs/full-continuous-seed{0,1,2} missing: see bench/bench_continuous.py'
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
