"""Run every bench/bench_*.py (each prints one JSON object), merge them into bench/results.json, and write the
markdown tables that the docs include: bench/results.md (every figure) and bench/presets.md (what each preset reaches,
the one table the README, the pages and `--help` cite). `--device cuda` labels the figures with the device;
`--tables` writes the two tables from results.json without running anything."""
import argparse, json, subprocess, sys, time
from pathlib import Path

import torch

from inverse_surprisal.files import atomic_open

HERE = Path(__file__).resolve().parent
# goals from the issues: (comparison, threshold)
GOALS = {
    'weighting_overhead_ratio': ('<=', 1.02),
    # the presets on five seeds (bench_presets)
    'demo_final_median': ('>=', 0.75), 'demo_final_worst': ('>=', 0.6), 'demo_wall_worst': ('<=', 180),
    'probe_classes_worst': ('>=', 1.0), 'probe_nmi_over_ceiling_worst': ('>=', 0.97), 'probe_wall_worst': ('<=', 300),
    'full_final_worst': ('>=', 0.9), 'full_whole_wall_worst': ('<=', 1800), 'full_whole_base_gap_worst': ('<=', 0.05),
    'demo_continuous_final_median': ('>=', 0.5), 'demo_continuous_final_worst': ('>=', 0.5),
    'demo_continuous_wall_worst': ('<=', 180),
    'full_continuous_final_median': ('>=', 0.8), 'full_continuous_final_worst': ('>=', 0.8),
    'full_continuous_probe_median': ('>=', 0.9), 'full_continuous_probe_worst': ('>=', 0.9),
    'full_continuous_wall_worst': ('<=', 1800),
    'scoring_vs_forward_ratio': ('>=', 0.9), 'scoring_vs_forward_ratio_lm': ('>=', 0.9),
    'scoring_vs_naive_speedup': ('>=', 5), 'scoring_vs_naive_speedup_lm': ('>=', 5),
    'scoring_peak_memory_ratio': ('<=', 1.5),
    'score_cli_vs_forward_ratio': ('>=', 0.9), 'score_cli_vs_forward_ratio_lm': ('>=', 0.9),
    'score_cli_vs_library_ratio': ('<=', 2), 'score_cli_vs_library_ratio_lm': ('<=', 2),
    'per_class_step_ratio': ('<=', 0.5), 'full_gpu_seconds_to_0.95': ('<=', 60),
    'score_peak_memory_mb_1000k': ('<=', 2048),
    # issue 79: a text step at most 4 plain fine-tuning steps of the base (bench_text_step)
    'text_step_over_finetune_support_short_context': ('<=', 4), 'text_step_over_finetune_support_long_context': ('<=', 4),
    # ... z in the copy's top block, on padded batches too; and the text preset's own step (one code's gradient drawn,
    # the decoder run on the classes the embedding view's screen keeps)
    **{f'text_step_over_finetune_support_top1{s}_{c}_context': ('<=', 4) for c in ('short', 'long', 'ragged_short')
       for s in ('', '_sample1', '_sample1_screen')},
}

def _atomic_write(path: Path, text: str):
    with atomic_open(path) as f: f.write(text.encode())

def _verdict(key, value):
    if key not in GOALS or not isinstance(value, (int, float)): return ''
    op, goal = GOALS[key]
    ok = value <= goal if op == '<=' else value >= goal
    return f"{op} {goal}: {'met' if ok else 'missed'}"

def table(results: dict) -> str:
    "Markdown: one row per figure (device and script named), then the list-valued figures as tables of their own."
    lines = ['| figure | value | goal | device | script |', '|---|---|---|---|---|']
    flat = [(dev, script, k, v) for dev, scripts in results.items() for script, figs in scripts.items() for k, v in figs.items()]
    lines += [f'| `{k}` | {"null" if v is None else v} | {_verdict(k, v)} | {dev} | {script} |' for dev, script, k, v in flat if not isinstance(v, list)]
    for dev, script, k, rows in flat:
        if isinstance(rows, list) and rows:
            lines += ['', f'`{k}` ({dev}, {script}):', '', '| ' + ' | '.join(rows[0]) + ' |', '|' + '---|' * len(rows[0])]
            lines += ['| ' + ' | '.join(str(r[c]) for c in rows[0]) + ' |' for r in rows]
    return '\n'.join(lines) + '\n'

# the continuous family's probe preset is the probe's row with both of its settings (token maps, mixture prior)
CONTINUOUS_PROBE_ROW = 'latent_maps+mixture_prior'

def _mw(figs: dict, key: str, fmt: str='.3f') -> str:
    "A figure's median and worst seed as 'median (worst)'."
    return f"{figs[key + '_median']:{fmt}} ({figs[key + '_worst']:{fmt}})"

