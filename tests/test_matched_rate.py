"""The matched-rate search over the experiments page's grid (experiments/matched_rate.py) at make test's sizes: the
grid's own run is the trial at beta 1 (taken from its results, not trained again), the search lands within 2% of the
plain run's KL, and a second start trains nothing."""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import matched_rate

def test_tiny_matched_rate_search(tmp_path):
    args = ['--quick', '--out', str(tmp_path), '--seeds', '0', '--jobs', '1', '--families', 'continuous']
    (found,) = matched_rate.main(args)
    trials = tmp_path / 'matched_rate'
    first = json.loads((trials / 'continuous-oracle-example-eps1-seed0-beta1.json').read_text())
    grid = json.loads((tmp_path / 'results' / 'continuous-oracle-example-eps1-seed0.json').read_text())
    assert first['from_grid'] == 'continuous-oracle-example-eps1-seed0.json' and first['kl'] == grid['metrics']['kl']
    assert not (trials / 'runs' / 'continuous-oracle-example-eps1-seed0-beta1').exists()     # not trained again
    plain = json.loads((tmp_path / 'results' / 'continuous-oracle-plain-seed0.json').read_text())
    assert abs(found['kl'] / plain['metrics']['kl'] - 1) <= 0.02 and found['trials'][0] == (1.0, first['kl'])
    assert len(list(trials.glob('*.json'))) == len(found['trials'])
    before = {p: p.stat().st_mtime_ns for p in trials.rglob('*') if p.is_file()}
    (again,) = matched_rate.main(args)
    assert again['trials'] == found['trials'] and {p: p.stat().st_mtime_ns for p in trials.rglob('*') if p.is_file()} == before

def test_tiny_text_matched_rate_search(tmp_path):
    """The same search on the real-text copy grid (experiments/text_matched_rate.py) at make test's sizes, on the
    planted corpus: the grid's example run is the trial at beta 1 with its held-out rows, every trial has its rows, the
    match is within 2% of the plain run's KL, and a second start trains nothing."""
    import text_matched_rate
    args = ['planted', '--quick', '--out', str(tmp_path), '--seeds', '0', '--jobs', '1']
    (found,) = text_matched_rate.main(args)
    grid = tmp_path / 'grid' / 'planted-copy'
    trials, name = grid / 'matched_rate', 'discrete-pretrained-example-eps1-seed0'
    first = json.loads((trials / f'{name}-beta1.json').read_text())
    assert first['from_grid'] == f'{name}.json' and found['trials'][0] == (1.0, first['kl'])
    assert (trials / f'{name}-beta1.csv').read_bytes() == (grid / 'results' / f'{name}.csv').read_bytes()
    assert sorted(p.stem for p in trials.glob('*.csv')) == sorted(p.stem for p in trials.glob('*.json'))
    plain = json.loads((grid / 'results' / 'discrete-pretrained-plain-seed0.json').read_text())
    assert abs(found['kl'] / plain['metrics']['kl'] - 1) <= 0.02
    before = {p: p.stat().st_mtime_ns for p in trials.rglob('*') if p.is_file()}
    (again,) = text_matched_rate.main(args)
    assert again['trials'] == found['trials']
    assert {p: p.stat().st_mtime_ns for p in trials.rglob('*') if p.is_file()} == before
