"""The real-text grid's script (experiments/text_grid.py) on a tiny corpus with planted categories: every term of one seed
writes its rows and record, the plain run's closed form is its own rate and the distribution term's is the plain one,
the categories are written beside the grid, a second start trains nothing, and a record made with other settings is
refused."""
import json, sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import text_grid
from inverse_surprisal.grid import category_nmi
from inverse_surprisal.per_example import read_per_example

def test_tiny_grid_writes_skips_and_refuses(tmp_path, capsys):
    args = ['planted', '--quick', '--out', str(tmp_path), '--seeds', '0', '--eps', '1', '--jobs', '1']
    names = ['discrete-pretrained-plain-seed0', 'discrete-pretrained-example-eps1-seed0',
             'discrete-pretrained-distribution-seed0', 'discrete-pretrained-token-seed0']
    assert text_grid.main(args) == names
    res = tmp_path / 'grid' / 'planted' / 'results'
    cats = json.loads((tmp_path / 'grid' / 'planted_categories.json').read_text())
    rows = {n: read_per_example(res / f'{n}.csv') for n in names}
    plain = rows[names[0]]
    assert sorted(plain) == sorted(['b', 'l', 'l0', 'K', 'K_star', 'weight', 'code', 'pair', 'context'])
    assert np.allclose(plain['K_star'], plain['K'], atol=1e-5)          # q* is q: the closed form is the rate
    # the distribution term at matched beta is the plain objective rescaled: its closed form is the plain rate
    assert np.allclose(rows[names[2]]['K_star'], plain['K'], atol=1e-5)
    assert np.all(plain['weight'] == 1) and not np.allclose(rows[names[1]]['weight'], 1)
    for n in names:
        rec = json.loads((res / f'{n}.json').read_text())
        assert rec['config']['objective']['matched'] and rec['summary']['codes_used'] >= 1
        assert [t['step'] for t in rec['trajectory']] == [3, 6]
        assert 0 <= category_nmi(rows[n], cats).nmi <= 1
    before = {p.name: p.stat().st_mtime_ns for p in res.iterdir()}
    assert text_grid.main(args) == []                                    # finished: nothing trained
    assert {p.name: p.stat().st_mtime_ns for p in res.iterdir()} == before
    rec = json.loads((res / f'{names[1]}.json').read_text())
    rec['config']['steps'] = 99; (res / f'{names[1]}.json').write_text(json.dumps(rec))
    with pytest.raises(SystemExit):
        text_grid.main(args)
    assert 'made with other settings (steps: 99 -> 6)' in capsys.readouterr().err

def test_tiny_continuous_grid(tmp_path):
    """The continuous family's terms with the probe's winner (q and a head read y's embedding) on the base trained to
    its plateau: each run's rows hold its code (k-means on the posterior means) and no closed form; a second start
    trains nothing."""
    args = ['planted', '--quick', '--out', str(tmp_path), '--seeds', '0', '--family', 'continuous', '--jobs', '1']
    names = [f'continuous-pretrained-{t}-seed0' for t in ('plain', 'example-eps1', 'distribution', 'token')]
    assert sorted(text_grid.main(args)) == sorted(names)
    res = tmp_path / 'grid' / 'planted' / 'results'
    cats = json.loads((tmp_path / 'grid' / 'planted_categories.json').read_text())
    for n in names:
        rows, rec = read_per_example(res / f'{n}.csv'), json.loads((res / f'{n}.json').read_text())
        assert sorted(rows) == sorted(['b', 'l', 'l0', 'K', 'weight', 'code', 'pair', 'context'])
        assert rows['code'].max() < 16 and 0 <= category_nmi(rows, cats).nmi <= 1
        cfg = rec['config']
        assert cfg['model']['family'] == 'continuous' and cfg['model']['view_kappa'] == 200
        assert cfg['data']['view_encoder'] == 'minilm' and cfg['data']['base_model'].endswith('base_plateau')
        assert rec['summary']['K_star'] is None and 1 <= rec['summary']['active_units'] <= 8
    assert text_grid.main(args) == []

def test_tiny_copy_grid(tmp_path, capsys):
    """The discrete family with the text preset's own decoder (`--decoder copy`): the plain and the example term alone,
    on the base trained to its plateau, decoded by the base's copy with z in every block, in a folder of its own; the
    continuous family has no such choice."""
    args = ['planted', '--quick', '--out', str(tmp_path), '--seeds', '0', '--decoder', 'copy', '--jobs', '1']
    names = ['discrete-pretrained-plain-seed0', 'discrete-pretrained-example-eps1-seed0']
    assert text_grid.main(args) == names
    assert not (tmp_path / 'grid' / 'planted').exists()
    res = tmp_path / 'grid' / 'planted-copy' / 'results'
    for n in names:
        cfg = json.loads((res / f'{n}.json').read_text())['config']
        assert (cfg['model']['decoder_init'], cfg['model']['decoder_z']) == ('base_model', 'every')
        assert cfg['data']['base_model'].endswith('base_plateau') and cfg['model']['code_sizes'] == [16]
    assert text_grid.grid_folder(tmp_path, 'planted', 'copy') == res.parent
    # its default seeds are 0-4 (the claim's paired interval over five), the other grids' 0-2
    assert [(r.recon, r.seed) for r in text_grid.grid_runs('discrete', decoder='copy')] == [
        (t, s) for s in range(5) for t in text_grid.COPY_TERMS]
    for family in ('discrete', 'continuous'): assert {r.seed for r in text_grid.grid_runs(family)} == {0, 1, 2}
    assert text_grid.main(args) == []
    with pytest.raises(SystemExit):
        text_grid.main(args[:-4] + ['--family', 'continuous', '--decoder', 'copy'])
    assert "--decoder copy is the discrete family's" in capsys.readouterr().err
    with pytest.raises(ValueError, match="decoder must be one of"): text_grid.overrides('p', 'b', decoder='base')