def preset_table(results: dict) -> str:
    "Markdown: what each preset reaches on the CPU, median (worst seed) over the seeds it was judged on."
    p, c = results['cpu']['bench_presets'], results['cpu']['bench_continuous']
    probe_c = next(r for r in c['continuous_probe_table'] if r['variant'] == CONTINUOUS_PROBE_ROW)
    whole = p['full_whole_runs']
    rows = [
        ('demo', 'discrete', 'learned base, 8 classes', f"{_mw(p, 'demo_final')} of the oracle information",
         p['demo_seeds'], f"{_mw(p, 'demo_wall', '.0f')} s"),
        ('full', 'discrete', 'learned base, 12 classes',
         f"{_mw(p, 'full_final')} of the oracle information (its CVAE alone, exact b*)", p['full_seeds'],
         f"{p['full_whole_wall_worst']:.0f} s (worst), base included: {len(whole)} whole run"
         f"{'s' * (len(whole) != 1)} (arm {', '.join(sorted({r['arm'] for r in whole}))})"),
        ('probe', 'discrete', 'exact b*, 12 classes',
         ('every class its own code on every seed' if p['probe_classes_worst'] == 1 else
          f"{p['probe_classes_worst']:.3f} of the classes with a code of their own (worst seed)") + "; joint NMI "
         f"{_mw(p, 'probe_nmi_over_ceiling')} of its ceiling", len(p['probe_by_seed']),
         f"{p['probe_wall_worst']:.0f} s (worst)"),
        ('demo', 'continuous', 'learned base, 8 classes', f"{_mw(c, 'demo_continuous_final')} of the oracle information",
         len(c['demo_continuous_seeds']), f"{_mw(c, 'demo_continuous_wall', '.0f')} s"),
        ('full', 'continuous', 'learned base, 12 classes', f"{_mw(c, 'full_continuous_final')} of the oracle information",
         len(c['full_continuous_seeds']), f"{_mw(c, 'full_continuous_wall', '.0f')} s"),
        ('probe', 'continuous', 'exact b*, 12 classes',
         f"{probe_c['gain']:.3f} ({probe_c['gain_worst']:.3f}) of the oracle information", probe_c['seeds'],
         f"{probe_c['wall']:.0f} ({probe_c['wall_worst']:.0f}) s"),
    ]
    lines = ['| preset | family | task | reaches: median (worst seed) | seeds | wall on 2 CPU cores: median (worst) |',
             '|---|---|---|---|---|---|']
    lines += ['| ' + ' | '.join(f'`{r[0]}`' if i == 0 else str(r[i]) for i in range(len(r))) + ' |' for r in rows]
    return ('\n'.join(lines) + '\n\nGenerated by `make bench` (bench/run.py) from bench/results.json: the discrete presets by '
            'bench/bench_presets.py, the continuous ones by bench/bench_continuous.py. The `text` and `text-view` presets '
            'are judged on real text on the own-data page.\n')

def write_tables(results: dict):
    "bench/results.md and bench/presets.md from `results`."
    _atomic_write(HERE / 'results.md', table(results))
    _atomic_write(HERE / 'presets.md', preset_table(results))

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu', help="'cpu' or 'cuda'")
    p.add_argument('--only', nargs='*', help='bench script names to run (default: all)')
    p.add_argument('--tables', action='store_true', help='write the tables from results.json, run nothing')
    a = p.parse_args()
    out = HERE / 'results.json'
    results = json.loads(out.read_text()) if out.exists() else {}
    if a.tables: return write_tables(results)
    # a GPU's figures under its name
    name = a.device if a.device == 'cpu' else f'{a.device} ({torch.cuda.get_device_name(torch.device(a.device))})'
    section = results.setdefault(name, {})
    for script in sorted(HERE.glob('bench_*.py')):
        if a.only and script.stem not in a.only and script.name not in a.only: continue
        print(f'running {script.name} --device {a.device}', flush=True)
        t = time.perf_counter()
        res = subprocess.run([sys.executable, str(script), '--device', a.device], capture_output=True, text=True)
        if res.returncode != 0: sys.exit(f'{script.name} failed:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}')
        figures = json.loads(res.stdout.strip().splitlines()[-1])
        section[script.stem] = figures                        # a script's figures are replaced whole
        print(f'  {time.perf_counter() - t:.0f} s: ' + ', '.join(f'{k}={v}' for k, v in figures.items() if not isinstance(v, (list, str))), flush=True)
    for figs in results.values():                             # a script that is gone takes its figures along
        for gone in [k for k in figs if not (HERE / f'{k}.py').exists()]: del figs[gone]
    _atomic_write(out, json.dumps(results, indent=1) + '\n')
    write_tables(results)
    print((HERE / 'results.md').read_text())

if __name__ == '__main__': main()
