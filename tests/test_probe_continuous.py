"""The continuous probe's script (experiments/probe_continuous.py) on the tiny task: the continuous `probe` preset end to end,
a prototype remedy in its own process, records that a second start skips, and records made with other settings refused."""
import json, sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import probe_continuous as pc

def test_probe_pieces_are_written_skipped_and_checked(tmp_path, capsys):
    args = ['--quick', '--out', str(tmp_path), '--variants', 'today', 'latent_maps', 'film', '--seeds', '0', '--jobs', '2']
    pc.main(args)
    first = capsys.readouterr().out
    assert '0 pieces finished, 3 to train' in first
    recs = pc.load(tmp_path, ('today', 'latent_maps', 'film'), (0,))
    assert [r['variant'] for r in recs] == ['today', 'latent_maps', 'film']
    for r in recs:
        assert r['config']['model']['family'] == 'continuous' and r['config']['base']['source'] == 'oracle'
        assert len(r['trajectory']) == 2 and r['trajectory'][-1]['step'] == 12
        d = r['diagnosis']
        assert sum(map(sum, d['knn_confusion'])) == 32 and len(d['kl_per_dimension']) == 8
    assert [r['config']['model']['latent_maps'] for r in recs] == [False, True, False]
    assert recs[2]['prototype'] == ['film', {}]
    # the film prototype added its modules in its own process only: today's model has none
    pc.main(args)
    assert '3 pieces finished, 0 to train' in capsys.readouterr().out
    path = tmp_path / 'results' / 'today-seed0.json'
    r = json.loads(path.read_text()); r['config']['lr'] = 1e-4; path.write_text(json.dumps(r))
    with pytest.raises(ValueError, match='made with other settings'): pc.load(tmp_path, ('today',), (0,))

def test_probe_config_is_the_continuous_probe():
    cfg = pc.probe_config('latent_maps', 1)
    assert (cfg.preset, cfg.seed, cfg.base.source, cfg.batch_size, cfg.steps) == ('probe', 1, 'oracle', 64, 3000)
    assert cfg.model.latent_maps and not pc.probe_config('today', 1).model.latent_maps
