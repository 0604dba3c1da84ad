"""The tables `make bench` generates are what its results give: the preset table the README, the pages and `--help`
cite cannot drift from bench/results.json."""
import importlib.util, json
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / 'bench'

def _run_module():
    spec = importlib.util.spec_from_file_location('bench_run', BENCH / 'run.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

def test_tables_match_results():
    run, results = _run_module(), json.loads((BENCH / 'results.json').read_text())
    assert (BENCH / 'results.md').read_text() == run.table(results), "regenerate: python bench/run.py --tables"
    assert (BENCH / 'presets.md').read_text() == run.preset_table(results), "regenerate: python bench/run.py --tables"

def test_preset_table_reads_the_figures():
    run, results = _run_module(), json.loads((BENCH / 'results.json').read_text())
    p = results['cpu']['bench_presets']
    row = next(l for l in run.preset_table(results).splitlines() if l.startswith('| `demo` | discrete'))
    assert f"{p['demo_final_median']:.3f} ({p['demo_final_worst']:.3f})" in row
    p['demo_final_median'] = 0.5                  # a new figure is a new table
    assert '0.500 (' in run.preset_table(results)
