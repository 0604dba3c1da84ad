"""The head-weighting probe (experiments/probe_head_weighting.py) at make test's sizes: each arm trains with its own
head setting, the figures name the closed forms they were measured against, and a second start trains nothing."""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import probe_head_weighting as probe
import pytest

def test_tiny_head_probe(tmp_path):
    args = ['--quick', '--out', str(tmp_path), '--seeds', '0', '--jobs', '1', '--arms', 'recon', 'annealed']
    rows = probe.main(args)
    assert [(r['arm'], r['name']) for r in rows] == [('recon', 'discrete-oracle-example-eps1-seed0'),
                                                     ('annealed', 'discrete-oracle-example-eps1-seed0'),
                                                     ('annealed', 'discrete-oracle-plain-seed0')]
    cfg = lambda arm, run: json.loads((tmp_path / arm / 'results' / f'{run}.json').read_text())['config']['objective']
    assert cfg('recon', rows[0]['name'])['aux_weighting'] == 'recon'
    annealed = cfg('annealed', rows[1]['name'])
    assert (annealed['aux_weighting'], annealed['aux_final'], annealed['aux_anneal_steps']) == ('uniform', 0.0, 2)
    # annealed to 0 by the end: the EM target of the run's own model is its headless closed form
    assert rows[1]['target_mean'] == rows[1]['K_own_mean'] and rows[1]['target_spearman'] == rows[1]['K_own_spearman']
    # the recon run keeps a head: its target spends rate the headless closed form does not
    assert rows[0]['target_mean'] > rows[0]['K_own_mean']
    grid = json.loads((tmp_path / 'recon' / 'results' / f"{rows[0]['name']}.json").read_text())['summary']
    # the grid's own figures, from its per-example file (written to PER_EXAMPLE_DIGITS)
    assert (rows[0]['K'], rows[0]['K_star_mean']) == (pytest.approx(grid['K'], abs=1e-5), pytest.approx(grid['K_star'], abs=1e-5))
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*') if p.is_file()}
    assert probe.main(args) == rows
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*') if p.is_file()} == before

def test_grid_rows_measure_the_grids_own_runs(tmp_path):
    "--grid: the grid's trained runs against their own closed forms, nothing trained; a run not trained is named."
    from inverse_surprisal.grid import GRID_PRESET, QUICK, GridRun, run_grid
    run = GridRun('discrete', 'example', 1.0, 'oracle', 0)
    with pytest.raises(SystemExit, match="lacks the trained runs"):
        probe.grid_rows(tmp_path, QUICK, [run])
    run_grid(tmp_path, [run], GRID_PRESET, QUICK)
    [row] = probe.grid_rows(tmp_path, QUICK, [run])
    assert (tmp_path / 'own' / f'{run.name}.json').exists()
    # the grid releases the head (QUICK's split.head_release): at its end the EM target is the headless closed form
    assert row['target_mean'] == row['K_own_mean']
    assert probe.grid_rows(tmp_path, QUICK, [run]) == [row]
